//! Endpoints the gateway adds to the spec's resources: customer tokens (`/auth/token`), the
//! cache purge (`/cache/purge`) and the dual run's report (`/shadow/report`, the page
//! `/shadow`). (The OAuth token list, `/oauth/tokens`, is with the other OAuth resources,
//! `resources::oauth::tokens`.)

pub mod auth_token;
pub mod cache_purge;
pub mod shadow;
