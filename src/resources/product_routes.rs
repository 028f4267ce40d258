//! The routes of `/products` (the list, a store view's list, a category's, one product):
//! each checks the policy and hands on to the reads in `products`, a category's list
//! (`product_category`) or the writes (`product_writes`). Apart from `products`, so that
//! those modules use its reads without it calling back into them.

use std::collections::HashMap;

use axum::extract::Path;
use axum::response::Response;

use super::call::{ApiCall, unserved};
use super::product_category::category_list;
use super::product_writes;
use super::products::*;
use crate::backend::port::Scope;
use crate::http::ApiError;
use crate::http::query::ListParams;
use crate::rules::policy::{Operation, Route};

// ---------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------

/// `/products`: list (also `?category_id=N`) and create.
pub async fn collection(call: ApiCall) -> Result<Response, ApiError> {
    // The policy answers before anything about the request is looked at.
    match call.authorize(Route::Products)? {
        Operation::Retrieve => read_collection(call, ReadStore::Default).await,
        Operation::Create => product_writes::create(call).await,
        op => Err(unserved(op, "/products")),
    }
}

/// A product list, or a category's when the query names one (`?category_id=N`).
async fn read_collection(call: ApiCall, store: ReadStore) -> Result<Response, ApiError> {
    let params = ListParams::parse(call.query())?;
    match params.category_id.clone() {
        Some(category) => {
            call.authorize(Route::CategoryProducts)?;
            category_list(call, &category, params, store).await
        }
        None => list(call, params, store).await,
    }
}

/// `/products/store/:store`: the product list in a store view (by id or code).
pub async fn store_collection(
    Path(store): Path<String>,
    call: ApiCall,
) -> Result<Response, ApiError> {
    call.authorize(Route::StoreProducts)?;
    let store = ReadStore::resolve(&call.app, &store).await?;
    read_collection(call, store).await
}

/// `/products/category/:category_id/store/:store` and
/// `/products/store/:store/category/:category_id`: a category's products in a store view.
pub async fn store_category(
    Path(params): Path<HashMap<String, String>>,
    call: ApiCall,
) -> Result<Response, ApiError> {
    call.authorize(Route::CategoryProducts)?;
    let (Some(category), Some(store)) = (params.get("category_id"), params.get("store")) else {
        return Err(ApiError::internal().with_cause("store category route without parameters"));
    };
    let store = ReadStore::resolve(&call.app, store).await?;
    category_in(call, category, store).await
}

/// `/products/:id`, and the spec's literal `/products/category_id=:id`.
pub async fn entity(Path(id): Path<String>, call: ApiCall) -> Result<Response, ApiError> {
    if let Some(category) = id.strip_prefix("category_id=") {
        call.authorize(Route::CategoryProducts)?;
        return category_in(call, category, ReadStore::Default).await;
    }
    match call.authorize(Route::Product)? {
        Operation::Retrieve => get_one(call, &id, ReadStore::Default).await,
        Operation::Update => product_writes::update(call, &id, Scope::All).await,
        Operation::Delete => product_writes::delete(call.app, &id).await,
        Operation::Create => Err(ApiError::not_implemented()),
    }
}

/// `/products/category/:category_id`, the original's path form.
pub async fn category(Path(category): Path<String>, call: ApiCall) -> Result<Response, ApiError> {
    call.authorize(Route::CategoryProducts)?;
    category_in(call, &category, ReadStore::Default).await
}

/// A category's products in `store`, the list parameters from the query (once the policy
/// has let the call through).
async fn category_in(
    call: ApiCall,
    category: &str,
    store: ReadStore,
) -> Result<Response, ApiError> {
    let params = ListParams::parse(call.query())?;
    category_list(call, category, params, store).await
}
