//! Where OAuth consumers and tokens live: one interface, [`TokenStore`], and what it
//! speaks of (consumers, request and access tokens, their owners).
//!
//! Implementations: the embedded SQLite file ([`super::sqlite`], one machine, the default)
//! and a MariaDB / MySQL database shared by a fleet ([`super::mysql`]); which one is
//! `STOREGATE_DATABASE_URL`'s ([`super::database`], opened by [`super::open_store`]).
//!
//! The interface is asynchronous so that no store call runs on a serving thread: a locked
//! or slow database delays the requests that need it, never a cached read or `/healthz`
//! served by the same thread (the embedded store runs its calls on Tokio's blocking pool,
//! the shared one is a network client). Every error names the OAuth store, so an operator
//! reading "OAuth store: ..." knows it is not the Magento back end.
//!
//! Secrets are stored as they are: HMAC verification needs the plain consumer and token
//! secrets, exactly as the original's `oauth_consumer` / `oauth_token` tables held them.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::future::BoxFuture;

/// A store call that failed. The message names where the store is (never a password);
/// [`Failure`] says whether the store is out of reach, too slow, or answered with a refusal,
/// which is what the breaker (`super::guard`) and `/readyz` go by.
#[derive(Debug, Clone, thiserror::Error)]
#[error("OAuth store: {message}")]
pub struct StoreError {
    pub message: String,
    pub failure: Failure,
}

/// What kind of failure a [`StoreError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// Not reachable: refused, connection lost, cannot open the file, wrong credentials.
    Down,
    /// Reachable but not answering in time: past `STOREGATE_DATABASE_TIMEOUT_MS`, waiting for
    /// a lock (a table locked by another session, SQLite's busy file), a hung server.
    Slow,
    /// The store answered, and the answer was a refusal (a request token used already, a
    /// constraint): nothing wrong with the store itself.
    Answered,
}

impl StoreError {
    /// The store is out of reach.
    pub fn down(message: impl Into<String>) -> StoreError {
        StoreError {
            message: message.into(),
            failure: Failure::Down,
        }
    }

    /// The store did not answer in time.
    pub fn slow(message: impl Into<String>) -> StoreError {
        StoreError {
            message: message.into(),
            failure: Failure::Slow,
        }
    }

    /// The store answered with a refusal.
    pub fn answered(message: impl Into<String>) -> StoreError {
        StoreError {
            message: message.into(),
            failure: Failure::Answered,
        }
    }

    /// True when the store itself is failing (down or slow), not the request.
    pub fn is_outage(&self) -> bool {
        self.failure != Failure::Answered
    }

    /// The same failure, its message prefixed with where the store is.
    pub fn at(self, place: &str) -> StoreError {
        StoreError {
            message: format!("{place}: {}", self.message),
            failure: self.failure,
        }
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode as Code;
        let failure = match error.sqlite_error_code() {
            // Another connection holds the file's lock: the store is there, and slow.
            Some(Code::DatabaseBusy | Code::DatabaseLocked) => Failure::Slow,
            Some(
                Code::CannotOpen
                | Code::SystemIoFailure
                | Code::DiskFull
                | Code::DatabaseCorrupt
                | Code::NotADatabase
                | Code::ReadOnly
                | Code::OutOfMemory
                | Code::FileLockingProtocolFailed
                | Code::PermissionDenied,
            ) => Failure::Down,
            _ => Failure::Answered,
        };
        StoreError {
            message: error.to_string(),
            failure,
        }
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> Self {
        let failure = match &error {
            sqlx::Error::Database(database) => {
                let number = database
                    .try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>()
                    .map(|e| e.number());
                match number {
                    // Lock wait timeout, statement time limits (MariaDB's, MySQL's): slow.
                    Some(1205 | 1969 | 3024) => Failure::Slow,
                    // Too many connections, access denied, unknown database, shutting down,
                    // connection killed, server gone, connection lost: not reachable.
                    Some(1040 | 1045 | 1049 | 1053 | 1927 | 2006 | 2013) => Failure::Down,
                    _ => Failure::Answered,
                }
            }
            sqlx::Error::RowNotFound
            | sqlx::Error::TypeNotFound { .. }
            | sqlx::Error::ColumnIndexOutOfBounds { .. }
            | sqlx::Error::ColumnNotFound(_)
            | sqlx::Error::ColumnDecode { .. }
            | sqlx::Error::Decode(_)
            | sqlx::Error::Encode(_) => Failure::Answered,
            // The connection, the pool, TLS, the protocol: the store is out of reach.
            _ => Failure::Down,
        };
        StoreError {
            message: error.to_string(),
            failure,
        }
    }
}

/// What a store call gives back, later.
pub type StoreFuture<'a, T> = BoxFuture<'a, Result<T, StoreError>>;

/// Who an access token speaks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    Admin,
    Customer(u64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Request,
    Access,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Consumer {
    pub id: i64,
    pub name: String,
    pub key: String,
    pub secret: String,
    pub callback_url: Option<String>,
    pub rejected_callback_url: Option<String>,
    /// The compatibility profile its signed calls are answered in (an app of the original
    /// gets the original's formats without the whole gateway switching, docs/oauth.md);
    /// `None`: the gateway's own (`STOREGATE_PROFILE`).
    pub profile: Option<crate::context::profile::Profile>,
    /// Its own rate limit, in place of `STOREGATE_RATE_LIMITS`'s `consumer=` (set with
    /// `storegate oauth consumer add/update --rate-limit`); None: that one.
    pub rate_limit: Option<crate::config::Rate>,
}

/// The `rate_limit` column read back; a value this build cannot read is no limit of its
/// own (the gateway's `consumer=` then applies), and says so in the log.
pub fn rate_limit_column(text: Option<String>) -> Option<crate::config::Rate> {
    let text = text?;
    match crate::config::Rate::parse(&text) {
        Ok(rate) => Some(rate),
        Err(why) => {
            tracing::warn!(value = %text, %why, "OAuth store: a consumer's rate limit is unreadable");
            None
        }
    }
}

/// A consumer to register.
#[derive(Debug, Clone)]
pub struct NewConsumer {
    pub name: String,
    pub key: String,
    pub secret: String,
    pub callback_url: Option<String>,
    pub rejected_callback_url: Option<String>,
    pub profile: Option<crate::context::profile::Profile>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub id: i64,
    pub consumer_id: i64,
    pub kind: Kind,
    pub token: String,
    pub secret: String,
    pub verifier: Option<String>,
    pub callback_url: Option<String>,
    pub owner: Option<Owner>,
    pub authorized: bool,
    pub revoked: bool,
    /// Unix seconds.
    pub created_at: i64,
}

/// An access token as the Admin's listing shows it: never the token's secret.
#[derive(Debug, Clone)]
pub struct AccessTokenInfo {
    pub id: i64,
    pub consumer_key: String,
    pub consumer_name: String,
    pub owner: Owner,
    pub revoked: bool,
    pub created_at: i64,
}

/// An access token carried over from the original's `oauth_token` table.
#[derive(Debug, Clone)]
pub struct ImportedToken {
    pub consumer_id: i64,
    pub token: String,
    pub secret: String,
    pub owner: Owner,
}

/// The OAuth store's interface (see the module's documentation for why it is async).
pub trait TokenStore: Send + Sync + std::fmt::Debug {
    /// Where it is, for logs and the CLI (never a password).
    fn describe(&self) -> String;
    /// One cheap round trip: is the store there? (Start, reconnection.)
    fn ping(&self) -> StoreFuture<'_, ()>;
    /// Does the server take connections at all? `Err` ([`Failure::Down`]) when it refuses
    /// them; `Ok` when it does, or cannot tell, or there is no server (a file). Asked when a
    /// call passed its deadline, to tell a stopped server from a hung or locked one (a pool
    /// retries refused connections until its deadline, which looks alike).
    fn reach(&self) -> StoreFuture<'_, ()> {
        Box::pin(async { Ok(()) })
    }
    /// Can the signed-call path be served? Reads each table it needs, so that a table
    /// locked by another session shows as a slow store, not only a server that is gone
    /// (`/readyz`, the breaker's probe). By default a [`TokenStore::ping`].
    fn probe(&self) -> StoreFuture<'_, ()> {
        self.ping()
    }
    fn consumer_by_key<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<Consumer>>;
    fn consumer_by_id(&self, id: i64) -> StoreFuture<'_, Option<Consumer>>;
    fn consumers(&self) -> StoreFuture<'_, Vec<Consumer>>;
    /// Registers a consumer; a consumer with the same key is updated (import is rerunnable).
    fn upsert_consumer<'a>(&'a self, consumer: &'a NewConsumer) -> StoreFuture<'a, Consumer>;
    fn token<'a>(&'a self, token: &'a str) -> StoreFuture<'a, Option<Token>>;
    /// A new request token (initiate).
    fn create_request_token<'a>(
        &'a self,
        consumer_id: i64,
        callback: &'a str,
    ) -> StoreFuture<'a, Token>;
    /// Marks an unauthorized request token authorized by `owner`; its verifier, or None when
    /// the token is unknown, already authorized or not a request token.
    fn authorize_request_token<'a>(
        &'a self,
        token: &'a str,
        owner: Owner,
    ) -> StoreFuture<'a, Option<String>>;
    /// Removes a request token (rejected by the user).
    fn delete_request_token<'a>(&'a self, token: &'a str) -> StoreFuture<'a, ()>;
    /// Swaps an authorized request token for an access token, in one transaction: the
    /// request token is used up, and the owner's earlier access tokens for this consumer are
    /// replaced (as the original did); their ids come back, so that only they are forgotten.
    fn exchange<'a>(&'a self, request: &'a Token) -> StoreFuture<'a, Exchanged>;
    /// Carries over an access token; false when that token already exists.
    fn import_access_token<'a>(&'a self, token: &'a ImportedToken) -> StoreFuture<'a, bool>;
    /// Access tokens, oldest first: `limit` of them after skipping `offset`.
    fn list_access_tokens(
        &self,
        customer_id: Option<u64>,
        limit: u32,
        offset: u64,
    ) -> StoreFuture<'_, Vec<AccessTokenInfo>>;
    /// Revokes one access token by id; false when there is none.
    fn revoke_token(&self, id: i64) -> StoreFuture<'_, bool>;
    /// Revokes every token of a customer (deleted customer), in one transaction: their
    /// OAuth access tokens, their request tokens and store session, and the mark that refuses
    /// their customer tokens issued at or before `at_ms` (a later mark wins); how many access
    /// tokens.
    fn revoke_customer(&self, customer_id: u64, at_ms: u64) -> StoreFuture<'_, usize>;
    /// The customer-token revocation marks made at or after `since_ms`: (customer, at ms).
    fn customer_revocations(&self, since_ms: u64) -> StoreFuture<'_, Vec<(u64, u64)>>;
    /// Drops the marks older than `before_ms` (no token they could refuse is still valid).
    fn prune_revocations(&self, before_ms: u64) -> StoreFuture<'_, u64>;
    /// Claims a nonce key until `ttl` from now; false while it is claimed already. The
    /// replay guard of instances that share the database but not Redis.
    fn claim_nonce<'a>(&'a self, key: &'a str, ttl: Duration) -> StoreFuture<'a, bool>;
    /// Every consumer and access token, for `storegate oauth migrate` (secrets included).
    fn export(&self) -> StoreFuture<'_, Export>;
    /// Keeps a customer's session with the store behind the gateway (the back end's JSON,
    /// `backend::port::StoreSession`), replacing the one they had.
    fn put_store_session<'a>(&'a self, customer_id: u64, session: &'a str) -> StoreFuture<'a, ()>;
    /// The customer's kept session with the store, if any.
    fn store_session(&self, customer_id: u64) -> StoreFuture<'_, Option<String>>;
    /// Sets (None: removes) the consumer `key`'s own rate limit; false when there is no
    /// such consumer.
    fn set_consumer_rate_limit<'a>(
        &'a self,
        key: &'a str,
        rate: Option<crate::config::Rate>,
    ) -> StoreFuture<'a, bool> {
        let _ = (key, rate);
        Box::pin(async {
            Err(StoreError::answered(
                "this store cannot keep consumers' rate limits",
            ))
        })
    }
}

/// What [`TokenStore::exchange`] made: the new access token and the ids of the ones it
/// replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchanged {
    pub access: Token,
    pub replaced: Vec<i64>,
}

/// A whole store's content, as `storegate oauth migrate` copies it.
#[derive(Debug, Clone, Default)]
pub struct Export {
    pub consumers: Vec<Consumer>,
    /// Access tokens with their consumer's id in the exporting store.
    pub access_tokens: Vec<Token>,
}

/// 32 lower-case hex characters: the original's length for keys, secrets, tokens and
/// verifiers.
pub fn random_hex32() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random generator");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Request tokens not exchanged within this time are gone (the original kept them forever).
pub const REQUEST_TOKEN_LIFETIME: Duration = Duration::from_secs(3600);

/// The kind column's text.
pub fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Request => "request",
        Kind::Access => "access",
    }
}

/// The owner as the `admin` and `customer_id` columns hold it.
pub fn owner_columns(owner: Owner) -> (bool, Option<i64>) {
    match owner {
        Owner::Admin => (true, None),
        Owner::Customer(id) => (false, Some(id as i64)),
    }
}

/// The owner from the `admin` and `customer_id` columns.
pub fn owner_from(admin: bool, customer: Option<i64>) -> Option<Owner> {
    match (admin, customer) {
        (true, _) => Some(Owner::Admin),
        (false, Some(id)) => Some(Owner::Customer(id as u64)),
        _ => None,
    }
}
