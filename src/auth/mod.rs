//! Who is calling: the principal behind a request, and what that principal may do.
//!
//! - Guest: no `Authorization` header.
//! - Admin: `Authorization: Bearer <admin key>`; the key is compared by its SHA-256 digest in
//!   constant time, so plain (development) and digest (production) configurations share one
//!   path and the plain key is not kept around.
//! - Customer: `Authorization: Bearer <token>` issued by `POST /api/rest/auth/token`
//!   ([`token`]).
//!
//! - Admin or Customer over OAuth 1.0a: `Authorization: OAuth ...`, checked by
//!   [`crate::auth::oauth`] when the gateway has a provider.
//!
//! A credential that is present but not good is a 401, never a silent downgrade to Guest.
//! What each principal may call is `crate::rules::policy`.

pub mod caller;
pub mod oauth;
pub mod price_group;
pub mod revocations;
pub mod token;

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::HeaderMap;
use http::header::AUTHORIZATION;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::http::ApiError;
pub use token::{TokenError, TokenIssuer};

/// The caller of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Principal {
    Guest,
    Customer(u64),
    Admin,
}

/// The three user types of the spec. Mappings and cache keys are per user type, not per
/// principal: every guest sees the same product view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum UserType {
    Admin,
    Customer,
    Guest,
}

impl UserType {
    pub const ALL: [UserType; 3] = [UserType::Admin, UserType::Customer, UserType::Guest];

    pub fn as_str(self) -> &'static str {
        match self {
            UserType::Admin => "admin",
            UserType::Customer => "customer",
            UserType::Guest => "guest",
        }
    }
}

impl Principal {
    pub fn user_type(self) -> UserType {
        match self {
            Principal::Guest => UserType::Guest,
            Principal::Customer(_) => UserType::Customer,
            Principal::Admin => UserType::Admin,
        }
    }
}

/// The outcome of [`Authenticator::authenticate`] for a request, worked out once (by the
/// caller layer) and left in its extensions for the layers after it.
#[derive(Debug, Clone)]
pub struct Authenticated(pub Result<Principal, ApiError>);

/// Resolves principals from request headers.
#[derive(Debug)]
pub struct Authenticator {
    admin_digests: Vec<[u8; 32]>,
    /// Shared with the shared state, which applies other instances' revocations to it.
    tokens: Arc<TokenIssuer>,
    /// The OAuth 1.0a provider, when signed calls are accepted.
    oauth: Option<Arc<crate::auth::oauth::OAuth>>,
    /// Customer revocations, kept in the OAuth store.
    revocations: Arc<revocations::Revocations>,
}

impl Authenticator {
    /// `admin_keys` are digests; a plain key is hashed by the caller at start.
    pub fn new(
        admin_digests: Vec<[u8; 32]>,
        tokens: Arc<TokenIssuer>,
        oauth: Option<Arc<crate::auth::oauth::OAuth>>,
    ) -> Authenticator {
        Authenticator {
            revocations: revocations::Revocations::new(tokens.clone(), oauth.clone()),
            admin_digests,
            tokens,
            oauth,
        }
    }

    /// The OAuth provider, when signed calls are accepted.
    pub fn oauth(&self) -> Option<&Arc<crate::auth::oauth::OAuth>> {
        self.oauth.as_ref()
    }

    /// Refuses every credential of a customer at once, Bearer and OAuth, on every instance,
    /// and keeps the revocation in the OAuth store (a deleted customer): see
    /// [`revocations`]. It always takes effect; whether the store has it yet is the answer.
    pub async fn revoke_customer(&self, customer_id: u64) -> revocations::Durability {
        self.revocations.revoke_customer(customer_id).await
    }

    /// The durable revocations (their start-up load and sync).
    pub fn revocations(&self) -> &Arc<revocations::Revocations> {
        &self.revocations
    }

    pub fn tokens(&self) -> &TokenIssuer {
        &self.tokens
    }

    pub fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, ApiError> {
        let mut values = headers.get_all(AUTHORIZATION).iter();
        let Some(value) = values.next() else {
            return Ok(Principal::Guest);
        };
        // Two credentials: which one a proxy or a framework would pick is anyone's guess,
        // so neither is taken.
        if values.next().is_some() {
            return Err(ApiError::bad_request(
                "Only one Authorization header may be sent.",
            ));
        }
        let invalid = || ApiError::unauthorized("The access token is invalid.");
        let text = value.to_str().map_err(|_| invalid())?.trim();
        let (scheme, credential) = text.split_once(' ').ok_or_else(invalid)?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(ApiError::unauthorized(
                "Unsupported authorization scheme; use Bearer or OAuth.",
            ));
        }
        let credential = credential.trim();
        if credential.is_empty() {
            return Err(invalid());
        }
        if self.is_admin_key(credential) {
            return Ok(Principal::Admin);
        }
        match self.tokens.verify(credential) {
            Ok(customer_id) => Ok(Principal::Customer(customer_id)),
            Err(TokenError::Expired) => {
                Err(ApiError::unauthorized("The access token has expired."))
            }
            Err(TokenError::Revoked) => {
                Err(ApiError::unauthorized("The access token has been revoked."))
            }
            Err(TokenError::Invalid) => Err(invalid()),
        }
    }

    /// Which configured admin key a request's `Authorization: Bearer` carries (its place in
    /// the configuration): each key has a rate limit of its own (`crate::limits`).
    pub fn admin_key_index(&self, headers: &HeaderMap) -> Option<usize> {
        let value = headers.get(AUTHORIZATION)?.to_str().ok()?.trim();
        let (scheme, credential) = value.split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return None;
        }
        let digest: [u8; 32] = Sha256::digest(credential.trim().as_bytes()).into();
        self.admin_digests
            .iter()
            .position(|known| bool::from(known.ct_eq(&digest)))
    }

    pub fn is_admin_key(&self, presented: &str) -> bool {
        let digest: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        // Compare against every configured digest without stopping early.
        self.admin_digests
            .iter()
            .fold(subtle::Choice::from(0), |found, known| {
                found | known.ct_eq(&digest)
            })
            .into()
    }
}

/// SHA-256 of an admin key, as configured in `STOREGATE_ADMIN_KEY_SHA256`.
pub fn admin_key_digest(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

/// Middleware: puts the [`Principal`] in the request's extensions, or answers 401.
pub async fn authenticate(
    State(auth): State<Arc<Authenticator>>,
    mut request: Request,
    next: Next,
) -> Response {
    // OAuth 1.0a needs the request itself (URL, form body) and claims a nonce, so it is
    // checked here, once routing said this is the API; the caller layer left such a
    // request unresolved (see `caller::resolve`), which kept the fast path away.
    if let Some(oauth) = &auth.oauth
        && crate::auth::oauth::may_be_signed(request.headers(), request.uri().query())
    {
        match oauth.authenticate_api(request).await {
            Ok(crate::auth::oauth::ApiSigned::Principal(principal, mut signed)) => {
                signed.extensions_mut().insert(principal);
                return next.run(signed).await;
            }
            Ok(crate::auth::oauth::ApiSigned::Unsigned(mut unsigned)) => {
                // A form body of other fields: the caller layer did not judge the
                // headers (it could not see the body), so they are judged below.
                unsigned.extensions_mut().remove::<Authenticated>();
                request = unsigned;
            }
            Err(error) => return error.into_response(),
        }
    }
    // Authenticated once by the caller layer; worked out here only when it did not run.
    let authenticated = match request.extensions_mut().remove::<Authenticated>() {
        Some(Authenticated(authenticated)) => authenticated,
        None => auth.authenticate(request.headers()),
    };
    match authenticated {
        Ok(principal) => {
            request.extensions_mut().insert(principal);
            next.run(request).await
        }
        Err(error) => error.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;
    use std::time::Duration;

    fn auth() -> Authenticator {
        Authenticator::new(
            vec![
                admin_key_digest("first-key"),
                admin_key_digest("second-key"),
            ],
            Arc::new(TokenIssuer::new(
                b"secret".to_vec(),
                Duration::from_secs(60),
            )),
            None,
        )
    }

    fn with(value: &str) -> HeaderMap {
        HeaderMap::from_iter([(AUTHORIZATION, HeaderValue::from_str(value).unwrap())])
    }

    #[test]
    fn principals() {
        let auth = auth();
        assert_eq!(
            auth.authenticate(&HeaderMap::new()).unwrap(),
            Principal::Guest
        );
        assert_eq!(
            auth.authenticate(&with("Bearer first-key")).unwrap(),
            Principal::Admin
        );
        assert_eq!(
            auth.authenticate(&with("bearer second-key")).unwrap(),
            Principal::Admin
        );
        let token = auth.tokens().issue(42);
        assert_eq!(
            auth.authenticate(&with(&format!("Bearer {}", token.token)))
                .unwrap(),
            Principal::Customer(42)
        );
    }

    #[test]
    fn bad_credentials_are_401_not_guest() {
        let auth = auth();
        for value in [
            "Bearer nope",
            "Bearer ",
            "Basic abc",
            "first-key",
            "Bearer sg1.x.y",
        ] {
            let err = auth.authenticate(&with(value)).unwrap_err();
            assert_eq!(err.status().as_u16(), 401, "{value}");
        }
    }
}
