//! A product's categories and websites, the original's routes beyond the spec:
//! `/products/:id/categories[/:category_id]` (everyone reads, Admin assigns and removes) and
//! `/products/:id/websites[/:website_id]` (Admin only).
//!
//! The store keeps both assignments on the product (the back end reads them from the cached
//! product record, `Backend::read_assignments`); the writes are the back end's link
//! operations, and drop what they change from the cache: the product (its records, views
//! and lists) and, for a category, that category's lists.
//!
//! The answers are the original's (`m1-extra-routes/`): `[{"category_id": "2"}]`, 200 with a
//! `Location` on create, its messages for an assignment that is already there or not there,
//! and its checks in its order. Shoppers see only active categories, as the original's
//! shopper handler filtered them; the Admin sees every assignment.

use axum::extract::Path;
use axum::response::Response;
use serde_json::{Map, Value, json};

use super::call::ApiCall;
use crate::app::AppState;
use crate::auth::UserType;
use crate::auth::caller::Caller;
use crate::backend::port::{Assignments, BackendError, Category};
use crate::cache::keys::{key, tag};
use crate::http::{ApiError, Doc, Format, created, empty_ok, ok};
use crate::records::catalog::product_index::sku_of;
use crate::records::catalog::product_records::product_record;
use crate::records::typed;
use crate::resources::parse_id;
use crate::rules::backend_errors;
use crate::rules::policy::{Operation, Route};
use crate::rules::write_outcome;

/// The path of one assignment: the product's id, and the category's or website's.
type TwoIds = Path<(String, String)>;

/// The category every catalog tree hangs from; nothing is assigned to it.
const TREE_ROOT: u64 = 1;

/// `/products/:id/categories`.
pub async fn categories(Path(id): Path<String>, call: ApiCall) -> Result<Response, ApiError> {
    if list_or_assign(&call, Route::ProductCategories)? == Operation::Retrieve {
        return list_categories(call.app, call.caller, &id).await;
    }
    assign_category(call, &id).await
}

/// `/products/:id/websites`.
pub async fn websites(Path(id): Path<String>, call: ApiCall) -> Result<Response, ApiError> {
    if list_or_assign(&call, Route::ProductWebsites)? == Operation::Retrieve {
        return list_websites(call.app, call.caller, &id).await;
    }
    assign_website(call, &id).await
}

/// `/products/:id/categories/:category_id`.
pub async fn category(Path(ids): TwoIds, call: ApiCall) -> Result<Response, ApiError> {
    delete_only(&call, Route::ProductCategory, ApiError::not_implemented)?;
    unassign_category(call.app, &ids.0, &ids.1).await
}

/// `/products/:id/websites/:website_id`.
pub async fn website(Path(ids): TwoIds, call: ApiCall) -> Result<Response, ApiError> {
    delete_only(&call, Route::ProductWebsite, ApiError::not_supported)?;
    unassign_website(call.app, &ids.0, &ids.1).await
}

/// The policy's verdict on a list of assignments: a read or a new assignment; any other
/// operation the table lets through is not one the original had.
fn list_or_assign(call: &ApiCall, route: Route) -> Result<Operation, ApiError> {
    match call.authorize(route)? {
        op @ (Operation::Retrieve | Operation::Create) => Ok(op),
        _ => Err(ApiError::not_supported()),
    }
}

/// The policy's verdict on one assignment, which can only be removed: anything else the
/// table lets through is `refused` (the original's answer differs by route).
fn delete_only(call: &ApiCall, route: Route, refused: fn() -> ApiError) -> Result<(), ApiError> {
    match call.authorize(route)? {
        Operation::Delete => Ok(()),
        _ => Err(refused()),
    }
}

/// The product, by id, and where it is assigned: `Resource not found.` when there is none.
async fn product(app: &AppState, id: u64) -> Result<(std::sync::Arc<str>, Assignments), ApiError> {
    let sku = sku_of(app, id).await?;
    let record = product_record(app, id, &sku).await?;
    Ok((sku, app.backend.assignments(&record)))
}

/// A category through the cache; `None` when the store has no such category.
async fn category_record(app: &AppState, id: u64) -> Result<Option<Category>, ApiError> {
    let backend = app.backend.clone();
    let fetched = typed(app, key::category(id), move || async move {
        Ok((backend.category(id).await?, vec![tag::category(id)]))
    })
    .await;
    match fetched {
        Ok(category) => Ok(Some(category)),
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
    let (_, assigned) = product(&app, id).await?;
    let mut ids = assigned.category_ids;
    if caller.user_type() != UserType::Admin {
        let mut active = Vec::with_capacity(ids.len());
        for category_id in ids {
            let shown = category_record(&app, category_id)
                .await?
                .is_some_and(|c| c.is_active);
            if shown {
                active.push(category_id);
            }
        }
        ids = active;
    }
    Ok(listed(caller.format, "category_id", &ids))
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

async fn assign_category(mut call: ApiCall, id: &str) -> Result<Response, ApiError> {
    let id = parse_id(id)?;
    let input = call.update_record().await?;
    let app = call.app;
    let category_id = requested_category(&input)?;
    let (sku, assigned) = product(&app, id).await?;
    if category_record(&app, category_id).await?.is_none() {
        return Err(category_not_found());
    }
    if assigned.category_ids.contains(&category_id) {
        return Err(ApiError::bad_request(format!(
            "Product #{id} is already assigned to category #{category_id}"
        )));
    }
    if category_id == TREE_ROOT {
        return Err(ApiError::bad_request(
            "Cannot assign product to tree root category.",
        ));
    }
    let result = app.backend.assign_category(category_id, &sku).await;
    category_written(&app, &result, id, &sku, category_id);
    result.map_err(|e| write_outcome::answer(e, backend_errors::to_api))?;
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
    let (sku, assigned) = product(&app, id).await?;
    let category_id = parse_id(category_id).map_err(|_| category_not_found())?;
    if category_record(&app, category_id).await?.is_none() {
        return Err(category_not_found());
    }
    if !assigned.category_ids.contains(&category_id) {
        return Err(ApiError::bad_request(format!(
            "Product #{id} isn't assigned to category #{category_id}"
        )));
    }
    let result = app.backend.unassign_category(category_id, &sku).await;
    category_written(&app, &result, id, &sku, category_id);
    result.map_err(|e| write_outcome::answer(e, backend_errors::to_api))?;
    Ok(empty_ok())
}

/// Whatever the write's outcome, what was cached about the product and the category's
/// lists is suspect now: invalidated, or held off when the outcome is unknown.
fn category_written(
    app: &AppState,
    result: &Result<(), BackendError>,
    id: u64,
    sku: &str,
    category_id: u64,
) {
    let tags = [
        tag::LISTS.to_owned(),
        tag::product(id),
        tag::sku(sku),
        tag::category(category_id),
    ];
    write_outcome::touched(&app.cache, result, &tags);
}

/// Whether the store has this website (the admin website 0 is not one a product can be in).
async fn website_exists(app: &AppState, website_id: u64) -> Result<bool, ApiError> {
    let backend = app.backend.clone();
    let websites: Vec<u64> = typed(app, key::websites(), move || async move {
        Ok((backend.websites().await?, vec![tag::STORES.to_owned()]))
    })
    .await?;
    Ok(website_id > 0 && websites.contains(&website_id))
}

/// The product of a website route, with the original's message for one that is not there.
async fn website_product(
    app: &AppState,
    id: &str,
) -> Result<(std::sync::Arc<str>, Assignments, u64), ApiError> {
    let not_found = || {
        ApiError::new(
            http::StatusCode::NOT_FOUND,
            format!("Product #{id} not found."),
        )
    };
    let numeric = parse_id(id).map_err(|_| not_found())?;
    match product(app, numeric).await {
        Ok((sku, assigned)) => Ok((sku, assigned, numeric)),
        Err(error) if error.status() == http::StatusCode::NOT_FOUND => Err(not_found()),
        Err(error) => Err(error),
    }
}

async fn list_websites(app: AppState, caller: Caller, id: &str) -> Result<Response, ApiError> {
    let (_, assigned, _) = website_product(&app, id).await?;
    Ok(listed(caller.format, "website_id", &assigned.website_ids))
}

async fn assign_website(mut call: ApiCall, id: &str) -> Result<Response, ApiError> {
    let (sku, assigned, id) = website_product(&call.app, id).await?;
    let input = call.update_record().await?;
    let app = call.app;
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
    if assigned.website_ids.contains(&website_id) {
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
    let result = app.backend.assign_website(&sku, website_id).await;
    website_written(&app, &result, id, &sku);
    result.map_err(|e| write_outcome::answer(e, backend_errors::to_api))?;
    Ok(created(&format!(
        "/api/rest/products/{id}/websites/{website_id}"
    )))
}

async fn unassign_website(app: AppState, id: &str, website_id: &str) -> Result<Response, ApiError> {
    let (sku, assigned, id) = website_product(&app, id).await?;
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
    if !assigned.website_ids.contains(&numeric) {
        return Err(ApiError::validation(vec![format!(
            "Product #{id} isn't assigned to website #{numeric}"
        )]));
    }
    let result = app.backend.unassign_website(&sku, numeric).await;
    website_written(&app, &result, id, &sku);
    result.map_err(|e| write_outcome::answer(e, backend_errors::to_api))?;
    Ok(empty_ok())
}

/// A website change moves the product in or out of every store view's lists.
fn website_written(app: &AppState, result: &Result<(), BackendError>, id: u64, sku: &str) {
    let tags = [tag::LISTS.to_owned(), tag::product(id), tag::sku(sku)];
    write_outcome::touched(&app.cache, result, &tags);
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
}
