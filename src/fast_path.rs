//! The fast path: a repeat of a cached read is answered from the cache before the API's
//! layers (load shedding, policy, parsing, the handler) run.
//!
//! A body the response cache serves is also filed under the request that produced it
//! (GET, raw path and query, user type, format; see [`crate::response_cache`]). This step
//! looks a GET up under that key, with the caller [`crate::caller::resolve`] settled, and
//! answers a hit with the very headers the handler would have sent; on a miss it hands the
//! key on, so that the answer the handler serves is filed under it. It is a step of the
//! front layer (`app::front`), between resolving the caller and the request's log span.

use std::future::Future;
use std::sync::Arc;

use axum::extract::Request;
use axum::response::Response;
use http::HeaderMap;

use crate::auth::UserType;
use crate::cache::{Cache, Source};
use crate::cache_keys;
use crate::caller::Caller;
use crate::response_cache::{respond, with_fast_key};

/// Answers a repeat of a cached read, or serves the request with `serve` and files its
/// answer. `caller` is `None` when authentication or negotiation failed (the API refuses).
/// A hit comes with its user type, for the request metrics (the API tags its own answers:
/// `metrics::tag_user_type`); handed back rather than put in the response's extensions,
/// which would cost every hit a map of its own.
pub async fn answer_repeats<F, Fut>(
    cache: &Cache,
    caller: Option<Caller>,
    request: Request,
    serve: F,
) -> (Response, Option<UserType>)
where
    F: FnOnce(Request) -> Fut,
    Fut: Future<Output = Response>,
{
    let found = fast_hit(
        cache,
        caller,
        request.method(),
        request.uri(),
        request.headers(),
    )
    .await;
    match found {
        FastPath::Hit(response, user_type) => (response, Some(user_type)),
        FastPath::Miss(Some(key)) => (with_fast_key(key, serve(request)).await, None),
        FastPath::Miss(None) => (serve(request).await, None),
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
    caller: Option<Caller>,
    method: &http::Method,
    uri: &http::Uri,
    headers: &HeaderMap,
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
    let Some(caller) = caller else {
        return FastPath::Miss(None);
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
