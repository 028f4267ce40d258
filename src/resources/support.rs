//! What every resource handler uses: the caller (principal and negotiated format), cached
//! responses with validators, and cached upstream records.

use std::future::Future;
use std::sync::Arc;

use axum::body::Body as HttpBody;
use axum::extract::FromRequestParts;
use axum::response::Response;
use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH, VARY};
use http::request::Parts;
use http::{HeaderMap, HeaderValue, StatusCode};
use serde_json::Value;

use crate::app::AppState;
use crate::auth::{Principal, UserType};
use crate::cache::{self, Body, Entry, Fetched, Source};
use crate::http::{ApiError, Doc, Format, render};
use crate::upstream::UpstreamError;

use super::upstream_errors;

/// Who is calling and in which format they want the answer. Both were settled by the
/// middleware before routing.
#[derive(Debug, Clone, Copy)]
pub struct Caller {
    pub principal: Principal,
    pub format: Format,
}

impl Caller {
    pub fn user_type(&self) -> UserType {
        self.principal.user_type()
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let principal = parts.extensions.get::<Principal>().copied();
        let format = parts.extensions.get::<Format>().copied();
        match (principal, format) {
            (Some(principal), Some(format)) => Ok(Caller { principal, format }),
            _ => Err(ApiError::internal().with_cause("caller middleware missing")),
        }
    }
}

/// A response document and the cache tags of what it shows.
pub type Built = (Doc, Vec<String>);

/// Serves a read through the rendered-body cache.
///
/// `logical` names the resource and the list parameters (not the raw query: unknown
/// parameters must not multiply entries); the key adds the user type and format, so only
/// data that is the same for every caller of a view is shared.
pub async fn cached<F, Fut>(
    app: &AppState,
    caller: Caller,
    request_headers: &HeaderMap,
    logical: &str,
    build: F,
) -> Result<Response, ApiError>
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = Result<Built, ApiError>> + Send + 'static,
{
    let key = format!(
        "b|{}|{}|{logical}",
        caller.user_type().as_str(),
        caller.format.as_str()
    );
    if let Some(entry) = app.cache.fresh(&key).await {
        return Ok(respond(app, caller, request_headers, &entry, Source::Hit));
    }
    let format = caller.format;
    let (entry, source) = app
        .cache
        .get_or_fetch(&key, move || async move {
            let (doc, tags) = build().await?;
            let body = Body::new(render(format, &doc), format.content_type());
            Ok::<_, ApiError>(Fetched::new(cache::Value::Body(body), tags))
        })
        .await?;
    Ok(respond(app, caller, request_headers, &entry, source))
}

fn respond(
    app: &AppState,
    caller: Caller,
    request_headers: &HeaderMap,
    entry: &Arc<Entry>,
    source: Source,
) -> Response {
    let cache::Value::Body(body) = &entry.value else {
        // Body keys only ever hold bodies.
        let mut response = Response::new(HttpBody::empty());
        *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
        return response;
    };
    // Rounded up: an entry stored a moment ago is good for the whole TTL.
    let max_age = app.cache.remaining(entry).as_millis().div_ceil(1000);
    let cache_control = match caller.user_type() {
        UserType::Guest => format!("public, max-age={max_age}"),
        _ => format!("private, max-age={max_age}"),
    };
    let not_modified = request_headers
        .get(IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| etag_matches(v, body.etag.to_str().unwrap_or_default()));
    let mut response = if not_modified {
        let mut r = Response::new(HttpBody::empty());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else {
        let mut r = Response::new(HttpBody::from(body.bytes.clone()));
        r.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static(body.content_type));
        r
    };
    let headers = response.headers_mut();
    headers.insert(ETAG, body.etag.clone());
    if let Ok(value) = HeaderValue::from_str(&cache_control) {
        headers.insert(CACHE_CONTROL, value);
    }
    headers.insert(VARY, HeaderValue::from_static("Accept, Authorization"));
    headers.insert(
        "x-cache",
        HeaderValue::from_static(match source {
            Source::Hit => "HIT",
            Source::Fetched => "MISS",
            Source::StaleWhileRevalidate | Source::StaleIfError => "STALE",
        }),
    );
    match source {
        Source::StaleWhileRevalidate => {
            headers.insert(
                "warning",
                HeaderValue::from_static("110 - \"Response is Stale\""),
            );
        }
        Source::StaleIfError => {
            headers.insert(
                "warning",
                HeaderValue::from_static("111 - \"Revalidation Failed\""),
            );
        }
        _ => {}
    }
    response
}

/// `If-None-Match`: a list of entity tags or `*`, compared weakly (RFC 9110 §13.1.2).
fn etag_matches(header: &str, etag: &str) -> bool {
    header.split(',').map(str::trim).any(|candidate| {
        candidate == "*" || candidate.strip_prefix("W/").unwrap_or(candidate) == etag
    })
}

/// An upstream record through the cache, as raw bytes.
pub async fn record<F, Fut>(app: &AppState, key: String, fetch: F) -> Result<Bytes, ApiError>
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = Result<(Bytes, Vec<String>), UpstreamError>> + Send + 'static,
{
    let (entry, _) = app
        .cache
        .get_or_fetch(&key, move || async move {
            let (bytes, tags) = fetch().await.map_err(upstream_errors::to_api)?;
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
        .and_then(crate::mapping::convert::as_i64)
        .filter(|&id| id > 0)
        .map(|id| id as u64)
}

/// Parses a path id the way the original did: anything that is not a positive integer
/// names no resource.
pub fn parse_id(text: &str) -> Result<u64, ApiError> {
    text.parse::<u64>()
        .ok()
        .filter(|&id| id > 0)
        .ok_or_else(ApiError::not_found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etag_comparison() {
        assert!(etag_matches("\"a\"", "\"a\""));
        assert!(etag_matches("W/\"a\", \"b\"", "\"a\""));
        assert!(etag_matches("*", "\"a\""));
        assert!(!etag_matches("\"b\"", "\"a\""));
    }

    #[test]
    fn ids() {
        assert_eq!(parse_id("12").unwrap(), 12);
        for bad in ["0", "-1", "abc", "1.5", "", "99999999999999999999999"] {
            assert_eq!(parse_id(bad).unwrap_err().status().as_u16(), 404);
        }
    }
}
