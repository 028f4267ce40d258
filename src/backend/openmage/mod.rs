//! OpenMage (Magento 1.9) as a back end: the client of its own REST API, `{url}/api/rest/...`.
//!
//! Why it exists: many stores built on this API's original never moved to Magento 2. With
//! `STOREGATE_BACKEND=openmage` the gateway fronts such a store as it is today, and the same
//! apps keep working when the store moves (DESIGN.md). The original's REST API already
//! speaks the API's field names, so the adapter (next, behind `backend::port::Backend`) maps
//! little; what it needs underneath is this client.
//!
//! - [`client`]: [`OpenMage`], every call signed with OAuth 1.0a (HMAC-SHA1) as the admin
//!   token the operator configured, or as a customer's token, or unsigned as the store's
//!   Guest; the resilience and the transport of the Magento 2 client; creates answered by
//!   `Location` (200, or 302 behind nginx + php-fpm); the store's error body as the
//!   [`StoreMessage`] every back end's errors carry.
//! - [`endpoint`]: a path's template (`/api/rest/products/{}`) for metrics, logs and
//!   cassette names.
//!
//! It knows the store's paths, signatures and error bodies, and nothing of the client-facing
//! protocol. Its decisions (the signature's base URI without the port, redirects never
//! followed, guest calls unsigned, the query signed as the store reads it) and their
//! reasons: docs/decisions/openmage-client.md.

pub mod adapter;
mod catalog;
pub mod client;
pub mod endpoint;
mod links;
pub mod lists;
mod media;
mod people;
mod records;
mod sales;
pub mod search;
pub mod signin;
mod stock;

pub use crate::backend::error::{StoreMessage, UpstreamError};
/// Path segments are encoded as for Magento 2 (RFC 3986 unreserved kept; `.` and `..`
/// escaped).
pub use crate::backend::magento2::segment;
pub use client::{Credentials, ON_BEHALF_OF, OpenMage, Written, store_message};
