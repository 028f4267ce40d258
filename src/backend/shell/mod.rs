//! The client shell every store's client is built in: what a call goes through before and
//! after the store's own part (its paths, credentials and error bodies).
//!
//! One [`Shell`] per back end holds the [`Transport`] its calls end in (the pooled HTTP
//! client, or the recorder or cassette player put in its place), the per-call timeout, and
//! the [`resilience`] guard shared by every clone: the request's deadline, reads retried once
//! on a connection error or a 502/503/504, writes never, a circuit breaker, a bound on calls
//! in flight, each call timed and counted under its endpoint's template ([`paths`]). The
//! store's client builds the request, signs it its own way, and reads the answer; the
//! shell does the rest, the same for every store.

pub mod paths;
pub mod resilience;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::time::Instant;

use crate::backend::port::{BackendError, CircuitProbe};
use crate::backend::transport::Transport;
use crate::context::request;
use crate::observe::metrics::{BackendMetrics, Outcome};
use resilience::Guard;

/// The builder methods of a client over a [`Shell`] (a struct with a `shell` field),
/// written once for every adapter's client.
macro_rules! client_builders {
    ($client:ty) => {
        impl $client {
            /// The same client with its own breaker, budget and bound, recording into
            /// `metrics`.
            pub fn with_resilience(
                mut self,
                options: &$crate::backend::shell::resilience::Options,
                metrics: $crate::observe::metrics::BackendMetrics,
            ) -> Self {
                self.shell = self.shell.with_resilience(options, metrics);
                self
            }

            /// The same client sending its calls through `transport` (recording,
            /// replaying). A transport that follows redirects would turn a store's 302'd
            /// create into a GET: build yours with
            /// [`HttpTransport::without_redirects`](crate::backend::transport::HttpTransport::without_redirects)
            /// where the store answers creates so (OpenMage).
            pub fn with_transport(
                mut self,
                transport: std::sync::Arc<dyn $crate::backend::transport::Transport>,
            ) -> Self {
                self.shell = self.shell.with_transport(transport);
                self
            }

            /// Where finished calls go now.
            pub fn transport(&self) -> std::sync::Arc<dyn $crate::backend::transport::Transport> {
                self.shell.transport().clone()
            }
        }
    };
}
pub(crate) use client_builders;

/// What a store's client is built in: the transport, the timeout, the guard.
#[derive(Debug, Clone)]
pub struct Shell {
    transport: Arc<dyn Transport>,
    timeout: Duration,
    guard: Arc<Guard>,
}

impl Shell {
    pub fn new(transport: Arc<dyn Transport>, timeout: Duration) -> Shell {
        Shell {
            transport,
            timeout,
            guard: Arc::new(Guard::new(
                &resilience::Options::default(),
                BackendMetrics::default(),
            )),
        }
    }

    /// The same shell with its own breaker, budget and bound, recording into `metrics`.
    pub fn with_resilience(
        mut self,
        options: &resilience::Options,
        metrics: BackendMetrics,
    ) -> Shell {
        self.guard = Arc::new(Guard::new(options, metrics));
        self
    }

    /// The same shell sending its calls through `transport` (recording, replaying).
    pub fn with_transport(mut self, transport: Arc<dyn Transport>) -> Shell {
        self.transport = transport;
        self
    }

    /// Where finished calls go now.
    pub fn transport(&self) -> &Arc<dyn Transport> {
        &self.transport
    }

    /// The per-call timeout (`STOREGATE_UPSTREAM_TIMEOUT_MS`).
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Counts a call sent straight through the transport, outside [`Shell::attempt`] (a
    /// store's sign-in page played step by step), so that the metrics hold every call made
    /// to the store, under its endpoint's template.
    pub fn count(
        &self,
        method: &Method,
        endpoint: &str,
        failed: Option<&BackendError>,
        elapsed: Duration,
    ) {
        self.guard
            .metrics
            .call(method, endpoint, outcome(failed), elapsed);
    }

    /// A reader of the breaker's state.
    pub fn circuit(&self) -> CircuitProbe {
        self.guard.probe()
    }

    /// An idempotent read: `attempt` once, and once more when it failed in a way worth
    /// retrying and the deadline and the retry budget allow (`resilience::Guard::read`).
    pub async fn read<T, F, Fut>(&self, attempt: F) -> Result<T, BackendError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, BackendError>>,
    {
        self.guard.read(attempt).await
    }

    /// A write: tried once, never retried (it still feeds the retry budget).
    pub async fn write<T, Fut>(&self, attempt: Fut) -> Result<T, BackendError>
    where
        Fut: std::future::Future<Output = Result<T, BackendError>>,
    {
        self.guard.called();
        attempt.await
    }

    /// One try of a call named `endpoint` (a template, never a raw path: a path can hold a
    /// customer's id or e-mail): within the request's deadline, through the breaker and
    /// the bound on calls in flight, timed and counted. `send` makes the call within the
    /// timeout it is given.
    pub async fn attempt<T, F, Fut>(
        &self,
        method: &Method,
        endpoint: &str,
        send: F,
    ) -> Result<T, BackendError>
    where
        F: FnOnce(Duration) -> Fut,
        Fut: std::future::Future<Output = Result<T, BackendError>>,
    {
        let started = Instant::now();
        let metrics = &self.guard.metrics;
        let timeout = match request::remaining() {
            Some(left) if left < Duration::from_millis(1) => {
                metrics.call(method, endpoint, Outcome::Timeout, Duration::ZERO);
                return Err(BackendError::Timeout);
            }
            Some(left) => self.timeout.min(left),
            None => self.timeout,
        };
        let Some(admission) = self.guard.breaker.admit() else {
            metrics.call(method, endpoint, Outcome::CircuitOpen, Duration::ZERO);
            return Err(BackendError::Unavailable);
        };
        let Some(_slot) = self.guard.slot() else {
            // Never sent: says nothing about the store's health.
            drop(admission);
            crate::observe::log_limit::warn(
                "upstream call shed",
                format_args!("upstream call shed: too many calls in flight ({endpoint})"),
            );
            metrics.call(method, endpoint, Outcome::Shed, Duration::ZERO);
            return Err(BackendError::Unavailable);
        };
        let result = send(timeout).await;
        let outcome = outcome(result.as_ref().err());
        let healthy = matches!(outcome, Outcome::Ok | Outcome::ClientError);
        if admission.done(healthy) {
            metrics.circuit_opened();
            tracing::error!(
                %endpoint,
                "upstream circuit opened after repeated failures; calls fail fast until a probe succeeds"
            );
        }
        metrics.call(method, endpoint, outcome, started.elapsed());
        result
    }
}

/// The headers every store's call carries: `Accept: application/json`, the request id (so
/// the store's logs and ours line up) and the W3C trace context (the store's spans, or its
/// proxy's, join the client's trace). The store's client adds its credentials.
pub fn common_headers() -> HeaderMap {
    let mut headers = HeaderMap::with_capacity(6);
    headers.insert(
        http::header::ACCEPT,
        HeaderValue::from_static("application/json"),
    );
    if let Some(id) = request::request_id() {
        headers.insert(request::X_REQUEST_ID, id);
    }
    if let Some(trace) = request::trace() {
        headers.insert(crate::context::trace::TRACEPARENT, trace.traceparent());
        if let Some(state) = trace.state {
            headers.insert(crate::context::trace::TRACESTATE, state);
        }
    }
    headers
}

/// A JSON request body, with its `Content-Type` set in `headers`.
pub fn json_body(headers: &mut HeaderMap, body: &Value) -> Result<Bytes, BackendError> {
    headers.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok(Bytes::from(to_json_bytes(body)?))
}

/// A request body as JSON, in a buffer sized up front: grown by doubling, a large image
/// upload would briefly need three times its size.
pub fn to_json_bytes(body: &Value) -> Result<Vec<u8>, BackendError> {
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
    serde_json::to_writer(&mut bytes, body).map_err(|e| BackendError::Protocol(e.to_string()))?;
    Ok(bytes)
}

/// Parses a JSON answer; a body that is not what we expect is a protocol error, not a panic.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, BackendError> {
    serde_json::from_slice(bytes)
        .map_err(|e| BackendError::Protocol(format!("unexpected body: {e}")))
}

/// How a call ended, for the metrics and the breaker.
fn outcome(error: Option<&BackendError>) -> Outcome {
    match error {
        None => Outcome::Ok,
        Some(BackendError::Status { status, .. }) if *status >= 500 => Outcome::ServerError,
        Some(BackendError::Status { .. }) => Outcome::ClientError,
        Some(BackendError::Timeout) => Outcome::Timeout,
        Some(BackendError::Connect(_)) => Outcome::ConnectError,
        Some(BackendError::Protocol(_)) => Outcome::ProtocolError,
        Some(BackendError::Unavailable) => Outcome::CircuitOpen,
        Some(BackendError::Unsupported(_)) => Outcome::ClientError,
    }
}
