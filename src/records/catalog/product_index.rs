//! The product index: product id to SKU (Magento 2 addresses products by SKU, the spec
//! by id), through the cache.

use std::collections::HashMap;
use std::sync::Arc;

use crate::app::AppState;
use crate::cache::keys::{key, tag};
use crate::cache::{self, Fetched};
use crate::http::ApiError;
use crate::rules::backend_errors;

/// The SKU of a product id (Magento 2 addresses products by SKU). 404 when there is none.
pub async fn sku_of(app: &AppState, id: u64) -> Result<Arc<str>, ApiError> {
    let backend = app.backend.clone();
    let (entry, _) = app
        .cache
        .get_or_fetch_shared(&key::sku_of(id), move || async move {
            let found = backend
                .skus_of(&[id])
                .await
                .map_err(backend_errors::to_api)?;
            let sku = found
                .into_iter()
                .find(|pair| pair.id == id)
                .map(|pair| pair.sku)
                .ok_or_else(ApiError::not_found)?;
            let tags = vec![tag::product(id), tag::sku(&sku)];
            Ok::<_, ApiError>(Fetched::new(cache::Value::Text(sku.into()), tags))
        })
        .await?;
    match &entry.value {
        cache::Value::Text(sku) => Ok(sku.clone()),
        _ => Err(ApiError::internal().with_cause("sku entry holds no text")),
    }
}

/// The SKUs of several product ids: the cached ones, and the others in one search per 300
/// ids, which are then cached like [`sku_of`]'s. Ids without a product are left out. (A
/// batch of stock updates would otherwise look its products up one call each.)
pub async fn skus_of_many(app: &AppState, ids: &[u64]) -> Result<HashMap<u64, Arc<str>>, ApiError> {
    let mut found = HashMap::new();
    let mut missing = Vec::new();
    for &id in ids {
        match app
            .cache
            .fresh(&key::sku_of(id))
            .await
            .map(|e| e.value.clone())
        {
            Some(cache::Value::Text(sku)) => {
                found.insert(id, sku);
            }
            _ => missing.push(id),
        }
    }
    for chunk in missing.chunks(crate::backend::port::MAX_PAGE_SIZE as usize) {
        let pairs = app
            .backend
            .skus_of(chunk)
            .await
            .map_err(backend_errors::to_api)?;
        for pair in pairs.into_iter().filter(|p| chunk.contains(&p.id)) {
            let sku: Arc<str> = pair.sku.into();
            let value = sku.clone();
            let tags = vec![tag::product(pair.id), tag::sku(&sku)];
            app.cache
                .get_or_fetch(&key::sku_of(pair.id), move || async move {
                    Ok::<_, ApiError>(Fetched::new(cache::Value::Text(value), tags))
                })
                .await?;
            found.insert(pair.id, sku);
        }
    }
    Ok(found)
}
