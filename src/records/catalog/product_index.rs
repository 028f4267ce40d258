//! The product index: product id to SKU (the port reads products by SKU, the spec by
//! id).
//!
//! The pairs live in the cache's index (`cache::sku_index`): loaded when the gateway starts
//! (`records::lookups::keeper`), learned from every product list ([`learn`]) and create, and
//! asked of the store for an id not known yet ([`sku_of`]: through the cache, coalesced,
//! shared with other instances through the second level). A pair goes with its product's
//! invalidation, like any cached record of it.
//!
//! How old a pair may be depends on what it is used for. A write takes only a pair younger
//! than the cache's TTL (as old as a cached SKU could ever be): writing to the wrong SKU
//! cannot be undone. A product read takes any pair and checks the record it gets is the
//! product asked for ([`confirmed`]): a SKU that moved in the store's admin panel costs that
//! read one more lookup, never a wrong answer.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::app::AppState;
use crate::cache::keys::{key, tag};
use crate::cache::{self, Fetched};
use crate::http::ApiError;
use crate::rules::backend_errors;

/// The SKU of a product id (the port reads products by SKU). 404 when there is none.
/// From the index when its pair is younger than the cache's TTL, else asked for.
pub async fn sku_of(app: &AppState, id: u64) -> Result<Arc<str>, ApiError> {
    if let Some((sku, age)) = app.cache.indexed_sku(id)
        && age < app.cache.ttl()
    {
        return Ok(sku);
    }
    look_up(app, id).await
}

/// A SKU for a read that checks what it gets ([`confirmed`]): any pair the index holds,
/// however old, else asked for. `.1`: it came from the index, and the read must check.
pub async fn sku_to_read(app: &AppState, id: u64) -> Result<(Arc<str>, bool), ApiError> {
    match app.cache.indexed_sku(id) {
        Some((sku, _)) => Ok((sku, true)),
        None => Ok((look_up(app, id).await?, false)),
    }
}

/// Is `record` (a product record read by a SKU [`sku_to_read`] gave) product `id`? When it
/// is not, the pair is dropped and the SKU asked of the store again, bypassing every copy:
/// `Some(sku)` to read again with (the same SKU when the store still says so).
pub async fn confirmed(
    app: &AppState,
    id: u64,
    record: Result<&Value, &ApiError>,
) -> Result<Option<Arc<str>>, ApiError> {
    match record {
        Ok(found) if crate::records::positive_id(found, "id").is_none_or(|f| f == id) => {
            return Ok(None);
        }
        Err(error) if error.status() != http::StatusCode::NOT_FOUND => return Ok(None),
        _ => {}
    }
    app.cache.forget_sku(id);
    let reading = app.cache.clock_reading();
    let sku = ask_sku(app.backend.as_ref(), id).await?;
    app.cache.index_skus(reading, [(id, sku.as_str())]);
    Ok(Some(sku.into()))
}

/// The SKU of `id` as the store says it now (404: no such product).
async fn ask_sku(backend: &dyn crate::backend::port::Backend, id: u64) -> Result<String, ApiError> {
    let found = backend
        .skus_of(&[id])
        .await
        .map_err(backend_errors::to_api)?;
    found
        .into_iter()
        .find(|pair| pair.id == id)
        .map(|pair| pair.sku)
        .ok_or_else(ApiError::not_found)
}

/// The SKU of `id` asked of the store (through the cache: one call for concurrent asks, and
/// the second level's copy when instances share one), then kept in the index.
async fn look_up(app: &AppState, id: u64) -> Result<Arc<str>, ApiError> {
    let backend = app.backend.clone();
    let (entry, _) = app
        .cache
        .get_or_fetch_shared(&key::sku_of(id), move || async move {
            let sku = ask_sku(backend.as_ref(), id).await?;
            let tags = vec![tag::product(id), tag::sku(&sku)];
            Ok::<_, ApiError>(Fetched::new(cache::Value::Text(sku.into()), tags))
        })
        .await?;
    match &entry.value {
        cache::Value::Text(sku) => {
            // Valid now: no invalidation of its tags since it was fetched.
            app.cache
                .index_skus(app.cache.clock_reading(), [(id, &**sku)]);
            Ok(sku.clone())
        }
        _ => Err(ApiError::internal().with_cause("sku entry holds no text")),
    }
}

/// Keeps the id-SKU pairs of product records a search found (a list page), the search having
/// begun at clock reading `reading` (`Cache::clock_reading`).
pub fn learn(app: &AppState, reading: u64, records: &[Value]) {
    let pairs = records.iter().filter_map(|record| {
        let id = crate::records::positive_id(record, "id")?;
        Some((id, record.get("sku")?.as_str()?))
    });
    app.cache.index_skus(reading, pairs);
}

/// The SKUs of several product ids: the index's, the cached ones, and the others in one
/// search per 300 ids, which are then kept like [`sku_of`]'s. Ids without a product are
/// left out. (A batch of stock updates would otherwise look its products up one call each.)
pub async fn skus_of_many(app: &AppState, ids: &[u64]) -> Result<HashMap<u64, Arc<str>>, ApiError> {
    let mut found = HashMap::new();
    let mut missing = Vec::new();
    for &id in ids {
        if let Some((sku, age)) = app.cache.indexed_sku(id)
            && age < app.cache.ttl()
        {
            found.insert(id, sku);
            continue;
        }
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
        let reading = app.cache.clock_reading();
        let pairs = app
            .backend
            .skus_of(chunk)
            .await
            .map_err(backend_errors::to_api)?;
        for pair in pairs.into_iter().filter(|p| chunk.contains(&p.id)) {
            let sku: Arc<str> = pair.sku.into();
            app.cache.index_skus(reading, [(pair.id, &*sku)]);
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
