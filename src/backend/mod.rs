//! The back ends: the one place that talks to the store.
//!
//! - [`port`]: what the gateway asks of a store, in its own terms: one small trait per area
//!   ([`port::Backend`] is all of them), the records and errors that cross it.
//! - [`registry`]: the kinds of back end by name (`magento2`, `openmage`); [`kind`]: what a
//!   kind is and what one is built from; two can live in one process.
//! - [`magento2`], [`openmage`]: the adapters, one folder each, implementing the port.
//! - [`shell`]: the client shell every adapter's client is built in (deadline, retries,
//!   breaker, bound, metrics; path templating).
//! - [`transport`]: where every call ends (the pooled HTTP client), the seam where
//!   [`recording`] records and replays a store's traffic, knowing no store.
//! - [`values`]: numbers and flags as stores send them, read leniently.
//!
//! Nothing here knows the client-facing protocol: what a client is told of a back end's
//! failure is decided above (`rules::backend_errors`).

pub mod kind;
pub mod magento2;
pub mod openmage;
pub mod port;
pub mod recording;
pub mod registry;
pub mod shell;
pub mod transport;
pub mod values;
