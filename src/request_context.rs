//! What the gateway knows about the request a task is serving: its id, its W3C trace
//! context ([`TraceContext`]) and its deadline.
//!
//! It sits low in the house so that both the outer layers (which set them: `telemetry`
//! the id, `app` the deadline) and the upstream client (which reads them: the id goes to
//! Magento with each call, each call's timeout is what is left of the deadline) can use
//! it without knowing each other.

use std::time::Duration;

use http::{HeaderName, HeaderValue};
use tokio::time::Instant;

pub use crate::trace_context::TraceContext;

/// The header that carries a request's id, in and out (and to Magento).
pub const X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

tokio::task_local! {
    static REQUEST_ID: HeaderValue;
    static TRACE: TraceContext;
    /// A cell, because a request body that is still arriving moves it: time spent waiting
    /// for the client is not Magento's (`app::request_deadline`).
    static DEADLINE: std::cell::Cell<Instant>;
}

/// Runs `future` (the rest of a request) as part of the trace `trace`.
pub async fn with_trace<F: Future>(trace: TraceContext, future: F) -> F::Output {
    TRACE.scope(trace, future).await
}

/// The trace context of the request the current task serves, if any.
pub fn trace() -> Option<TraceContext> {
    TRACE.try_with(Clone::clone).ok()
}

/// Runs `future` (the rest of a request) as the request with id `id`.
pub async fn with_request_id<F: Future>(id: HeaderValue, future: F) -> F::Output {
    REQUEST_ID.scope(id, future).await
}

/// The id of the request the current task serves, if any.
pub fn request_id() -> Option<HeaderValue> {
    REQUEST_ID.try_with(Clone::clone).ok()
}

/// Runs `future` with a deadline every upstream call made inside it respects.
pub async fn with_deadline<F: Future>(deadline: Instant, future: F) -> F::Output {
    DEADLINE.scope(std::cell::Cell::new(deadline), future).await
}

/// Time left before the current request's deadline, if it has one.
pub fn remaining() -> Option<Duration> {
    DEADLINE
        .try_with(|deadline| deadline.get().saturating_duration_since(Instant::now()))
        .ok()
}

/// The current request's deadline, if it has one.
pub fn deadline() -> Option<Instant> {
    DEADLINE.try_with(std::cell::Cell::get).ok()
}

/// Moves the current request's deadline (see `app::request_deadline`).
pub fn set_deadline(deadline: Instant) {
    let _ = DEADLINE.try_with(|cell| cell.set(deadline));
}
