//! Rendered answers through the cache: what a resource's read serves, with validators
//! (`ETag`, `If-None-Match`), `Cache-Control`, `X-Cache` and `Cache-Status`, in the content
//! coding the client accepts (`crate::http::content_coding`: variants made when the entry is
//! filled, each with its own `ETag`, so that a `304` is per variant).
//!
//! A body [`cached`] serves is also filed under the request that produced it (GET, raw
//! path and query, format, and the audience it was built for: the user type, or a customer
//! group when it shows group prices), for [`crate::front::fast_path`] to answer a repeat of that
//! request straight from the cache with the same headers (`respond`). It is sound because
//! what [`cached`] serves depends on nothing else: the policy and the parsing that run
//! before it are functions of the method, the path, the query and the user type; a failed
//! check never reaches [`cached`], so it never files an answer. Invalidation, expiry and
//! the tags work on the very same entry.

use std::future::Future;
use std::sync::Arc;

use axum::body::Body as HttpBody;
use axum::response::Response;
use http::header::{
    ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE, ETAG, IF_NONE_MATCH, VARY,
};
use http::{HeaderMap, HeaderValue, StatusCode};

use crate::auth::UserType;
use crate::auth::caller::Caller;
use crate::cache::keys;
use crate::cache::{self, Body, Cache, Entry, Fetched, Source, hit_headers};
use crate::http::content_coding::Coding;
use crate::http::{ApiError, Doc, render};

tokio::task_local! {
    /// The raw request (path and query) this task serves, when its answer may be filed for
    /// the fast path; the key adds the audience the answer is built for.
    static FAST_KEY: Arc<str>;
}

/// Runs `future` (the rest of a request) so that a body [`cached`] serves is filed under
/// the request `path_and_query` for [`crate::front::fast_path`].
// Not an `async fn`, which would hold `future` twice: see `request_context`.
pub fn with_fast_key<F: Future>(
    path_and_query: Arc<str>,
    future: F,
) -> tokio::task::futures::TaskLocalFuture<Arc<str>, F> {
    FAST_KEY.scope(path_and_query, future)
}

/// A response document and the cache tags of what it shows.
pub type Built = (Doc, Vec<String>);

/// Serves a read through the rendered-body cache.
///
/// `logical` names the resource and the list parameters (not the raw query: unknown
/// parameters must not multiply entries); the key adds the user type and format, so only
/// data that is the same for every caller of a view is shared. Never use it for a
/// principal's own records: the answer is also filed for [`crate::front::fast_path`] under the request's
/// method, path, query, user type and format, and served to the next caller who sends them.
pub async fn cached<F, Fut>(
    cache: &Arc<Cache>,
    caller: Caller,
    request_headers: &HeaderMap,
    logical: &str,
    build: F,
) -> Result<Response, ApiError>
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = Result<Built, ApiError>> + Send + 'static,
{
    let audience = caller.audience();
    let key = keys::key::body(&audience, caller.format, logical);
    if let Some(entry) = cache.fresh(&key).await {
        file_for_fast_path(cache, logical, (&audience, caller), &entry).await;
        let now = tokio::time::Instant::now();
        return Ok(respond(
            cache,
            caller,
            request_headers,
            &entry,
            Source::Hit,
            now,
        ));
    }
    let format = caller.format;
    // The fetch may run after this request is gone (a background refresh): it takes the
    // request's profile along.
    let profile = crate::context::profile::Profile::current();
    let (entry, source) = cache
        .get_or_fetch(&key, move || {
            crate::context::profile::scope(profile, async move {
                let (doc, tags) = build().await?;
                let body = Body::new(render(format, &doc), format.content_type());
                Ok::<_, ApiError>(Fetched::new(cache::Value::Body(body), tags))
            })
        })
        .await?;
    if matches!(source, Source::Hit | Source::Fetched) {
        file_for_fast_path(cache, logical, (&audience, caller), &entry).await;
    }
    let now = tokio::time::Instant::now();
    Ok(respond(cache, caller, request_headers, &entry, source, now))
}

/// Files a fresh body under the current request's fast-path key, if
/// it has one (only canonical requests have one: see [`crate::front::fast_path`]), for the
/// audience it was built for (so a body with one group's prices is only ever found by
/// callers of that group). A view whose answer no query parameter changes (`logical`
/// without `?`: a product, its images) is filed only for the request without a query:
/// otherwise `?page=1`, `?page=2`, ... would each be a canonical spelling of the same
/// answer, without end.
async fn file_for_fast_path(
    cache: &Cache,
    logical: &str,
    (audience, caller): (&str, Caller),
    entry: &Arc<Entry>,
) {
    if let Ok(path_and_query) = FAST_KEY.try_with(Clone::clone) {
        if !logical.contains('?') && path_and_query.contains('?') {
            return;
        }
        let fast = keys::key::fast(audience, caller.format, &path_and_query);
        cache.alias(fast.into(), entry).await;
    }
}

/// Parsed once: a name given as text is parsed on every insert.
const X_CACHE: http::HeaderName = http::HeaderName::from_static("x-cache");
const WARNING: http::HeaderName = http::HeaderName::from_static("warning");

pub(crate) fn respond(
    cache: &Cache,
    caller: Caller,
    request_headers: &HeaderMap,
    entry: &Arc<Entry>,
    source: Source,
    now: tokio::time::Instant,
) -> Response {
    let cache::Value::Body(body) = &entry.value else {
        // Body keys only ever hold bodies.
        let mut response = Response::new(HttpBody::empty());
        *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
        return response;
    };
    // One reading of the clock, the request's, for both headers that count the entry's
    // seconds.
    let age = now.saturating_duration_since(entry.stored_at);
    // Rounded up: an entry stored a moment ago is good for the whole TTL.
    let max_age = cache.remaining_at(age).as_millis().div_ceil(1000) as u64;
    let public = caller.user_type() == UserType::Guest;
    // The representation: a compressed variant made at fill, or the body as it is.
    let coding = body.variants.as_ref().map_or(Coding::Identity, |variants| {
        variants.choose(request_headers.get(ACCEPT_ENCODING))
    });
    let (bytes, etag) = match body.variants.as_ref().and_then(|v| v.get(coding)) {
        Some(variant) => (&variant.bytes, &variant.etag),
        None => (&body.bytes, &body.etag),
    };
    let not_modified = request_headers
        .get(IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| etag_matches(v, etag.to_str().unwrap_or_default()));
    let fixed = Fixed {
        content_type: (!not_modified).then_some(body.content_type),
        coding,
        etag,
        public,
        max_age,
        source,
    };
    let tag = (source == Source::Hit && !not_modified)
        .then(|| hit_headers::Tag::of(etag))
        .flatten();
    if let Some(tag) = tag {
        // The same headers for every hit of this body in this second, and the body's bytes:
        // made once per thread and copied (`hit_headers`).
        let ttl = cache.freshness_secs_at(age);
        let key = hit_headers::Key {
            etag: tag,
            content_type: body.content_type,
            coding,
            public,
            max_age,
            ttl,
            spare: cache.hit_spare().cloned(),
        };
        let (headers, bytes) = hit_headers::for_hit(key, bytes, || {
            // The tag copied, not cloned: the map's values are this thread's own.
            let etag = HeaderValue::from_bytes(etag.as_bytes()).unwrap_or_else(|_| etag.clone());
            Fixed {
                etag: &etag,
                ..fixed
            }
            .headers(crate::cache::status::for_source(
                source,
                ttl,
                cache.enabled(),
            ))
        });
        let mut response = Response::new(HttpBody::from(bytes));
        *response.headers_mut() = headers;
        return response;
    }
    let headers = {
        let status = if source == Source::Fetched && cache.held_off(entry) {
            // Fetched for this read and not kept: a write with an unknown outcome touched it.
            crate::cache::status::bypassed()
        } else {
            crate::cache::status::for_source(source, cache.freshness_secs_at(age), cache.enabled())
        };
        let mut headers = fixed.headers(status);
        match source {
            Source::StaleWhileRevalidate => {
                headers.insert(
                    WARNING,
                    HeaderValue::from_static("110 - \"Response is Stale\""),
                );
            }
            Source::StaleIfError => {
                headers.insert(
                    WARNING,
                    HeaderValue::from_static("111 - \"Revalidation Failed\""),
                );
            }
            _ => {}
        }
        headers
    };
    let mut response = if not_modified {
        let mut r = Response::new(HttpBody::empty());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else {
        Response::new(HttpBody::from(bytes.clone()))
    };
    *response.headers_mut() = headers;
    response
}

/// What every answer `respond` makes carries, in this order: `Content-Type` (not on a 304),
/// `Content-Encoding` (a compressed variant), `ETag`, `Cache-Control`, `Vary`, `X-Cache`,
/// `Cache-Status`.
struct Fixed<'a> {
    content_type: Option<&'static str>,
    coding: Coding,
    etag: &'a HeaderValue,
    public: bool,
    max_age: u64,
    source: Source,
}

impl Fixed<'_> {
    fn headers(&self, status: HeaderValue) -> HeaderMap {
        // Sized once for everything set here and downstream (warning, request id).
        let mut headers = HeaderMap::with_capacity(16);
        if let Some(content_type) = self.content_type {
            headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
        }
        if self.coding != Coding::Identity {
            // On a 304 too: it describes the representation the client holds.
            headers.insert(
                CONTENT_ENCODING,
                HeaderValue::from_static(self.coding.token()),
            );
        }
        headers.insert(ETAG, self.etag.clone());
        headers.insert(CACHE_CONTROL, cache_control(self.public, self.max_age));
        // Every cached answer varies by encoding, even one too small to compress today: the
        // same URL may answer a larger body tomorrow, and a cache in front must not have
        // stored the small one for every encoding.
        headers.insert(
            VARY,
            HeaderValue::from_static("Accept, Authorization, Accept-Encoding"),
        );
        headers.insert(
            X_CACHE,
            HeaderValue::from_static(match self.source {
                Source::Hit => "HIT",
                Source::Fetched => "MISS",
                Source::StaleWhileRevalidate | Source::StaleIfError => "STALE",
            }),
        );
        headers.insert(crate::cache::status::CACHE_STATUS, status);
        headers
    }
}

/// `public, max-age=N` or `private, max-age=N`, written without a formatter (every hit
/// sends one), and made once per value and thread ([`crate::cache::status::reused`]).
fn cache_control(public: bool, max_age: u64) -> HeaderValue {
    let kind = if public {
        crate::cache::status::Reused::Public
    } else {
        crate::cache::status::Reused::Private
    };
    crate::cache::status::reused(kind, max_age as i64, || make_cache_control(public, max_age))
}

fn make_cache_control(public: bool, max_age: u64) -> HeaderValue {
    let mut text = [0u8; 40];
    let head: &[u8] = if public {
        b"public, max-age="
    } else {
        b"private, max-age="
    };
    text[..head.len()].copy_from_slice(head);
    let mut digits = [0u8; 20];
    let digits = crate::cache::status::decimal(max_age, &mut digits);
    let len = head.len() + digits.len();
    text[head.len()..len].copy_from_slice(digits);
    HeaderValue::from_bytes(&text[..len]).expect("ASCII digits are a valid header value")
}

/// `If-None-Match`: a list of entity tags or `*`, compared weakly (RFC 9110 §13.1.2).
fn etag_matches(header: &str, etag: &str) -> bool {
    header.split(',').map(str::trim).any(|candidate| {
        candidate == "*" || candidate.strip_prefix("W/").unwrap_or(candidate) == etag
    })
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
}
