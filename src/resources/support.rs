//! What every resource handler uses: the caller (principal and negotiated format), cached
//! responses with validators, and cached upstream records.
//!
//! **The fast path.** A cached body is also filed under the request that produced it (GET,
//! raw path and query, user type, format): [`fast_hit`], called by the outermost layer
//! before the API's own layers, answers a repeat of that request straight from the cache,
//! with the same headers [`cached`] would send. It is sound because what [`cached`] serves
//! depends on nothing else: the policy and the parsing that run before it are functions of
//! the method, the path, the query and the user type; a failed check never reaches
//! [`cached`], so it never files an answer. Invalidation, expiry and the tags work on the
//! very same entry.

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

tokio::task_local! {
    /// The fast-path key of the request this task serves, when it may be filed under one.
    static FAST_KEY: Arc<str>;
}

/// Runs `future` (the rest of a request) so that a body [`cached`] serves is filed under
/// `key` for [`fast_hit`].
pub async fn with_fast_key<F: Future>(key: Arc<str>, future: F) -> F::Output {
    FAST_KEY.scope(key, future).await
}

/// What [`fast_hit`] found: an answer, or the key to file this request's answer under.
pub enum FastPath {
    Hit(Response, UserType),
    /// Not in the cache; `Some(key)` when the request may be filed.
    Miss(Option<Arc<str>>),
}

/// Answers a GET from a body cached for the same request, without the API's layers.
pub async fn fast_hit(
    app: &AppState,
    method: &http::Method,
    uri: &http::Uri,
    headers: &HeaderMap,
) -> FastPath {
    if method != http::Method::GET || !app.cache.enabled() {
        return FastPath::Miss(None);
    }
    // Anything the slow path would refuse or treat specially goes the slow way.
    if headers.get("version").is_some_and(|v| v.as_bytes() != b"1") {
        return FastPath::Miss(None);
    }
    let Some(path) = uri.path_and_query() else {
        return FastPath::Miss(None);
    };
    if !path.path().starts_with("/api/rest/") {
        return FastPath::Miss(None);
    }
    let (Ok(principal), Ok(format)) = (
        app.auth.authenticate(headers),
        crate::http::format::negotiate_response(headers),
    ) else {
        return FastPath::Miss(None);
    };
    let caller = Caller { principal, format };
    let key = format!(
        "f|{}|{}|{}",
        caller.user_type().as_str(),
        format.as_str(),
        path.as_str()
    );
    match app.cache.fresh(&key).await {
        Some(entry) => FastPath::Hit(
            respond(app, caller, headers, &entry, Source::Hit),
            caller.user_type(),
        ),
        // Only the one spelling of a request is filed: a client varying its query string
        // (`?_=1`, `?_=2`, ...) adds nothing to the cache (`http::canonical`).
        None if crate::http::canonical::is_canonical_query(path.query()) => {
            FastPath::Miss(Some(key.into()))
        }
        None => FastPath::Miss(None),
    }
}

/// A response document and the cache tags of what it shows.
pub type Built = (Doc, Vec<String>);

/// Serves a read through the rendered-body cache.
///
/// `logical` names the resource and the list parameters (not the raw query: unknown
/// parameters must not multiply entries); the key adds the user type and format, so only
/// data that is the same for every caller of a view is shared. Never use it for a
/// principal's own records: the answer is also filed for [`fast_hit`] under the request's
/// method, path, query, user type and format, and served to the next caller who sends them.
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
        file_for_fast_path(app, &key, &entry).await;
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
    if matches!(source, Source::Hit | Source::Fetched) {
        file_for_fast_path(app, &key, &entry).await;
    }
    Ok(respond(app, caller, request_headers, &entry, source))
}

/// Files a fresh body, cached under `key`, under the current request's fast-path key, if
/// it has one.
async fn file_for_fast_path(app: &AppState, key: &str, entry: &Arc<Entry>) {
    if let Ok(fast_key) = FAST_KEY.try_with(Clone::clone) {
        app.cache.alias(fast_key, key, entry).await;
    }
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
    let cache_control = cache_control(caller.user_type() == UserType::Guest, max_age as u64);
    let not_modified = request_headers
        .get(IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| etag_matches(v, body.etag.to_str().unwrap_or_default()));
    let mut response = if not_modified {
        let mut r = Response::new(HttpBody::empty());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else {
        Response::new(HttpBody::from(body.bytes.clone()))
    };
    // Sized once for everything set here and downstream (request id, length, date).
    *response.headers_mut() = HeaderMap::with_capacity(12);
    let headers = response.headers_mut();
    if !not_modified {
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(body.content_type));
    }
    headers.insert(ETAG, body.etag.clone());
    headers.insert(CACHE_CONTROL, cache_control);
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

/// `public, max-age=N` or `private, max-age=N`, written without a formatter (every hit
/// sends one).
fn cache_control(public: bool, max_age: u64) -> HeaderValue {
    let mut text = [0u8; 40];
    let head: &[u8] = if public {
        b"public, max-age="
    } else {
        b"private, max-age="
    };
    text[..head.len()].copy_from_slice(head);
    let mut digits = [0u8; 20];
    let mut n = max_age;
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let len = head.len() + digits.len() - i;
    text[head.len()..len].copy_from_slice(&digits[i..]);
    HeaderValue::from_bytes(&text[..len]).expect("ASCII digits are a valid header value")
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
    fn cache_control_values() {
        assert_eq!(cache_control(true, 0), "public, max-age=0");
        assert_eq!(cache_control(false, 60), "private, max-age=60");
        assert_eq!(
            cache_control(true, u64::MAX),
            "public, max-age=18446744073709551615"
        );
    }

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
