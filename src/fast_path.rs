//! The fast path: a repeat of a cached read is answered from the cache before the API's
//! layers (load shedding, policy, parsing, the handler) run.
//!
//! A body the response cache serves is also filed under the request that produced it
//! (GET, raw path and query, format, and its audience: the user type, or for a customer
//! shown group prices their customer group; see [`crate::response_cache`]). This layer
//! looks a GET up under that key, with the caller [`crate::caller::resolve`] settled, and
//! answers a hit with the very headers the handler would have sent; on a miss it hands the
//! key on, so that the answer the handler serves is filed under it.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::{Extensions, HeaderMap};

use crate::auth::{Authenticated, Principal, UserType};
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

/// A customer's group when `lookups::customer_group` has it in the cache and fresh, without
/// calling Magento (its entry's text is the group's number).
async fn known_customer_group(cache: &Cache, customer_id: u64) -> Option<u64> {
    let entry = cache
        .fresh(&cache_keys::key::customer_group(customer_id))
        .await?;
    match &entry.value {
        crate::cache::Value::Text(text) => text.parse().ok(),
        _ => None,
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
    let caller = Caller::new(*principal, *format);
    let tail = path.as_str();
    let hit = |entry: Arc<crate::cache::Entry>| {
        FastPath::Hit(
            respond(cache, caller, headers, &entry, Source::Hit),
            caller.user_type(),
        )
    };
    let key = cache_keys::key::fast(&caller.audience(), caller.format, tail);
    if let Some(entry) = cache.fresh(&key).await {
        return hit(entry);
    }
    // A customer's answers with group prices are filed under their group's audience; the
    // group is looked up in the cache only (a miss takes the slow path, which fetches it).
    if let Principal::Customer(id) = principal
        && let Some(group) = known_customer_group(cache, *id).await
    {
        let audience = caller.with_price_group(group).audience();
        let key = cache_keys::key::fast(&audience, caller.format, tail);
        if let Some(entry) = cache.fresh(&key).await {
            return hit(entry);
        }
    }
    // The answer is filed under the audience it is built for (`response_cache`).
    FastPath::Miss(Some(tail.into()))
}
