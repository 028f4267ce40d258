//! The routes of `/products` (the list, a store view's list, a category's, one product):
//! each checks the policy and hands on to the reads in `products`, a category's list
//! (`product_category`) or the writes (`product_writes`). Apart from `products`, so that
//! those modules use its reads without it calling back into them.

use std::collections::HashMap;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::response::Response;
use http::{HeaderMap, Method, Uri};

use super::product_writes;
use super::products::*;
use crate::app::AppState;
use crate::auth::caller::Caller;
use crate::backend::port::Scope;
use crate::http::ApiError;
use crate::http::query::ListParams;
use crate::rules::policy::{Operation, Route, authorize};

// ---------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------

/// `/products`: list (also `?category_id=N`) and create.
pub async fn collection(
    State(app): State<AppState>,
    caller: Caller,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    // The policy answers before anything about the request is looked at.
    match authorize(Route::Products, &method, caller.principal)? {
        Operation::Retrieve => {
            read_collection(app, caller, &method, &uri, &headers, ReadStore::Default).await
        }
        Operation::Create => product_writes::create(app, &headers, body).await,
        op => Err(ApiError::internal().with_cause(format!("{op:?} is not served on /products"))),
    }
}

/// A product list, or a category's when the query names one (`?category_id=N`).
async fn read_collection(
    app: AppState,
    caller: Caller,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    store: ReadStore,
) -> Result<Response, ApiError> {
    let params = ListParams::parse(uri.query())?;
    match params.category_id.clone() {
        Some(category) => {
            authorize(Route::CategoryProducts, method, caller.principal)?;
            super::product_category::category_list(app, caller, headers, &category, params, store)
                .await
        }
        None => list(app, caller, headers, params, store).await,
    }
}

/// `/products/store/:store`: the product list in a store view (by id or code).
pub async fn store_collection(
    State(app): State<AppState>,
    caller: Caller,
    method: Method,
    Path(store): Path<String>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    authorize(Route::StoreProducts, &method, caller.principal)?;
    let store = ReadStore::resolve(&app, &store).await?;
    read_collection(app, caller, &method, &uri, &headers, store).await
}

/// `/products/category/:category_id/store/:store` and
/// `/products/store/:store/category/:category_id`: a category's products in a store view.
pub async fn store_category(
    State(app): State<AppState>,
    caller: Caller,
    method: Method,
    Path(params): Path<HashMap<String, String>>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    authorize(Route::CategoryProducts, &method, caller.principal)?;
    let (Some(category), Some(store)) = (params.get("category_id"), params.get("store")) else {
        return Err(ApiError::internal().with_cause("store category route without parameters"));
    };
    let store = ReadStore::resolve(&app, store).await?;
    let params = ListParams::parse(uri.query())?;
    super::product_category::category_list(app, caller, &headers, category, params, store).await
}

/// `/products/:id`, and the spec's literal `/products/category_id=:id`.
pub async fn entity(
    State(app): State<AppState>,
    caller: Caller,
    method: Method,
    Path(id): Path<String>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    if let Some(category) = id.strip_prefix("category_id=") {
        authorize(Route::CategoryProducts, &method, caller.principal)?;
        let params = ListParams::parse(uri.query())?;
        return super::product_category::category_list(
            app,
            caller,
            &headers,
            category,
            params,
            ReadStore::Default,
        )
        .await;
    }
    match authorize(Route::Product, &method, caller.principal)? {
        Operation::Retrieve => get_one(app, caller, &headers, &id, ReadStore::Default).await,
        Operation::Update => product_writes::update(app, &headers, &id, body, Scope::All).await,
        Operation::Delete => product_writes::delete(app, &id).await,
        Operation::Create => Err(ApiError::not_implemented()),
    }
}

/// `/products/category/:category_id`, the original's path form.
pub async fn category(
    State(app): State<AppState>,
    caller: Caller,
    method: Method,
    Path(category): Path<String>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    authorize(Route::CategoryProducts, &method, caller.principal)?;
    let params = ListParams::parse(uri.query())?;
    super::product_category::category_list(
        app,
        caller,
        &headers,
        &category,
        params,
        ReadStore::Default,
    )
    .await
}
