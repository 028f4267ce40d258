//! A product's category and website assignments, as Magento's link repositories keep them:
//! `POST /V1/categories/{categoryId}/products` (`productLink`: assign or move, an upsert),
//! `DELETE /V1/categories/{categoryId}/products/{sku}`, `POST /V1/products/{sku}/websites`
//! (`productWebsiteLink`) and `DELETE /V1/products/{sku}/websites/{websiteId}`. Each answers
//! `true`. The assignments themselves live on the product (`category_links`, `website_ids`),
//! where `GET /V1/products/{sku}` shows them.

use serde_json::{Map, Value, json};

use crate::api::call::Call;
use crate::webapi::clock;
use crate::webapi::error::{ApiError, ApiResult, Params};
use crate::webapi::input;
use crate::webapi::messages;

fn wrapped<'a>(call: &'a Call, wrapper: &str) -> ApiResult<&'a Map<String, Value>> {
    match input::present(&call.body, wrapper) {
        Some(Value::Object(inner)) => Ok(inner),
        Some(other) => Err(ApiError::type_mismatch(other, wrapper)),
        None => Err(ApiError::required(wrapper)),
    }
}

fn required_text(map: &Map<String, Value>, field: &str) -> ApiResult<String> {
    match input::present(map, field) {
        Some(value) => input::to_string(value),
        None => Err(ApiError::required(field)),
    }
}

fn category_param(call: &Call) -> ApiResult<u64> {
    let id = call.param_int("categoryId")?;
    u64::try_from(id).map_err(|_| ApiError::no_such_entity("id", json!(id)))
}

/// `POST /V1/categories/{categoryId}/products` with `{"productLink": {"sku", "position"}}`.
pub(crate) fn assign_category(call: &Call) -> ApiResult<Value> {
    let category_id = category_param(call)?;
    let link = wrapped(call, "productLink")?;
    let sku = required_text(link, "sku")?;
    let position = input::opt_int(link, "position")?.unwrap_or(0);
    let mut db = call.db_mut();
    if !db.categories.contains_key(&category_id) {
        return Err(ApiError::no_such_entity("id", json!(category_id)));
    }
    let id = db
        .product_id_by_sku(&sku)
        .ok_or_else(|| ApiError::not_found(messages::PRODUCT_NOT_FOUND))?;
    let product = db.products.get_mut(&id).expect("indexed products exist");
    match product
        .category_links
        .iter_mut()
        .find(|l| l.category_id == category_id)
    {
        Some(existing) => existing.position = position,
        None => product
            .category_links
            .push(crate::model::product::CategoryLink {
                category_id,
                position,
            }),
    }
    product.updated_at = clock::now();
    Ok(json!(true))
}

/// `DELETE /V1/categories/{categoryId}/products/{sku}`.
pub(crate) fn unassign_category(call: &Call) -> ApiResult<Value> {
    let category_id = category_param(call)?;
    let mut db = call.db_mut();
    if !db.categories.contains_key(&category_id) {
        return Err(ApiError::no_such_entity("id", json!(category_id)));
    }
    let id = db
        .product_id_by_sku(call.param("sku"))
        .ok_or_else(|| ApiError::not_found(messages::PRODUCT_NOT_FOUND))?;
    let product = db.products.get_mut(&id).expect("indexed products exist");
    let before = product.category_links.len();
    product
        .category_links
        .retain(|l| l.category_id != category_id);
    if product.category_links.len() == before {
        return Err(ApiError::bad_request(messages::CATEGORY_LACKS_PRODUCT));
    }
    product.updated_at = clock::now();
    Ok(json!(true))
}

/// `POST /V1/products/{sku}/websites` with `{"productWebsiteLink": {"sku", "website_id"}}`.
/// The SKU of the path wins over the body's, as Magento's parameter overrider makes it.
pub(crate) fn assign_website(call: &Call) -> ApiResult<Value> {
    let link = wrapped(call, "productWebsiteLink")?;
    let website_id = match input::present(link, "website_id") {
        Some(value) => input::to_int(value)?,
        None => return Err(ApiError::required("websiteId")),
    };
    let mut db = call.db_mut();
    let id = db
        .product_id_by_sku(call.param("sku"))
        .ok_or_else(|| ApiError::not_found(messages::PRODUCT_NOT_FOUND))?;
    let known = db
        .stores
        .websites
        .iter()
        .any(|w| i64::from(w.id) == website_id && w.id != 0);
    let product = db.products.get_mut(&id).expect("indexed products exist");
    if !known {
        // The save fails on the website's foreign key; the repository says so.
        return Err(ApiError::bad_request_with(
            messages::WEBSITE_ASSIGN_FAILED,
            Params::List(vec![json!(product.sku), json!(website_id.to_string())]),
        ));
    }
    if !product.website_ids.contains(&website_id) {
        product.website_ids.push(website_id);
    }
    product.updated_at = clock::now();
    Ok(json!(true))
}

/// `DELETE /V1/products/{sku}/websites/{websiteId}`: removing a website the product is not
/// in changes nothing and is no error.
pub(crate) fn unassign_website(call: &Call) -> ApiResult<Value> {
    let website_id = call.param_int("websiteId")?;
    let mut db = call.db_mut();
    let id = db
        .product_id_by_sku(call.param("sku"))
        .ok_or_else(|| ApiError::not_found(messages::PRODUCT_NOT_FOUND))?;
    let product = db.products.get_mut(&id).expect("indexed products exist");
    product.website_ids.retain(|w| *w != website_id);
    product.updated_at = clock::now();
    Ok(json!(true))
}
