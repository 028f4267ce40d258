//! Store views and their configuration (media URL, currency), cached: every catalog read
//! needs them and they almost never change.

use std::sync::Arc;

use futures_util::future::BoxFuture;

use crate::app::AppState;
use crate::backend::port::{Backend, BackendError, StoreConfig, StoreView};
use crate::http::ApiError;

use crate::cache::keys::{key, tag};

use crate::records::{renew_typed, typed};

type Fetch<T> = BoxFuture<'static, Result<(T, Vec<String>), BackendError>>;

fn fetch_views(backend: Arc<dyn Backend>) -> Fetch<Vec<StoreView>> {
    Box::pin(async move { Ok((backend.store_views().await?, vec![tag::STORES.to_owned()])) })
}

fn fetch_configs(backend: Arc<dyn Backend>) -> Fetch<Vec<StoreConfig>> {
    Box::pin(async move { Ok((backend.store_configs().await?, vec![tag::STORES.to_owned()])) })
}

pub async fn views(app: &AppState) -> Result<Vec<StoreView>, ApiError> {
    let backend = app.backend.clone();
    typed(app, key::store_views(), move || fetch_views(backend)).await
}

pub async fn configs(app: &AppState) -> Result<Vec<StoreConfig>, ApiError> {
    let backend = app.backend.clone();
    typed(app, key::store_configs(), move || fetch_configs(backend)).await
}

/// The store views fetched again now (`keeper`).
pub async fn renew_views(app: &AppState) -> Result<(), ApiError> {
    let backend = app.backend.clone();
    renew_typed(app, key::store_views(), move || fetch_views(backend)).await
}

/// Their configurations fetched again now (`keeper`).
pub async fn renew_configs(app: &AppState) -> Result<(), ApiError> {
    let backend = app.backend.clone();
    renew_typed(app, key::store_configs(), move || fetch_configs(backend)).await
}

/// The configuration of a store view by code.
pub async fn config(app: &AppState, code: &str) -> Result<StoreConfig, ApiError> {
    configs(app)
        .await?
        .into_iter()
        .find(|c| c.code == code)
        .ok_or_else(|| {
            ApiError::internal()
                .with_cause(format!("store view {code:?} has no configuration upstream"))
        })
}

/// The store view a store id names, for the `/store/:store_id` routes. Store 0 is the
/// admin scope. An unknown or malformed id is the spec's 400 `Requested store is invalid`.
pub async fn view_by_id(app: &AppState, id: &str) -> Result<StoreView, ApiError> {
    let invalid = || ApiError::bad_request("Requested store is invalid");
    let id: u64 = id.parse().map_err(|_| invalid())?;
    views(app)
        .await?
        .into_iter()
        .find(|v| v.id == id)
        .ok_or_else(invalid)
}

/// The store view a `/store/:store` route of the products names, by id or by code. An
/// unknown store is the original's 400 `Requested store is invalid`.
pub async fn view_by_id_or_code(app: &AppState, store: &str) -> Result<StoreView, ApiError> {
    let invalid = || ApiError::bad_request("Requested store is invalid");
    let id = store.parse::<u64>().ok();
    views(app)
        .await?
        .into_iter()
        .find(|v| match id {
            Some(id) => v.id == id,
            None => v.code == store,
        })
        .ok_or_else(invalid)
}

/// The website of the default store view: where created products are published.
pub async fn default_website(app: &AppState) -> Result<u64, ApiError> {
    let code = app.backend.default_store().to_owned();
    views(app)
        .await?
        .into_iter()
        .find(|v| v.code == code)
        .map(|v| v.website_id)
        .ok_or_else(|| {
            ApiError::internal().with_cause(format!("store view {code:?} not found upstream"))
        })
}
