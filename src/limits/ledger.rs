//! Where windows are counted: in Redis for a fleet ([`super::fleet`]), in this process
//! otherwise, and in this process while Redis is down.
//!
//! Redis down fails open, to this instance's own counts: a limit is then enforced by each
//! instance alone (as without Redis), counted from the moment Redis went away, so a client
//! the fleet had refused is served again at once, and a scraper is still held to a limit
//! per instance rather than none. Whether Redis is down is the shared state's verdict
//! (a failed or late call marks it, the health loop's next answered ping clears it, within
//! a second); while it is down no request waits for it. What is counted locally then is
//! forgotten when Redis is back: the fleet's counts take over again.
//!
//! The local windows are a bounded table ([`LOCAL_WINDOWS`] windows at most, each forgotten
//! a window after its last use): millions of distinct guests or usernames cost a bounded
//! amount of memory; past the bound the least used are forgotten first (their clients
//! start again from zero, which errs on the side of serving).

use std::sync::Arc;
use std::sync::LazyLock;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::fleet::Fleet;
use super::window::{self, Standing, Window};
use crate::config::Rate;

/// Local windows kept at most (each a few dozen bytes and a table entry).
pub const LOCAL_WINDOWS: u64 = 1 << 18;

/// A window's name: a digest of what it counts (never a client's address, key or token),
/// and its name in Redis (the key is it under `storegate:rl:`: [`Fleet::key`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LedgerKey {
    pub digest: [u8; 12],
    pub redis: Arc<str>,
}

/// What a take got.
#[derive(Debug, Clone, Copy)]
pub struct Taken {
    pub granted: u32,
    pub bucket: u64,
    /// Counted in Redis (give back there) or here.
    pub in_fleet: bool,
    pub standing: Standing,
}

/// How windows are counted now, for `/readyz` and `/metrics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counting {
    /// No Redis: each instance counts alone.
    Instance,
    /// In Redis, across the fleet.
    Fleet,
    /// Redis is configured and down: each instance counts alone until it is back.
    Degraded,
}

impl Counting {
    pub fn as_str(self) -> &'static str {
        match self {
            Counting::Instance => "instance",
            Counting::Fleet => "fleet",
            Counting::Degraded => "degraded",
        }
    }
}

/// A local window and how long it is kept unused.
struct Local {
    window: Mutex<Window>,
    idle: Duration,
}

/// Forgets a local window a window (and a bucket) after its last use.
struct KeepForAWindow;

impl moka::Expiry<[u8; 12], Arc<Local>> for KeepForAWindow {
    fn expire_after_create(
        &self,
        _key: &[u8; 12],
        value: &Arc<Local>,
        _created_at: Instant,
    ) -> Option<Duration> {
        Some(value.idle)
    }

    fn expire_after_read(
        &self,
        _key: &[u8; 12],
        value: &Arc<Local>,
        _read_at: Instant,
        _duration_until_expiry: Option<Duration>,
        _last_modified_at: Instant,
    ) -> Option<Duration> {
        Some(value.idle)
    }
}

/// The windows of one gateway.
pub struct Ledger {
    local: moka::sync::Cache<[u8; 12], Arc<Local>>,
    fleet: Option<Fleet>,
    /// Redis was found down: the local windows count since then.
    degraded: AtomicBool,
    /// Decisions made here because Redis was down (`/metrics`).
    pub fallbacks: AtomicU64,
}

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger")
            .field("fleet", &self.fleet)
            .field("local", &self.local.entry_count())
            .finish()
    }
}

/// Milliseconds on this process's monotonic clock (the local windows' time).
pub fn local_ms(at: Instant) -> u64 {
    static BASE: LazyLock<Instant> = LazyLock::new(Instant::now);
    // A day in, so that the first windows have whole buckets behind them.
    at.saturating_duration_since(*BASE).as_millis() as u64 + 86_400_000
}

/// While Redis is down, how often it is asked whether it is back: well within the
/// second the fleet must count again after Redis returns.
const PROBE_EVERY: Duration = Duration::from_millis(200);

impl Ledger {
    /// The windows; with a fleet, a background task asks a Redis that went down whether
    /// it is back, every [`PROBE_EVERY`] (no request waits for it).
    pub fn new(fleet: Option<Fleet>) -> Arc<Ledger> {
        Ledger::with_capacity(fleet, LOCAL_WINDOWS)
    }

    /// With at most `capacity` local windows.
    pub fn with_capacity(fleet: Option<Fleet>, capacity: u64) -> Arc<Ledger> {
        let ledger = Arc::new(Ledger {
            local: moka::sync::Cache::builder()
                .max_capacity(capacity)
                .expire_after(KeepForAWindow)
                .build(),
            fleet,
            degraded: AtomicBool::new(false),
            fallbacks: AtomicU64::new(0),
        });
        if ledger.fleet.is_some()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(probe(Arc::downgrade(&ledger)));
        }
        ledger
    }

    pub fn counting(&self) -> Counting {
        match &self.fleet {
            None => Counting::Instance,
            Some(fleet) if fleet.is_down() => Counting::Degraded,
            Some(_) => Counting::Fleet,
        }
    }

    /// Local windows held now (`/metrics`; the bench's memory row).
    pub fn local_windows(&self) -> u64 {
        self.local.run_pending_tasks();
        self.local.entry_count()
    }

    /// The fleet, when Redis is configured and not known to be down. Notes the change
    /// when Redis went down or came back.
    fn fleet_now(&self) -> Option<&Fleet> {
        let fleet = self.fleet.as_ref()?;
        let down = fleet.is_down();
        if down != self.degraded.load(Ordering::Relaxed) {
            self.changed(fleet, down);
        }
        (!down).then_some(fleet)
    }

    fn changed(&self, fleet: &Fleet, down: bool) {
        if self.degraded.swap(down, Ordering::Relaxed) == down {
            return;
        }
        // Counted afresh from the moment it went away; forgotten when it is back.
        self.local.invalidate_all();
        if down {
            crate::observe::log_limit::warn(
                "rate limits: Redis down",
                format_args!(
                    "rate limits: Redis at {} does not answer; each instance counts alone until it is back",
                    fleet.place()
                ),
            );
        } else {
            tracing::info!(redis = %fleet.place(), "rate limits: Redis is back, counting across the fleet again");
        }
    }

    /// Takes up to `want` admissions of `rate` from `key`'s window.
    pub async fn take(&self, key: &LedgerKey, rate: Rate, want: u32) -> Taken {
        if let Some(fleet) = self.fleet_now() {
            match fleet.take(&key.redis, rate, want).await {
                Ok(taken) => {
                    return Taken {
                        granted: taken.granted,
                        bucket: taken.bucket,
                        in_fleet: true,
                        standing: taken.standing,
                    };
                }
                Err(error) => {
                    tracing::debug!(%error, "rate limit take failed");
                    self.changed(fleet, true);
                }
            }
        }
        if self.fleet.is_some() {
            self.fallbacks.fetch_add(1, Ordering::Relaxed);
        }
        self.take_here(key, rate, want, Instant::now())
    }

    /// The local take, at `at`.
    pub fn take_here(&self, key: &LedgerKey, rate: Rate, want: u32, at: Instant) -> Taken {
        let window_ms = rate.window.as_millis() as u64;
        let width = window::width_ms(window_ms);
        let idle = rate.window + Duration::from_millis(2 * width);
        let local = self.local.get_with(key.digest, || {
            Arc::new(Local {
                window: Mutex::new(Window::default()),
                idle,
            })
        });
        let now = local_ms(at);
        let mut window = local.window.lock().unwrap_or_else(|e| e.into_inner());
        let granted = window.take(now, width, rate.count, want);
        Taken {
            granted,
            bucket: Window::bucket_of(now, width),
            in_fleet: false,
            standing: window.standing(now, width, rate.count),
        }
    }

    /// Gives back `n` admissions `taken` counted and that were not used.
    pub async fn give_back(&self, key: &LedgerKey, in_fleet: bool, bucket: u64, n: u32) {
        if n == 0 {
            return;
        }
        if in_fleet {
            if let Some(fleet) = self.fleet_now()
                && let Err(error) = fleet.give_back(&key.redis, bucket, n).await
            {
                tracing::debug!(%error, "rate limit give-back failed");
                self.changed(fleet, true);
            }
            return;
        }
        if let Some(local) = self.local.get(&key.digest) {
            local
                .window
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .give_back(bucket, n);
        }
    }

    /// Asks Redis whether it is back, when it is down.
    async fn probe_once(&self) {
        if let Some(fleet) = &self.fleet
            && fleet.is_down()
            && fleet.probe().await.is_ok()
        {
            // `fleet_now` notes the change for the next request; noted here too, so that
            // `/readyz` and the log say it without waiting for one.
            self.fleet_now();
        }
    }

    /// Forgets `key`'s window, here and in Redis.
    pub async fn clear(&self, key: &LedgerKey) {
        self.local.invalidate(&key.digest);
        if let Some(fleet) = self.fleet_now()
            && let Err(error) = fleet.clear(&key.redis).await
        {
            tracing::debug!(%error, "rate limit clear failed");
            self.changed(fleet, true);
        }
    }
}

async fn probe(ledger: std::sync::Weak<Ledger>) {
    loop {
        tokio::time::sleep(PROBE_EVERY).await;
        let Some(ledger) = ledger.upgrade() else {
            return;
        };
        ledger.probe_once().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u64) -> LedgerKey {
        let mut digest = [0u8; 12];
        digest[..8].copy_from_slice(&n.to_be_bytes());
        LedgerKey {
            digest,
            redis: format!("test:{n}").into(),
        }
    }

    #[tokio::test]
    async fn millions_of_clients_cost_a_bounded_table() {
        let ledger = Ledger::with_capacity(None, 1_000);
        let rate = Rate::parse("5/60s").unwrap();
        for n in 0..20_000 {
            assert_eq!(ledger.take(&key(n), rate, 1).await.granted, 1);
        }
        let held = ledger.local_windows();
        assert!(held <= 1_000, "{held} windows held");
        assert_eq!(ledger.counting(), Counting::Instance);
    }

    #[tokio::test]
    async fn a_window_is_forgotten_once_nothing_in_it_counts() {
        let ledger = Ledger::with_capacity(None, 1_000);
        let rate = Rate::parse("1/1s").unwrap();
        assert_eq!(ledger.take(&key(1), rate, 1).await.granted, 1);
        assert_eq!(ledger.take(&key(1), rate, 1).await.granted, 0);
        assert_eq!(ledger.local_windows(), 1);
        // A window and two buckets after its last use.
        tokio::time::sleep(Duration::from_millis(1_400)).await;
        assert_eq!(ledger.local_windows(), 0);
        assert_eq!(ledger.take(&key(1), rate, 1).await.granted, 1);
    }

    #[tokio::test]
    async fn what_is_given_back_and_cleared_counts_no_more() {
        let ledger = Ledger::with_capacity(None, 1_000);
        let rate = Rate::parse("3/60s").unwrap();
        let taken = ledger.take(&key(7), rate, 3).await;
        assert_eq!(taken.granted, 3);
        ledger
            .give_back(&key(7), taken.in_fleet, taken.bucket, 2)
            .await;
        assert_eq!(ledger.take(&key(7), rate, 3).await.granted, 2);
        ledger.clear(&key(7)).await;
        assert_eq!(ledger.take(&key(7), rate, 3).await.granted, 3);
    }
}
