//! Magento records through the cache, kept as Magento sent them (raw bytes) and parsed on
//! each read: what the resources and the indexes read before they map anything.

pub mod catalog;
pub mod listing;
pub mod lookups;

use std::future::Future;

use bytes::Bytes;
use serde_json::Value;

use crate::app::AppState;
use crate::backend::errors;
use crate::backend::port::UpstreamError;
use crate::cache::{self, Fetched};
use crate::http::ApiError;

/// An upstream record through the cache, as raw bytes. Records are the same for every
/// caller, so they may also be kept in the second level shared by instances
/// (`STOREGATE_SHARED_CACHE`).
pub async fn record<F, Fut>(app: &AppState, key: String, fetch: F) -> Result<Bytes, ApiError>
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = Result<(Bytes, Vec<String>), UpstreamError>> + Send + 'static,
{
    let (entry, _) = app
        .cache
        .get_or_fetch_shared(&key, move || async move {
            let (bytes, tags) = fetch().await.map_err(errors::to_api)?;
            Ok::<_, ApiError>(Fetched::new(cache::Value::Bytes(bytes), tags))
        })
        .await?;
    match &entry.value {
        cache::Value::Bytes(bytes) => Ok(bytes.clone()),
        _ => Err(ApiError::internal().with_cause(format!("cache key {key} holds no record"))),
    }
}

/// Parses a cached or fresh upstream JSON record.
pub fn json(bytes: &[u8]) -> Result<Value, ApiError> {
    serde_json::from_slice(bytes)
        .map_err(|e| ApiError::bad_gateway().with_cause(format!("upstream JSON: {e}")))
}

/// A positive integer id under `key` of an upstream record (Magento sends ids as numbers
/// or numeric strings).
pub fn positive_id(record: &Value, key: &str) -> Option<u64> {
    record
        .get(key)
        .and_then(crate::rules::mapping::convert::as_i64)
        .filter(|&id| id > 0)
        .map(|id| id as u64)
}
