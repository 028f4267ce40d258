//! Keeping a store's failures from becoming the gateway's: a circuit breaker, a retry
//! budget, a bound on calls in flight, and the request's deadline.
//!
//! - **Circuit breaker** (one per upstream, shared by every clone of the client). Closed, it
//!   counts consecutive failed calls (no answer, a timeout, a 5xx, an unreadable body); at
//!   the threshold it opens and every call fails at once with
//!   [`BackendError::Unavailable`](crate::backend::port::BackendError::Unavailable), which the cache
//!   turns into stale data where it has some and the resources into a 503. After the open
//!   period one call is let through as a probe (half-open): success closes the circuit,
//!   failure opens it again. A 4xx is an answer, not a failure.
//! - **Retry budget.** Retries are only worth it while they are rare: every call deposits a
//!   fifth of a token, a retry spends a whole one, and the bucket holds at most ten. During
//!   an outage retries therefore add at most 20% to the load instead of doubling it.
//! - **Concurrency bound.** At most `STOREGATE_UPSTREAM_MAX_IN_FLIGHT` calls wait on
//!   the store at once; a call past that is refused at once (shed) rather than queued, so a
//!   slow back end costs callers a fast 503 (or stale data) instead of a pile-up.
//! - **Deadline.** The API's request layer states when the request must be answered
//!   ([`crate::context::request::with_deadline`]); each call's timeout is the smaller of the configured per-call
//!   timeout and what is left, so a request never outlives its deadline, however many calls
//!   it makes.

use std::sync::Arc;

use crate::backend::port::{BackendError, CircuitProbe, CircuitState};
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use crate::observe::metrics::BackendMetrics;

/// Settings of the resilience of a back end's client.
#[derive(Debug, Clone)]
pub struct Options {
    /// Consecutive failures that open the circuit. Zero: never open.
    pub failure_threshold: u32,
    /// How long the circuit stays open before a probe.
    pub open_for: Duration,
    /// Calls in flight at most; more are shed.
    pub max_in_flight: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            failure_threshold: 5,
            open_for: Duration::from_secs(5),
            max_in_flight: 256,
        }
    }
}

#[derive(Debug)]
enum State {
    Closed { failures: u32 },
    Open { until: Instant },
    HalfOpen { probing: bool },
}

#[derive(Debug)]
pub(crate) struct Breaker {
    state: Mutex<State>,
    threshold: u32,
    open_for: Duration,
}

/// Leave to make one call. Dropped without [`Admission::done`] (the caller gave up), a probe
/// lets the next call probe instead.
#[derive(Debug)]
pub(crate) struct Admission<'a> {
    breaker: &'a Breaker,
    probe: bool,
    settled: bool,
}

impl Breaker {
    fn new(threshold: u32, open_for: Duration) -> Breaker {
        Breaker {
            state: Mutex::new(State::Closed { failures: 0 }),
            threshold,
            open_for,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A poisoned lock only means a panic elsewhere; the state itself is always whole.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn state(&self) -> CircuitState {
        match *self.lock() {
            State::Closed { .. } => CircuitState::Closed,
            State::Open { until } if Instant::now() < until => CircuitState::Open,
            // Past the open period the next call probes.
            State::Open { .. } | State::HalfOpen { .. } => CircuitState::HalfOpen,
        }
    }

    /// May a call go out now?
    pub(crate) fn admit(&self) -> Option<Admission<'_>> {
        let mut state = self.lock();
        let probe = match *state {
            State::Closed { .. } => false,
            State::Open { until } if Instant::now() < until => return None,
            State::Open { .. } | State::HalfOpen { probing: false } => {
                *state = State::HalfOpen { probing: true };
                true
            }
            State::HalfOpen { probing: true } => return None,
        };
        Some(Admission {
            breaker: self,
            probe,
            settled: false,
        })
    }

    /// Records a call's result; true when this call opened the circuit.
    fn record(&self, probe: bool, success: bool) -> bool {
        let mut state = self.lock();
        if success {
            *state = State::Closed { failures: 0 };
            return false;
        }
        let open = match *state {
            State::Closed { failures } => {
                let failures = failures + 1;
                if self.threshold > 0 && failures >= self.threshold {
                    true
                } else {
                    *state = State::Closed { failures };
                    false
                }
            }
            // A failed probe opens it again; a failure of a call admitted before the circuit
            // opened changes nothing.
            State::HalfOpen { .. } => probe,
            State::Open { .. } => false,
        };
        if open {
            *state = State::Open {
                until: Instant::now() + self.open_for,
            };
        }
        open
    }
}

impl Admission<'_> {
    /// Settles the call; true when it opened the circuit.
    pub(crate) fn done(mut self, success: bool) -> bool {
        self.settled = true;
        self.breaker.record(self.probe, success)
    }
}

impl Drop for Admission<'_> {
    fn drop(&mut self) {
        if self.probe && !self.settled {
            let mut state = self.breaker.lock();
            if matches!(*state, State::HalfOpen { probing: true }) {
                *state = State::HalfOpen { probing: false };
            }
        }
    }
}

/// Tokens in thousandths.
const TOKEN: i64 = 1000;
const DEPOSIT: i64 = TOKEN / 5;
const MAX_BALANCE: i64 = 10 * TOKEN;

/// Retries allowed: 20% of calls, with a reserve of ten.
#[derive(Debug)]
pub(crate) struct RetryBudget {
    balance: AtomicI64,
}

impl RetryBudget {
    fn new() -> RetryBudget {
        RetryBudget {
            balance: AtomicI64::new(MAX_BALANCE),
        }
    }

    fn deposit(&self) {
        let _ = self
            .balance
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                (b < MAX_BALANCE).then(|| (b + DEPOSIT).min(MAX_BALANCE))
            });
    }

    fn withdraw(&self) -> bool {
        self.balance
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                (b >= TOKEN).then_some(b - TOKEN)
            })
            .is_ok()
    }
}

/// The shared state behind every clone of one back end's client.
#[derive(Debug)]
pub(crate) struct Guard {
    pub(crate) breaker: Breaker,
    budget: RetryBudget,
    slots: Arc<Semaphore>,
    pub(crate) metrics: BackendMetrics,
}

impl Guard {
    pub(crate) fn new(options: &Options, metrics: BackendMetrics) -> Guard {
        Guard {
            breaker: Breaker::new(options.failure_threshold, options.open_for),
            budget: RetryBudget::new(),
            slots: Arc::new(Semaphore::new(options.max_in_flight.max(1))),
            metrics,
        }
    }

    /// Every first try of a call feeds the retry budget.
    pub(crate) fn called(&self) {
        self.budget.deposit();
    }

    /// May a failed idempotent read be tried again?
    pub(crate) fn may_retry(&self) -> bool {
        if self.budget.withdraw() {
            self.metrics.retried();
            true
        } else {
            self.metrics.retry_refused();
            false
        }
    }

    /// Runs an idempotent read: its first try, and one more after a short wait when it
    /// failed in a way worth retrying (a connection error, 502, 503, 504), the deadline
    /// leaves room for it and the retry budget allows. Every store's client reads this way.
    pub(crate) async fn read<T, F, Fut>(&self, mut attempt: F) -> Result<T, BackendError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, BackendError>>,
    {
        self.called();
        match attempt().await {
            Err(error) if error.is_transient() => {
                let wait = jitter();
                // Not worth it when the wait and a useful try no longer fit the deadline.
                let fits = crate::context::request::remaining().is_none_or(|left| left > wait * 2);
                if !fits || !self.may_retry() {
                    return Err(error);
                }
                // The status only: a store's message can carry a customer's values.
                tracing::debug!(status = ?error.status(), "retrying an upstream read once");
                tokio::time::sleep(wait).await;
                attempt().await
            }
            other => other,
        }
    }

    /// A reader of the breaker's state, for metrics.
    pub(crate) fn probe(self: &Arc<Self>) -> CircuitProbe {
        let guard = self.clone();
        Arc::new(move || guard.breaker.state())
    }

    /// A slot among the calls in flight, or `None` when they are all taken.
    pub(crate) fn slot(&self) -> Option<OwnedSemaphorePermit> {
        self.slots.clone().try_acquire_owned().ok()
    }
}

/// Wait before a retry: 5 to 50 ms, at random, so that callers who failed together do not
/// come back together.
pub(crate) fn jitter() -> Duration {
    Duration::from_millis(5 + u64::from(getrandom::u32().unwrap_or(0) % 46))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_breaker_opens_probes_and_closes() {
        let breaker = Breaker::new(3, Duration::from_secs(5));
        for _ in 0..2 {
            assert!(!breaker.admit().unwrap().done(false));
        }
        // A success resets the count.
        breaker.admit().unwrap().done(true);
        for _ in 0..2 {
            breaker.admit().unwrap().done(false);
        }
        assert!(breaker.admit().unwrap().done(false), "third failure opens");
        assert_eq!(breaker.state(), CircuitState::Open);
        assert!(breaker.admit().is_none());
        tokio::time::advance(Duration::from_secs(5)).await;
        assert_eq!(breaker.state(), CircuitState::HalfOpen);
        let probe = breaker.admit().unwrap();
        assert!(breaker.admit().is_none(), "one probe at a time");
        assert!(probe.done(false), "a failed probe opens again");
        assert!(breaker.admit().is_none());
        tokio::time::advance(Duration::from_secs(5)).await;
        // A probe abandoned half-way lets the next call probe.
        drop(breaker.admit().unwrap());
        breaker.admit().unwrap().done(true);
        assert_eq!(breaker.state(), CircuitState::Closed);
    }

    #[test]
    fn a_zero_threshold_never_opens() {
        let breaker = Breaker::new(0, Duration::from_secs(5));
        for _ in 0..100 {
            breaker.admit().unwrap().done(false);
        }
        assert_eq!(breaker.state(), CircuitState::Closed);
    }

    #[test]
    fn retries_are_a_fifth_of_calls_past_the_reserve() {
        let budget = RetryBudget::new();
        assert_eq!((0..20).filter(|_| budget.withdraw()).count(), 10);
        for _ in 0..50 {
            budget.deposit();
        }
        assert_eq!((0..20).filter(|_| budget.withdraw()).count(), 10);
        for _ in 0..5 {
            budget.deposit();
        }
        assert!(budget.withdraw());
        assert!(!budget.withdraw());
    }
}
