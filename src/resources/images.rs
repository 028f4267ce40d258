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

use axum::body::Body;
use axum::extract::{Path, State};
use axum::response::Response;
use http::{HeaderMap, Method, StatusCode};
use serde_json::{Map, Value, json};

use crate::app::AppState;
use crate::auth::{Operation, Route, UserType, authorize};
use crate::cache::{self, Fetched};
use crate::http::body::decode_record;
use crate::http::{ApiError, Doc, Format, created, empty_ok};
use crate::mapping::ResourceMapping;
use crate::mapping::convert::{as_i64, is_empty};
use crate::upstream::catalog::StoreView;
use crate::upstream::{Scope, UpstreamError};

use super::image_upload;
use super::support::{Caller, cached, json, parse_id, record};
use super::{products, stores, upstream_errors};

/// Tag of everything cached about a product's images (product deletes drop it too).
pub fn tag_images(product_id: u64) -> String {
    format!("i:{product_id}")
}

/// Tag of cached attribute set member lists.
const ATTRIBUTE_SETS: &str = "attrsets";

const IMAGE_NOT_FOUND: &str = "Product image not found";
const NOT_SPECIFIED: &str = "The image is not specified";
const BAD_BASE64: &str = "The image content must be valid base64 encoded data";
const BAD_MIME: &str = "Unsupported image MIME type";
const NO_IMAGES: &str = "Requested product does not support images";

fn image_not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, IMAGE_NOT_FOUND)
}

fn invalid(field: &str) -> String {
    format!("Invalid value for \"{field}\" in request.")
}

// ---------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------

/// `/products/:id/images`: the global list and create.
pub async fn collection(
    State(app): State<AppState>,
    caller: Caller,
    method: Method,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let operation = authorize(Route::ProductImages, &method, caller.principal)?;
    on_collection(app, caller, operation, &id, None, &headers, body).await
}

/// `/products/:id/images/store/:store_id`: a store view's list and create.
pub async fn store_collection(
    State(app): State<AppState>,
    caller: Caller,
    method: Method,
    Path((id, store)): Path<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let operation = authorize(Route::ProductImages, &method, caller.principal)?;
    on_collection(app, caller, operation, &id, Some(&store), &headers, body).await
}

/// `/products/:id/images/:image_id`: one image, globally.
pub async fn entity(
    State(app): State<AppState>,
    caller: Caller,
    method: Method,
    Path((id, image)): Path<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let operation = authorize(Route::ProductImage, &method, caller.principal)?;
    on_entity(app, caller, operation, &id, &image, None, &headers, body).await
}

/// `/products/:id/images/:image_id/store/:store_id`: one image in a store view.
pub async fn store_entity(
    State(app): State<AppState>,
    caller: Caller,
    method: Method,
    Path((id, image, store)): Path<(String, String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let operation = authorize(Route::ProductImage, &method, caller.principal)?;
    on_entity(
        app,
        caller,
        operation,
        &id,
        &image,
        Some(&store),
        &headers,
        body,
    )
    .await
}

async fn on_collection(
    app: AppState,
    caller: Caller,
    operation: Operation,
    id: &str,
    store: Option<&str>,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    match operation {
        Operation::Retrieve => list(app, caller, headers, id, store).await,
        Operation::Create => create(app, headers, id, store, body).await,
        op => Err(ApiError::internal().with_cause(format!("{op:?} is not served on images"))),
    }
}

#[allow(clippy::too_many_arguments)]
async fn on_entity(
    app: AppState,
    caller: Caller,
    operation: Operation,
    id: &str,
    image: &str,
    store: Option<&str>,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    match operation {
        Operation::Retrieve => get_one(app, caller, headers, id, image, store).await,
        Operation::Update => update(app, headers, id, image, store, body).await,
        Operation::Delete => delete(app, id, image, store).await,
        op => Err(ApiError::internal().with_cause(format!("{op:?} is not served on an image"))),
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

/// The place a route names; an unknown store is the spec's 400.
async fn place(app: &AppState, store: Option<&str>) -> Result<Place, ApiError> {
    let Some(store) = store else {
        return Ok(Place::Global);
    };
    let view = stores::view_by_id(app, store).await?;
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

fn entry_id(entry: &Value) -> Option<u64> {
    super::support::positive_id(entry, "id")
}

/// Videos (`external-video`) are gallery entries too, but not images.
fn is_image(entry: &Value) -> bool {
    entry
        .get("media_type")
        .and_then(Value::as_str)
        .is_none_or(|kind| kind == "image")
}

fn is_disabled(entry: &Value) -> bool {
    match entry.get("disabled") {
        Some(Value::Bool(b)) => *b,
        Some(other) => as_i64(other).is_some_and(|v| v != 0),
        None => false,
    }
}

/// The gallery entries of a product record.
fn entries_of(product: &Value) -> Vec<Value> {
    product
        .get("media_gallery_entries")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// A product record in another store view than the default, through the cache.
/// `label` names the values in the key: a store code, or `admin` for store id 0.
async fn store_record(
    app: &AppState,
    product_id: u64,
    sku: &str,
    label: &str,
    store_id: Option<u64>,
) -> Result<Value, ApiError> {
    let magento = app.magento.clone();
    let owned_sku = sku.to_owned();
    let code = label.to_owned();
    let bytes = record(app, format!("r|prod|{label}|{sku}"), move || async move {
        let scope = match store_id {
            Some(_) => Scope::Default,
            None => Scope::Store(&code),
        };
        let bytes = magento.product_in(scope, &owned_sku, store_id).await?;
        let tags = vec![
            products::tag_product(product_id),
            products::tag_sku(&owned_sku),
            tag_images(product_id),
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
        Place::Store(view) if view.code != app.magento.default_store() => {
            store_record(app, product_id, sku, &view.code, None).await
        }
        _ => products::product_record(app, product_id, sku).await,
    }
}

/// The images a caller may see at a place, the media URL base to show them with, and the
/// cache tags of the answer.
async fn gallery(
    app: &AppState,
    product_id: u64,
    place: &Place,
    user: UserType,
) -> Result<(Vec<Value>, String, Vec<String>), ApiError> {
    let sku = products::sku_of(app, product_id).await?;
    let product = product_for_read(app, product_id, &sku, place, user).await?;
    let shopper = user != UserType::Admin;
    // A product a shopper cannot see has no images for them either.
    if shopper && !products::shopper_visible(&product) {
        return Err(ApiError::not_found());
    }
    let code = match place {
        Place::Global => app.magento.default_store().to_owned(),
        Place::Store(view) => view.code.clone(),
    };
    let media_base = stores::config(app, &code).await?.base_media_url;
    let images = entries_of(&product)
        .into_iter()
        .filter(|e| is_image(e) && !(shopper && is_disabled(e)))
        .collect();
    let tags = vec![
        products::tag_product(product_id),
        products::tag_sku(&sku),
        tag_images(product_id),
        "stores".to_owned(),
    ];
    Ok((images, media_base, tags))
}

/// The gallery at a place as it is now, for a write to start from (never from the cache).
async fn current_product(app: &AppState, sku: &str, place: &Place) -> Result<Value, ApiError> {
    let bytes = match place {
        Place::Global => app.magento.product_in(Scope::Default, sku, Some(0)).await,
        Place::Store(view) => {
            app.magento
                .product_in(Scope::Store(&view.code), sku, None)
                .await
        }
    }
    .map_err(upstream_errors::to_api)?;
    json(&bytes)
}

fn find_image(entries: &[Value], image_id: u64) -> Result<&Value, ApiError> {
    entries
        .iter()
        .find(|e| is_image(e) && entry_id(e) == Some(image_id))
        .ok_or_else(image_not_found)
}

/// After any image write, whatever it did: the product's images and the views that show
/// its image (`image_url`, in single products and lists).
fn invalidate(app: &AppState, product_id: u64, sku: &str) {
    app.cache.invalidate(&[
        tag_images(product_id),
        products::tag_product(product_id),
        products::tag_sku(sku),
        products::LISTS.to_owned(),
    ]);
}

// ---------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------

async fn list(
    app: AppState,
    caller: Caller,
    headers: &HeaderMap,
    id: &str,
    store: Option<&str>,
) -> Result<Response, ApiError> {
    let product_id = parse_id(id)?;
    let place = place(&app, store).await?;
    let user = caller.user_type();
    let state = app.clone();
    let logical = format!("pi/{product_id}/{}", place.key());
    cached(&app, caller, headers, &logical, move || async move {
        let (images, media_base, tags) = gallery(&state, product_id, &place, user).await?;
        let fields = state.mappings.get("image").view(user, "list");
        let out: Vec<Value> = images
            .iter()
            .map(|e| Value::Object(ResourceMapping::render(&fields, e, &media_base)))
            .collect();
        Ok((Doc::new(Value::Array(out)), tags))
    })
    .await
}

async fn get_one(
    app: AppState,
    caller: Caller,
    headers: &HeaderMap,
    id: &str,
    image: &str,
    store: Option<&str>,
) -> Result<Response, ApiError> {
    let product_id = parse_id(id)?;
    let image_id = image_id(image)?;
    let place = place(&app, store).await?;
    let user = caller.user_type();
    let state = app.clone();
    let logical = format!("pi/{product_id}/{}/{image_id}", place.key());
    cached(&app, caller, headers, &logical, move || async move {
        let (images, media_base, tags) = gallery(&state, product_id, &place, user).await?;
        let entry = find_image(&images, image_id)?;
        let fields = state.mappings.get("image").view(user, "single");
        let out = ResourceMapping::render(&fields, entry, &media_base);
        Ok((Doc::new(Value::Object(out)), tags))
    })
    .await
}

// ---------------------------------------------------------------------------------------
// Input
// ---------------------------------------------------------------------------------------

/// The image types the gateway accepts (SPEC 7: a bitmap type is refused).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Jpeg,
    Png,
    Gif,
}

impl Kind {
    fn of_mime(mime: &str) -> Option<Kind> {
        let essence = mime.split(';').next().unwrap_or("").trim();
        match essence.to_ascii_lowercase().as_str() {
            "image/jpeg" | "image/jpg" => Some(Kind::Jpeg),
            "image/png" => Some(Kind::Png),
            "image/gif" => Some(Kind::Gif),
            _ => None,
        }
    }

    fn mime(self) -> &'static str {
        match self {
            Kind::Jpeg => "image/jpeg",
            Kind::Png => "image/png",
            Kind::Gif => "image/gif",
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Kind::Jpeg => "jpg",
            Kind::Png => "png",
            Kind::Gif => "gif",
        }
    }

    /// Extensions a client's file name may already end with.
    fn extensions(self) -> &'static [&'static str] {
        match self {
            Kind::Jpeg => &[".jpg", ".jpeg"],
            Kind::Png => &[".png"],
            Kind::Gif => &[".gif"],
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Jpeg => "JPEG",
            Kind::Png => "PNG",
            Kind::Gif => "GIF",
        }
    }

    /// Do the bytes start like a file of this type?
    fn matches(self, bytes: &[u8]) -> bool {
        match self {
            Kind::Jpeg => bytes.starts_with(&[0xFF, 0xD8, 0xFF]),
            Kind::Png => bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
            Kind::Gif => bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a"),
        }
    }
}

/// A file name as Magento will take it: the client's name without folders and without
/// the type's extension, characters other than letters, digits, `_`, `-` and `.` turned
/// into `_` (as the original did), at most 80 characters.
fn clean_stem(name: &str, kind: Kind) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or_default().trim();
    let lower = base.to_ascii_lowercase();
    let stem = kind
        .extensions()
        .iter()
        .find(|ext| lower.ends_with(*ext))
        .map_or(base, |ext| &base[..base.len() - ext.len()]);
    let cleaned: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    let cleaned = cleaned.trim_matches('.');
    if cleaned.chars().all(|c| c == '_') {
        "file".to_owned()
    } else {
        cleaned.to_owned()
    }
}

/// A checked file, ready for Magento.
#[derive(Debug)]
struct NewFile {
    base64: String,
    kind: Kind,
    /// The cleaned stem of the client's `file_name`, if it sent one.
    stem: Option<String>,
}

impl NewFile {
    /// Consumes the file: its base64 text moves into the request, it is not copied.
    fn content(self, stem: &str) -> Value {
        json!({
            "base64_encoded_data": self.base64,
            "type": self.kind.mime(),
            "name": format!("{stem}.{}", self.kind.extension()),
        })
    }
}

/// What a create or update asks for; `None` is "not sent".
#[derive(Debug, Default)]
struct ImageInput {
    file: Option<NewFile>,
    label: Option<Value>,
    position: Option<i64>,
    exclude: Option<bool>,
    types: Option<Vec<String>>,
}

impl ImageInput {
    fn is_empty(&self) -> bool {
        self.file.is_none()
            && self.label.is_none()
            && self.position.is_none()
            && self.exclude.is_none()
            && self.types.is_none()
    }
}

/// Checks the image file of a request: present, base64, a supported type, and content of
/// that type whose header gives sensible dimensions. The first failure answers, in this
/// order (the original's). The base64 text is taken out of `input`, checked in one pass and
/// kept as it is (`image_upload`): never decoded whole, never encoded again.
fn check_file(input: &mut Map<String, Value>) -> Result<NewFile, ApiError> {
    let content = input.get("file_content").filter(|v| !is_empty(v));
    let mime = input.get("file_mime_type").filter(|v| !is_empty(v));
    if content.is_none() || mime.is_none() {
        return Err(ApiError::validation(vec![NOT_SPECIFIED.into()]));
    }
    let file = match input.remove("file_content") {
        Some(Value::String(text)) => image_upload::check_base64(text),
        _ => None,
    }
    .ok_or_else(|| ApiError::bad_request(BAD_BASE64))?;
    let kind = input
        .get("file_mime_type")
        .and_then(Value::as_str)
        .and_then(Kind::of_mime)
        .ok_or_else(|| ApiError::bad_request(BAD_MIME))?;
    let valid = kind.matches(&file.head)
        && image_upload::dimensions(&file.head).is_some_and(image_upload::acceptable);
    if !valid {
        return Err(ApiError::validation(vec![format!(
            "The image content is not a valid {} image.",
            kind.name()
        )]));
    }
    let stem = match input.get("file_name") {
        None => None,
        Some(v) if is_empty(v) => None,
        Some(Value::String(name)) => Some(clean_stem(name, kind)),
        Some(_) => return Err(ApiError::validation(vec![invalid("file_name")])),
    };
    Ok(NewFile {
        base64: file.canonical,
        kind,
        stem,
    })
}

/// A role name (`image`, `small_image`, `thumbnail`, or a store's own media attribute).
fn is_role(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 60
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// The other fields of an image write.
fn check_params(input: &Map<String, Value>, out: &mut ImageInput) -> Vec<String> {
    let mut errors = Vec::new();
    match input.get("label") {
        None => {}
        Some(Value::Null) => out.label = Some(Value::Null),
        Some(Value::String(s)) => out.label = Some(Value::String(s.clone())),
        Some(v @ Value::Number(_)) => out.label = Some(Value::String(v.to_string())),
        Some(_) => errors.push(invalid("label")),
    }
    match input.get("position") {
        Some(v) if !is_empty(v) => match v {
            Value::Number(_) | Value::String(_) => match as_i64(v).filter(|p| *p >= 0) {
                Some(p) => out.position = Some(p),
                None => errors.push(invalid("position")),
            },
            _ => errors.push(invalid("position")),
        },
        _ => {}
    }
    match input.get("exclude") {
        Some(v) if !is_empty(v) => match v {
            Value::Bool(b) => out.exclude = Some(*b),
            Value::Number(_) | Value::String(_) => match as_i64(v) {
                Some(0) => out.exclude = Some(false),
                Some(1) => out.exclude = Some(true),
                _ => errors.push(invalid("exclude")),
            },
            _ => errors.push(invalid("exclude")),
        },
        _ => {}
    }
    match input.get("types") {
        None => {}
        // `<types/>`, `null`, `""`: no roles.
        Some(v) if is_empty(v) => out.types = Some(Vec::new()),
        Some(v) => {
            let names: Vec<&Value> = match v {
                Value::Array(list) => list.iter().collect(),
                single => vec![single],
            };
            let mut types: Vec<String> = Vec::new();
            for name in names {
                match name.as_str().map(str::trim) {
                    Some(name) if is_role(name) => {
                        if !types.iter().any(|t| t == name) {
                            types.push(name.to_owned());
                        }
                    }
                    _ => {
                        errors.push(invalid("types"));
                        break;
                    }
                }
            }
            out.types = Some(types);
        }
    }
    errors
}

/// Reads and checks an image write's body. A create needs a file; an update may send one
/// (then with its MIME type).
fn parse_input(mut input: Map<String, Value>, create: bool) -> Result<ImageInput, ApiError> {
    let mut out = ImageInput::default();
    let sends_file = input.contains_key("file_content") || input.contains_key("file_mime_type");
    if create || sends_file {
        out.file = Some(check_file(&mut input)?);
    }
    let errors = check_params(&input, &mut out);
    if !errors.is_empty() {
        return Err(ApiError::validation(errors));
    }
    Ok(out)
}

/// Image bodies have their own (larger) limit; 413 past it, never buffered beyond it.
async fn object_body(
    app: &AppState,
    headers: &HeaderMap,
    body: Body,
) -> Result<Map<String, Value>, ApiError> {
    decode_record(
        headers,
        body,
        Format::Xml,
        app.config.image_body_limit,
        ApiError::request_data_invalid,
    )
    .await
}

// ---------------------------------------------------------------------------------------
// Writes
// ---------------------------------------------------------------------------------------

/// The next default file name: `image`, then `image_2`, `image_3`, ... after the highest
/// the gallery holds. Magento renames a taken `image` to `image_1`, which counts as the
/// first.
fn next_default_stem(entries: &[Value]) -> String {
    let highest = entries
        .iter()
        .filter_map(|e| e.get("file").and_then(Value::as_str))
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
fn next_position(entries: &[Value]) -> i64 {
    entries
        .iter()
        .filter_map(|e| e.get("position").and_then(as_i64))
        .max()
        .unwrap_or(0)
        + 1
}

/// Can the product hold images at all? Its attribute set must have the media gallery
/// attribute (the original's condition). Magento 2 has no such refusal of its own, so the
/// gateway asks for the set's attributes (cached). An integration that may not read
/// attribute sets does not block image uploads: the check is skipped.
async fn ensure_supports_images(app: &AppState, product: &Value) -> Result<(), ApiError> {
    let Some(set_id) = product
        .get("attribute_set_id")
        .and_then(as_i64)
        .filter(|&id| id > 0)
    else {
        return Ok(());
    };
    let magento = app.magento.clone();
    let found = app
        .cache
        .get_or_fetch(&format!("r|attrset|{set_id}"), move || async move {
            let bytes = magento.attribute_set_attributes(set_id as u64).await?;
            Ok::<_, UpstreamError>(Fetched::new(
                cache::Value::Bytes(bytes),
                vec![ATTRIBUTE_SETS.to_owned()],
            ))
        })
        .await;
    let entry = match found {
        Ok((entry, _)) => entry,
        Err(UpstreamError::Status {
            status: 401 | 403, ..
        }) => {
            tracing::warn!(
                set_id,
                "cannot read attribute sets (grant Magento_Catalog::sets); image support not checked"
            );
            return Ok(());
        }
        Err(e) => return Err(upstream_errors::to_api(e)),
    };
    let cache::Value::Bytes(bytes) = &entry.value else {
        return Err(ApiError::internal().with_cause("attribute set entry holds no bytes"));
    };
    match crate::upstream::media::has_attribute(bytes, "media_gallery") {
        Ok(true) => Ok(()),
        Ok(false) => Err(ApiError::bad_request(NO_IMAGES)),
        Err(e) => Err(upstream_errors::to_api(e)),
    }
}

/// Magento's media refusals in the spec's words; anything else as every upstream error.
fn media_error(error: UpstreamError) -> ApiError {
    if let UpstreamError::Status { status, error: m2 } = &error {
        let text = m2.text();
        let mapped = match (*status, text.as_str()) {
            (404, t)
                if t.starts_with("No image with the provided ID")
                    || t.starts_with("The image doesn't exist") =>
            {
                Some(image_not_found())
            }
            (400, "The image content must be valid base64 encoded data.") => {
                Some(ApiError::bad_request(BAD_BASE64))
            }
            (400, "The image MIME type is not valid or not supported.") => {
                Some(ApiError::bad_request(BAD_MIME))
            }
            _ => None,
        };
        if let Some(mapped) = mapped {
            return mapped.with_cause(&error);
        }
    }
    upstream_errors::to_api(error)
}

fn location(product_id: u64, image_id: u64) -> String {
    format!("/api/rest/products/{product_id}/images/{image_id}")
}

async fn create(
    app: AppState,
    headers: &HeaderMap,
    id: &str,
    store: Option<&str>,
    body: Body,
) -> Result<Response, ApiError> {
    let product_id = parse_id(id)?;
    let _upload = image_upload::upload_permit(&app).await?;
    let mut input = parse_input(object_body(&app, headers, body).await?, true)?;
    let Some(file) = input.file.take() else {
        return Err(ApiError::validation(vec![NOT_SPECIFIED.into()]));
    };
    let place = place(&app, store).await?;
    let sku = products::sku_of(&app, product_id).await?;
    let current = current_product(&app, &sku, &place).await?;
    ensure_supports_images(&app, &current).await?;
    let entries = entries_of(&current);
    let stem = file
        .stem
        .clone()
        .unwrap_or_else(|| next_default_stem(&entries));
    let mut entry = json!({
        "media_type": "image",
        "position": input.position.unwrap_or_else(|| next_position(&entries)),
        "disabled": input.exclude.unwrap_or(false),
        "types": input.types.unwrap_or_default(),
        "content": file.content(&stem),
    });
    if let Some(label) = input.label {
        entry["label"] = label;
    }
    // Through a store code Magento adds the entry to the product (every store has it) with
    // the given values as that store view's: SPEC 4.3's per-store create.
    let result = app
        .magento
        .add_media(place.write_scope(), &sku, entry)
        .await;
    invalidate(&app, product_id, &sku);
    let image_id = result.map_err(media_error)?;
    Ok(created(&location(product_id, image_id)))
}

async fn update(
    app: AppState,
    headers: &HeaderMap,
    id: &str,
    image: &str,
    store: Option<&str>,
    body: Body,
) -> Result<Response, ApiError> {
    let product_id = parse_id(id)?;
    let image_id = image_id(image)?;
    let _upload = image_upload::upload_permit(&app).await?;
    let mut input = parse_input(object_body(&app, headers, body).await?, false)?;
    if input.is_empty() {
        return Err(ApiError::request_data_invalid());
    }
    let place = place(&app, store).await?;
    let sku = products::sku_of(&app, product_id).await?;
    let entries = entries_of(&current_product(&app, &sku, &place).await?);
    let existing = find_image(&entries, image_id)?;
    // Magento replaces the whole entry: what the client did not send keeps its value.
    let keep = |field: &str| existing.get(field).cloned().unwrap_or(Value::Null);
    let mut entry = json!({
        "media_type": "image",
        "label": input.label.clone().unwrap_or_else(|| keep("label")),
        "position": input.position.map_or_else(|| keep("position"), |p| json!(p)),
        "disabled": input.exclude.unwrap_or_else(|| is_disabled(existing)),
        "types": input.types.clone().map_or_else(|| keep("types"), |t| json!(t)),
    });
    let replaced = input.file.is_some();
    if let Some(file) = input.file.take() {
        let stem = file.stem.clone().unwrap_or_else(|| {
            existing
                .get("file")
                .and_then(Value::as_str)
                .map(|f| {
                    let base = f.rsplit('/').next().unwrap_or(f);
                    clean_stem(base.rsplit_once('.').map_or(base, |(s, _)| s), file.kind)
                })
                .unwrap_or_else(|| next_default_stem(&entries))
        });
        entry["content"] = file.content(&stem);
    }
    let result = app
        .magento
        .update_media(place.write_scope(), &sku, image_id, entry)
        .await;
    invalidate(&app, product_id, &sku);
    result.map_err(media_error)?;
    if replaced {
        // Magento keeps a new file as a new gallery entry, with a new id: say where the
        // image is now. A failure to find out does not undo the update.
        let before: HashSet<u64> = entries.iter().filter_map(entry_id).collect();
        match current_product(&app, &sku, &place).await {
            Ok(after) => {
                let new_id = entries_of(&after)
                    .iter()
                    .filter(|e| is_image(e))
                    .filter_map(entry_id)
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

async fn delete(
    app: AppState,
    id: &str,
    image: &str,
    store: Option<&str>,
) -> Result<Response, ApiError> {
    let product_id = parse_id(id)?;
    let image_id = image_id(image)?;
    let place = place(&app, store).await?;
    let sku = products::sku_of(&app, product_id).await?;
    let entries = entries_of(&current_product(&app, &sku, &place).await?);
    let existing = find_image(&entries, image_id)?;
    let result = match &place {
        Place::Global => app.magento.delete_media(&sku, image_id).await,
        // In one store view only: the image stays in the gallery, excluded and in no role
        // there (SPEC 2.3 "set to No Image for the store").
        Place::Store(view) => {
            let entry = json!({
                "media_type": "image",
                "label": existing.get("label").cloned().unwrap_or(Value::Null),
                "position": existing.get("position").cloned().unwrap_or(Value::Null),
                "disabled": true,
                "types": [],
            });
            app.magento
                .update_media(Scope::Store(&view.code), &sku, image_id, entry)
                .await
        }
    };
    invalidate(&app, product_id, &sku);
    result.map_err(media_error)?;
    Ok(empty_ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01";

    fn body(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    fn first(result: Result<ImageInput, ApiError>) -> String {
        result.unwrap_err().first_message().to_owned()
    }

    #[test]
    fn image_checks_in_the_original_order() {
        let png = STANDARD.encode(PNG);
        assert_eq!(
            first(parse_input(
                body(json!({"file_mime_type": "image/png"})),
                true
            )),
            NOT_SPECIFIED
        );
        assert_eq!(
            first(parse_input(
                body(json!({"file_content": "%%%", "file_mime_type": "image/bmp"})),
                true
            )),
            BAD_BASE64
        );
        assert_eq!(
            first(parse_input(
                body(json!({"file_content": png, "file_mime_type": "image/bmp"})),
                true
            )),
            BAD_MIME
        );
        assert_eq!(
            first(parse_input(
                body(json!({"file_content": png, "file_mime_type": "image/jpeg"})),
                true
            )),
            "The image content is not a valid JPEG image."
        );
        let ok = parse_input(
            body(json!({"file_content": png, "file_mime_type": "Image/PNG", "file_name": "My Front.PNG",
                         "label": "Front", "position": "3", "exclude": "1", "types": ["image", "image"]})),
            true,
        )
        .unwrap();
        let file = ok.file.unwrap();
        assert_eq!(
            (file.kind, file.stem.as_deref()),
            (Kind::Png, Some("My_Front"))
        );
        assert_eq!(ok.position, Some(3));
        assert_eq!(ok.exclude, Some(true));
        assert_eq!(ok.types, Some(vec!["image".to_owned()]));
    }

    #[test]
    fn update_fields_are_checked() {
        let e = parse_input(
            body(json!({"position": -1, "exclude": 2, "types": ["Bad Role"], "label": [1]})),
            false,
        )
        .unwrap_err();
        let texts: Vec<&str> = e.messages().iter().map(|m| &*m.text).collect();
        assert_eq!(
            texts,
            [
                "Invalid value for \"label\" in request.",
                "Invalid value for \"position\" in request.",
                "Invalid value for \"exclude\" in request.",
                "Invalid value for \"types\" in request.",
                "Resource data pre-validation error."
            ]
        );
        assert!(
            parse_input(body(json!({"x": 1})), false)
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            parse_input(body(json!({"types": ""})), false)
                .unwrap()
                .types,
            Some(vec![])
        );
        assert_eq!(
            first(parse_input(body(json!({"file_content": "abc"})), false)),
            NOT_SPECIFIED
        );
    }

    #[test]
    fn default_names_follow_the_gallery() {
        let files =
            |names: &[&str]| -> Vec<Value> { names.iter().map(|f| json!({"file": f})).collect() };
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
        assert_eq!(
            next_position(&[json!({"position": 2}), json!({"position": null})]),
            3
        );
        assert_eq!(next_position(&[]), 1);
    }

    #[test]
    fn file_names_are_cleaned() {
        assert_eq!(
            clean_stem("C:\\pics\\front view.jpeg", Kind::Jpeg),
            "front_view"
        );
        assert_eq!(clean_stem("../../etc/passwd", Kind::Png), "passwd");
        assert_eq!(clean_stem("a.png", Kind::Jpeg), "a.png");
        assert_eq!(clean_stem("***", Kind::Gif), "file");
        assert_eq!(clean_stem(&"x".repeat(200), Kind::Gif).len(), 80);
    }
}
