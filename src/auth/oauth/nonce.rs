//! Replay protection: a nonce is accepted once per consumer for the whole timestamp window.
//!
//! The seam is [`NonceGuard::claim_once`]: true the first time a key is claimed within its
//! time to live, false after. Without Redis it is the OAuth store's table (so a restart does
//! not reopen the window, and every instance sharing the store shares it: the SQLite file
//! of a data folder, or the fleet's MariaDB); a Redis `SET key 1 NX EX ttl` implements the
//! same call for several machines without a database write per signed call.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;

use super::problem::Problem;
use super::store::TokenStore;

pub trait NonceGuard: Send + Sync + std::fmt::Debug {
    /// True when `key` was not claimed in the last `ttl`; it is claimed from now on.
    /// Its failure is the [`Problem`] to answer (which says whose failure it was).
    fn claim_once<'a>(
        &'a self,
        key: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, Problem>>;

    /// Nonces claimed in this process alone because the shared guard (the store, Redis)
    /// could not be asked (`storegate_oauth_nonce_fallbacks_total`).
    fn fallbacks(&self) -> u64 {
        0
    }
}

/// Nonces in the OAuth store's database, and in this process too. While the store fails
/// (a database outage without Redis), a nonce is claimed in this process alone, so that the
/// calls of tokens already verified go on (their credentials are served from the cache of
/// verified ones) instead of all failing: every nonce this process has seen, before the
/// outage or during it, is still refused a second time. What it cannot refuse during an
/// outage is a nonce another instance of a fleet without Redis saw, or one seen before this
/// process started (docs/decisions/oauth-store.md weighs that).
#[derive(Debug, Clone)]
pub struct StoreNonces {
    store: Arc<dyn TokenStore>,
    local: Arc<SeenNonces>,
}

impl StoreNonces {
    pub fn new(store: Arc<dyn TokenStore>) -> StoreNonces {
        StoreNonces {
            store,
            local: Arc::new(SeenNonces::new()),
        }
    }
}

impl NonceGuard for StoreNonces {
    fn claim_once<'a>(
        &'a self,
        key: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, Problem>> {
        Box::pin(async move {
            let stored = self.store.claim_nonce(key, ttl).await;
            Ok(self.local.decide(key, stored.map_err(|e| e.to_string())))
        })
    }

    fn fallbacks(&self) -> u64 {
        self.local.fallbacks()
    }
}

/// The nonces this process has seen, for as long as a timestamp may be accepted: the
/// fallback of a shared replay guard (the store's table, Redis) that cannot be asked.
pub struct SeenNonces {
    seen: moka::sync::Cache<String, ()>,
    fallbacks: std::sync::atomic::AtomicU64,
    /// Whether the shared guard's answers are remembered too, not only this process's own
    /// claims (see [`SeenNonces::fallback_only`]).
    remember_shared: bool,
}

impl std::fmt::Debug for SeenNonces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeenNonces").finish_non_exhaustive()
    }
}

impl Default for SeenNonces {
    fn default() -> Self {
        SeenNonces::new()
    }
}

/// At most this many nonces are remembered in the process (about 30 MB); past it the oldest
/// go first, which only matters during an outage.
const LOCAL_NONCES: u64 = 200_000;

impl SeenNonces {
    /// Remembers every nonce, the shared guard's included: a replay to this process of a
    /// nonce claimed before an outage is refused during it. Costs memory in proportion to
    /// the signed calls of the timestamp window (up to [`LOCAL_NONCES`], about 30 MB).
    pub fn new() -> SeenNonces {
        SeenNonces {
            seen: moka::sync::Cache::builder()
                .max_capacity(LOCAL_NONCES)
                .time_to_live(FUTURE_SKEW + PAST_WINDOW)
                .build(),
            fallbacks: std::sync::atomic::AtomicU64::new(0),
            remember_shared: true,
        }
    }

    /// Remembers only the nonces this process claimed alone (while the shared guard could not
    /// be asked): nothing in steady operation, where the guard (Redis) is the memory. A
    /// replay, to this process during an outage, of a nonce claimed before it passes, inside
    /// the timestamp window, like one to another instance (docs/decisions/failing-soft.md).
    pub fn fallback_only() -> SeenNonces {
        SeenNonces {
            remember_shared: false,
            ..SeenNonces::new()
        }
    }

    /// The answer for `key` given the shared guard's: its answer when it gave one
    /// (remembered here), this process's own when it failed (`error` says why, for the
    /// rate-limited warning).
    pub fn decide(&self, key: &str, shared: Result<bool, String>) -> bool {
        match shared {
            Ok(fresh) => {
                if self.remember_shared {
                    self.seen.insert(key.to_owned(), ());
                }
                fresh
            }
            Err(error) => self.claim_here(key, format_args!("{error}")),
        }
    }

    /// A claim in this process alone (the shared guard is known to be down: not asked).
    pub fn claim_here(&self, key: &str, why: std::fmt::Arguments<'_>) -> bool {
        self.fallbacks
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // One line per interval, not one per signed call, while the guard is down.
        crate::observe::log_limit::warn(
            "oauth_nonce_fallback",
            format_args!("nonces claimed in this process only: {why}"),
        );
        self.seen.entry(key.to_owned()).or_insert(()).is_fresh()
    }

    pub fn fallbacks(&self) -> u64 {
        self.fallbacks.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// How far ahead of our clock a timestamp may be (the original's 600 s).
pub const FUTURE_SKEW: Duration = Duration::from_secs(600);

/// How old a timestamp may be. The original had no lower bound, so a request captured once
/// could be replayed as soon as its nonce was cleaned up (after 120 minutes); we refuse what
/// is older than that same period, and keep every nonce for as long as its timestamp can
/// be accepted. Clients with clocks four thousand seconds behind, which the original served,
/// are still served.
pub const PAST_WINDOW: Duration = Duration::from_secs(7200);

/// The key a nonce is claimed under: per consumer, as nonces are the consumer's to choose.
pub fn nonce_key(consumer_key: &str, nonce: &str) -> String {
    format!("oauth-nonce:{consumer_key}:{nonce}")
}

/// Whether `timestamp` (seconds) is inside the window around `now`.
pub fn timestamp_ok(timestamp: i64, now: i64) -> bool {
    timestamp > 0
        && timestamp <= now + FUTURE_SKEW.as_secs() as i64
        && timestamp >= now - PAST_WINDOW.as_secs() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outage_falls_back_to_the_nonces_this_process_has_seen() {
        let local = SeenNonces::new();
        // The store answers: its word stands, and the nonce is remembered here too.
        assert!(local.decide("k:before", Ok(true)));
        assert!(!local.decide("k:used-elsewhere", Ok(false)));
        // The store fails: a new nonce passes once, a replay does not, and neither does a
        // nonce claimed in the store before the outage.
        let down = || Err("connection refused".to_owned());
        assert!(local.decide("k:new", down()));
        assert!(!local.decide("k:new", down()));
        assert!(!local.decide("k:before", down()));
        assert_eq!(local.fallbacks(), 3);
    }

    #[test]
    fn window() {
        let now = 1_700_000_000;
        assert!(timestamp_ok(now, now));
        assert!(timestamp_ok(now - 4000, now), "the original served this");
        assert!(timestamp_ok(now + 600, now));
        assert!(!timestamp_ok(now + 4000, now));
        assert!(!timestamp_ok(now - 7201, now));
        assert!(!timestamp_ok(0, now));
    }
}
