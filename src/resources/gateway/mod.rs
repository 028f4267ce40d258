//! Endpoints the gateway adds to the spec's resources: customer tokens (`/auth/token`) and
//! the cache purge (`/cache/purge`). (The OAuth token list, `/oauth/tokens`, is with the
//! other OAuth resources, `resources::oauth::tokens`.)

pub mod auth_token;
pub mod cache_purge;
