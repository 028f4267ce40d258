//! Endpoints the gateway adds to the spec's resources: customer tokens (`/auth/token`),
//! the cache purge (`/cache/purge`), the OAuth token list (`/oauth/tokens`) and the dual
//! run's report (`/shadow/report`, the page `/shadow`).

pub mod auth_token;
pub mod cache_purge;
pub mod oauth_tokens;
pub mod shadow;
