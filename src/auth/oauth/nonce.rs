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
}

/// Nonces in the OAuth store's database.
#[derive(Debug, Clone)]
pub struct StoreNonces(pub Arc<dyn TokenStore>);

impl NonceGuard for StoreNonces {
    fn claim_once<'a>(
        &'a self,
        key: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, Problem>> {
        Box::pin(async move { Ok(self.0.claim_nonce(key, ttl).await?) })
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
