//! Who is calling and in which format they want the answer, settled once per request.
//!
//! [`resolve`], a step of the front layer (`app::front`) right after telemetry's,
//! authenticates the request and negotiates its response format once: the fast path
//! answers from the outcome; for a request it does not answer, both outcomes go into the
//! request's extensions ([`Resolved::attach`]), where format negotiation
//! (`http::middleware::negotiate`) and authentication (`auth::authenticate`) refuse with
//! them, in their usual order; handlers read the [`Caller`] those two leave behind.

use axum::extract::FromRequestParts;
use http::request::Parts;
use http::{Extensions, HeaderMap};

use crate::auth::price_group::PriceGroup;
use crate::auth::{Authenticated, Authenticator, Principal, UserType};
use crate::http::format::{Negotiated, negotiate_response};
use crate::http::{ApiError, Format};

/// Who is calling and in which format they want the answer. Both were settled by the
/// middleware before routing.
#[derive(Debug, Clone, Copy)]
pub struct Caller {
    pub principal: Principal,
    pub format: Format,
    /// The customer group the answer's prices are for, when they depend on it (tier
    /// prices); set by the resource, part of every cache key of the answer.
    pub price_group: Option<PriceGroup>,
}

impl Caller {
    pub fn new(principal: Principal, format: Format) -> Caller {
        Caller {
            principal,
            format,
            price_group: None,
        }
    }

    pub fn user_type(&self) -> UserType {
        self.principal.user_type()
    }

    /// The same caller, for an answer whose prices are `group`'s.
    pub fn with_price_group(self, group: PriceGroup) -> Caller {
        Caller {
            price_group: Some(group),
            ..self
        }
    }

    /// Who shares a cached answer for this caller (`cache_keys::audience`).
    pub fn audience(&self) -> std::borrow::Cow<'static, str> {
        crate::cache::keys::audience(self.user_type(), self.price_group)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let principal = parts.extensions.get::<Principal>().copied();
        let format = parts.extensions.get::<Format>().copied();
        match (principal, format) {
            (Some(principal), Some(format)) => Ok(Caller::new(principal, format)),
            _ => Err(ApiError::internal().with_cause("caller middleware missing")),
        }
    }
}

/// The outcomes of authenticating and negotiating one request, worked out once.
pub struct Resolved {
    negotiated: Result<Format, ApiError>,
    authenticated: Result<Principal, ApiError>,
}

impl Resolved {
    /// The caller, when both succeeded.
    pub fn caller(&self) -> Option<Caller> {
        match (&self.authenticated, &self.negotiated) {
            (Ok(principal), Ok(format)) => Some(Caller::new(*principal, *format)),
            _ => None,
        }
    }

    /// Leaves both outcomes in the request's extensions, for the API's layers. Only a
    /// request the fast path does not answer needs them: a hit skips the two inserts.
    pub fn attach(self, extensions: &mut Extensions) {
        extensions.insert(Negotiated(self.negotiated));
        extensions.insert(Authenticated(self.authenticated));
    }
}

/// Authenticates and negotiates once, for the fast path and every layer after it.
///
/// A request that may carry OAuth parameters outside the header (in its query or a form
/// body) is left unauthenticated here: without a header it would look like a Guest, and
/// the fast path would answer a signed call with the Guest's view. `auth::authenticate`
/// verifies it once routing is done.
pub fn resolve(auth: &Authenticator, headers: &HeaderMap, query: Option<&str>) -> Resolved {
    let authenticated = if crate::auth::oauth::params::query_has_oauth(query)
        || crate::auth::oauth::params::is_form(headers)
    {
        // Never answered as it is: `auth::authenticate` verifies the parameters first.
        Err(ApiError::unauthorized("The access token is invalid.")
            .with_cause("oauth_* parameters outside the header, not verified yet"))
    } else {
        auth.authenticate(headers)
    };
    Resolved {
        negotiated: negotiate_response(headers),
        authenticated,
    }
}
