//! `/V1/products/{sku}/media`: list, read, create, update and delete gallery entries.

use crate::api::call::Call;
use crate::model::media::{add_entry, gallery_json, remove_entry, update_entry, validate_content};
use crate::state::Db;
use crate::state::media_files::store_file;
use crate::webapi::error::{ApiError, ApiResult};
use crate::webapi::input;
use crate::webapi::messages;
use serde_json::{Map, Value, json};

fn entry_body<'a>(call: &'a Call<'_>) -> ApiResult<&'a Map<String, Value>> {
    input::opt_object(call.body(), "entry", "entry")?.ok_or_else(|| ApiError::required("entry"))
}

fn product_not_found() -> ApiError {
    ApiError::not_found(messages::PRODUCT_NOT_FOUND)
}

/// `GET /V1/products/{sku}/media`
pub(crate) fn list(call: &Call) -> ApiResult<Value> {
    let db = call.db();
    let product = db
        .product_by_sku(call.param("sku"))
        .ok_or_else(product_not_found)?;
    Ok(Value::Array(gallery_json(product, call.store.id)))
}

/// `GET /V1/products/{sku}/media/{entryId}`
pub(crate) fn get(call: &Call) -> ApiResult<Value> {
    let entry_id = call.param_int("entryId")?;
    let db = call.db();
    let product = db
        .product_by_sku(call.param("sku"))
        .ok_or_else(|| ApiError::not_found(messages::MEDIA_GET_PRODUCT_MISSING))?;
    product
        .media
        .iter()
        .find(|e| e.id as i64 == entry_id)
        .map(|e| e.to_json(call.store.id, &product.roles))
        .ok_or_else(|| ApiError::not_found(messages::MEDIA_GET_IMAGE_MISSING))
}

/// `POST /V1/products/{sku}/media`: answers the new entry id.
pub(crate) fn create(call: &Call) -> ApiResult<Value> {
    let entry = entry_body(call)?;
    let upload = validate_content(input::opt_object(entry, "content", "content")?)?;
    let mut db = call.db_mut();
    let id = db
        .product_id_by_sku(call.param("sku"))
        .ok_or_else(product_not_found)?;
    let supports_images = {
        let product = db.products.get(&id).ok_or_else(product_not_found)?;
        db.catalog
            .attribute_set(product.attribute_set_id)
            .is_some_and(|s| s.has_media_gallery)
    };
    if !supports_images {
        // The repository refuses ("Requested product does not support images.") and
        // GalleryManagement::create masks every such failure with this message.
        return Err(ApiError::bad_request(messages::PRODUCT_CANT_BE_SAVED));
    }
    let file = store_file(&mut db, upload)?;
    let now = crate::webapi::clock::now();
    let Db {
        products,
        next_media_id,
        ..
    } = &mut *db;
    let product = products.get_mut(&id).ok_or_else(product_not_found)?;
    let entry_id = add_entry(next_media_id, product, entry, file, call.store.id)?;
    product.updated_at = now;
    Ok(json!(entry_id))
}

/// `PUT /V1/products/{sku}/media/{entryId}`: the entry is found by `entry.id` in the body.
pub(crate) fn update(call: &Call) -> ApiResult<Value> {
    let entry = entry_body(call)?;
    let mut db = call.db_mut();
    let id = db
        .product_id_by_sku(call.param("sku"))
        .ok_or_else(product_not_found)?;
    let not_found = || ApiError::not_found(messages::MEDIA_ENTRY_NOT_FOUND);
    let wanted = input::opt_int(entry, "id")?;
    let index = {
        let product = db.products.get(&id).ok_or_else(product_not_found)?;
        product
            .media
            .iter()
            .position(|e| Some(e.id as i64) == wanted)
            .ok_or_else(not_found)?
    };
    let content = input::opt_object(entry, "content", "content")?;
    let replacement = match content {
        // A new file replaces the entry; GalleryManagement::update reports any failure of
        // that save as "The product can't be saved."
        Some(content) => Some(
            validate_content(Some(content))
                .map_err(|_| ApiError::bad_request(messages::PRODUCT_CANT_BE_SAVED))?,
        ),
        None => None,
    };
    let new_file = match replacement {
        Some(upload) => Some(store_file(&mut db, upload)?),
        None => None,
    };
    let now = crate::webapi::clock::now();
    let product = db.products.get_mut(&id).ok_or_else(product_not_found)?;
    if let Some(file) = new_file {
        let old = product.media[index].file.clone();
        for target in product.roles.values_mut() {
            if *target == old {
                *target = file.clone();
            }
        }
        product.media[index].file = file;
    }
    update_entry(product, index, entry, call.store.id)?;
    product.updated_at = now;
    Ok(json!(true))
}

/// `DELETE /V1/products/{sku}/media/{entryId}`: removes the entry for all store views.
pub(crate) fn delete(call: &Call) -> ApiResult<Value> {
    let entry_id = call.param_int("entryId")?;
    let mut db = call.db_mut();
    let id = db
        .product_id_by_sku(call.param("sku"))
        .ok_or_else(product_not_found)?;
    let product = db.products.get_mut(&id).ok_or_else(product_not_found)?;
    let index = product
        .media
        .iter()
        .position(|e| e.id as i64 == entry_id)
        .ok_or_else(|| ApiError::not_found(messages::MEDIA_ENTRY_NOT_FOUND))?;
    remove_entry(product, index);
    product.updated_at = crate::webapi::clock::now();
    Ok(json!(true))
}
