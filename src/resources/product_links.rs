//! A product's categories and websites, the original's routes beyond the spec:
//! `/products/:id/categories[/:category_id]` (everyone reads, Admin assigns and removes) and
//! `/products/:id/websites[/:website_id]` (Admin only).
//!
//! Magento 2 keeps both assignments on the product (`extension_attributes.category_links`
//! and `website_ids`), so the lists are read from the cached product record; the writes go
//! through Magento's link repositories and drop what they change from the cache: the
//! product (its records, views and lists) and, for a category, that category's lists.
//!
//! The answers are the original's (`m1-extra-routes/`): `[{"category_id": "2"}]`, 200 with a
//! `Location` on create, its messages for an assignment that is already there or not there,
//! and its checks in its order. Shoppers see only active categories, as the original's
//! shopper handler filtered them; the Admin sees every assignment.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::response::Response;
use http::{HeaderMap, Method};
use serde_json::{Map, Value, json};

use crate::app::AppState;
use crate::auth::UserType;
use crate::auth::caller::Caller;
use crate::backend::errors;
use crate::cache::keys::{key, tag};
use crate::http::body::decode_record;
use crate::http::{ApiError, Doc, Format, created, empty_ok, ok};
use crate::records::catalog::product_index::sku_of;
use crate::records::catalog::product_records::product_record;
use crate::records::{json, record};
use crate::resources::parse_id;
use crate::rules::mapping::convert::as_i64;
use crate::rules::policy::{Operation, Route, authorize};

/// The category every catalog tree hangs from; nothing is assigned to it.
const TREE_ROOT: u64 = 1;

/// `/products/:id/categories`.
pub async fn categories(
    State(app): State<AppState>,
    caller: Caller,
    method: Method,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Body,
) -> Result<Response, ApiError> {
    match authorize(Route::ProductCategories, &method, caller.principal)? {
        Operation::Retrieve => list_categories(app, caller, &id).await,
        Operation::Create => assign_category(app, &headers, &id, body).await,
        _ => Err(ApiError::not_supported()),
    }
}

/// `/products/:id/categories/:category_id`.
pub async fn category(
    State(app): State<AppState>,
    caller: Caller,
    method: Method,
    Path((id, category_id)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    match authorize(Route::ProductCategory, &method, caller.principal)? {
        Operation::Delete => unassign_category(app, &id, &category_id).await,
        _ => Err(ApiError::not_implemented()),
    }
}

/// `/products/:id/websites`.
pub async fn websites(
    State(app): State<AppState>,
    caller: Caller,
    method: Method,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Body,
) -> Result<Response, ApiError> {
    match authorize(Route::ProductWebsites, &method, caller.principal)? {
        Operation::Retrieve => list_websites(app, caller, &id).await,
        Operation::Create => assign_website(app, &headers, &id, body).await,
        _ => Err(ApiError::not_supported()),
    }
}

/// `/products/:id/websites/:website_id`.
pub async fn website(
    State(app): State<AppState>,
    caller: Caller,
    method: Method,
    Path((id, website_id)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    match authorize(Route::ProductWebsite, &method, caller.principal)? {
        Operation::Delete => unassign_website(app, &id, &website_id).await,
        _ => Err(ApiError::not_supported()),
    }
}

/// The product's record, by id: `Resource not found.` when there is none.
async fn product(app: &AppState, id: u64) -> Result<(std::sync::Arc<str>, Value), ApiError> {
    let sku = sku_of(app, id).await?;
    let record = product_record(app, id, &sku).await?;
    Ok((sku, record))
}

/// The category ids a product record is assigned to, ascending.
fn category_ids(record: &Value) -> Vec<u64> {
    let mut ids: Vec<u64> = record
        .pointer("/extension_attributes/category_links")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|link| link.get("category_id").and_then(as_i64))
        .filter(|&id| id > 0)
        .map(|id| id as u64)
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// The website ids a product record is in, ascending.
fn website_ids(record: &Value) -> Vec<u64> {
    let mut ids: Vec<u64> = record
        .pointer("/extension_attributes/website_ids")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(as_i64)
        .filter(|&id| id > 0)
        .map(|id| id as u64)
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// A category's record through the cache; `None` when Magento has no such category.
async fn category_record(app: &AppState, id: u64) -> Result<Option<Value>, ApiError> {
    let magento = app.magento.clone();
    let fetched = record(app, key::category(id), move || async move {
        let bytes = magento.category(id).await?;
        Ok((bytes, vec![tag::category(id)]))
    })
    .await;
    match fetched {
        Ok(bytes) => json(&bytes).map(Some),
        Err(error) if error.status() == http::StatusCode::NOT_FOUND => Ok(None),
        Err(error) => Err(error),
    }
}

/// The original's answer for a category it cannot load (no period, 404).
fn category_not_found() -> ApiError {
    ApiError::new(http::StatusCode::NOT_FOUND, "Category not found")
}

fn listed(format: Format, field: &str, ids: &[u64]) -> Response {
    let list: Vec<Value> = ids
        .iter()
        .map(|id| json!({ field: id.to_string() }))
        .collect();
    ok(format, &Doc::new(Value::Array(list)))
}

async fn list_categories(app: AppState, caller: Caller, id: &str) -> Result<Response, ApiError> {
    let id = parse_id(id)?;
    let (_, record) = product(&app, id).await?;
    let mut ids = category_ids(&record);
    if caller.user_type() != UserType::Admin {
        let mut active = Vec::with_capacity(ids.len());
        for category_id in ids {
            let shown = category_record(&app, category_id)
                .await?
                .is_some_and(|c| c.get("is_active").is_none_or(truthy));
            if shown {
                active.push(category_id);
            }
        }
        ids = active;
    }
    Ok(listed(caller.format, "category_id", &ids))
}

fn truthy(value: &Value) -> bool {
    match value {
        Value::Bool(b) => *b,
        Value::Null => false,
        other => as_i64(other).is_some_and(|n| n != 0),
    }
}

/// The original's field check of `category_id`: required, and digits only.
fn requested_category(input: &Map<String, Value>) -> Result<u64, ApiError> {
    let value = input.get("category_id").filter(|v| match v {
        Value::Null => false,
        Value::String(s) => !s.trim().is_empty(),
        _ => true,
    });
    let Some(value) = value else {
        return Err(ApiError::validation(vec![
            "category_id: Value is required and can't be empty".into(),
        ]));
    };
    let digits = match value {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => {
            let s = s.trim();
            s.strip_prefix('+')
                .unwrap_or(s)
                .parse::<u64>()
                .ok()
                .filter(|_| s.chars().all(|c| c.is_ascii_digit() || c == '+'))
        }
        _ => None,
    };
    digits.ok_or_else(|| {
        ApiError::validation(vec![
            "category_id: Please use numbers only in \"category_id\" field.".into(),
        ])
    })
}

async fn assign_category(
    app: AppState,
    headers: &HeaderMap,
    id: &str,
    body: Body,
) -> Result<Response, ApiError> {
    let id = parse_id(id)?;
    let input = decode_record(
        headers,
        body,
        Format::Xml,
        app.config.body_limit,
        ApiError::request_data_invalid,
    )
    .await?;
    let category_id = requested_category(&input)?;
    let (sku, record) = product(&app, id).await?;
    if category_record(&app, category_id).await?.is_none() {
        return Err(category_not_found());
    }
    if category_ids(&record).contains(&category_id) {
        return Err(ApiError::bad_request(format!(
            "Product #{id} is already assigned to category #{category_id}"
        )));
    }
    if category_id == TREE_ROOT {
        return Err(ApiError::bad_request(
            "Cannot assign product to tree root category.",
        ));
    }
    let result = app.magento.assign_category(category_id, &sku, 0).await;
    invalidate_category_write(&app, id, &sku, category_id);
    result.map_err(errors::to_api)?;
    Ok(created(&format!(
        "/api/rest/products/{id}/categories/{category_id}"
    )))
}

async fn unassign_category(
    app: AppState,
    id: &str,
    category_id: &str,
) -> Result<Response, ApiError> {
    let id = parse_id(id)?;
    let (sku, record) = product(&app, id).await?;
    let category_id = parse_id(category_id).map_err(|_| category_not_found())?;
    if category_record(&app, category_id).await?.is_none() {
        return Err(category_not_found());
    }
    if !category_ids(&record).contains(&category_id) {
        return Err(ApiError::bad_request(format!(
            "Product #{id} isn't assigned to category #{category_id}"
        )));
    }
    let result = app.magento.unassign_category(category_id, &sku).await;
    invalidate_category_write(&app, id, &sku, category_id);
    result.map_err(errors::to_api)?;
    Ok(empty_ok())
}

/// Whatever the write's outcome, what was cached about the product and the category's
/// lists is suspect now.
fn invalidate_category_write(app: &AppState, id: u64, sku: &str, category_id: u64) {
    app.cache.invalidate(&[
        tag::LISTS.to_owned(),
        tag::product(id),
        tag::sku(sku),
        tag::category(category_id),
    ]);
}

/// The websites Magento has (ids; the admin website 0 is not one a product can be in).
async fn website_exists(app: &AppState, website_id: u64) -> Result<bool, ApiError> {
    let magento = app.magento.clone();
    let bytes = record(app, key::websites(), move || async move {
        let bytes = magento.websites().await?;
        Ok((bytes, vec![tag::STORES.to_owned()]))
    })
    .await?;
    let websites = json(&bytes)?;
    Ok(websites
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|w| w.get("id").and_then(as_i64))
        .any(|w| w > 0 && w as u64 == website_id))
}

/// The product of a website route, with the original's message for one that is not there.
async fn website_product(
    app: &AppState,
    id: &str,
) -> Result<(std::sync::Arc<str>, Value, u64), ApiError> {
    let not_found = || {
        ApiError::new(
            http::StatusCode::NOT_FOUND,
            format!("Product #{id} not found."),
        )
    };
    let numeric = parse_id(id).map_err(|_| not_found())?;
    match product(app, numeric).await {
        Ok((sku, record)) => Ok((sku, record, numeric)),
        Err(error) if error.status() == http::StatusCode::NOT_FOUND => Err(not_found()),
        Err(error) => Err(error),
    }
}

async fn list_websites(app: AppState, caller: Caller, id: &str) -> Result<Response, ApiError> {
    let (_, record, _) = website_product(&app, id).await?;
    Ok(listed(caller.format, "website_id", &website_ids(&record)))
}

async fn assign_website(
    app: AppState,
    headers: &HeaderMap,
    id: &str,
    body: Body,
) -> Result<Response, ApiError> {
    let (sku, record, id) = website_product(&app, id).await?;
    let input = decode_record(
        headers,
        body,
        Format::Xml,
        app.config.body_limit,
        ApiError::request_data_invalid,
    )
    .await?;
    let website_id = input.get("website_id").and_then(|v| match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse::<u64>().ok(),
        _ => None,
    });
    let Some(website_id) = website_id else {
        return Err(ApiError::validation(vec![
            "Invalid value for \"website_id\" in request.".into(),
        ]));
    };
    if !website_exists(&app, website_id).await? {
        return Err(ApiError::validation(vec![format!(
            "Website #{website_id} not found."
        )]));
    }
    if website_ids(&record).contains(&website_id) {
        return Err(ApiError::validation(vec![format!(
            "Product #{id} is already assigned to website #{website_id}"
        )]));
    }
    if input.contains_key("copy_to_stores") {
        // docs/decisions/legacy-routes.md: Magento 2 has no copy of a product's store-view
        // values; refusing says so, where ignoring it would lose the client's intent.
        return Err(ApiError::validation(vec![
            "\"copy_to_stores\" is not supported by this gateway.".into(),
        ]));
    }
    let result = app.magento.assign_website(&sku, website_id).await;
    invalidate_product(&app, id, &sku);
    result.map_err(errors::to_api)?;
    Ok(created(&format!(
        "/api/rest/products/{id}/websites/{website_id}"
    )))
}

async fn unassign_website(app: AppState, id: &str, website_id: &str) -> Result<Response, ApiError> {
    let (sku, record, id) = website_product(&app, id).await?;
    let website_not_found = || {
        ApiError::new(
            http::StatusCode::NOT_FOUND,
            format!("Website #{website_id} not found."),
        )
    };
    let numeric = parse_id(website_id).map_err(|_| website_not_found())?;
    if !website_exists(&app, numeric).await? {
        return Err(website_not_found());
    }
    if !website_ids(&record).contains(&numeric) {
        return Err(ApiError::validation(vec![format!(
            "Product #{id} isn't assigned to website #{numeric}"
        )]));
    }
    let result = app.magento.unassign_website(&sku, numeric).await;
    invalidate_product(&app, id, &sku);
    result.map_err(errors::to_api)?;
    Ok(empty_ok())
}

/// A website change moves the product in or out of every store view's lists.
fn invalidate_product(app: &AppState, id: u64, sku: &str) {
    app.cache
        .invalidate(&[tag::LISTS.to_owned(), tag::product(id), tag::sku(sku)]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_category_field_check_is_the_originals() {
        let check = |v: Value| requested_category(v.as_object().unwrap());
        assert_eq!(check(json!({"category_id": 3})).unwrap(), 3);
        assert_eq!(check(json!({"category_id": "12"})).unwrap(), 12);
        let missing = check(json!({"name": "x"})).unwrap_err();
        assert_eq!(
            missing.first_message(),
            "category_id: Value is required and can't be empty"
        );
        for bad in [json!("abc"), json!("1.5"), json!(-2), json!([1])] {
            let err = check(json!({ "category_id": bad })).unwrap_err();
            assert_eq!(
                err.first_message(),
                "category_id: Please use numbers only in \"category_id\" field."
            );
            assert_eq!(err.messages().len(), 2, "then the pre-validation message");
        }
    }

    #[test]
    fn assignments_are_read_from_the_product_record() {
        let record = json!({"extension_attributes": {
            "category_links": [{"category_id": "5", "position": 0}, {"category_id": 3}],
            "website_ids": [2, 1, 1]
        }});
        assert_eq!(category_ids(&record), vec![3, 5]);
        assert_eq!(website_ids(&record), vec![1, 2]);
        assert!(category_ids(&json!({})).is_empty());
    }
}
