//! The budgets of clients, decided without a shared write on the hot path.
//!
//! Three levels hand admissions down, each in shares small enough that what one level
//! holds unused costs the limit little:
//!
//! 1. the window ([`super::ledger`]: Redis for a fleet, else this process) counts every
//!    admission it hands out;
//! 2. this instance's pool of a budget leases a share of it (a fortieth of the limit, at
//!    least one), refilled in the background as it runs low, so a busy client's requests
//!    do not wait for Redis; a lease not used within a bucket's width (at most half a
//!    second) is given back, so an instance the client left does not sit on its budget;
//! 3. each worker thread takes chunks of the pool (a hundredth of the limit per thread,
//!    at least one) into a slot of its own ([`SLOTS`] per thread), and a repeat request
//!    spends one from there: a read and a write of memory no other thread touches, as the
//!    rest of a cache hit (docs/architecture.md). A chunk is spent to its end.
//!
//! So a request waits for Redis only when its instance's pool is empty: a client's first
//! request on an instance, or one that outruns the background refill. Requests that waited
//! together (a worker's many connections, each with its first request) spend the one chunk
//! the first of them took on their thread, not a chunk each: a chunk is never put in a slot
//! in place of one that is not spent, since the window counted both. A refusal is kept
//! in the pool and the slot until the window says to ask again (a quarter of a second at
//! most), so a client hammering past its limit costs no Redis call per request either.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use http::HeaderValue;
use tokio::sync::Notify;

use super::client::{self, Client, Names};
use super::ledger::{Ledger, LedgerKey, Taken};
use crate::config::{Rate, RouteClass};

/// Slots per worker thread: budgets it answered lately.
const SLOTS: usize = 128;
/// How long a refusal is believed before the window is asked again.
const REFUSAL_KEPT: Duration = Duration::from_millis(250);
/// The longest a lease is used (a bucket's width, if shorter): admissions are counted when
/// leased, so one spent much later would count in the wrong part of the window. (A thread's
/// chunk, a hundredth of the limit, is spent to the end: `Budgets::decide_here`.)
const LEASE_AGE: Duration = Duration::from_millis(500);
/// How often unused leases are looked for.
const SWEEP_EVERY: Duration = Duration::from_millis(200);

/// A client's budget on one route class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Budget {
    pub client: Client,
    pub class: RouteClass,
}

impl Budget {
    /// The policy's name in the headers: `guest-catalog`.
    fn policy_name(&self) -> String {
        format!("{}-{}", self.client.kind.as_str(), self.class.as_str())
    }
}

/// A refusal's headers, ready to insert.
#[derive(Debug, Clone)]
pub struct Quota {
    /// `RateLimit-Policy: "guest-catalog";q=20;w=10;pk=:...:`.
    pub policy: HeaderValue,
    /// `RateLimit: "guest-catalog";r=0;t=4;pk=:...:`.
    pub current: HeaderValue,
    /// Whole seconds until the next admission.
    pub retry_secs: u64,
}

/// What a budget said of one request.
#[derive(Debug, Clone)]
pub enum Decision {
    /// Admitted; the answer's `RateLimit` field (`"guest-catalog";r=7;t=4;pk=:...:`).
    Admitted(HeaderValue),
    Refused(Quota),
}

/// The parts of a budget's header values that do not change.
#[derive(Debug, Clone)]
struct Texts {
    policy: HeaderValue,
    /// `"guest-catalog";r=`
    head: Box<str>,
    /// `;pk=:...:`
    tail: Box<str>,
}

impl Texts {
    fn new(budget: &Budget, rate: Rate, digest: &[u8; 12]) -> Texts {
        let name = budget.policy_name();
        let pk = client::partition_key(digest);
        let policy = format!(
            "\"{name}\";q={};w={};pk={pk}",
            rate.count,
            rate.window_secs()
        );
        Texts {
            policy: HeaderValue::from_str(&policy).expect("a name, numbers and base64"),
            head: format!("\"{name}\";r=").into(),
            tail: format!(";pk={pk}").into(),
        }
    }

    /// A copy whose bytes this thread owns (cloning it later counts no reference another
    /// thread counts).
    fn own_copy(&self) -> Texts {
        Texts {
            policy: HeaderValue::from_bytes(self.policy.as_bytes()).expect("was a header value"),
            head: self.head.clone(),
            tail: self.tail.clone(),
        }
    }

    /// `RateLimit`'s value: `remaining` requests left, the window whole in `secs`.
    fn current(&self, remaining: u64, secs: u64) -> HeaderValue {
        let mut text = String::with_capacity(self.head.len() + self.tail.len() + 24);
        text.push_str(&self.head);
        text.push_str(itoa::Buffer::new().format(remaining));
        text.push_str(";t=");
        text.push_str(itoa::Buffer::new().format(secs));
        text.push_str(&self.tail);
        HeaderValue::from_maybe_shared(bytes::Bytes::from(text))
            .expect("a name, numbers and base64")
    }

    fn refusal(&self, retry_secs: u64) -> Quota {
        Quota {
            policy: self.policy.clone(),
            current: self.current(0, retry_secs),
            retry_secs,
        }
    }
}

/// Whole seconds, rounded up.
fn secs_up(duration: Duration) -> u64 {
    duration.as_millis().div_ceil(1000) as u64
}

/// This instance's share of one budget.
struct Pool {
    budget: Budget,
    rate: Rate,
    key: LedgerKey,
    texts: Texts,
    /// Admissions a thread may take in one chunk.
    chunk: u32,
    /// Admissions leased from the window at a time.
    lease: u32,
    /// The longest a lease or chunk is used.
    age: Duration,
    state: Mutex<PoolState>,
    refilled: Notify,
}

#[derive(Debug, Default)]
struct PoolState {
    /// Leased from the window, not yet handed to a thread.
    tokens: u32,
    bucket: u64,
    in_fleet: bool,
    leased_at: Option<Instant>,
    /// What the window had left after the last take.
    remaining: u32,
    reset_at: Option<Instant>,
    /// Refused until then (ask the window again after it).
    refused_until: Option<Instant>,
    /// When the window said the next admission would be.
    retry_at: Option<Instant>,
    /// The refusal is the fleet's (Redis): void once Redis is down, when each instance
    /// counts alone from zero.
    refused_by_fleet: bool,
    refilling: bool,
    /// In [`Budgets::leases`], for the sweeper.
    listed: bool,
}

impl Pool {
    fn lock(&self) -> std::sync::MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a take of the window.
    fn absorb(&self, state: &mut PoolState, taken: Taken, now: Instant) {
        if taken.granted > 0 {
            // A fresh lease (a top-up included) is good for another `age`.
            state.leased_at = Some(now);
            state.tokens = state.tokens.saturating_add(taken.granted);
            state.bucket = taken.bucket;
            state.in_fleet = taken.in_fleet;
            state.refused_until = None;
            state.retry_at = None;
        } else {
            let retry = Duration::from_millis(taken.standing.retry_ms.max(1));
            state.retry_at = Some(now + retry);
            state.refused_by_fleet = taken.in_fleet;
            state.refused_until = Some(now + retry.min(REFUSAL_KEPT));
        }
        state.remaining = taken.standing.remaining;
        state.reset_at = Some(now + Duration::from_millis(taken.standing.reset_ms));
    }
}

/// One worker thread's view of a budget.
struct Slot {
    owner: usize,
    budget: Budget,
    rate: Rate,
    /// Admissions of this thread's chunk left.
    tokens: u32,
    /// The chunk's end.
    until: Instant,
    /// What the window had left besides the chunk, when it was taken.
    base: u32,
    reset_at: Instant,
    refused_until: Option<Instant>,
    retry_at: Instant,
    refused_by_fleet: bool,
    texts: Texts,
    /// The last `RateLimit` value made here, and the two numbers it says: a repeat that
    /// says the same clones it (most do: see [`Slot::base`]).
    shown: Option<(u64, u64, HeaderValue)>,
}

impl Slot {
    /// `RateLimit` for an admission now: `r` is what the window has left beside this
    /// thread's chunk (the chunk's own are not counted, so `r` moves once a chunk, not once
    /// a request: it understates by less than a chunk, a hundredth of the limit per thread);
    /// `t` the seconds until the window is whole.
    fn shown(&mut self, now: Instant) -> HeaderValue {
        let remaining = u64::from(self.base);
        let secs = secs_up(self.reset_at.saturating_duration_since(now));
        if let Some((r, t, value)) = &self.shown
            && *r == remaining
            && *t == secs
        {
            return value.clone();
        }
        let value = self.texts.current(remaining, secs);
        self.shown = Some((remaining, secs, value.clone()));
        value
    }
}

thread_local! {
    static SLOTS_HERE: RefCell<Vec<Option<Slot>>> = const { RefCell::new(Vec::new()) };
}

fn slot_of(owner: usize, budget: &Budget) -> usize {
    // A multiplicative hash of the budget's numbers: cheap, and spread well enough for a
    // table this small.
    let mut h = (budget.client.id as u64) ^ ((budget.client.id >> 64) as u64).rotate_left(29);
    h ^= (budget.client.kind as u64) << 56 ^ (budget.class as u64) << 60 ^ owner as u64;
    h = h.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> 32) as usize % SLOTS
}

/// Every budget of one gateway.
pub struct Budgets {
    /// Unique in the process: whose budgets a thread's slots hold.
    id: usize,
    pools: moka::sync::Cache<(Budget, Rate), Arc<Pool>>,
    ledger: Arc<Ledger>,
    names: Names,
    threads: u32,
    /// Pools holding a lease, for the sweeper.
    leases: Mutex<Vec<Weak<Pool>>>,
    /// The longest a request waits for a refill before it is served anyway.
    wait: Duration,
}

impl std::fmt::Debug for Budgets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Budgets")
            .field("pools", &self.pools.entry_count())
            .finish_non_exhaustive()
    }
}

impl Budgets {
    /// `threads`: the worker threads that serve requests (chunks are sized by them);
    /// `wait`: the longest a request waits for Redis.
    pub fn new(ledger: Arc<Ledger>, names: Names, threads: usize, wait: Duration) -> Arc<Budgets> {
        static NEXT_ID: AtomicUsize = AtomicUsize::new(1);
        let budgets = Arc::new(Budgets {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            pools: moka::sync::Cache::builder()
                .max_capacity(super::ledger::LOCAL_WINDOWS)
                .time_to_idle(Duration::from_secs(2))
                .build(),
            ledger,
            names,
            threads: threads.max(1) as u32,
            leases: Mutex::new(Vec::new()),
            wait,
        });
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(sweep(Arc::downgrade(&budgets)));
        }
        budgets
    }

    /// Pools held now (`/metrics`; the bench's memory row).
    pub fn pools(&self) -> u64 {
        self.pools.run_pending_tasks();
        self.pools.entry_count()
    }

    /// The decision from this thread's slot alone, when it can make one: a chunk with
    /// admissions left, or a refusal still believed. None: ask [`Budgets::decide`].
    pub fn decide_here(&self, budget: Budget, rate: Rate, now: Instant) -> Option<Decision> {
        let index = slot_of(self.id, &budget);
        SLOTS_HERE
            .try_with(|slots| {
                let mut slots = slots.try_borrow_mut().ok()?;
                let slot = slots.get_mut(index)?.as_mut()?;
                if slot.owner != self.id || slot.budget != budget || slot.rate != rate {
                    return None;
                }
                // A chunk's admissions are spent even past its time: they were counted in
                // the window when leased, and dropping them lost up to a chunk per thread
                // every `LEASE_AGE` (a busy client on a 60 s window was refused at a
                // fraction of its limit: bench row 9c). Spent late, they count in an earlier
                // part of the window: at most a chunk (a hundredth of the limit) per thread.
                if slot.tokens > 0 {
                    slot.tokens -= 1;
                    return Some(Decision::Admitted(slot.shown(now)));
                }
                if slot.refused_until.is_some_and(|until| now < until)
                    && !(slot.refused_by_fleet && self.fleet_down())
                {
                    let retry = secs_up(slot.retry_at.saturating_duration_since(now)).max(1);
                    return Some(Decision::Refused(slot.texts.refusal(retry)));
                }
                None
            })
            .ok()
            .flatten()
    }

    /// The decision through the pool (and, when it is empty, the window).
    pub async fn decide(&self, budget: Budget, rate: Rate) -> Decision {
        let pool = self.pool(budget, rate);
        // Set when a refill this request waited for took longer than a Redis call may.
        let mut waited_out = false;
        loop {
            let now = Instant::now();
            // A request that waited for a refill finds the chunk another one of this
            // thread took meanwhile (a refill wakes every request that waited for it):
            // spent from there, not a chunk of its own each. (A chunk taken per waiter,
            // each replacing the last in the slot, lost what the window had counted for
            // the replaced ones: 256 connections starting at once spent a billion-a-minute
            // budget in seconds, bench row 9c.)
            if let Some(decision) = self.decide_here(budget, rate, now) {
                return decision;
            }
            let refill = {
                let mut state = pool.lock();
                if state.leased_at.is_some_and(|at| now >= at + pool.age) {
                    // Too old to spend (see `LEASE_AGE`): back to the window.
                    let stale = std::mem::take(&mut state.tokens);
                    state.leased_at = None;
                    self.give_back_later(&pool, stale, state.bucket, state.in_fleet);
                }
                if state.tokens > 0 {
                    let chunk = state.tokens.min(pool.chunk);
                    state.tokens -= chunk;
                    let low = state.tokens < pool.lease.div_ceil(2);
                    let background = low && !state.refilling && self.ledger_is_remote();
                    if background {
                        state.refilling = true;
                    }
                    let base = state.remaining.saturating_add(state.tokens);
                    let reset_at = state.reset_at.unwrap_or(now);
                    let until = state.leased_at.map_or(now, |at| at + pool.age);
                    drop(state);
                    if background {
                        self.refill_later(&pool);
                    }
                    return self.admit(&pool, chunk, base, reset_at, until, now);
                }
                if let Some(until) = state.refused_until.filter(|until| now < *until) {
                    if state.refused_by_fleet && self.fleet_down() {
                        // Redis went away since: this instance counts alone now.
                        state.refused_until = None;
                    } else {
                        let retry_at = state.retry_at.unwrap_or(until);
                        let by_fleet = state.refused_by_fleet;
                        drop(state);
                        return self.refuse(&pool, until, retry_at, by_fleet, now);
                    }
                }
                if state.refilling {
                    false
                } else {
                    state.refilling = true;
                    true
                }
            };
            if refill {
                // This request refills; others finding the pool empty wait for it.
                let guard = Refilling(&pool);
                let taken = self.ledger.take(&pool.key, pool.rate, pool.lease).await;
                pool.absorb(&mut pool.lock(), taken, Instant::now());
                self.list(&pool);
                drop(guard);
                continue;
            }
            if waited_out {
                // Another request's refill did not come in time (Redis slow): fail open.
                return self.admit(&pool, 0, 0, now, now, now);
            }
            let refilled = pool.refilled.notified();
            tokio::pin!(refilled);
            refilled.as_mut().enable();
            if pool.lock().refilling {
                // Each refill that comes in time restarts the wait: a queue of requests
                // behind a small lease is served in turn, not failed open.
                waited_out = tokio::time::timeout(self.wait, refilled).await.is_err();
            }
        }
    }

    fn ledger_is_remote(&self) -> bool {
        self.ledger.counting() == super::ledger::Counting::Fleet
    }

    fn fleet_down(&self) -> bool {
        self.ledger.counting() == super::ledger::Counting::Degraded
    }

    fn pool(&self, budget: Budget, rate: Rate) -> Arc<Pool> {
        self.pools.get_with((budget, rate), || {
            let digest = self.names.budget(budget.client, budget.class, rate);
            let width =
                Duration::from_millis(super::window::width_ms(rate.window.as_millis() as u64));
            let lease = (rate.count / 40).max(1);
            let chunk = (rate.count / (100 * self.threads)).clamp(1, lease);
            Arc::new(Pool {
                budget,
                rate,
                key: LedgerKey {
                    digest,
                    redis: format!(
                        "{}.{}.{}s:{}",
                        budget.client.kind.as_str(),
                        budget.class.as_str(),
                        rate.window_secs(),
                        client::hex(&digest)
                    )
                    .into(),
                },
                texts: Texts::new(&budget, rate, &digest),
                chunk,
                lease,
                age: width.min(LEASE_AGE),
                state: Mutex::new(PoolState::default()),
                refilled: Notify::new(),
            })
        })
    }

    /// Admits this request and keeps the rest of `chunk` in this thread's slot.
    fn admit(
        &self,
        pool: &Pool,
        chunk: u32,
        base: u32,
        reset_at: Instant,
        until: Instant,
        now: Instant,
    ) -> Decision {
        let mut shown = None;
        self.keep(pool, |slot| {
            // Added to what the slot holds, never in its place: what is there was counted
            // in the window and is spent before the chunk is (a request admitted without a
            // chunk, when a refill came too late, leaves it as it is).
            slot.tokens = slot.tokens.saturating_add(chunk.saturating_sub(1));
            slot.until = until;
            slot.base = base;
            slot.reset_at = reset_at;
            slot.refused_until = None;
            shown = Some(slot.shown(now));
        });
        // No slot on this thread (its table is in use): made for this answer alone.
        let shown = shown.unwrap_or_else(|| {
            pool.texts.current(
                u64::from(base),
                secs_up(reset_at.saturating_duration_since(now)),
            )
        });
        Decision::Admitted(shown)
    }

    fn refuse(
        &self,
        pool: &Pool,
        until: Instant,
        retry_at: Instant,
        by_fleet: bool,
        now: Instant,
    ) -> Decision {
        let retry = secs_up(retry_at.saturating_duration_since(now)).max(1);
        self.keep(pool, |slot| {
            slot.refused_until = Some(until);
            slot.retry_at = retry_at;
            slot.refused_by_fleet = by_fleet;
        });
        Decision::Refused(pool.texts.refusal(retry))
    }

    /// Writes `pool`'s budget into this thread's slot (a chunk another budget left there
    /// goes back to its pool).
    fn keep(&self, pool: &Pool, set: impl FnOnce(&mut Slot)) {
        let index = slot_of(self.id, &pool.budget);
        let _ = SLOTS_HERE.try_with(|slots| {
            let Ok(mut slots) = slots.try_borrow_mut() else {
                return;
            };
            if slots.is_empty() {
                slots.resize_with(SLOTS, || None);
            }
            let fits = matches!(&slots[index], Some(slot)
                if slot.owner == self.id && slot.budget == pool.budget && slot.rate == pool.rate);
            if !fits {
                if let Some(old) = slots[index].take()
                    && old.owner == self.id
                    && old.tokens > 0
                    && Instant::now() < old.until
                    && let Some(owner) = self.pools.get(&(old.budget, old.rate))
                {
                    owner.lock().tokens += old.tokens;
                }
                let now = Instant::now();
                slots[index] = Some(Slot {
                    owner: self.id,
                    budget: pool.budget,
                    rate: pool.rate,
                    tokens: 0,
                    until: now,
                    base: 0,
                    reset_at: now,
                    refused_until: None,
                    retry_at: now,
                    refused_by_fleet: false,
                    texts: pool.texts.own_copy(),
                    shown: None,
                });
            }
            if let Some(slot) = slots[index].as_mut() {
                set(slot);
            }
        });
    }

    /// Lists `pool` for the sweeper (once: it is taken off when it gave its lease back).
    fn list(&self, pool: &Arc<Pool>) {
        let mut state = pool.lock();
        if state.listed {
            return;
        }
        state.listed = true;
        drop(state);
        self.leases
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Arc::downgrade(pool));
    }

    /// Tops the pool up in the background (it is running low; nobody waits).
    fn refill_later(&self, pool: &Arc<Pool>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            pool.lock().refilling = false;
            return;
        };
        self.list(pool);
        let (pool, ledger) = (pool.clone(), self.ledger.clone());
        runtime.spawn(async move {
            let guard = Refilling(&pool);
            let taken = ledger.take(&pool.key, pool.rate, pool.lease).await;
            pool.absorb(&mut pool.lock(), taken, Instant::now());
            drop(guard);
        });
    }

    /// Gives `n` unused admissions back to the window, in the background.
    fn give_back_later(&self, pool: &Arc<Pool>, n: u32, bucket: u64, in_fleet: bool) {
        if n == 0 {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (key, ledger) = (pool.key.clone(), self.ledger.clone());
        runtime.spawn(async move { ledger.give_back(&key, in_fleet, bucket, n).await });
    }

    /// Gives back leases too old to spend.
    async fn sweep_once(&self) {
        let listed = std::mem::take(&mut *self.leases.lock().unwrap_or_else(|e| e.into_inner()));
        let now = Instant::now();
        let mut kept = Vec::with_capacity(listed.len());
        let mut returned = Vec::new();
        for weak in listed {
            let Some(pool) = weak.upgrade() else {
                continue;
            };
            let mut state = pool.lock();
            let stale = state.leased_at.is_none_or(|at| now >= at + pool.age);
            if state.refilling || !stale {
                drop(state);
                kept.push(weak);
                continue;
            }
            let n = std::mem::take(&mut state.tokens);
            state.leased_at = None;
            state.listed = false;
            let (bucket, in_fleet) = (state.bucket, state.in_fleet);
            drop(state);
            if n > 0 {
                returned.push((pool, n, bucket, in_fleet));
            }
        }
        self.leases
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(kept);
        for (pool, n, bucket, in_fleet) in returned {
            self.ledger.give_back(&pool.key, in_fleet, bucket, n).await;
        }
    }
}

/// Clears a pool's refilling mark and wakes its waiters, however the refill ends (a
/// request dropped mid-refill included).
struct Refilling<'a>(&'a Pool);

impl Drop for Refilling<'_> {
    fn drop(&mut self) {
        self.0.lock().refilling = false;
        self.0.refilled.notify_waiters();
    }
}

async fn sweep(budgets: Weak<Budgets>) {
    loop {
        tokio::time::sleep(SWEEP_EVERY).await;
        let Some(budgets) = budgets.upgrade() else {
            return;
        };
        budgets.sweep_once().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ClientKind;

    fn budget(id: u64) -> Budget {
        Budget {
            client: Client::customer(id),
            class: RouteClass::Catalog,
        }
    }

    async fn decide(budgets: &Budgets, budget: Budget, rate: Rate) -> Decision {
        match budgets.decide_here(budget, rate, Instant::now()) {
            Some(decision) => decision,
            None => budgets.decide(budget, rate).await,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn requests_on_many_threads_get_the_limit_and_no_more() {
        let ledger = Ledger::new(None);
        let budgets = Budgets::new(ledger, Names::new(b"k"), 4, Duration::from_millis(300));
        let rate = Rate::parse("1000/10s").unwrap();
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let budgets = budgets.clone();
            tasks.push(tokio::spawn(async move {
                let mut admitted = 0;
                for _ in 0..300 {
                    if let Decision::Admitted(_) = decide(&budgets, budget(1), rate).await {
                        admitted += 1;
                    }
                    tokio::task::yield_now().await;
                }
                admitted
            }));
        }
        let mut admitted = 0;
        for task in tasks {
            admitted += task.await.unwrap();
        }
        // Never more than the limit. What is not admitted is what the worker threads still
        // hold in their chunks when the tasks end: a chunk is a hundredth of the limit (10
        // here) and is spent to its end, so at most one chunk on each of the 4 workers.
        assert!((960..=1000).contains(&admitted), "{admitted} admitted");
    }

    #[tokio::test]
    async fn a_repeat_is_decided_by_the_threads_slot_and_says_what_is_left() {
        let ledger = Ledger::new(None);
        let budgets = Budgets::new(ledger, Names::new(b"k"), 1, Duration::from_millis(300));
        let rate = Rate::parse("10000/60s").unwrap();
        let now = Instant::now();
        assert!(budgets.decide_here(budget(2), rate, now).is_none());
        let Decision::Admitted(first) = budgets.decide(budget(2), rate).await else {
            panic!("refused")
        };
        // A chunk of a hundredth: the next ones come from the slot.
        for _ in 0..50 {
            assert!(matches!(
                budgets.decide_here(budget(2), rate, Instant::now()),
                Some(Decision::Admitted(_))
            ));
        }
        let Some(Decision::Admitted(later)) = budgets.decide_here(budget(2), rate, Instant::now())
        else {
            panic!("not from the slot")
        };
        let r = |q: &HeaderValue| -> u64 {
            let text = q.to_str().unwrap();
            text.split(';')
                .find_map(|p| p.strip_prefix("r="))
                .unwrap()
                .parse()
                .unwrap()
        };
        // What the window has left beside this thread's chunk: the same all chunk long.
        assert_eq!(r(&first), 10_000 - 250 + 150, "{first:?}");
        assert_eq!(r(&first), r(&later), "{first:?} {later:?}");
        assert!(
            first
                .to_str()
                .unwrap()
                .starts_with("\"customer-catalog\";r=9900;t=")
        );
        // Another budget (another client, another class) is another slot.
        assert!(
            budgets
                .decide_here(budget(3), rate, Instant::now())
                .is_none()
        );
        let other = Budget {
            client: Client::customer(2),
            class: RouteClass::Writes,
        };
        assert!(budgets.decide_here(other, rate, Instant::now()).is_none());
        assert_eq!(other.client.kind, ClientKind::Customer);
    }

    #[tokio::test]
    async fn past_the_limit_refusals_are_kept_and_say_when() {
        let ledger = Ledger::new(None);
        let budgets = Budgets::new(ledger, Names::new(b"k"), 1, Duration::from_millis(300));
        let rate = Rate::parse("2/10s").unwrap();
        for _ in 0..2 {
            assert!(matches!(
                decide(&budgets, budget(4), rate).await,
                Decision::Admitted(_)
            ));
        }
        let Decision::Refused(quota) = decide(&budgets, budget(4), rate).await else {
            panic!("admitted past the limit")
        };
        assert!((1..=11).contains(&quota.retry_secs), "{quota:?}");
        // Kept in the slot: decided without the pool.
        assert!(matches!(
            budgets.decide_here(budget(4), rate, Instant::now()),
            Some(Decision::Refused(_))
        ));
    }
}
