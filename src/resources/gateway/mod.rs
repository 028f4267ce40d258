//! Endpoints the gateway adds to the spec's resources: customer tokens (`/auth/token`),
//! the cache purge (`/cache/purge`) and the OAuth token list (`/oauth/tokens`).

pub mod auth_token;
pub mod cache_purge;
pub mod oauth_tokens;
