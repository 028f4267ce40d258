//! The Magento 2 REST client: the only code that talks to the back end.
//!
//! One pooled `reqwest::Client`; a deadline on every call; the integration token attached
//! here and nowhere else (marked sensitive, never logged); the request id passed on as
//! `X-Request-Id`, so Magento's logs and ours line up; idempotent reads retried once on a
//! connection error or a 502/503/504, with jitter and within a retry budget; writes never
//! retried; a circuit breaker and a bound on calls in flight ([`resilience`]). It knows
//! Magento's paths, store scopes and error bodies, and nothing of the client-facing
//! protocol: no XML, no spec messages. Every call ends in one [`transport::Transport`],
//! the pooled client by default: the seam where `crate::backend::recording` records and replays
//! upstream traffic.

pub mod adapter;
pub mod addresses;
pub mod catalog;
pub mod customers;
pub mod directory;
pub mod endpoint;
pub mod links;
pub mod media;
pub mod orders;
pub mod search;
pub mod stock;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::time::Instant;

pub use crate::backend::error::{StoreMessage, UpstreamError};
pub use crate::backend::port::{Scope, SearchCriteria};
pub use crate::backend::resilience::CircuitState;

use crate::backend::resilience::{self, Guard};
use crate::backend::transport::{HttpTransport, Outgoing, Transport};
use crate::context::request;
use crate::observe::metrics::{Outcome, UpstreamMetrics};

/// Characters left as they are in a path segment: RFC 3986 unreserved.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Encodes one path segment (a SKU may hold `/`, spaces, anything). `.` and `..` would be
/// dot segments, which URL parsers and web servers remove (the path would name another
/// resource): they are sent as `%2E` and `%2E%2E`, which Magento's router decodes back,
/// and through a client that keeps them ([`raw_path`]).
pub fn segment(value: &str) -> String {
    match value {
        "." => "%2E".to_owned(),
        ".." => "%2E%2E".to_owned(),
        _ => utf8_percent_encode(value, SEGMENT).to_string(),
    }
}

#[derive(Debug, Clone)]
pub struct Magento {
    transport: Arc<dyn Transport>,
    authorization: HeaderValue,
    timeout: Duration,
    default_store: String,
    guard: Arc<Guard>,
}

impl Magento {
    /// `base` is the store's URL without trailing slash; `token` an integration token.
    pub fn new(
        base: &str,
        token: &str,
        timeout: Duration,
        default_store: &str,
    ) -> Result<Magento, String> {
        let transport = Arc::new(HttpTransport::new(base, timeout)?);
        let mut authorization =
            HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
                "STOREGATE_UPSTREAM_TOKEN holds characters not allowed in a header".to_owned()
            })?;
        authorization.set_sensitive(true);
        Ok(Magento {
            transport,
            authorization,
            timeout,
            default_store: default_store.to_owned(),
            guard: Arc::new(Guard::new(
                &resilience::Options::default(),
                UpstreamMetrics::default(),
            )),
        })
    }

    /// The same client with its own breaker, budget and bound, recording into `metrics`.
    pub fn with_resilience(
        mut self,
        options: &resilience::Options,
        metrics: UpstreamMetrics,
    ) -> Magento {
        self.guard = Arc::new(Guard::new(options, metrics));
        self
    }

    /// The same client sending its calls through `transport` (recording, replaying).
    pub fn with_transport(mut self, transport: Arc<dyn Transport>) -> Magento {
        self.transport = transport;
        self
    }

    /// Where finished calls go now.
    pub fn transport(&self) -> Arc<dyn Transport> {
        self.transport.clone()
    }

    /// The circuit breaker's state now.
    pub fn circuit_state(&self) -> CircuitState {
        self.guard.breaker.state()
    }

    /// A reader of the breaker's state, for metrics.
    pub fn circuit_probe(&self) -> Arc<dyn Fn() -> CircuitState + Send + Sync> {
        self.guard.probe()
    }

    pub fn default_store(&self) -> &str {
        &self.default_store
    }

    fn scoped_path(&self, scope: Scope<'_>, path: &str) -> String {
        // Store codes come from Magento or the checked configuration; encoded all the same,
        // like every other segment.
        let scope = match scope {
            Scope::Default => segment(&self.default_store),
            Scope::Store(code) => segment(code),
            Scope::All => "all".to_owned(),
        };
        format!("/rest/{scope}{path}")
    }

    /// One call. `path` starts with `/V1/` and has its segments already encoded.
    pub async fn call(
        &self,
        method: Method,
        scope: Scope<'_>,
        path: &str,
        query: &[(String, String)],
        body: Option<&Value>,
    ) -> Result<Bytes, UpstreamError> {
        if method == Method::GET || method == Method::HEAD {
            return self
                .guard
                .read(|| self.attempt(&method, scope, path, query, body, &self.authorization))
                .await;
        }
        self.guard.called();
        self.attempt(&method, scope, path, query, body, &self.authorization)
            .await
    }

    /// A call made with someone else's credentials (a customer's Magento token), never
    /// retried.
    pub async fn call_as(
        &self,
        method: Method,
        scope: Scope<'_>,
        path: &str,
        authorization: HeaderValue,
    ) -> Result<Bytes, UpstreamError> {
        self.guard.called();
        self.attempt(&method, scope, path, &[], None, &authorization)
            .await
    }

    /// One try, through the breaker, the bound on calls in flight and the deadline, timed
    /// and counted.
    async fn attempt(
        &self,
        method: &Method,
        scope: Scope<'_>,
        path: &str,
        query: &[(String, String)],
        body: Option<&Value>,
        authorization: &HeaderValue,
    ) -> Result<Bytes, UpstreamError> {
        let started = Instant::now();
        let metrics = &self.guard.metrics;
        // The path's template names the call in metrics and logs: a path can hold a
        // customer's id or e-mail.
        let endpoint = endpoint::template(path);
        let timeout = match request::remaining() {
            Some(left) if left < Duration::from_millis(1) => {
                metrics.call(method, &endpoint, Outcome::Timeout, Duration::ZERO);
                return Err(UpstreamError::Timeout);
            }
            Some(left) => self.timeout.min(left),
            None => self.timeout,
        };
        let Some(admission) = self.guard.breaker.admit() else {
            metrics.call(method, &endpoint, Outcome::CircuitOpen, Duration::ZERO);
            return Err(UpstreamError::Unavailable);
        };
        let Some(_slot) = self.guard.slot() else {
            // Never sent: says nothing about Magento's health.
            drop(admission);
            crate::observe::log_limit::warn(
                "upstream call shed",
                format_args!("upstream call shed: too many calls in flight ({endpoint})"),
            );
            metrics.call(method, &endpoint, Outcome::Shed, Duration::ZERO);
            return Err(UpstreamError::Unavailable);
        };
        let result = self
            .call_once(
                method.clone(),
                scope,
                path,
                query,
                body,
                authorization,
                timeout,
            )
            .await;
        let outcome = outcome(&result);
        let healthy = matches!(outcome, Outcome::Ok | Outcome::ClientError);
        if admission.done(healthy) {
            metrics.circuit_opened();
            tracing::error!(
                %endpoint,
                "upstream circuit opened after repeated failures; calls fail fast until a probe succeeds"
            );
        }
        metrics.call(method, &endpoint, outcome, started.elapsed());
        result
    }

    #[allow(clippy::too_many_arguments)]
    async fn call_once(
        &self,
        method: Method,
        scope: Scope<'_>,
        path: &str,
        query: &[(String, String)],
        body: Option<&Value>,
        authorization: &HeaderValue,
        timeout: Duration,
    ) -> Result<Bytes, UpstreamError> {
        let mut headers = http::HeaderMap::with_capacity(6);
        headers.insert(http::header::AUTHORIZATION, authorization.clone());
        headers.insert(
            http::header::ACCEPT,
            HeaderValue::from_static("application/json"),
        );
        if let Some(id) = request::request_id() {
            headers.insert(request::X_REQUEST_ID, id);
        }
        // W3C trace context: Magento's spans (or its proxy's) join the client's trace.
        if let Some(trace) = request::trace() {
            headers.insert(crate::context::trace::TRACEPARENT, trace.traceparent());
            if let Some(state) = trace.state {
                headers.insert(crate::context::trace::TRACESTATE, state);
            }
        }
        let body = match body {
            Some(body) => {
                headers.insert(
                    http::header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                Some(Bytes::from(to_json_bytes(body)?))
            }
            None => None,
        };
        let answer = self
            .transport
            .send(Outgoing {
                method,
                path: self.scoped_path(scope, path),
                query: query.to_vec(),
                headers,
                body,
                timeout,
            })
            .await?;
        let (status, bytes) = (answer.status, answer.body);
        if status.is_success() {
            Ok(bytes)
        } else {
            Err(UpstreamError::Status {
                status: status.as_u16(),
                error: StoreMessage::parse(&bytes),
            })
        }
    }

    pub async fn get(
        &self,
        scope: Scope<'_>,
        path: &str,
        query: &[(String, String)],
    ) -> Result<Bytes, UpstreamError> {
        self.call(Method::GET, scope, path, query, None).await
    }

    pub async fn get_json<T: DeserializeOwned>(
        &self,
        scope: Scope<'_>,
        path: &str,
        query: &[(String, String)],
    ) -> Result<T, UpstreamError> {
        parse(&self.get(scope, path, query).await?)
    }

    pub async fn send_json<T: DeserializeOwned>(
        &self,
        method: Method,
        scope: Scope<'_>,
        path: &str,
        body: Option<&Value>,
    ) -> Result<T, UpstreamError> {
        parse(&self.call(method, scope, path, &[], body).await?)
    }

    /// Is the back end answering at all? Uses an anonymous, cheap call.
    pub async fn ping(&self) -> Result<(), UpstreamError> {
        self.get(Scope::Default, "/V1/store/storeViews", &[])
            .await
            .map(|_| ())
    }

    /// Does the back end accept the gateway's credentials? `ping`'s call is anonymous in
    /// Magento 2, so a wrong or under-privileged integration token passes it while every
    /// API call fails; this one needs the token and the catalog permission every product
    /// read needs (one product, the smallest page). Some(reason) when the back end
    /// refuses (401/403); None when it accepts, or fails in a way that says nothing of
    /// the credentials (that is `ping`'s and the circuit's to report).
    pub async fn credentials_refused(&self) -> Option<String> {
        let query = [
            ("searchCriteria[pageSize]".to_owned(), "1".to_owned()),
            ("searchCriteria[currentPage]".to_owned(), "1".to_owned()),
        ];
        match self.get(Scope::Default, "/V1/products", &query).await {
            Err(UpstreamError::Status { status, error }) if status == 401 || status == 403 => {
                Some(format!(
                    "the back end refuses the gateway's credentials ({status}: {}); check \
                     STOREGATE_UPSTREAM_TOKEN and the integration's resources",
                    error.text()
                ))
            }
            _ => None,
        }
    }
}

/// A request body as JSON, in a buffer sized up front: grown by doubling, a large image
/// upload would briefly need three times its size.
pub(crate) fn to_json_bytes(body: &Value) -> Result<Vec<u8>, UpstreamError> {
    fn size(value: &Value) -> usize {
        match value {
            Value::String(s) => s.len() + 2,
            Value::Array(items) => items.iter().map(size).sum::<usize>() + items.len() + 2,
            Value::Object(map) => {
                map.iter()
                    .map(|(k, v)| k.len() + 4 + size(v))
                    .sum::<usize>()
                    + 2
            }
            _ => 24,
        }
    }
    // Escapes can make it longer; a little room saves a doubling then.
    let estimate = size(body);
    let mut bytes = Vec::with_capacity(estimate + estimate / 64 + 64);
    serde_json::to_writer(&mut bytes, body).map_err(|e| UpstreamError::Protocol(e.to_string()))?;
    Ok(bytes)
}

/// Parses a JSON answer; a body that is not what we expect is a protocol error, not a panic.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, UpstreamError> {
    serde_json::from_slice(bytes)
        .map_err(|e| UpstreamError::Protocol(format!("unexpected body: {e}")))
}

fn outcome(result: &Result<Bytes, UpstreamError>) -> Outcome {
    match result {
        Ok(_) => Outcome::Ok,
        Err(UpstreamError::Status { status, .. }) if *status >= 500 => Outcome::ServerError,
        Err(UpstreamError::Status { .. }) => Outcome::ClientError,
        Err(UpstreamError::Timeout) => Outcome::Timeout,
        Err(UpstreamError::Connect(_)) => Outcome::ConnectError,
        Err(UpstreamError::Protocol(_)) => Outcome::ProtocolError,
        Err(UpstreamError::Unavailable) => Outcome::CircuitOpen,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_codes_are_one_segment() {
        let magento =
            Magento::new("http://m2.test", "t", Duration::from_secs(1), "default").unwrap();
        assert_eq!(
            magento.scoped_path(Scope::Store("fr/../x"), "/V1/a"),
            "/rest/fr%2F..%2Fx/V1/a"
        );
        assert_eq!(
            magento.scoped_path(Scope::Default, "/V1/a"),
            "/rest/default/V1/a"
        );
    }

    #[test]
    fn segments_are_encoded() {
        assert_eq!(segment("24-MB01"), "24-MB01");
        assert_eq!(segment("a/b c?d"), "a%2Fb%20c%3Fd");
        for (hostile, sent) in [
            (".", "%2E"),
            ("..", "%2E%2E"),
            ("...", "..."),
            ("/", "%2F"),
            ("%2F", "%252F"),
            ("?", "%3F"),
            ("#", "%23"),
            (" a b ", "%20a%20b%20"),
            ("é/ü", "%C3%A9%2F%C3%BC"),
            ("../x", "..%2Fx"),
        ] {
            assert_eq!(segment(hostile), sent, "{hostile:?}");
            let decoded = percent_encoding::percent_decode_str(sent)
                .decode_utf8()
                .unwrap();
            assert_eq!(decoded, hostile, "Magento decodes it back");
        }
    }
}
