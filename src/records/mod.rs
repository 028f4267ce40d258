//! The back end's records through the cache: what the resources and the indexes read before
//! they map anything. A record in the store's shape is kept as the store sent it (raw bytes,
//! at its real weight) and parsed on each read; a typed record the port gives (store views,
//! the directory) is kept in the gateway's own JSON form of it.

pub mod catalog;
pub mod listing;
pub mod lookups;

use std::future::Future;

use bytes::Bytes;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::app::AppState;
use crate::backend::port::BackendError;
use crate::cache::{self, Fetched};
use crate::http::ApiError;
use crate::rules::backend_errors;

/// An upstream record through the cache, as raw bytes. Records are the same for every
/// caller, so they may also be kept in the second level shared by instances
/// (`STOREGATE_SHARED_CACHE`).
pub async fn record<F, Fut>(app: &AppState, key: String, fetch: F) -> Result<Bytes, ApiError>
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = Result<(Bytes, Vec<String>), BackendError>> + Send + 'static,
{
    let (entry, _) = app
        .cache
        .get_or_fetch_shared(&key, move || async move {
            let (bytes, tags) = fetch().await.map_err(backend_errors::to_api)?;
            Ok::<_, ApiError>(Fetched::new(cache::Value::Bytes(bytes), tags))
        })
        .await?;
    match &entry.value {
        cache::Value::Bytes(bytes) => Ok(bytes.clone()),
        _ => Err(ApiError::internal().with_cause(format!("cache key {key} holds no record"))),
    }
}

/// A typed record of the port through the cache, kept in its JSON form (so that it can
/// live in the second level shared by instances too).
pub async fn typed<T, F, Fut>(app: &AppState, key: String, fetch: F) -> Result<T, ApiError>
where
    T: Serialize + DeserializeOwned,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = Result<(T, Vec<String>), BackendError>> + Send + 'static,
{
    let bytes = record(app, key, move || async move {
        let (value, tags) = fetch().await?;
        let bytes = serde_json::to_vec(&value)
            .map_err(|e| BackendError::Protocol(format!("cannot keep a record: {e}")))?;
        Ok((Bytes::from(bytes), tags))
    })
    .await?;
    serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::internal().with_cause(format!("a cached record: {e}")))
}

/// Fetches a typed record of the port again and replaces its entry, however fresh (the
/// lookups kept fresh in the background, `lookups::keeper`), as [`typed`] would file it.
pub async fn renew_typed<T, F, Fut>(app: &AppState, key: String, fetch: F) -> Result<(), ApiError>
where
    T: Serialize,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = Result<(T, Vec<String>), BackendError>> + Send + 'static,
{
    app.cache
        .renew(&key, move || async move {
            let (value, tags) = fetch().await.map_err(backend_errors::to_api)?;
            let bytes = serde_json::to_vec(&value).map_err(|e| {
                ApiError::internal().with_cause(format!("cannot keep a record: {e}"))
            })?;
            Ok::<_, ApiError>(Fetched::new(cache::Value::Bytes(Bytes::from(bytes)), tags))
        })
        .await
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
