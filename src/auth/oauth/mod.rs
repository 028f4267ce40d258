//! OAuth 1.0a as the original API did it, side by side with Bearer, so that apps written for
//! the original sign in unchanged (facts: `shared/reference/m1-oauth-observed.md`).
//!
//! - [`endpoints`]: `/oauth/initiate` and `/oauth/token`; [`authorize`]: the customer's
//!   `/oauth/authorize` (+ `/simple`) and the operator's `/admin/oauth_authorize`, whose HTML
//!   is [`pages`].
//! - [`verify`]: the checks of a signed request, shared by the endpoints and `/api/rest`
//!   ([`OAuth::authenticate_api`], hooked into `auth::authenticate`).
//! - [`params`], [`signature`]: RFC 5849's parameter sources, base string and methods.
//! - [`nonce`]: replay protection behind [`nonce::NonceGuard`].
//! - [`store`]: consumers and tokens behind [`store::TokenStore`], embedded in SQLite.
//! - [`problem`]: the original's `oauth_problem` answers.
//! - [`import`]: reading the original's `oauth_consumer` / `oauth_token` tables; [`cli`]:
//!   `storegate oauth consumer add` and `storegate oauth import`.

pub mod import;
pub mod nonce;
pub mod params;
pub mod problem;
pub mod signature;
pub mod store;
pub mod verify;

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{OriginalUri, Request};
use hmac::{Hmac, Mac};
use ipnet::IpNet;
use sha2::Sha256;

use crate::auth::Principal;
use crate::config::Config;
use crate::http::ApiError;
use nonce::NonceGuard;
use problem::Problem;
use store::{Owner, SqliteStore, TokenStore};
use verify::Expect;
pub use verify::SignedRequest;

/// The provider: its store, its nonce guard and its settings.
pub struct OAuth {
    pub(crate) store: Arc<dyn TokenStore>,
    nonces: Arc<dyn NonceGuard>,
    token_ttl: Option<Duration>,
    pub(crate) trusted_proxies: Vec<IpNet>,
    body_limit: usize,
    /// Signs the authorize pages' form keys and sign-in cookies.
    pub(crate) page_key: Vec<u8>,
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("store", &self.store)
            .field("token_ttl", &self.token_ttl)
            .field("trusted_proxies", &self.trusted_proxies)
            .finish_non_exhaustive()
    }
}

impl OAuth {
    /// The provider on the embedded store in `STOREGATE_DATA_DIR`. `secret` keys the pages'
    /// cookies (the customer-token secret, so instances sharing it accept each other's).
    pub fn open(config: &Config, secret: &[u8]) -> Result<OAuth, String> {
        let store = Arc::new(SqliteStore::open(&config.data_dir).map_err(|e| e.to_string())?);
        tracing::info!(path = %store.path().display(), "OAuth 1.0a token store");
        Ok(OAuth::new(
            store.clone(),
            Arc::new(nonce::SqliteNonces(store)),
            config,
            secret,
        ))
    }

    pub fn new(
        store: Arc<dyn TokenStore>,
        nonces: Arc<dyn NonceGuard>,
        config: &Config,
        secret: &[u8],
    ) -> OAuth {
        let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key");
        mac.update(b"storegate oauth pages");
        OAuth {
            store,
            nonces,
            token_ttl: config.oauth_token_ttl,
            trusted_proxies: config.trusted_proxies.clone(),
            body_limit: config.body_limit,
            page_key: mac.finalize().into_bytes().to_vec(),
        }
    }

    /// Replaces the replay guard, e.g. with one shared by several machines (Redis).
    pub fn with_nonce_guard(mut self, nonces: Arc<dyn NonceGuard>) -> OAuth {
        self.nonces = nonces;
        self
    }

    pub fn store(&self) -> &dyn TokenStore {
        &*self.store
    }

    /// Rebuilds what the client signed from a request's parts.
    fn signed_request(&self, request: &Request, form: Option<&[u8]>) -> SignedRequest {
        let uri = request
            .extensions()
            .get::<OriginalUri>()
            .map_or_else(|| request.uri().clone(), |o| o.0.clone());
        let peer = crate::context::request::peer().map(|peer| peer.ip());
        let (scheme, host) = verify::client_origin(request.headers(), peer, &self.trusted_proxies);
        let header = params::oauth_header(request.headers());
        SignedRequest {
            method: request.method().clone(),
            base_uris: verify::base_uris(&scheme, &host, uri.path()),
            params: params::collect(header, uri.query(), form),
        }
    }

    /// Reads a form body (bounded), so its fields can be signed; hands the request back
    /// with the same body for the handler.
    async fn with_form(
        &self,
        request: Request,
    ) -> Result<(Request, Option<bytes::Bytes>), ApiError> {
        if !params::is_form(request.headers()) {
            return Ok((request, None));
        }
        let (parts, body) = request.into_parts();
        let bytes = axum::body::to_bytes(body, self.body_limit)
            .await
            .map_err(|_| ApiError::payload_too_large())?;
        let request = Request::from_parts(parts, Body::from(bytes.clone()));
        Ok((request, Some(bytes)))
    }

    /// What the client signed, its form body read: all the dance's token endpoints need
    /// of a request.
    pub(crate) async fn read_signed(&self, request: Request) -> Result<SignedRequest, ApiError> {
        let (request, form) = self.with_form(request).await?;
        Ok(self.signed_request(&request, form.as_deref()))
    }

    /// The principal of an `/api/rest` call signed with `Authorization: OAuth ...`.
    pub async fn authenticate_api(
        &self,
        request: Request,
    ) -> Result<(Principal, Request), ApiError> {
        let (request, form) = self.with_form(request).await?;
        let signed = self.signed_request(&request, form.as_deref());
        let verified = self
            .verify(&signed, Expect::AccessToken)
            .await
            .map_err(Problem::api_error)?;
        let principal = match verified.token.and_then(|t| t.owner) {
            Some(Owner::Admin) => Principal::Admin,
            Some(Owner::Customer(id)) => Principal::Customer(id),
            None => return Err(Problem::TokenRejected.api_error()),
        };
        Ok((principal, request))
    }

    /// A deleted customer's tokens stop working at once.
    pub fn revoke_customer(&self, customer_id: u64) -> Result<usize, store::StoreError> {
        self.store.revoke_customer(customer_id)
    }
}
