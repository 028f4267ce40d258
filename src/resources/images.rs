//! Product images (SPEC 2.3 and 4.3), globally and per store view: lists and single images
//! for every user type; create, update and delete for Admin.
//!
//! An image is an entry of the product's Magento media gallery (videos are not images and
//! are left out). Reads take the gallery from the product as the store view sees it (see
//! `upstream::media` for why not from `/media`): the default store view for shoppers on the
//! global routes, the default (admin) values for Admin on them, that store view on the
//! `/store/:store_id` routes (store 0 is the admin scope, the same as the global routes).
//! They go through the cache per product, store and view, and every image write, like a
//! product delete, invalidates the product's tag `i:<id>` (and the product's own views,
//! whose `image_url` may have changed).
//!
//! Writes go to the admin scope (`/rest/all`) on the global routes and through the store
//! view's code on the others, where Magento keeps label, position, exclusion and roles per
//! store. Every image in a request is checked here, with the spec's messages, before the
//! gateway calls Magento at all.

use std::collections::HashSet;

use axum::extract::Path;
use axum::response::Response;
use http::StatusCode;
use serde_json::{Map, Value};

use super::call::{ApiCall, unserved};
use crate::app::AppState;
use crate::auth::UserType;
use crate::backend::port::StoreView;
use crate::backend::port::{BackendError, Image, ImageChange, ImageRefusal, NewImage, Scope};
use crate::cache::{self, Fetched};
use crate::http::{ApiError, Doc, Format, created, empty_ok};
use crate::rules::mapping::ResourceMapping;
use crate::rules::mapping::View;
use crate::rules::mapping::convert::as_i64;
use crate::rules::policy::{Operation, Route};

use crate::cache::keys::{key, tag, view};

use super::products;
use crate::records::catalog::{product_index, product_records};
use crate::records::lookups::stores;
use crate::records::{json, record};
use crate::resources::parse_id;
use crate::rules::backend_errors;
use crate::rules::image_upload::{
    BAD_BASE64, NOT_SPECIFIED, bad_mime, clean_stem, parse_input, upload_permit,
};
use crate::rules::write_outcome;

use crate::context::profile::Message;

const IMAGE_NOT_FOUND: &str = "Product image not found";
const NO_IMAGES: &str = "Requested product does not support images";

fn image_not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, IMAGE_NOT_FOUND)
}

/// A missing image as a caller is told of it: the original told shoppers only that the
/// resource was not there (its profile's message), and the Admin which one.
fn image_not_found_for(user: UserType) -> ApiError {
    let profile = crate::context::profile::Profile::current();
    match profile.message(Message::ImageNotFound) {
        Some(message) if user != UserType::Admin => ApiError::new(StatusCode::NOT_FOUND, message),
        _ => image_not_found(),
    }
}

// ---------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------

/// `/products/:id/images`: the global list and create.
pub async fn collection(Path(id): Path<String>, call: ApiCall) -> Result<Response, ApiError> {
    on_collection(call, &id, None).await
}

/// `/products/:id/images/store/:store_id`: a store view's list and create.
pub async fn store_collection(
    Path((id, store)): Path<(String, String)>,
    call: ApiCall,
) -> Result<Response, ApiError> {
    on_collection(call, &id, Some(&store)).await
}

/// `/products/:id/images/:image_id`: one image, globally.
pub async fn entity(
    Path((id, image)): Path<(String, String)>,
    call: ApiCall,
) -> Result<Response, ApiError> {
    let at = ImageAt {
        id: &id,
        image: &image,
        store: None,
    };
    on_entity(call, at).await
}

/// `/products/:id/images/:image_id/store/:store_id`: one image in a store view.
pub async fn store_entity(
    Path((id, image, store)): Path<(String, String, String)>,
    call: ApiCall,
) -> Result<Response, ApiError> {
    let at = ImageAt {
        id: &id,
        image: &image,
        store: Some(&store),
    };
    on_entity(call, at).await
}

async fn on_collection(call: ApiCall, id: &str, store: Option<&str>) -> Result<Response, ApiError> {
    match call.authorize(Route::ProductImages)? {
        Operation::Retrieve => list(call, id, store).await,
        Operation::Create => create(call, id, store).await,
        op => Err(unserved(op, "images")),
    }
}

/// The image an entity route names, as the path spells it: the product, the image, and
/// the store view (none on the global routes).
#[derive(Clone, Copy)]
struct ImageAt<'a> {
    id: &'a str,
    image: &'a str,
    store: Option<&'a str>,
}

async fn on_entity(call: ApiCall, at: ImageAt<'_>) -> Result<Response, ApiError> {
    match call.authorize(Route::ProductImage)? {
        Operation::Retrieve => get_one(call, at).await,
        Operation::Update => update(call, at).await,
        Operation::Delete => delete(call.app, at).await,
        op => Err(unserved(op, "an image")),
    }
}

// ---------------------------------------------------------------------------------------
// Where a route reads and writes
// ---------------------------------------------------------------------------------------

/// The scope of an image route.
#[derive(Debug, Clone)]
enum Place {
    /// The global routes, and store 0 (the admin scope).
    Global,
    /// A store view.
    Store(StoreView),
}

impl Place {
    /// Part of cache keys.
    fn key(&self) -> String {
        match self {
            Place::Global => "g".to_owned(),
            Place::Store(view) => view.id.to_string(),
        }
    }

    fn write_scope(&self) -> Scope<'_> {
        match self {
            Place::Global => Scope::All,
            Place::Store(view) => Scope::Store(&view.code),
        }
    }
}

/// The place a route names (a store view by id, or by code as the original took it too);
/// an unknown store is the spec's 400.
async fn place(app: &AppState, store: Option<&str>) -> Result<Place, ApiError> {
    let Some(store) = store else {
        return Ok(Place::Global);
    };
    let view = stores::view_by_id_or_code(app, store).await?;
    Ok(if view.id == 0 {
        Place::Global
    } else {
        Place::Store(view)
    })
}

/// An image id in a path: anything but a positive integer names no image.
fn image_id(text: &str) -> Result<u64, ApiError> {
    text.parse::<u64>()
        .ok()
        .filter(|&id| id > 0)
        .ok_or_else(image_not_found)
}

// ---------------------------------------------------------------------------------------
// Galleries
// ---------------------------------------------------------------------------------------

/// A product record in another store view than the default, through the cache.
/// `label` names the values in the key: a store code, or `admin` for store id 0.
async fn store_record(
    app: &AppState,
    product_id: u64,
    sku: &str,
    label: &str,
    store_id: Option<u64>,
) -> Result<Value, ApiError> {
    let backend = app.backend.clone();
    let owned_sku = sku.to_owned();
    let code = label.to_owned();
    let bytes = record(app, key::product(label, sku), move || async move {
        let scope = match store_id {
            Some(_) => Scope::Default,
            None => Scope::Store(&code),
        };
        let bytes = backend.product_gallery(scope, &owned_sku, store_id).await?;
        let tags = vec![
            tag::product(product_id),
            tag::sku(&owned_sku),
            tag::images(product_id),
        ];
        Ok((bytes, tags))
    })
    .await?;
    json(&bytes)
}

/// The product as the caller sees it at a place: Admin reads the default values on the
/// global routes (what a global write changes), shoppers the default store view.
async fn product_for_read(
    app: &AppState,
    product_id: u64,
    sku: &str,
    place: &Place,
    user: UserType,
) -> Result<Value, ApiError> {
    match place {
        Place::Global if user == UserType::Admin => {
            store_record(app, product_id, sku, "admin", Some(0)).await
        }
        Place::Store(view) if view.code != app.backend.default_store() => {
            store_record(app, product_id, sku, &view.code, None).await
        }
        _ => product_records::product_record(app, product_id, sku).await,
    }
}

/// The images a caller may see at a place, the media URL base to show them with, and the
/// cache tags of the answer.
async fn gallery(
    app: &AppState,
    product_id: u64,
    place: &Place,
    user: UserType,
) -> Result<(Vec<Image>, String, Vec<String>), ApiError> {
    // The SKU the index holds, checked against the record it reads (`product_index`).
    let (mut sku, indexed) = product_index::sku_to_read(app, product_id).await?;
    let mut product = product_for_read(app, product_id, &sku, place, user).await;
    if indexed
        && let Some(again) = product_index::confirmed(app, product_id, product.as_ref()).await?
    {
        product = product_for_read(app, product_id, &again, place, user).await;
        sku = again;
    }
    let product = product?;
    let shopper = user != UserType::Admin;
    // A product a shopper cannot see has no images for them either.
    if shopper && !products::shopper_visible(&product) {
        return Err(ApiError::not_found());
    }
    let code = match place {
        Place::Global => app.backend.default_store().to_owned(),
        Place::Store(view) => view.code.clone(),
    };
    let media_base = stores::config(app, &code).await?.base_media_url;
    let images = app
        .backend
        .images(&product)
        .into_iter()
        .filter(|image| !(shopper && image.exclude))
        .collect();
    let tags = vec![
        tag::product(product_id),
        tag::sku(&sku),
        tag::images(product_id),
        tag::STORES.to_owned(),
    ];
    Ok((images, media_base, tags))
}

/// The gallery at a place as it is now, for a write to start from (never from the cache).
async fn current_product(app: &AppState, sku: &str, place: &Place) -> Result<Value, ApiError> {
    let bytes = match place {
        Place::Global => {
            app.backend
                .product_gallery(Scope::Default, sku, Some(0))
                .await
        }
        Place::Store(view) => {
            app.backend
                .product_gallery(Scope::Store(&view.code), sku, None)
                .await
        }
    }
    .map_err(backend_errors::to_api)?;
    json(&bytes)
}

fn find_image(images: &[Image], image_id: u64) -> Result<&Image, ApiError> {
    images
        .iter()
        .find(|image| image.id == image_id)
        .ok_or_else(image_not_found)
}

/// The images of the product at a place, as they are now.
async fn current_images(app: &AppState, sku: &str, place: &Place) -> Result<Vec<Image>, ApiError> {
    Ok(app.backend.images(&current_product(app, sku, place).await?))
}

/// After any image write, whatever it did: the product's images and the views that show
/// its image (`image_url`, in single products and lists); held off for a while when the
/// write's outcome is unknown (`write_outcome`).
fn invalidate<T>(app: &AppState, product_id: u64, sku: &str, result: &Result<T, BackendError>) {
    write_outcome::touched(
        &app.cache,
        result,
        &[
            tag::images(product_id),
            tag::product(product_id),
            tag::sku(sku),
            tag::LISTS.to_owned(),
        ],
    );
}

// ---------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------

async fn list(call: ApiCall, id: &str, store: Option<&str>) -> Result<Response, ApiError> {
    let product_id = parse_id(id)?;
    let place = place(&call.app, store).await?;
    let (caller, user) = (call.caller, call.caller.user_type());
    let logical = view::images(product_id, &place.key());
    call.cached(caller, &logical, move |state| async move {
        let (images, media_base, tags) = gallery(&state, product_id, &place, user).await?;
        let fields = state.mappings.get("image").view(user, View::List);
        let out: Vec<Value> = images
            .iter()
            .map(|image| {
                Value::Object(ResourceMapping::render(&fields, &image.record, &media_base))
            })
            .collect();
        Ok((Doc::new(Value::Array(out)), tags))
    })
    .await
}

async fn get_one(call: ApiCall, at: ImageAt<'_>) -> Result<Response, ApiError> {
    let product_id = parse_id(at.id)?;
    let (caller, user) = (call.caller, call.caller.user_type());
    let image_id = image_id(at.image).map_err(|_| image_not_found_for(user))?;
    let place = place(&call.app, at.store).await?;
    let logical = view::image(product_id, &place.key(), image_id);
    call.cached(caller, &logical, move |state| async move {
        let (images, media_base, tags) = gallery(&state, product_id, &place, user).await?;
        let entry = find_image(&images, image_id).map_err(|_| image_not_found_for(user))?;
        let fields = state.mappings.get("image").view(user, View::Single);
        let out = ResourceMapping::render(&fields, &entry.record, &media_base);
        Ok((Doc::new(Value::Object(out)), tags))
    })
    .await
}

// ---------------------------------------------------------------------------------------
// Input
// ---------------------------------------------------------------------------------------

/// Image bodies have their own (larger) limit; 413 past it, never buffered beyond it.
async fn object_body(call: &mut ApiCall) -> Result<Map<String, Value>, ApiError> {
    let limit = call.app.config.image_body_limit;
    call.record_within(Format::Xml, limit, ApiError::request_data_invalid)
        .await
}

// ---------------------------------------------------------------------------------------
// Writes
// ---------------------------------------------------------------------------------------

/// The next default file name: `image`, then `image_2`, `image_3`, ... after the highest
/// the gallery holds. Magento renames a taken `image` to `image_1`, which counts as the
/// first.
fn next_default_stem(images: &[Image]) -> String {
    let highest = images
        .iter()
        .map(|image| image.file.as_str())
        .filter_map(|file| {
            let base = file.rsplit('/').next().unwrap_or(file);
            let stem = base.rsplit_once('.').map_or(base, |(stem, _)| stem);
            let stem = stem.to_ascii_lowercase();
            if stem == "image" {
                Some(1)
            } else {
                stem.strip_prefix("image_")?
                    .parse::<u64>()
                    .ok()
                    .filter(|&n| n >= 1)
            }
        })
        .max()
        .unwrap_or(0);
    if highest == 0 {
        "image".to_owned()
    } else {
        format!("image_{}", highest + 1)
    }
}

/// After the last image, as the original placed new images.
fn next_position(images: &[Image]) -> i64 {
    images
        .iter()
        .filter_map(|image| image.position)
        .max()
        .unwrap_or(0)
        + 1
}

/// Can the product hold images at all? Its attribute set must have the media gallery
/// attribute (the original's condition). A store with no such refusal of its own (Magento
/// 2) is asked about the set (cached). A back end that may not read attribute sets does not
/// block image uploads: the check is skipped.
async fn ensure_supports_images(app: &AppState, product: &Value) -> Result<(), ApiError> {
    let Some(set_id) = product
        .get("attribute_set_id")
        .and_then(as_i64)
        .filter(|&id| id > 0)
    else {
        return Ok(());
    };
    let backend = app.backend.clone();
    let found = app
        .cache
        .get_or_fetch(&key::attribute_set(set_id), move || async move {
            let takes = backend.takes_images(set_id as u64).await?;
            Ok::<_, BackendError>(Fetched::new(
                cache::Value::Text(if takes { "1" } else { "0" }.into()),
                vec![tag::ATTRIBUTE_SETS.to_owned()],
            ))
        })
        .await;
    let entry = match found {
        Ok((entry, _)) => entry,
        Err(BackendError::Status {
            status: 401 | 403, ..
        }) => {
            tracing::warn!(
                set_id,
                "cannot read attribute sets (the back end's credentials may not); image support not checked"
            );
            return Ok(());
        }
        Err(e) => return Err(backend_errors::to_api(e)),
    };
    match &entry.value {
        cache::Value::Text(text) if &**text == "1" => Ok(()),
        cache::Value::Text(_) => Err(ApiError::bad_request(NO_IMAGES)),
        _ => Err(ApiError::internal().with_cause("attribute set entry holds no answer")),
    }
}

/// The store's image refusals in the spec's words; anything else as every upstream error.
fn media_error(app: &AppState, error: BackendError) -> ApiError {
    let mapped = match app.backend.image_refusal(&error) {
        Some(ImageRefusal::NotFound) => image_not_found(),
        Some(ImageRefusal::BadBase64) => ApiError::bad_request(BAD_BASE64),
        Some(ImageRefusal::BadMime) => bad_mime(),
        None => return backend_errors::to_api(error),
    };
    mapped.with_cause(&error)
}

fn location(product_id: u64, image_id: u64) -> String {
    format!("/api/rest/products/{product_id}/images/{image_id}")
}

async fn create(mut call: ApiCall, id: &str, store: Option<&str>) -> Result<Response, ApiError> {
    let product_id = parse_id(id)?;
    let _upload = upload_permit(&call.app).await?;
    let mut input = parse_input(object_body(&mut call).await?, true)?;
    let app = call.app;
    let Some(file) = input.file.take() else {
        return Err(ApiError::validation(vec![NOT_SPECIFIED.into()]));
    };
    let place = place(&app, store).await?;
    let sku = product_index::sku_of(&app, product_id).await?;
    let current = current_product(&app, &sku, &place).await?;
    ensure_supports_images(&app, &current).await?;
    let images = app.backend.images(&current);
    let stem = file
        .stem
        .clone()
        .unwrap_or_else(|| next_default_stem(&images));
    let image = NewImage {
        file: file.into_file(&stem),
        label: input.label,
        position: input.position.unwrap_or_else(|| next_position(&images)),
        exclude: input.exclude.unwrap_or(false),
        types: input.types.unwrap_or_default(),
    };
    // Through a store code the store adds the image to the product (every store has it)
    // with the given values as that store view's: SPEC 4.3's per-store create.
    let result = app
        .backend
        .add_image(place.write_scope(), &sku, image)
        .await;
    invalidate(&app, product_id, &sku, &result);
    let image_id = result.map_err(|e| write_outcome::answer(e, |e| media_error(&app, e)))?;
    Ok(created(&location(product_id, image_id)))
}

async fn update(mut call: ApiCall, at: ImageAt<'_>) -> Result<Response, ApiError> {
    let product_id = parse_id(at.id)?;
    let image_id = image_id(at.image)?;
    let _upload = upload_permit(&call.app).await?;
    let mut input = parse_input(object_body(&mut call).await?, false)?;
    let app = call.app;
    if input.is_empty() {
        return Err(ApiError::request_data_invalid());
    }
    let place = place(&app, at.store).await?;
    let sku = product_index::sku_of(&app, product_id).await?;
    let images = current_images(&app, &sku, &place).await?;
    let existing = find_image(&images, image_id)?;
    let replaced = input.file.is_some();
    let file = input.file.take().map(|file| {
        let stem = file.stem.clone().unwrap_or_else(|| {
            let f = existing.file.as_str();
            if f.is_empty() {
                return next_default_stem(&images);
            }
            let base = f.rsplit('/').next().unwrap_or(f);
            clean_stem(base.rsplit_once('.').map_or(base, |(s, _)| s), file.kind)
        });
        file.into_file(&stem)
    });
    let change = ImageChange {
        file,
        label: input.label.clone(),
        position: input.position,
        exclude: input.exclude,
        types: input.types.clone(),
    };
    let result = app
        .backend
        .update_image(place.write_scope(), &sku, existing, change)
        .await;
    invalidate(&app, product_id, &sku, &result);
    result.map_err(|e| write_outcome::answer(e, |e| media_error(&app, e)))?;
    if replaced {
        // A store may keep a new file as a new gallery entry, with a new id (Magento 2
        // does): say where the image is now. A failure to find out does not undo the update.
        let before: HashSet<u64> = images.iter().map(|image| image.id).collect();
        match current_images(&app, &sku, &place).await {
            Ok(after) => {
                let new_id = after
                    .iter()
                    .map(|image| image.id)
                    .find(|id| !before.contains(id));
                if let Some(new_id) = new_id {
                    return Ok(created(&location(product_id, new_id)));
                }
            }
            Err(e) => tracing::warn!(error = %e, "image file replaced; its new id is unknown"),
        }
    }
    Ok(empty_ok())
}

async fn delete(app: AppState, at: ImageAt<'_>) -> Result<Response, ApiError> {
    let product_id = parse_id(at.id)?;
    let image_id = image_id(at.image)?;
    let place = place(&app, at.store).await?;
    let sku = product_index::sku_of(&app, product_id).await?;
    let images = current_images(&app, &sku, &place).await?;
    let existing = find_image(&images, image_id)?;
    // Globally the image goes; in one store view it is only no longer shown there.
    let result = app
        .backend
        .remove_image(place.write_scope(), &sku, existing)
        .await;
    invalidate(&app, product_id, &sku, &result);
    result.map_err(|e| write_outcome::answer(e, |e| media_error(&app, e)))?;
    Ok(empty_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names_follow_the_gallery() {
        let image = |file: &str, position: Option<i64>| Image {
            id: 1,
            file: file.to_owned(),
            label: Value::Null,
            position,
            exclude: false,
            types: Vec::new(),
            record: Value::Null,
        };
        let files =
            |names: &[&str]| -> Vec<Image> { names.iter().map(|f| image(f, None)).collect() };
        assert_eq!(next_default_stem(&[]), "image");
        assert_eq!(next_default_stem(&files(&["/h/a/harbor.png"])), "image");
        assert_eq!(next_default_stem(&files(&["/i/m/image.png"])), "image_2");
        assert_eq!(next_default_stem(&files(&["/i/m/image_1.jpg"])), "image_2");
        assert_eq!(
            next_default_stem(&files(&[
                "/i/m/image.png",
                "/i/m/image_3.gif",
                "/i/m/images.png"
            ])),
            "image_4"
        );
        assert_eq!(next_position(&[image("a", Some(2)), image("b", None)]), 3);
        assert_eq!(next_position(&[]), 1);
    }
}
