//! The back ends: the one place that talks to the store.
//!
//! - [`port`]: what the gateway asks of a store ([`port::Backend`]), in its own terms;
//!   [`query`]: the list query it passes.
//! - [`magento2`]: the Magento 2 adapter (its REST paths, store scopes, shapes and errors).
//! - [`openmage`]: the OpenMage (Magento 1.9) REST client, signed with OAuth 1.0a; its
//!   adapter comes next.
//! - [`transport`]: where every call of any adapter ends (the pooled HTTP client, the
//!   dot-segment client), the seam where [`recording`] records and replays the store's traffic.
//! - [`resilience`]: retries, the circuit breaker and the bound on calls in flight.
//! - [`error`]: what can go wrong calling a back end; [`errors`]: a back end's failures as the client's errors.

pub mod error;
pub mod errors;
pub mod magento2;
pub mod openmage;
pub mod port;
pub mod query;
pub mod recording;
pub mod resilience;
pub mod transport;
pub mod values;
pub mod write_outcome;
