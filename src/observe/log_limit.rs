//! Log lines that an outage repeats, at most one per cause per [`INTERVAL`], with a count.
//!
//! While Magento is down every request that needs it fails the same way: each fast 503 of
//! the open breaker logged an ERROR line and each `/readyz` probe a WARN (482 lines out of
//! 482 requests in issue 23's fault runs). A line per failure says nothing the first one
//! did not, and at a few thousand failures a second it is most of the gateway's work and
//! buries everything else. So these lines go through [`admit`]: the first line of a cause
//! is written at once, then none for [`INTERVAL`]; the next one written says how many were
//! left out (`suppressed`). The failures are still counted one by one in `/metrics`.
//!
//! A cause is a short fixed text (an error's status and message, a probe's name), not
//! free text: the table stays small. It is bounded anyway ([`MAX_CAUSES`]).
//!
//! Failed requests are limited per gateway (a [`LogLimit`] in `Metrics`, used by
//! `telemetry` when it finishes a request: several gateways in one process, as in the
//! tests, do not silence each other); the other repeated lines (the readiness probe, shed
//! upstream calls, unknown write outcomes) per process, through [`warn`].

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One line per cause per this long.
pub const INTERVAL: Duration = Duration::from_secs(10);

/// Causes remembered at most; past it the table starts again (a few repeated lines).
const MAX_CAUSES: usize = 256;

struct Seen {
    last: Instant,
    suppressed: u64,
}

/// The causes seen in the current interval.
pub struct LogLimit {
    seen: Mutex<Option<HashMap<String, Seen>>>,
}

impl Default for LogLimit {
    fn default() -> LogLimit {
        LogLimit::new()
    }
}

impl std::fmt::Debug for LogLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LogLimit")
    }
}

/// The process's own table, for [`warn`].
static PROCESS: LogLimit = LogLimit::new();

impl LogLimit {
    pub const fn new() -> LogLimit {
        LogLimit {
            seen: Mutex::new(None),
        }
    }

    /// `Some(n)` when a line of `cause` may be written now, `n` lines of it having been
    /// left out since the last one; `None` when this one is left out (and counted).
    pub fn admit(&self, cause: &str) -> Option<u64> {
        self.admit_at(cause, Instant::now())
    }

    fn admit_at(&self, cause: &str, now: Instant) -> Option<u64> {
        let mut guard = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let seen = guard.get_or_insert_with(HashMap::new);
        if let Some(entry) = seen.get_mut(cause) {
            if now.saturating_duration_since(entry.last) < INTERVAL {
                entry.suppressed += 1;
                return None;
            }
            let suppressed = entry.suppressed;
            entry.last = now;
            entry.suppressed = 0;
            return Some(suppressed);
        }
        if seen.len() >= MAX_CAUSES {
            seen.clear();
        }
        seen.insert(
            cause.to_owned(),
            Seen {
                last: now,
                suppressed: 0,
            },
        );
        Some(0)
    }
}

/// A WARN line of `cause`, rate-limited for the process.
pub fn warn(cause: &str, message: std::fmt::Arguments<'_>) {
    if let Some(suppressed) = PROCESS.admit(cause) {
        tracing::warn!(cause, suppressed, "{message}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_cause_per_interval_with_a_count() {
        let limit = LogLimit::new();
        let start = Instant::now();
        let cause = "503 The store back end is unavailable.";
        assert_eq!(limit.admit_at(cause, start), Some(0));
        for i in 1..=5 {
            assert_eq!(
                limit.admit_at(cause, start + Duration::from_millis(i)),
                None
            );
        }
        // Another cause is not held back by this one, nor another table by this one.
        assert_eq!(limit.admit_at("readiness probe", start), Some(0));
        assert_eq!(LogLimit::new().admit_at(cause, start), Some(0));
        assert_eq!(limit.admit_at(cause, start + INTERVAL), Some(5));
        assert_eq!(
            limit.admit_at(cause, start + INTERVAL + Duration::from_secs(1)),
            None
        );
    }
}
