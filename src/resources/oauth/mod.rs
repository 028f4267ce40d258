//! The OAuth 1.0a dance as resources: `/oauth/initiate` and `/oauth/token` ([`endpoints`]),
//! the customer's `/oauth/authorize` (+ `/simple`) and the operator's
//! `/admin/oauth_authorize` ([`authorize`]), whose HTML is [`pages`]; the operator's list of
//! access tokens and their revocation, `/api/rest/oauth/tokens` ([`tokens`]). The checks of
//! a signed request live with the other credentials, in `crate::auth::oauth`.

pub mod authorize;
pub mod endpoints;
pub mod pages;
pub mod tokens;
