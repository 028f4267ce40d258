//! Counts that a fleet adds up in Redis: named tallies of counters and first-seen values,
//! with the time their count began.
//!
//! The dual run's report (`crate::shadow`) is one: every instance compares its own share of
//! the reads, and any instance's report shows the fleet's counts. Each tally is three keys:
//! `tally:<name>:counts` (a hash of counters, `HINCRBY`), `tally:<name>:firsts` (a hash of
//! values kept from the first writer, `HSETNX`) and `tally:<name>:since` (milliseconds since
//! the epoch when the count began, set by the first add after a reset). An instance adds its
//! deltas in batches, in one script, so a report never sees half a batch.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::{SharedError, SharedState, now_ms};

/// `KEYS`: counts, firsts, since. `ARGV[1]`: now (ms), `ARGV[2]`: how many counters follow
/// as field/delta pairs; then field/value pairs for the firsts.
const ADD: &str = r#"
redis.call('SET', KEYS[3], ARGV[1], 'NX')
local n = tonumber(ARGV[2])
local i = 3
for _ = 1, n do
  redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
  i = i + 2
end
while i <= #ARGV do
  redis.call('HSETNX', KEYS[2], ARGV[i], ARGV[i + 1])
  i = i + 2
end
return 1
"#;

static ADD_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(ADD));

/// What a tally holds now.
#[derive(Debug, Clone, Default)]
pub struct TallySnapshot {
    /// When the count began (ms since the epoch); None before anything was added.
    pub since_ms: Option<u64>,
    pub counts: HashMap<String, i64>,
    pub firsts: HashMap<String, String>,
}

impl SharedState {
    /// Whether tallies are kept in Redis (`STOREGATE_REDIS_URL`); without, a caller keeps
    /// its counts in its own process.
    pub fn shares_tallies(&self) -> bool {
        self.link.is_some()
    }

    /// Adds `counts` (field, delta) to the tally `name`, and `firsts` (field, value) where
    /// the field has no value yet. Without Redis, nothing (and `Ok`).
    pub async fn tally_add(
        &self,
        name: &str,
        counts: &[(String, i64)],
        firsts: &[(String, String)],
    ) -> Result<(), SharedError> {
        let Some(link) = &self.link else {
            return Ok(());
        };
        if counts.is_empty() && firsts.is_empty() {
            return Ok(());
        }
        let (counts_key, firsts_key, since_key) = keys(&link.keys, name);
        let mut call = ADD_SCRIPT.key(counts_key);
        call.key(firsts_key).key(since_key);
        call.arg(now_ms()).arg(counts.len());
        for (field, delta) in counts {
            call.arg(field).arg(delta);
        }
        for (field, value) in firsts {
            call.arg(field).arg(value);
        }
        let mut conn = link.connection();
        link.run("tally add", call.invoke_async::<i64>(&mut conn))
            .await
            .map(drop)
    }

    /// The tally `name` as the fleet has it.
    pub async fn tally_read(&self, name: &str) -> Result<TallySnapshot, SharedError> {
        let Some(link) = &self.link else {
            return Ok(TallySnapshot::default());
        };
        let (counts_key, firsts_key, since_key) = keys(&link.keys, name);
        let mut conn = link.connection();
        let (counts, firsts, since): (HashMap<String, i64>, HashMap<String, String>, Option<u64>) =
            link.run(
                "tally read",
                redis::pipe()
                    .cmd("HGETALL")
                    .arg(&counts_key)
                    .cmd("HGETALL")
                    .arg(&firsts_key)
                    .cmd("GET")
                    .arg(&since_key)
                    .query_async(&mut conn),
            )
            .await?;
        Ok(TallySnapshot {
            since_ms: since,
            counts,
            firsts,
        })
    }

    /// Starts the tally `name` again, for the whole fleet: its counts and firsts dropped,
    /// its start set to now.
    pub async fn tally_reset(&self, name: &str) -> Result<u64, SharedError> {
        let now = now_ms();
        let Some(link) = &self.link else {
            return Ok(now);
        };
        let (counts_key, firsts_key, since_key) = keys(&link.keys, name);
        let mut conn = link.connection();
        link.run(
            "tally reset",
            redis::pipe()
                .atomic()
                .cmd("DEL")
                .arg(&counts_key)
                .arg(&firsts_key)
                .ignore()
                .cmd("SET")
                .arg(&since_key)
                .arg(now)
                .ignore()
                .query_async::<()>(&mut conn),
        )
        .await?;
        Ok(now)
    }
}

fn keys(keys: &super::link::Keys, name: &str) -> (String, String, String) {
    (
        keys.tally(name, "counts"),
        keys.tally(name, "firsts"),
        keys.tally(name, "since"),
    )
}
