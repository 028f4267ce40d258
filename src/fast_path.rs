//! The fast path: a repeat of a cached read is answered from the cache before the API's
//! layers (load shedding, policy, parsing, the handler) run.
//!
//! A body the response cache serves is also filed under the request that produced it
//! (GET, raw path and query, user type, format; see [`crate::response_cache`]). This layer
//! looks a GET up under that key, with the caller [`crate::caller::resolve`] settled, and
//! answers a hit with the very headers the handler would have sent; on a miss it hands the
//! key on, so that the answer the handler serves is filed under it.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::{Extensions, HeaderMap};

use crate::auth::{Authenticated, UserType};
use crate::cache::{Cache, Source};
use crate::cache_keys;
use crate::caller::Caller;
use crate::http::format::Negotiated;
use crate::response_cache::{respond, with_fast_key};

/// Layer: answers a repeat of a cached read, or serves the request and files its answer.
pub async fn answer_repeats(
    State(cache): State<Arc<Cache>>,
    request: Request,
    next: Next,
) -> Response {
    let found = fast_hit(
        &cache,
        request.method(),
        request.uri(),
        request.headers(),
        request.extensions(),
    )
    .await;
    match found {
        FastPath::Hit(mut response, user_type) => {
            // For the request metrics, as `metrics::tag_user_type` does on the slow path.
            response.extensions_mut().insert(user_type);
            response
        }
        FastPath::Miss(Some(key)) => with_fast_key(key, next.run(request)).await,
        FastPath::Miss(None) => next.run(request).await,
    }
}

/// What [`fast_hit`] found: an answer, or the key to file this request's answer under.
enum FastPath {
    Hit(Response, UserType),
    /// Not in the cache; `Some(key)` when the request may be filed.
    Miss(Option<Arc<str>>),
}

/// Answers a GET from a body cached for the same request, without the API's layers.
async fn fast_hit(
    cache: &Cache,
    method: &http::Method,
    uri: &http::Uri,
    headers: &HeaderMap,
    extensions: &Extensions,
) -> FastPath {
    if method != http::Method::GET || !cache.enabled() {
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
    let (Some(Authenticated(Ok(principal))), Some(Negotiated(Ok(format)))) = (
        extensions.get::<Authenticated>(),
        extensions.get::<Negotiated>(),
    ) else {
        return FastPath::Miss(None);
    };
    let caller = Caller {
        principal: *principal,
        format: *format,
    };
    let key = cache_keys::key::fast(caller.user_type(), caller.format, path.as_str());
    match cache.fresh(&key).await {
        Some(entry) => FastPath::Hit(
            respond(cache, caller, headers, &entry, Source::Hit),
            caller.user_type(),
        ),
        None => FastPath::Miss(Some(key.into())),
    }
}
