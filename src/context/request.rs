//! What the gateway knows about the request a task is serving: its id, its W3C trace
//! context ([`TraceContext`]), its deadline, and the peer address of its connection.
//!
//! It sits low in the house so that both the outer layers (which set them: `telemetry`
//! the id, `app` the deadline) and the upstream client (which reads them: the id goes to
//! Magento with each call, each call's timeout is what is left of the deadline) can use
//! it without knowing each other.
//!
//! The `with_*` wrappers here (and `profile::scope`, `response_cache::with_fast_key`) are
//! plain functions returning the scope's future, not `async fn`s: an `async fn` that takes
//! a future keeps it twice in its own state (as its argument, and inside the scope it
//! awaits), so each wrapper doubled the size of every request's future, and every move
//! of it copied the double (`bench/instructions.py` saw a cache hit's future at 7 KiB).

use std::net::SocketAddr;
use std::time::Duration;

use http::{HeaderName, HeaderValue};
use tokio::task::futures::TaskLocalFuture;
use tokio::time::Instant;

pub use crate::context::trace::TraceContext;

/// The header that carries a request's id, in and out (and to Magento).
pub const X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

tokio::task_local! {
    /// Set once per connection (`server::connection`), for every request it carries.
    static PEER: SocketAddr;
    static REQUEST_ID: HeaderValue;
    static TRACE: TraceContext;
    /// A cell, because a request body that is still arriving moves it: time spent waiting
    /// for the client is not Magento's (`app::request_deadline`).
    static DEADLINE: std::cell::Cell<Instant>;
}

/// Runs `future` (a connection, with every request on it) as coming from `peer`.
///
/// A task-local rather than axum's `ConnectInfo` extension: inserting that into every
/// request's extensions cost each cache hit a map insert, for an address only OAuth reads.
pub fn with_peer<F: Future>(peer: SocketAddr, future: F) -> TaskLocalFuture<SocketAddr, F> {
    PEER.scope(peer, future)
}

/// The peer address of the connection the current request came on, if known.
pub fn peer() -> Option<SocketAddr> {
    PEER.try_with(|peer| *peer).ok()
}

/// Runs `future` (the rest of a request) as part of the trace `trace`.
pub fn with_trace<F: Future>(trace: TraceContext, future: F) -> TaskLocalFuture<TraceContext, F> {
    TRACE.scope(trace, future)
}

/// The trace context of the request the current task serves, if any.
pub fn trace() -> Option<TraceContext> {
    TRACE.try_with(Clone::clone).ok()
}

/// Runs `future` (the rest of a request) as the request with id `id`.
pub fn with_request_id<F: Future>(id: HeaderValue, future: F) -> TaskLocalFuture<HeaderValue, F> {
    REQUEST_ID.scope(id, future)
}

/// The id of the request the current task serves, if any.
pub fn request_id() -> Option<HeaderValue> {
    REQUEST_ID.try_with(Clone::clone).ok()
}

/// Runs `future` with a deadline every upstream call made inside it respects.
pub fn with_deadline<F: Future>(
    deadline: Instant,
    future: F,
) -> TaskLocalFuture<std::cell::Cell<Instant>, F> {
    DEADLINE.scope(std::cell::Cell::new(deadline), future)
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
