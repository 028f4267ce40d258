//! Endpoints the gateway adds to the spec's resources: customer tokens (`/auth/token`)
//! and the cache purge (`/cache/purge`).

pub mod auth_token;
pub mod cache_purge;
