//! Product record reads: a product as Magento returns it, and its shopper-facing
//! rendering, through the cache (or, for a page of renderings, in one search).

use std::collections::HashMap;

use bytes::Bytes;
use serde_json::Value;

use crate::app::AppState;
use crate::backend::errors;
use crate::backend::port::{Scope, SearchCriteria};
use crate::cache::keys::{key, tag};
use crate::http::ApiError;
use crate::records::{json, record};
use crate::rules::mapping::convert::as_i64;

/// A product as Magento returns it by SKU (with its stock item), through the cache.
pub async fn product_record(app: &AppState, id: u64, sku: &str) -> Result<Value, ApiError> {
    let backend = app.backend.clone();
    let owned = sku.to_owned();
    let bytes = record(
        app,
        key::product(backend.default_store(), sku),
        move || async move {
            let bytes = backend.product(Scope::Default, &owned).await?;
            Ok((bytes, vec![tag::product(id), tag::sku(&owned)]))
        },
    )
    .await?;
    json(&bytes)
}

/// A product as a store view (by code) sees it (`/rest/<code>/V1/products/{sku}`), through
/// the cache; the same entry the image resource reads for that store.
pub async fn product_record_in(
    app: &AppState,
    id: u64,
    sku: &str,
    store_code: &str,
) -> Result<Value, ApiError> {
    let backend = app.backend.clone();
    let owned = sku.to_owned();
    let code = store_code.to_owned();
    let bytes = record(app, key::product(store_code, sku), move || async move {
        let bytes = backend.product(Scope::Store(&code), &owned).await?;
        Ok((
            bytes,
            vec![tag::product(id), tag::sku(&owned), tag::images(id)],
        ))
    })
    .await?;
    json(&bytes)
}

/// The shopper-facing rendering of one product (prices with tax, salability, URLs), or
/// `null` when Magento does not show it in the store.
pub async fn render_record(
    app: &AppState,
    id: u64,
    store_id: u64,
    currency: &str,
) -> Result<Value, ApiError> {
    let backend = app.backend.clone();
    let currency = currency.to_owned();
    let bytes = record(app, key::render_info(store_id, id), move || async move {
        let criteria = SearchCriteria::new().filter("entity_id", id.to_string(), "eq");
        let bytes = backend.render_info(store_id, &currency, &criteria).await?;
        let item = backend
            .read_render_items(&bytes)?
            .into_iter()
            .next()
            .unwrap_or(Value::Null);
        Ok((
            Bytes::from(serde_json::to_vec(&item).unwrap_or_default()),
            vec![tag::product(id)],
        ))
    })
    .await?;
    json(&bytes)
}

/// Render entries for a page of products, by id.
pub async fn render_many(
    app: &AppState,
    ids: &[u64],
    store_id: u64,
    currency: &str,
) -> Result<HashMap<u64, Value>, ApiError> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let list = ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    let criteria = SearchCriteria::new()
        .filter("entity_id", list, "in")
        .page(ids.len() as u32, 1);
    let bytes = app
        .backend
        .render_info(store_id, currency, &criteria)
        .await
        .map_err(errors::to_api)?;
    let items = app
        .backend
        .read_render_items(&bytes)
        .map_err(errors::to_api)?;
    Ok(items
        .into_iter()
        .filter_map(|item| Some((item.get("id").and_then(as_i64)? as u64, item)))
        .collect())
}
