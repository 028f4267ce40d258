//! Cache entries held off after a write whose outcome is unknown.
//!
//! A write that timed out at the gateway (or lost its connection after it was sent) may
//! still land in Magento a moment later. Invalidating its tags is not enough: a read in
//! between fetches the record *before* the write lands and caches it, and the old data is
//! then served for a whole TTL plus stale-while-revalidate (66 s in issue 23's fault runs,
//! for Guest and Admin alike). So the tags such a write touched are **held off** for a
//! window ([`WINDOW`]): every entry showing one of them that was stored before the window
//! ends is never served from the cache — not fresh, not stale, not through an alias. Reads
//! go to Magento each time during the window (so they show the write within a read of its
//! landing), and what they store stays unusable after it; the first read after the window
//! stores what Magento shows then.
//!
//! Held-off marks live per tag slot (the cache's invalidation slots, see `cache`), as the
//! time the window ends in milliseconds since the cache started. One number,
//! [`HoldOffs::latest`], lets the hit path skip the check with one load while no write's
//! outcome was ever unknown (or every window is long past and nothing stored before it is
//! still read).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

/// How long the tags of a write with an unknown outcome are held off: 60 s.
///
/// The gateway gives up on a call after the request deadline (5 s by default), but Magento
/// goes on with the request: PHP-FPM does not stop a script when its client leaves, and
/// the usual reason for a slow write is a row lock, which MySQL's InnoDB waits for up to
/// `innodb_lock_wait_timeout` (50 s by default) before failing the statement. So a write
/// lands, or fails, within about 55 s of being sent; 60 s covers that with the deadline.
/// A write that lands later than that (a Magento tuned to wait longer) is visible after
/// the next expiry, as before. Reads of held-off data cost a Magento call each for the
/// window: only the entries the write touched, and only after a failure.
pub const WINDOW: Duration = Duration::from_secs(60);

/// Per slot, the end of its hold-off window (milliseconds since `base`; 0: none).
pub struct HoldOffs {
    base: Instant,
    until: Box<[AtomicU64]>,
    /// The latest window end of any slot: an entry stored after it is held by none.
    latest: AtomicU64,
}

impl HoldOffs {
    pub fn new(slots: usize) -> HoldOffs {
        HoldOffs {
            base: Instant::now(),
            until: (0..slots).map(|_| AtomicU64::new(0)).collect(),
            latest: AtomicU64::new(0),
        }
    }

    fn millis(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.base).as_millis() as u64
    }

    /// Holds these slots off from now for `window`.
    pub fn hold(&self, slots: impl IntoIterator<Item = u32>, window: Duration) {
        let until = self.millis(Instant::now() + window).max(1);
        for slot in slots {
            self.until[slot as usize].fetch_max(until, Ordering::SeqCst);
        }
        self.latest.fetch_max(until, Ordering::SeqCst);
    }

    /// True when an entry stored at `stored_at` showing these slots must not be served.
    pub fn holds(&self, stored_at: Instant, slots: &[u32]) -> bool {
        let latest = self.latest.load(Ordering::Relaxed);
        if latest == 0 {
            return false;
        }
        let stored = self.millis(stored_at);
        stored < latest
            && slots
                .iter()
                .any(|&slot| stored < self.until[slot as usize].load(Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn entries_stored_before_the_window_ends_are_held() {
        let holds = HoldOffs::new(8);
        tokio::time::advance(Duration::from_secs(1)).await;
        let before = Instant::now();
        assert!(!holds.holds(before, &[1, 2]));
        holds.hold([2], Duration::from_secs(60));
        assert!(holds.holds(before, &[1, 2]));
        assert!(!holds.holds(before, &[1, 3]));
        // Stored during the window: held, during it and after it.
        tokio::time::advance(Duration::from_secs(30)).await;
        let during = Instant::now();
        assert!(holds.holds(during, &[2]));
        tokio::time::advance(Duration::from_secs(31)).await;
        assert!(holds.holds(during, &[2]));
        // Stored after it: served again.
        assert!(!holds.holds(Instant::now(), &[2]));
    }
}
