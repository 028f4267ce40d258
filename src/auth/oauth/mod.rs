//! OAuth 1.0a as the original API did it, side by side with Bearer, so that apps written for
//! the original sign in unchanged (facts: `shared/reference/m1-oauth-observed.md`).
//!
//! - [`endpoints`]: `/oauth/initiate` and `/oauth/token`; [`authorize`]: the customer's
//!   `/oauth/authorize` (+ `/simple`) and the operator's `/admin/oauth_authorize`, whose HTML
//!   is [`pages`].
//! - [`verify`]: the checks of a signed request, shared by the endpoints and `/api/rest`
//!   ([`OAuth::authenticate_api`], hooked into `auth::authenticate`).
//! - [`callback`]: which `oauth_callback` a consumer accepts (its registered one as the
//!   allow-list, any scheme; mobile apps).
//! - [`params`], [`signature`]: RFC 5849's parameter sources, base string and methods;
//!   [`natural`]: the parameter order Magento 1.9 signed with, accepted beside RFC 5849's.
//! - [`nonce`]: replay protection behind [`nonce::NonceGuard`].
//! - [`store`]: consumers and tokens behind [`store::TokenStore`]: the embedded SQLite file
//!   ([`sqlite`]) or a MariaDB/MySQL database a fleet shares ([`mysql`]), as
//!   `STOREGATE_DATABASE_URL` ([`database`]) says; [`open_store`] opens it.
//! - [`guard`]: every store call under `STOREGATE_DATABASE_TIMEOUT_MS`, and a breaker that
//!   remembers the store is down until a probe finds it back; the store's health.
//! - [`verified`]: consumers and access tokens kept in-process for the signed-call path.
//! - [`problem`]: the original's `oauth_problem` answers.
//! - [`import`]: reading the original's `oauth_consumer` / `oauth_token` tables; [`cli`]:
//!   `storegate oauth consumer add` and `storegate oauth import`.

pub mod callback;
pub mod database;
#[cfg(test)]
pub(crate) mod fake_store;
pub mod guard;
pub mod import;
pub mod mysql;
pub mod natural;
pub mod nonce;
pub mod params;
pub mod problem;
pub mod signature;
pub mod sqlite;
pub mod store;
pub mod verified;
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
use store::{Owner, StoreError, TokenStore};

use crate::context::profile::Profile;
use verify::Expect;
pub use verify::SignedRequest;

/// What [`OAuth::authenticate_api`] made of a request.
#[derive(Debug)]
pub enum ApiSigned {
    /// Verified: who signed it, and the request with its `oauth_*` query parameters gone.
    Principal(Principal, Request),
    /// No OAuth parameters anywhere: for the other credentials.
    Unsigned(Request),
}

/// The consumer of a verified signed call, left in the request's extensions for its rate
/// limit (`crate::limits`): every token of a consumer shares one budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignedConsumer {
    pub id: i64,
    /// Its own limit (`storegate oauth consumer update --rate-limit`), if it has one.
    pub rate_limit: Option<crate::config::Rate>,
}

/// Whether a request may carry OAuth parameters, judged from its head alone: the
/// `OAuth` scheme, `oauth_*` in the query, or a form body (read only then).
pub fn may_be_signed(headers: &http::HeaderMap, query: Option<&str>) -> bool {
    params::oauth_header(headers).is_some()
        || params::query_has_oauth(query)
        || params::is_form(headers)
}

/// The request with its `oauth_*` query parameters removed (the others byte for byte).
fn without_oauth_query(mut request: Request) -> Request {
    let uri = request.uri();
    let Some(query) = uri.query().filter(|q| params::query_has_oauth(Some(q))) else {
        return request;
    };
    let kept = params::strip_oauth_query(query);
    let path_and_query = if kept.is_empty() {
        uri.path().to_owned()
    } else {
        format!("{}?{kept}", uri.path())
    };
    let mut parts = uri.clone().into_parts();
    if let Ok(value) = path_and_query.parse() {
        parts.path_and_query = Some(value);
        if let Ok(stripped) = http::Uri::from_parts(parts) {
            *request.uri_mut() = stripped;
        }
    }
    request
}

/// The provider: its store, its nonce guard and its settings.
pub struct OAuth {
    /// The store behind its deadline and breaker ([`guard`]).
    pub(crate) store: Arc<dyn TokenStore>,
    guard: Arc<guard::GuardedStore>,
    pub(crate) verified: Arc<verified::VerifiedCache>,
    cache_fresh: Option<Duration>,
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
    /// The provider on the configured store (`STOREGATE_DATABASE_URL`, by default the
    /// SQLite file in `STOREGATE_DATA_DIR`), behind its deadline and breaker. `secret` keys
    /// the pages' cookies (the customer-token secret, so instances sharing it accept each
    /// other's). Without Redis the nonces are claimed in the store, which every instance
    /// sharing it sees.
    pub fn open(config: &Config, secret: &[u8]) -> Result<OAuth, String> {
        let store = open_store_with(config, Some(config.database_timeout * 2))
            .map_err(|e| e.to_string())?;
        tracing::info!(store = %store.describe(), "OAuth 1.0a token store");
        Ok(OAuth::new(store, config, secret))
    }

    /// The provider on `store` (guarded here), its nonces claimed in it.
    pub fn new(store: Arc<dyn TokenStore>, config: &Config, secret: &[u8]) -> OAuth {
        let guard = guard::GuardedStore::new(store, config.database_timeout);
        let store: Arc<dyn TokenStore> = Arc::new(guard::Guarded(guard.clone()));
        let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key");
        mac.update(b"storegate oauth pages");
        OAuth {
            nonces: Arc::new(nonce::StoreNonces::new(store.clone())),
            store,
            guard,
            verified: Arc::new(verified::VerifiedCache::new(None, config.oauth_cache_fresh)),
            cache_fresh: config.oauth_cache_fresh,
            token_ttl: config.oauth_token_ttl,
            trusted_proxies: config.trusted_proxies.clone(),
            body_limit: config.body_limit,
            page_key: mac.finalize().into_bytes().to_vec(),
        }
    }

    /// Shares revocations with the other instances through `channel` (the shared state's
    /// Redis), which lets verified credentials stay fresh longer (`verified`).
    pub fn with_revocations(mut self, channel: Arc<dyn verified::RevocationChannel>) -> OAuth {
        self.verified = Arc::new(verified::VerifiedCache::new(
            Some(channel),
            self.cache_fresh,
        ));
        self
    }

    /// The in-process cache of verified credentials.
    pub fn verified(&self) -> &Arc<verified::VerifiedCache> {
        &self.verified
    }

    /// The store's health: the breaker's state, its last error, its counters.
    pub fn health(&self) -> &Arc<guard::StoreHealth> {
        self.guard.health()
    }

    /// Nonces claimed in this process because the shared guard could not be asked.
    pub fn nonce_fallbacks(&self) -> u64 {
        self.nonces.fallbacks()
    }

    /// Reaches the store once, without the calls' deadline: at start, so that a shared
    /// store's schema is brought up to date then (which may wait for another instance's
    /// migration) rather than by the first sign-in. A failure opens the breaker.
    pub async fn prepare_store(&self) -> Result<(), StoreError> {
        let result = self.guard.unguarded().ping().await;
        if let Err(error) = &result {
            self.guard.record_outage(error);
        }
        result
    }

    /// Can the store serve signed calls? (`/readyz`: the breaker's state at once while it is
    /// open, else a probe under the calls' deadline.)
    pub async fn store_reachable(&self) -> Result<(), StoreError> {
        self.guard.check().await
    }

    /// What `/readyz` says of the store: `up`; `degraded` when it is there but does not
    /// answer in time (a locked table, a hung server); `down` when it cannot be reached;
    /// with the error's message when it is not up.
    pub async fn store_state(&self) -> (&'static str, Option<String>) {
        match self.store_reachable().await {
            Ok(()) => ("up", None),
            Err(error) if error.failure == store::Failure::Slow => {
                ("degraded", Some(error.to_string()))
            }
            Err(error) => ("down", Some(error.to_string())),
        }
    }

    /// Refuses at once, with the API's 503 naming the OAuth store, while the breaker holds
    /// the store down: for a change that must not take effect unless the store can keep
    /// what follows from it (a customer's delete revokes the customer's tokens).
    pub fn refuse_while_down(&self) -> Result<(), ApiError> {
        match self.health().last_error() {
            Some(error) => Err(problem::store_unavailable(error)),
            None => Ok(()),
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

    /// The principal of an `/api/rest` call signed with OAuth 1.0a parameters, wherever
    /// RFC 5849 §3.5 lets them travel: the `Authorization: OAuth ...` header, a form body
    /// or the query string. A request carrying none (a form body of other fields) is
    /// handed back [`ApiSigned::Unsigned`], for the Bearer/Guest path. Parameters that do
    /// not verify are the 401 of their `oauth_problem`: a call the client meant to sign is
    /// never served as Guest.
    pub async fn authenticate_api(&self, request: Request) -> Result<ApiSigned, ApiError> {
        let (request, form) = self.with_form(request).await?;
        let in_header = params::oauth_header(request.headers()).is_some();
        let signed = self.signed_request(&request, form.as_deref());
        if !in_header && signed.params.protocol.is_empty() {
            return Ok(ApiSigned::Unsigned(request));
        }
        if !in_header && request.headers().contains_key(http::header::AUTHORIZATION) {
            // Which credential the client meant is anyone's guess, as with two headers.
            return Err(ApiError::bad_request(
                "Send one credential: an Authorization header or OAuth parameters, not both.",
            ));
        }
        let verified = self
            .verify(&signed, Expect::AccessToken)
            .await
            .map_err(Problem::api_error)?;
        let principal = match verified.token.and_then(|t| t.owner) {
            Some(Owner::Admin) => Principal::Admin,
            Some(Owner::Customer(id)) => Principal::Customer(id),
            None => return Err(Problem::TokenRejected.api_error()),
        };
        let mut request = without_oauth_query(request);
        request.extensions_mut().insert(SignedConsumer {
            id: verified.consumer.id,
            rate_limit: verified.consumer.rate_limit,
        });
        Ok(ApiSigned::Principal(principal, request))
    }

    /// The profile a signed request's consumer is answered in, by the `oauth_consumer_key`
    /// of its `Authorization: OAuth` header; `None` for any other request, an unknown
    /// consumer, or one that follows the gateway's profile. Read before the signature is
    /// checked, so that even the refusal of a bad signature is in the app's formats: a
    /// profile changes how an answer is written, never what a caller may see.
    pub async fn consumer_profile(&self, headers: &http::HeaderMap) -> Option<Profile> {
        let header = params::oauth_header(headers)?;
        let key = params::parse_header(header)
            .into_iter()
            .find(|(name, _)| name == "oauth_consumer_key")?
            .1;
        // Through the verified consumers: no store call per signed request, and none that
        // waits while the store fails.
        match self.verified.consumer(&*self.store, &key).await {
            Ok(consumer) => consumer?.profile,
            Err(error) => {
                // The verification that follows reports the store's trouble.
                tracing::debug!(%error, "consumer profile not read");
                None
            }
        }
    }

    /// A deleted customer's tokens stop working at once, on every instance: their OAuth
    /// tokens revoked in the store, their customer tokens issued at or before `at_ms`
    /// refused by the mark kept beside them (durable: an instance started later reads it).
    pub async fn revoke_customer(&self, customer_id: u64, at_ms: u64) -> Result<usize, StoreError> {
        let revoked = self.store.revoke_customer(customer_id, at_ms).await;
        self.verified
            .forget_everywhere(verified::Forget::Customer(customer_id));
        revoked
    }

    /// Revokes one access token by id (the Admin's endpoint), on every instance.
    pub async fn revoke_token(&self, id: i64) -> Result<bool, StoreError> {
        let revoked = self.store.revoke_token(id).await;
        if matches!(revoked, Ok(true)) {
            self.verified
                .forget_everywhere(verified::Forget::Tokens(vec![id]));
        }
        revoked
    }
}

/// The store `STOREGATE_DATABASE_URL` names (by default the data folder's SQLite file),
/// its schema brought up to date where that needs no network (SQLite; MariaDB's is
/// brought up by the first call, see [`mysql`]). Unguarded: the command line's.
pub fn open_store(config: &Config) -> Result<Arc<dyn TokenStore>, StoreError> {
    open_store_with(config, None)
}

/// [`open_store`], a shared database's lock waits ending after `lock_wait` on the server.
fn open_store_with(
    config: &Config,
    lock_wait: Option<Duration>,
) -> Result<Arc<dyn TokenStore>, StoreError> {
    let url = config.database_url.as_ref().map(|s| s.expose());
    let location = database::Location::resolve(url, &config.data_dir).map_err(StoreError::down)?;
    let place = location.describe();
    Ok(match location {
        database::Location::Sqlite(path) => Arc::new(sqlite::EmbeddedStore(Arc::new(
            sqlite::SqliteStore::open_file(&path)?,
        ))),
        database::Location::MySql(url) => Arc::new(mysql::MySqlStore::connect_with_lock_wait(
            &url, place, lock_wait,
        )?),
    })
}
