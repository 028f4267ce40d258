//! `claim_once` without Redis: claims kept in this process until they expire.

use std::time::{Duration, Instant};

struct UntilDeadline;

impl moka::Expiry<String, Instant> for UntilDeadline {
    fn expire_after_create(
        &self,
        _key: &String,
        until: &Instant,
        now: Instant,
    ) -> Option<Duration> {
        Some(until.saturating_duration_since(now))
    }
}

pub struct LocalClaims {
    claims: moka::sync::Cache<String, Instant>,
}

impl std::fmt::Debug for LocalClaims {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalClaims").finish_non_exhaustive()
    }
}

impl Default for LocalClaims {
    fn default() -> Self {
        LocalClaims {
            claims: moka::sync::Cache::builder()
                .max_capacity(10_000_000)
                .expire_after(UntilDeadline)
                .build(),
        }
    }
}

impl LocalClaims {
    /// True for the first claim of `key` within `ttl`; false while that claim lasts.
    pub fn claim(&self, key: &str, ttl: Duration) -> bool {
        self.claims
            .entry(key.to_owned())
            .or_insert(Instant::now() + ttl)
            .is_fresh()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_claim_wins_until_it_expires() {
        let claims = LocalClaims::default();
        assert!(claims.claim("n1", Duration::from_millis(50)));
        assert!(!claims.claim("n1", Duration::from_millis(50)));
        assert!(claims.claim("n2", Duration::from_millis(50)));
        std::thread::sleep(Duration::from_millis(80));
        assert!(claims.claim("n1", Duration::from_millis(50)));
    }
}
