//! The Magento 2 REST client: the only code that talks to the back end.
//!
//! One pooled `reqwest::Client`; a deadline on every call; the integration token attached
//! here and nowhere else (marked sensitive, never logged); the request id passed on as
//! `X-Request-Id`, so Magento's logs and ours line up; idempotent reads retried once on a
//! connection error or a 502/503/504, with jitter and within a retry budget; writes never
//! retried; a circuit breaker and a bound on calls in flight ([`resilience`]). It knows
//! Magento's paths, store scopes and error bodies, and nothing of the client-facing
//! protocol: no XML, no spec messages. Keeping every call behind [`Magento::call`] is what
//! makes recording and replaying upstream traffic a single layer later.

pub mod catalog;
pub mod customers;
pub mod directory;
pub mod error;
pub mod media;
pub mod orders;
pub mod resilience;
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

pub use error::{M2Error, UpstreamError};
pub use resilience::CircuitState;
pub use search::{Direction, SearchCriteria};

use crate::metrics::{Outcome, UpstreamMetrics};
use crate::request_context;
use resilience::Guard;

/// Which store scope a call runs in (`/rest/<scope>/V1/...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope<'a> {
    /// The configured default store view: reads.
    Default,
    /// A store view by code: store-specific reads and writes.
    Store(&'a str),
    /// Admin scope: writes of default (global) values. Magento refuses GETs here.
    All,
}

/// Characters left as they are in a path segment: RFC 3986 unreserved.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Encodes one path segment (a SKU may hold `/`, spaces, anything).
pub fn segment(value: &str) -> String {
    utf8_percent_encode(value, SEGMENT).to_string()
}

#[derive(Debug, Clone)]
pub struct Magento {
    http: reqwest::Client,
    base: String,
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
        install_crypto();
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(256)
            .pool_idle_timeout(Duration::from_secs(60))
            .tcp_nodelay(true)
            .connect_timeout(timeout.min(Duration::from_secs(3)))
            .user_agent(concat!("storegate/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        let mut authorization =
            HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
                "STOREGATE_UPSTREAM_TOKEN holds characters not allowed in a header".to_owned()
            })?;
        authorization.set_sensitive(true);
        Ok(Magento {
            http,
            base: base.trim_end_matches('/').to_owned(),
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

    /// The circuit breaker's state now.
    pub fn circuit_state(&self) -> CircuitState {
        self.guard.breaker.state()
    }

    /// A reader of the breaker's state, for metrics.
    pub fn circuit_probe(&self) -> Arc<dyn Fn() -> CircuitState + Send + Sync> {
        let guard = self.guard.clone();
        Arc::new(move || guard.breaker.state())
    }

    pub fn default_store(&self) -> &str {
        &self.default_store
    }

    fn url(&self, scope: Scope<'_>, path: &str) -> String {
        let scope = match scope {
            Scope::Default => self.default_store.as_str(),
            Scope::Store(code) => code,
            Scope::All => "all",
        };
        format!("{}/rest/{}{}", self.base, scope, path)
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
        let idempotent = method == Method::GET || method == Method::HEAD;
        self.guard.called();
        let first = self
            .attempt(&method, scope, path, query, body, &self.authorization)
            .await;
        match first {
            Err(error) if idempotent && error.is_transient() => {
                let wait = resilience::jitter();
                // Not worth it when the wait and a useful try no longer fit the deadline.
                let fits = request_context::remaining().is_none_or(|left| left > wait * 2);
                if !fits || !self.guard.may_retry() {
                    return Err(error);
                }
                // The status only: Magento's message can carry a customer's values.
                tracing::debug!(status = ?error.status(), "retrying an upstream read once");
                tokio::time::sleep(wait).await;
                self.attempt(&method, scope, path, query, body, &self.authorization)
                    .await
            }
            other => other,
        }
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
        let timeout = match request_context::remaining() {
            Some(left) if left < Duration::from_millis(1) => {
                metrics.call(method, path, Outcome::Timeout, Duration::ZERO);
                return Err(UpstreamError::Timeout);
            }
            Some(left) => self.timeout.min(left),
            None => self.timeout,
        };
        let Some(admission) = self.guard.breaker.admit() else {
            metrics.call(method, path, Outcome::CircuitOpen, Duration::ZERO);
            return Err(UpstreamError::Unavailable);
        };
        let Some(_slot) = self.guard.slot() else {
            // Never sent: says nothing about Magento's health.
            drop(admission);
            tracing::warn!(
                endpoint = %crate::metrics::endpoint_template(path),
                "upstream call shed: too many calls in flight"
            );
            metrics.call(method, path, Outcome::Shed, Duration::ZERO);
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
            // The endpoint's template, not its path: a path can hold a customer's id or e-mail.
            tracing::error!(
                endpoint = %crate::metrics::endpoint_template(path),
                "upstream circuit opened after repeated failures; calls fail fast until a probe succeeds"
            );
        }
        metrics.call(method, path, outcome, started.elapsed());
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
        let mut url = self.url(scope, path);
        if !query.is_empty() {
            url.push('?');
            url.push_str(
                &form_urlencoded::Serializer::new(String::new())
                    .extend_pairs(query.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                    .finish(),
            );
        }
        let mut request = self
            .http
            .request(method, url)
            .timeout(timeout)
            .header(http::header::AUTHORIZATION, authorization.clone())
            .header(http::header::ACCEPT, "application/json");
        if let Some(id) = request_context::request_id() {
            request = request.header(request_context::X_REQUEST_ID, id);
        }
        if let Some(trace) = request_context::trace() {
            request = request.header(crate::trace_context::TRACEPARENT, trace.traceparent());
            if let Some(state) = trace.state {
                request = request.header(crate::trace_context::TRACESTATE, state);
            }
        }
        if let Some(body) = body {
            let bytes =
                serde_json::to_vec(body).map_err(|e| UpstreamError::Protocol(e.to_string()))?;
            request = request
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(bytes);
        }
        let response = request.send().await.map_err(classify)?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(classify)?;
        if status.is_success() {
            Ok(bytes)
        } else {
            Err(UpstreamError::Status {
                status: status.as_u16(),
                error: M2Error::parse(&bytes),
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
}

/// reqwest is built without a bundled TLS crypto provider (the default one needs cmake and
/// a long C build); this installs ring's for the process. Safe to call more than once.
pub fn install_crypto() {
    let _ = rustls::crypto::ring::default_provider().install_default();
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

fn classify(error: reqwest::Error) -> UpstreamError {
    if error.is_timeout() {
        UpstreamError::Timeout
    } else if error.is_connect() || error.is_request() {
        // The URL (with the store's host) is part of reqwest's message; never the token.
        UpstreamError::Connect(error.without_url().to_string())
    } else if error.is_body() || error.is_decode() {
        UpstreamError::Protocol(error.without_url().to_string())
    } else {
        UpstreamError::Connect(error.without_url().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_encoded() {
        assert_eq!(segment("24-MB01"), "24-MB01");
        assert_eq!(segment("a/b c?d"), "a%2Fb%20c%3Fd");
    }
}
