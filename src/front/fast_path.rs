//! The fast path: a repeat of a cached read is answered from the cache before the API's
//! layers (load shedding, policy, parsing, the handler) run.
//!
//! A body the response cache serves is also filed under the request that produced it
//! (GET, raw path and query, format, and its audience: the user type, or for a customer
//! shown group prices their customer group; see [`crate::cache::response`]). This step
//! looks a GET up under that key, with the caller [`crate::auth::caller::resolve`] settled, and
//! answers a hit with the very headers the handler would have sent; on a miss it hands the
//! key on, so that the answer the handler serves is filed under it. It is a step of the
//! front layer (`app::front`), between resolving the caller and the request's log span.

use std::sync::Arc;

use axum::response::Response;
use http::HeaderMap;

use crate::auth::caller::Caller;
use crate::auth::{Principal, UserType};
use crate::cache::keys;
use crate::cache::response::respond;
use crate::cache::{Cache, Source};

/// The spec's `Version` header (a parsed name: looked up on every GET).
const VERSION: http::HeaderName = http::HeaderName::from_static("version");

/// What [`lookup`] found: an answer, or the key to file this request's answer under.
pub enum FastPath {
    /// The cached answer, with its user type for the request metrics (the API tags its own
    /// answers: `metrics::tag_user_type`); handed back rather than put in the response's
    /// extensions, which would cost every hit a map of its own.
    Hit(Response, UserType),
    /// Not in the cache; `Some(key)` when the request may be filed: the rest of the request
    /// runs inside `response_cache::with_fast_key` with it, so that the answer the handler
    /// serves is filed under it.
    Miss(Option<Arc<str>>),
}

/// Looks a request up in the cache: a GET's body cached for the same request answers it,
/// without the API's layers. `caller` is `None` when authentication or negotiation failed
/// (the API refuses). Takes the request's parts by reference, not the request: the front
/// keeps it for a miss, and a body is not `Sync`, so a future holding the whole request by
/// reference could not be sent between threads. `now` is the request's reading of the clock
/// (`telemetry::Observed::started`), which every freshness check of the lookup uses.
pub async fn lookup(
    cache: &Cache,
    caller: Option<Caller>,
    method: &http::Method,
    uri: &http::Uri,
    headers: &HeaderMap,
    now: tokio::time::Instant,
) -> FastPath {
    if method != http::Method::GET || !cache.enabled() {
        return FastPath::Miss(None);
    }
    // Anything the slow path would refuse or treat specially goes the slow way.
    if headers.get(&VERSION).is_some_and(|v| v.as_bytes() != b"1") {
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
    let tail = path.as_str();
    let hit = |entry: &Arc<crate::cache::Entry>| {
        FastPath::Hit(
            respond(cache, caller, headers, entry, Source::Hit, now),
            caller.user_type(),
        )
    };
    let key = keys::key::fast(&caller.audience(), caller.format, tail);
    if let Some(found) = cache.with_fresh(&key, now, hit).await {
        return found;
    }
    // A customer's answers with group prices are filed under their group's audience; the
    // group is looked up in the cache only (a miss takes the slow path, which fetches it).
    if let Principal::Customer(id) = caller.principal
        && let Some(group) = known_customer_group(cache, id, now).await
    {
        let audience = caller.with_price_group(group).audience();
        let key = keys::key::fast(&audience, caller.format, tail);
        if let Some(found) = cache.with_fresh(&key, now, hit).await {
            return found;
        }
    }
    // The answer is filed under the audience it is built for (`response_cache`), and only
    // for the one spelling of a request: a client varying its query string (`?_=1`,
    // `?_=2`, ...) adds nothing to the cache (`http::canonical`).
    if crate::http::canonical::is_canonical_query(path.query()) {
        FastPath::Miss(Some(tail.into()))
    } else {
        FastPath::Miss(None)
    }
}

/// A customer's price group when `lookups::customer_group` has it in the cache and fresh,
/// without calling the store.
async fn known_customer_group(
    cache: &Cache,
    customer_id: u64,
    now: tokio::time::Instant,
) -> Option<crate::auth::price_group::PriceGroup> {
    cache
        .with_fresh(&keys::key::customer_group(customer_id), now, |entry| {
            crate::records::lookups::customer_group::parse(&entry.value)
        })
        .await
        .flatten()
}
