//! The dual run's counts: per route and user type, the comparisons' outcomes; per field
//! path and class, how often it differed, caught up (lag) or was noise, with one example;
//! per route class, the reads the candidate served and those that fell back.
//!
//! Kept flat (a field name and a number, a field name and a first value) so that this
//! process's counts and the fleet's in Redis (`shared_state::tallies`) are the same thing:
//! the report reads either through [`Snapshot`]. With Redis, what is counted here is also
//! queued and added to the fleet's tally about once a second, and at every report.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::shared_state::SharedState;
use crate::shared_state::tallies::TallySnapshot;

/// The tally's name in Redis.
const NAME: &str = "shadow";
/// Separates the parts of a field name (never in a route, a user type or a JSON path a
/// store writes; replaced where it would be).
pub const SEP: char = '\u{1f}';
/// Distinct fields kept at most (routes × user types × paths): a store whose answers have
/// a field per product id cannot grow the tally without bound.
const MAX_FIELDS: usize = 50_000;
/// Deltas kept for Redis while it is down, at most.
const MAX_QUEUED: usize = 50_000;
/// How often this instance's deltas go to Redis.
const FLUSH_EVERY: Duration = Duration::from_secs(1);

/// How one sampled read ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Compared: no difference at all.
    Matched,
    /// Compared: a difference still there at the recheck.
    Differed,
    /// Compared: every difference was noise (the serving back end differs from itself).
    Noise,
    /// Compared: every difference was gone at the recheck.
    Lag,
    /// Not compared: a side failed (a 5xx, an answer that is not JSON).
    Error,
    /// Not compared: a side did not answer within the deadline.
    Timeout,
    /// A write: never sent to the candidate.
    NotCompared,
    /// Sampled, but `STOREGATE_SHADOW_MAX_IN_FLIGHT` comparisons were under way.
    Skipped,
}

impl Outcome {
    pub const ALL: [Outcome; 8] = [
        Outcome::Matched,
        Outcome::Differed,
        Outcome::Noise,
        Outcome::Lag,
        Outcome::Error,
        Outcome::Timeout,
        Outcome::NotCompared,
        Outcome::Skipped,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Outcome::Matched => "matched",
            Outcome::Differed => "differed",
            Outcome::Noise => "noise",
            Outcome::Lag => "lag",
            Outcome::Error => "error",
            Outcome::Timeout => "timeout",
            Outcome::NotCompared => "not_compared",
            Outcome::Skipped => "skipped",
        }
    }

    /// Whether both answers were there to compare.
    pub fn is_compared(self) -> bool {
        matches!(
            self,
            Outcome::Matched | Outcome::Differed | Outcome::Noise | Outcome::Lag
        )
    }
}

/// What a field path's count is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathKind {
    Differed,
    Lag,
    Noise,
}

impl PathKind {
    pub fn name(self) -> &'static str {
        match self {
            PathKind::Differed => "differed",
            PathKind::Lag => "lag",
            PathKind::Noise => "noise",
        }
    }
}

/// The counts, flat: as this process has them, or as Redis has the fleet's.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub since_ms: u64,
    pub counts: HashMap<String, i64>,
    pub firsts: HashMap<String, String>,
    /// `fleet` (from Redis), `instance` (no Redis), or `instance (Redis unreachable)`.
    pub scope: &'static str,
}

#[derive(Debug, Default)]
struct Local {
    since_ms: u64,
    counts: HashMap<String, i64>,
    firsts: HashMap<String, String>,
    /// Not yet in Redis.
    queued_counts: HashMap<String, i64>,
    queued_firsts: HashMap<String, String>,
}

/// The counts of this process, and the way to the fleet's.
#[derive(Debug)]
pub struct Tally {
    local: Mutex<Local>,
    shared: Arc<SharedState>,
}

impl Tally {
    pub fn new(shared: Arc<SharedState>) -> Tally {
        Tally {
            local: Mutex::new(Local {
                since_ms: now_ms(),
                ..Local::default()
            }),
            shared,
        }
    }

    /// Sends this process's deltas to Redis about once a second, for as long as the tally
    /// lives (when a runtime is there to do it and Redis is configured).
    pub fn start_flushing(self: &Arc<Tally>) {
        if !self.shared.shares_tallies() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let weak = Arc::downgrade(self);
        runtime.spawn(async move {
            let mut every = tokio::time::interval(FLUSH_EVERY);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                let Some(tally) = weak.upgrade() else {
                    return;
                };
                tally.flush().await;
            }
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Local> {
        self.local.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds `delta` to the counter `field`.
    pub fn add(&self, field: String, delta: i64) {
        let sharing = self.shared.shares_tallies();
        let mut local = self.lock();
        if !local.counts.contains_key(&field) && local.counts.len() >= MAX_FIELDS {
            return;
        }
        *local.counts.entry(field.clone()).or_insert(0) += delta;
        if sharing
            && (local.queued_counts.len() < MAX_QUEUED || local.queued_counts.contains_key(&field))
        {
            *local.queued_counts.entry(field).or_insert(0) += delta;
        }
    }

    /// Keeps `value` under `field` unless it holds one already.
    pub fn first(&self, field: String, value: impl FnOnce() -> String) {
        let sharing = self.shared.shares_tallies();
        let mut local = self.lock();
        if local.firsts.contains_key(&field) || local.firsts.len() >= MAX_FIELDS {
            return;
        }
        let value = value();
        if sharing && local.queued_firsts.len() < MAX_QUEUED {
            local.queued_firsts.insert(field.clone(), value.clone());
        }
        local.firsts.insert(field, value);
    }

    /// Sends the queued deltas to Redis; kept for the next try when it fails.
    pub async fn flush(&self) {
        let (counts, firsts) = {
            let mut local = self.lock();
            (
                std::mem::take(&mut local.queued_counts),
                std::mem::take(&mut local.queued_firsts),
            )
        };
        if counts.is_empty() && firsts.is_empty() {
            return;
        }
        let count_list: Vec<(String, i64)> = counts.iter().map(|(k, v)| (k.clone(), *v)).collect();
        let first_list: Vec<(String, String)> =
            firsts.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        if self
            .shared
            .tally_add(NAME, &count_list, &first_list)
            .await
            .is_err()
        {
            let mut local = self.lock();
            for (field, delta) in counts {
                if local.queued_counts.len() < MAX_QUEUED
                    || local.queued_counts.contains_key(&field)
                {
                    *local.queued_counts.entry(field).or_insert(0) += delta;
                }
            }
            for (field, value) in firsts {
                if local.queued_firsts.len() < MAX_QUEUED {
                    local.queued_firsts.entry(field).or_insert(value);
                }
            }
        }
    }

    /// The counts to report: the fleet's with Redis (this process's deltas sent first),
    /// else this process's.
    pub async fn snapshot(&self) -> Snapshot {
        if self.shared.shares_tallies() {
            self.flush().await;
            if let Ok(fleet) = self.shared.tally_read(NAME).await {
                return from_fleet(fleet, self.lock().since_ms);
            }
            let mut local = self.local_snapshot();
            local.scope = "instance (Redis unreachable)";
            return local;
        }
        self.local_snapshot()
    }

    fn local_snapshot(&self) -> Snapshot {
        let local = self.lock();
        Snapshot {
            since_ms: local.since_ms,
            counts: local.counts.clone(),
            firsts: local.firsts.clone(),
            scope: "instance",
        }
    }

    /// Starts a new count: this process's, and the fleet's with Redis.
    pub async fn reset(&self) -> Result<(), crate::shared_state::SharedError> {
        let since = self.shared.tally_reset(NAME).await?;
        let mut local = self.lock();
        *local = Local {
            since_ms: since,
            ..Local::default()
        };
        Ok(())
    }
}

fn from_fleet(fleet: TallySnapshot, local_since: u64) -> Snapshot {
    Snapshot {
        since_ms: fleet.since_ms.unwrap_or(local_since),
        counts: fleet.counts,
        firsts: fleet.firsts,
        scope: "fleet",
    }
}

/// A field name of parts, each cleaned of the separator.
pub fn field(parts: &[&str]) -> String {
    let mut out = String::new();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.push(SEP);
        }
        out.extend(part.chars().map(|c| if c == SEP { '?' } else { c }));
    }
    out
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn counts_add_up_and_a_reset_starts_again() {
        let tally = Tally::new(SharedState::local(Duration::from_secs(1)));
        tally.add(field(&["o", "GET /products/:id", "guest", "matched"]), 1);
        tally.add(field(&["o", "GET /products/:id", "guest", "matched"]), 2);
        tally.first(field(&["e", "x"]), || "first".into());
        tally.first(field(&["e", "x"]), || "second".into());
        let snap = tally.snapshot().await;
        assert_eq!(snap.scope, "instance");
        assert_eq!(
            snap.counts[&field(&["o", "GET /products/:id", "guest", "matched"])],
            3
        );
        assert_eq!(snap.firsts[&field(&["e", "x"])], "first");
        let before = snap.since_ms;
        tokio::time::sleep(Duration::from_millis(5)).await;
        tally.reset().await.unwrap();
        let snap = tally.snapshot().await;
        assert!(snap.counts.is_empty() && snap.firsts.is_empty());
        assert!(snap.since_ms > before);
    }

    #[test]
    fn fields_never_hold_the_separator() {
        let f = field(&["a\u{1f}b", "c"]);
        assert_eq!(f.split(SEP).collect::<Vec<_>>(), vec!["a?b", "c"]);
    }
}
