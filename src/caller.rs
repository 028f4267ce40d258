//! Who is calling and in which format they want the answer, settled once per request.
//!
//! [`resolve`], the outermost layer but telemetry's, authenticates the request and
//! negotiates its response format once, and leaves both outcomes in the request's
//! extensions: the fast path answers from them; format negotiation
//! (`http::middleware::negotiate`) and authentication (`auth::authenticate`) refuse with
//! them, in their usual order; handlers read the [`Caller`] those two leave behind.

use std::sync::Arc;

use axum::extract::{FromRequestParts, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::request::Parts;

use crate::auth::{Authenticated, Authenticator, Principal, UserType};
use crate::http::format::{Negotiated, negotiate_response};
use crate::http::{ApiError, Format};

/// Who is calling and in which format they want the answer. Both were settled by the
/// middleware before routing.
#[derive(Debug, Clone, Copy)]
pub struct Caller {
    pub principal: Principal,
    pub format: Format,
}

impl Caller {
    pub fn user_type(&self) -> UserType {
        self.principal.user_type()
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let principal = parts.extensions.get::<Principal>().copied();
        let format = parts.extensions.get::<Format>().copied();
        match (principal, format) {
            (Some(principal), Some(format)) => Ok(Caller { principal, format }),
            _ => Err(ApiError::internal().with_cause("caller middleware missing")),
        }
    }
}

/// Layer: authenticates and negotiates once, for every layer and handler after it.
pub async fn resolve(
    State(auth): State<Arc<Authenticator>>,
    mut request: Request,
    next: Next,
) -> Response {
    let negotiated = Negotiated(negotiate_response(request.headers()));
    let authenticated = Authenticated(auth.authenticate(request.headers()));
    let extensions = request.extensions_mut();
    extensions.insert(negotiated);
    extensions.insert(authenticated);
    next.run(request).await
}
