//! Logs and request ids: what an operator reads when something went wrong.
//!
//! - Every request has an id: the caller's `X-Request-Id` when it is a sane token (at most
//!   128 characters of letters, digits and `-_.:`), else a new one. It is echoed in the
//!   response, put on the request's log span (so every log line of the request carries it),
//!   and sent to Magento with each upstream call.
//! - The binary logs to stderr, as text or, with `STOREGATE_LOG_FORMAT=json`, one JSON
//!   object per line; every line logged while serving a request carries this span's fields
//!   (`request_id`, `trace_id`, `method`, `route`) under `span`. `RUST_LOG` filters as
//!   usual. One line per request (an access log: method, route template, status, bytes,
//!   duration, user type, cache outcome) is logged at `info` under the target
//!   `storegate::access`, in the layout of a line logged in the request's span; the binary
//!   formats it itself, off tracing's formatter ([`crate::observe::access_log`]).
//!   `STOREGATE_ACCESS_LOG=off` or `RUST_LOG=...,storegate::access=off` turns it off.
//!   Failed requests are logged at `error` (5xx) by the error renderer whatever the filter
//!   says about access lines.
//! - Every request belongs to a W3C trace ([`crate::context::trace`]): the caller's
//!   `traceparent`, or a new trace. Its id is on the request's log lines and goes to Magento.

use std::sync::Arc;

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use http::HeaderValue;
use tracing::Instrument;

use crate::auth::UserType;
use crate::context::request::{TraceContext, with_request_id, with_trace};
use crate::context::trace::TRACEPARENT;
use crate::http::FailureLine;
use crate::observe::access_log;
use crate::observe::metrics::Metrics;

pub use crate::context::request::{X_REQUEST_ID, request_id};

/// The response header the access line reads the cache's outcome from.
const X_CACHE: http::HeaderName = http::HeaderName::from_static("x-cache");

/// A caller's id is kept when it is short and made of token characters: it ends up in
/// logs, and a log line must not be forgeable through it.
fn acceptable(value: &HeaderValue) -> bool {
    let bytes = value.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 128
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
}

/// A new id: unique within the process (a counter) and across processes (a random prefix
/// drawn at start), without a system call per request.
pub fn new_id() -> HeaderValue {
    // `{prefix:08x}-`, written once.
    static PREFIX: std::sync::OnceLock<[u8; 9]> = std::sync::OnceLock::new();
    thread_local!(static BLOCK: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) });
    static NEXT: crate::per_thread::sequence::Sequence =
        crate::per_thread::sequence::Sequence::new(&BLOCK);
    let prefix = PREFIX.get_or_init(|| {
        let random = getrandom::u32().unwrap_or(std::process::id());
        let mut text = [b'-'; 9];
        crate::observe::hex::write(&mut text[..8], &random.to_be_bytes());
        text
    });
    let n = NEXT.next();
    // `{prefix:08x}-{n:012x}`, written without a formatter: this runs on every request.
    let mut text = [0u8; 21];
    text[..9].copy_from_slice(prefix);
    crate::observe::hex::write(&mut text[9..], &n.to_be_bytes()[2..]);
    HeaderValue::from_bytes(&text).expect("hex digits are a valid header value")
}

/// The log span every line logged while serving a request carries.
fn request_span(
    id: &HeaderValue,
    trace: &TraceContext,
    method: &http::Method,
    route: Option<&str>,
) -> tracing::Span {
    tracing::info_span!(
        "request",
        request_id = id.to_str().unwrap_or_default(),
        trace_id = %trace.trace_id(),
        method = %method,
        route = route.unwrap_or("unmatched"),
    )
}

/// The first and last step of every request (`app::front`): request id, access log and
/// request metrics, for every request, answered by the fast path or not. The front layer
/// is applied with `Router::layer`, so it runs after routing and knows the route template.
///
/// Two plain calls around the rest of the request ([`Observed::begin`] and
/// [`Observed::finish`]) rather than an `async fn` wrapping it: each `async fn` a request
/// passes through keeps its own copy of the request in its state, and a cache hit's
/// future is copied whole into the heap and moved around (`bench/instructions.py`).
///
/// It opens no log span: [`trace`] does, past the fast path, because a cache hit logs
/// nothing but its access line and opening a span (the subscriber formats its fields)
/// cost a hit a sixth of its instructions. The access line carries the same fields as if
/// it were logged in such a span ([`access_log`] writes it, in the span's layout).
#[derive(Clone)]
pub struct Observed {
    /// The request's reading of the clock, which the cache's freshness checks of a hit use
    /// too (tokio's clock, as the cache's, so tests that pause time see one clock).
    started: tokio::time::Instant,
    id: HeaderValue,
    /// The caller's own `X-Request-Id`, already in the request's headers.
    from_caller: bool,
    method: http::Method,
    /// The matched route template. Shared (`Arc`): cloning it allocates nothing.
    matched: Option<Route>,
    trace: TraceContext,
    /// The answer's `X-Cache`, when the one who made it says so ([`Observed::set_cache_status`]):
    /// the access line need not look for it in the answer's headers.
    cache_status: Option<&'static str>,
}

/// The route template of an answer that routing did not match but a route served all the
/// same (`front::fallback`: the admin authorize page spelt in another case, served by its
/// canonical route), put in the answer's extensions: the access line and the request
/// metrics name that route rather than `unmatched`.
#[derive(Debug, Clone, Copy)]
pub struct ServedAs(pub &'static str);

/// A request's route template: as routing matched it, or as [`Observed::set_route`] named
/// it for a request answered before routing.
#[derive(Clone)]
enum Route {
    Matched(MatchedPath),
    Named(Arc<str>),
}

impl Route {
    fn as_str(&self) -> &str {
        match self {
            Route::Matched(matched) => matched.as_str(),
            Route::Named(template) => template,
        }
    }
}

impl Observed {
    /// Settles the request's id and trace, and starts its clock.
    pub fn begin(request: &Request) -> Observed {
        let started = tokio::time::Instant::now();
        // The caller's request id and trace parent (the first of each) in one pass over
        // the headers: both names are the gateway's own, not hyper's standard ones, so a
        // `get` of each hashes the name's bytes and probes, and most requests carry neither.
        let (mut caller_id, mut traceparent) = (None, None);
        for (name, value) in request.headers() {
            if caller_id.is_none() && *name == X_REQUEST_ID {
                caller_id = Some(value);
            } else if traceparent.is_none() && *name == TRACEPARENT {
                traceparent = Some(value);
            }
        }
        let (id, from_caller) = match caller_id {
            Some(value) if acceptable(value) => (value.clone(), true),
            _ => (new_id(), false),
        };
        Observed {
            started,
            id,
            from_caller,
            method: request.method().clone(),
            matched: request
                .extensions()
                .get::<MatchedPath>()
                .cloned()
                .map(Route::Matched),
            // The pass above and a counter: cheap enough for every request, so that a
            // hit's access line carries the caller's trace id too.
            trace: TraceContext::with_parent(traceparent, request.headers()),
            cache_status: None,
        }
    }

    /// When the request began: the reading of the clock its cache lookups use.
    pub fn started(&self) -> tokio::time::Instant {
        self.started
    }

    /// The route template of a request answered before routing (`front::Service`), as
    /// routing would have matched it.
    pub fn set_route(&mut self, template: Option<Arc<str>>) {
        self.matched = template.map(Route::Named);
    }

    /// The answer's `X-Cache` value, known to the one who made it (a hit before routing).
    pub fn set_cache_status(&mut self, status: &'static str) {
        self.cache_status = Some(status);
    }

    /// The route template, as routing matched it or [`Observed::set_route`] named it.
    pub fn route(&self) -> Option<&str> {
        self.matched.as_ref().map(Route::as_str)
    }

    /// A request begun before routing goes through it after all: the template it matched.
    pub fn routed(&mut self, request: &Request) {
        self.matched = request
            .extensions()
            .get::<MatchedPath>()
            .cloned()
            .map(Route::Matched);
    }

    /// The id and trace [`trace`] runs the rest of the request with.
    pub fn request_id(&self) -> RequestId {
        RequestId {
            id: self.id.clone(),
            from_caller: self.from_caller,
            trace: self.trace.clone(),
        }
    }

    /// Counts the answer, logs its access line, and puts the id on it. `user_type` is
    /// handed over by the fast path; else the response's extensions have it.
    pub fn finish(
        self,
        metrics: &Metrics,
        access_log_on: bool,
        mut response: Response,
        user_type: Option<UserType>,
    ) -> Response {
        let ended = tokio::time::Instant::now();
        let elapsed = ended.saturating_duration_since(self.started);
        let status = response.status().as_u16();
        let route = self
            .matched
            .as_ref()
            .map(Route::as_str)
            .or_else(|| response.extensions().get::<ServedAs>().map(|s| s.0));
        let user_type = user_type.or_else(|| response.extensions().get::<UserType>().copied());
        metrics.request(route, &self.method, status, user_type, elapsed);
        if let Some(failure) = response.extensions_mut().remove::<FailureLine>() {
            self.log_failure(metrics, route, failure);
        }
        if access_log_on && access_log::enabled() {
            let line = access_log::Line {
                request_id: self.id.to_str().unwrap_or_default(),
                trace_id: self.trace.trace_id,
                method: self.method.as_str(),
                route: route.unwrap_or("unmatched"),
                status,
                bytes: axum::body::HttpBody::size_hint(response.body()).exact(),
                // Whole nanoseconds over a million: the access line writes such a value
                // from its integer (`access_log::push_whole_nanos`), without `ryu`.
                duration_ms: (elapsed.as_secs() * 1_000_000_000 + u64::from(elapsed.subsec_nanos()))
                    as f64
                    / 1e6,
                user_type: user_type.map(|u| u.as_str()).unwrap_or("none"),
                cache: match self.cache_status {
                    Some(status) => status,
                    None => response
                        .headers()
                        .get(X_CACHE)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("-"),
                },
            };
            if !access_log::write_at(&line, ended.into_std()) {
                access_log::through_tracing(&line);
            }
        }
        set_request_id(response.headers_mut(), self.id);
        response
    }
}

/// The answer's `X-Request-Id`. A hit's headers hold the field first, empty
/// (`cache::hit_headers`): it is set in place there, without hashing the name to find it.
fn set_request_id(headers: &mut http::HeaderMap, id: HeaderValue) {
    if let Some((name, value)) = headers.iter_mut().next()
        && *name == X_REQUEST_ID
    {
        *value = id;
        return;
    }
    headers.insert(X_REQUEST_ID, id);
}

impl Observed {
    /// A server error's line, in the request's span: one per status and message per
    /// interval for this gateway, saying how many were left out (`log_limit`).
    fn log_failure(&self, metrics: &Metrics, route: Option<&str>, failure: FailureLine) {
        let cause = format!("{} {}", failure.status, failure.message);
        let Some(suppressed) = metrics.failure_lines().admit(&cause) else {
            return;
        };
        request_span(&self.id, &self.trace, &self.method, route).in_scope(|| {
            tracing::error!(
                status = failure.status,
                message = failure.message,
                cause = failure.cause,
                suppressed,
                "request failed"
            );
        });
    }
}

/// A request's id as [`Observed::begin`] settled it, for [`trace`].
pub struct RequestId {
    id: HeaderValue,
    /// The caller's own `X-Request-Id`, already in the request's headers.
    from_caller: bool,
    trace: TraceContext,
}

/// The last step of the front layer, past the fast path: the request's id into its
/// `X-Request-Id` header (when the gateway made it) and, for the upstream client, the id
/// and the trace context into the task's context; the log span around the rest of the
/// request.
pub async fn trace(mut request: Request, id: RequestId, next: Next) -> Response {
    let RequestId {
        id,
        from_caller,
        trace,
    } = id;
    if !from_caller {
        request.headers_mut().insert(X_REQUEST_ID, id.clone());
    }
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(MatchedPath::as_str);
    let span = request_span(&id, &trace, request.method(), route);
    with_request_id(id, with_trace(trace, next.run(request)).instrument(span)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        assert!(acceptable(&HeaderValue::from_static("abc-123_X.y:z")));
        assert!(!acceptable(&HeaderValue::from_static("")));
        assert!(!acceptable(&HeaderValue::from_static("a b")));
        assert!(!acceptable(
            &HeaderValue::from_str(&"a".repeat(129)).unwrap()
        ));
        let (a, b) = (new_id(), new_id());
        assert_ne!(a, b);
        assert!(acceptable(&a));
        let text = a.to_str().unwrap();
        assert!(text.len() == 21 && text.as_bytes()[8] == b'-', "{text}");
        let n = u64::from_str_radix(&text[9..], 16).unwrap();
        let m = u64::from_str_radix(&b.to_str().unwrap()[9..], 16).unwrap();
        assert_eq!(m, n + 1);
    }
}
