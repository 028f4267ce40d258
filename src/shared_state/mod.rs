//! State that several gateway instances behind one load balancer must share, kept in
//! Redis when `STOREGATE_REDIS_URL` is set and in this process otherwise.
//!
//! Why it exists: each instance used to keep its own token revocations, write locks and
//! cache, and a user noticed: a token revoked on one instance worked on the others, a
//! product changed through one was served stale by the others, concurrent address writes
//! through two instances lost addresses. What is shared:
//!
//! - **Customer-token revocations**: applied here at once, published to the other
//!   instances (pub/sub into their local sets, so a token check never waits for Redis),
//!   and kept in Redis for instances that start later or missed messages.
//! - **Cache invalidations**: every write's and purge's tags go to every instance's local
//!   cache within milliseconds.
//! - **Write locks** (`crate::shared_state::locks`): a lease in Redis after the local mutex, which
//!   expires if an instance dies mid-write ([`lease`]).
//! - **One-time claims** ([`SharedState::claim_once`]), e.g. OAuth nonces.
//! - Opt-in, a **second cache level** of upstream records ([`l2`]).
//! - **Tallies** a fleet adds up ([`tallies`]): the dual run's counts.
//!
//! What happens when Redis fails is decided per piece and written down in
//! `docs/decisions/shared-state.md`: reads and token checks go on with this instance's
//! state, writes that need a shared lock and claims are refused (503), and after a gap the
//! local cache is purged because invalidations may have been missed.
//!
//! Without Redis nothing here touches the network: locks and claims are in-process, and
//! invalidations and revocations stay in this instance, as before.

mod claims;
mod events;
pub mod l2;
mod lease;
mod link;
pub mod locks;
pub mod nonces;
pub mod scripts;
pub mod tallies;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub use lease::Lease;

use crate::auth::TokenIssuer;
use crate::cache::{Cache, Invalidation};
use crate::config::Config;
use crate::http::ApiError;
use events::Event;
use link::Link;

/// Why shared state could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SharedError {
    /// Redis did not answer in time, refused, or is not reachable.
    #[error("Redis unavailable ({0})")]
    Unavailable(String),
    /// Another instance held the lock for longer than this request could wait.
    #[error("lock held elsewhere past the wait")]
    Busy,
}

/// The message of a 503 because Redis could not be asked: it names the store that failed
/// (not the back end, not the OAuth database).
pub const REDIS_UNAVAILABLE: &str =
    "The shared state store (Redis) is unavailable. Try again later.";

impl From<SharedError> for ApiError {
    /// A 503 with `Retry-After`: the client may send the same request again shortly.
    fn from(error: SharedError) -> ApiError {
        let message = match error {
            SharedError::Unavailable(_) => REDIS_UNAVAILABLE,
            // Redis answered: another instance holds the record's lock.
            SharedError::Busy => "The service is temporarily unavailable. Try again later.",
        };
        ApiError::new(http::StatusCode::SERVICE_UNAVAILABLE, message)
            .with_header(
                http::header::RETRY_AFTER,
                http::HeaderValue::from_static("1"),
            )
            .with_cause(error.to_string())
    }
}

/// Whether Redis is configured, and reachable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedisStatus {
    /// No `STOREGATE_REDIS_URL`: this instance stands alone.
    Off,
    Up,
    Down,
}

impl RedisStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RedisStatus::Off => "off",
            RedisStatus::Up => "up",
            RedisStatus::Down => "down",
        }
    }
}

/// The shared state of one gateway. Build with [`SharedState::local`] or
/// [`SharedState::start`]; cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct SharedState {
    link: Option<Arc<Link>>,
    claims: claims::LocalClaims,
    second_level: Option<Arc<l2::SharedCache>>,
    /// How long a write lock's lease lasts: longer than any request can hold it.
    lease: Duration,
}

impl SharedState {
    /// Everything in this process (no Redis).
    pub fn local(upstream_timeout: Duration) -> Arc<SharedState> {
        Arc::new(SharedState {
            link: None,
            claims: claims::LocalClaims::default(),
            second_level: None,
            lease: lease_for(upstream_timeout),
        })
    }

    /// The shared state `config` asks for. With `STOREGATE_REDIS_URL`, hooks the cache's
    /// invalidations and the tokens' revocations up to Redis and starts the background
    /// tasks (health, publisher, subscriber), which need a Tokio runtime. It does not wait
    /// for Redis: an instance starts, and serves, while Redis is down.
    pub fn start(
        config: &Config,
        cache: &Arc<Cache>,
        tokens: &Arc<TokenIssuer>,
    ) -> Result<Arc<SharedState>, String> {
        let Some(url) = &config.redis_url else {
            return Ok(SharedState::local(config.upstream_timeout));
        };
        let link = Arc::new(Link::new(url.expose(), config.redis_timeout)?);
        {
            let link = link.clone();
            cache.on_invalidate(Box::new(move |invalidation| {
                let origin = link.instance.clone();
                link.send(match invalidation {
                    Invalidation::Tags(tags) => Event::Invalidate {
                        origin,
                        tags: tags.to_vec(),
                        hold_off_ms: None,
                    },
                    Invalidation::HoldOff(tags, window) => Event::Invalidate {
                        origin,
                        tags: tags.to_vec(),
                        hold_off_ms: Some(window.as_millis() as u64),
                    },
                    Invalidation::All => Event::InvalidateAll { origin },
                });
            }));
        }
        {
            let link = link.clone();
            tokens.on_revoke(Box::new(move |customer, at| {
                link.send(Event::Revoke {
                    origin: link.instance.clone(),
                    customer,
                    at,
                });
            }));
        }
        let second_level = (config.shared_cache && cache.enabled()).then(|| {
            let level = Arc::new(l2::SharedCache::new(
                link.clone(),
                l2::backend_scope(config),
                config.cache_ttl,
                config.upstream_timeout,
            ));
            cache.set_second_level(level.clone());
            level
        });
        link::spawn(&link, cache, tokens);
        tracing::info!(
            redis = %link.place,
            shared_cache = second_level.is_some(),
            "sharing state through Redis"
        );
        Ok(Arc::new(SharedState {
            link: Some(link),
            claims: claims::LocalClaims::default(),
            second_level,
            lease: lease_for(config.upstream_timeout),
        }))
    }

    /// Redis for another module's own keys and scripts (`crate::limits`), when configured.
    pub fn scripts(&self) -> Option<scripts::Scripts> {
        self.link.clone().map(scripts::Scripts::new)
    }

    pub fn redis_status(&self) -> RedisStatus {
        match &self.link {
            None => RedisStatus::Off,
            Some(link) if link.is_up() => RedisStatus::Up,
            Some(_) => RedisStatus::Down,
        }
    }

    /// Claims `key` for `ttl`: `Ok(true)` for the first claim in that time across every
    /// instance, `Ok(false)` while it lasts (SET NX PX). Without Redis, across this
    /// process. With Redis down, `Err(SharedError::Unavailable)`: a replay guard that
    /// cannot check must refuse (fail closed), which `ApiError::from` makes a 503.
    pub async fn claim_once(&self, key: &str, ttl: Duration) -> Result<bool, SharedError> {
        let Some(link) = &self.link else {
            return Ok(self.claims.claim(key, ttl));
        };
        let mut conn = link.connection();
        let taken: Option<String> = link
            .run(
                "claim",
                redis::cmd("SET")
                    .arg(link.keys.once(key))
                    .arg(1)
                    .arg("NX")
                    .arg("PX")
                    .arg(ttl.as_millis().max(1) as u64)
                    .query_async(&mut conn),
            )
            .await?;
        Ok(taken.is_some())
    }

    /// The lease `name` (a `LockKey`'s name) across instances, for the holder of this
    /// instance's lock on it (`crate::shared_state::locks::Locks::lock`); `Ok(None)` without Redis. Waits
    /// for another instance's writer up to half of what is left of the request's deadline
    /// (the write itself needs the rest), then `Err(Busy)`. Redis down: `Err(Unavailable)`
    /// (fail closed: a write that cannot be serialised with other instances' could lose
    /// theirs).
    pub async fn lease(&self, name: &str) -> Result<Option<Lease>, SharedError> {
        let Some(link) = &self.link else {
            return Ok(None);
        };
        let wait = crate::context::request::remaining().unwrap_or(self.lease) / 2;
        lease::acquire(link, name, self.lease, wait).await.map(Some)
    }

    /// Where this instance's verified OAuth credentials are, so that the other instances'
    /// revocations reach them (`Event::OAuthForget`).
    pub fn attach_oauth(&self, verified: &Arc<crate::auth::oauth::verified::VerifiedCache>) {
        if let Some(link) = &self.link {
            let _ = link.oauth_verified.set(Arc::downgrade(verified));
        }
    }

    /// Tells the other instances to drop the OAuth credentials `forget` names (a
    /// revocation here); nothing without Redis, where their short freshness stands in for it.
    pub fn announce_oauth_forget(&self, forget: &crate::auth::oauth::verified::Forget) {
        if let Some(link) = &self.link {
            link.send(nonces::forget_event(link.instance.clone(), forget));
        }
    }

    /// For `/metrics`: the values of the shared-state series.
    pub fn snapshot(&self) -> Snapshot {
        let read = |n: &std::sync::atomic::AtomicU64| n.load(Ordering::Relaxed);
        Snapshot {
            redis: self.redis_status(),
            errors: self.link.as_ref().map_or(0, |l| read(&l.stats.errors)),
            published: self.link.as_ref().map_or(0, |l| read(&l.stats.published)),
            received: self.link.as_ref().map_or(0, |l| read(&l.stats.received)),
            resyncs: self.link.as_ref().map_or(0, |l| read(&l.stats.resyncs)),
            l2: self.second_level.as_ref().map(|l2| {
                (
                    read(&l2.stats.hits),
                    read(&l2.stats.misses),
                    read(&l2.stats.waits),
                    read(&l2.stats.skipped),
                )
            }),
        }
    }
}

/// Tells running gateways, through the Redis at `url`, to drop the OAuth credentials
/// `forget` names (`storegate oauth token revoke`, a process with no `SharedState` of its
/// own).
pub async fn announce_oauth_forget(
    url: &str,
    timeout: Duration,
    forget: &crate::auth::oauth::verified::Forget,
) -> Result<(), String> {
    let message = nonces::forget_event("cli".to_owned(), forget).encode();
    let channel = link::Keys::new(link::PREFIX).channel();
    let work = async {
        let client = redis::Client::open(url).map_err(|e| e.to_string())?;
        let mut connection = client
            .get_multiplexed_async_connection()
            .await
            .map_err(|e| e.to_string())?;
        redis::cmd("PUBLISH")
            .arg(channel)
            .arg(message)
            .query_async::<i64>(&mut connection)
            .await
            .map(drop)
            .map_err(|e| e.to_string())
    };
    tokio::time::timeout(timeout * 4, work)
        .await
        .map_err(|_| "no answer from Redis in time".to_owned())?
}

/// The shared-state series at one scrape.
#[derive(Debug, Clone, Copy)]
pub struct Snapshot {
    pub redis: RedisStatus,
    pub errors: u64,
    pub published: u64,
    pub received: u64,
    pub resyncs: u64,
    /// Second level: hits, misses, waits for another instance's fetch, lookups skipped.
    pub l2: Option<(u64, u64, u64, u64)>,
}

/// A lease outlives any request that can hold it: the request deadline is the upstream
/// timeout plus half a second.
fn lease_for(upstream_timeout: Duration) -> Duration {
    upstream_timeout + Duration::from_secs(2)
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// A random token naming one holder of a lock or claim.
fn random_token() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random generator");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
