//! The OAuth store behind a deadline and a breaker, so that a database that is down, hung
//! or locked costs a request a bounded wait once, and then nothing.
//!
//! Why: every signed call, sign-in and token list reaches the store. Without a deadline a
//! MariaDB call waited for a connection for the pool's 3 s and a locked table for as long as
//! the lock (7 s, 20 s), and without memory of the outage every call paid that again. Now:
//!
//! - **A deadline on every call**: `STOREGATE_DATABASE_TIMEOUT_MS` (well under the API's own
//!   deadline), after which the call is a [`Failure::Slow`] error.
//! - **A breaker**: the first call failing with an outage ([`StoreError::is_outage`]: down,
//!   or slow) opens it; while open every call fails at once with the remembered error, and
//!   one probe at a time ([`TokenStore::probe`], which reads the tables a signed call needs)
//!   runs in the background, every [`PROBE_EVERY`], until one succeeds and closes it. A probe
//!   is not cut at the deadline (only at [`PROBE_BOUND`]): when a hung server resumes, the
//!   probe waiting on it returns at once and the store is back within moments.
//! - **Health**: [`StoreHealth`] says up, degraded (slow: a lock, a hang) or down (refused),
//!   for `/readyz` and `/metrics`, with the last error and counters.
//!
//! A refusal the store answered ([`Failure::Answered`]: a request token used already) is
//! passed on and changes nothing here. Callers above (`verified`) serve what they verified
//! before when a call fails, so signed calls of known tokens never wait on the breaker.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::store::{
    AccessTokenInfo, Consumer, Exchanged, Export, Failure, ImportedToken, NewConsumer, Owner,
    StoreError, StoreFuture, Token, TokenStore,
};

/// How often the breaker's probe runs while the store fails.
pub const PROBE_EVERY: Duration = Duration::from_millis(200);
/// The longest a probe may wait for an answer before another is tried.
pub const PROBE_BOUND: Duration = Duration::from_secs(10);

/// The store as the signed calls see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreState {
    Up,
    /// Reachable but not answering in time (a locked table, a hung server).
    Degraded,
    /// Not reachable.
    Down,
}

impl StoreState {
    pub fn as_str(self) -> &'static str {
        match self {
            StoreState::Up => "up",
            StoreState::Degraded => "degraded",
            StoreState::Down => "down",
        }
    }

    fn of(failure: Failure) -> StoreState {
        match failure {
            Failure::Slow => StoreState::Degraded,
            Failure::Down | Failure::Answered => StoreState::Down,
        }
    }
}

const UP: u8 = 0;
const DEGRADED: u8 = 1;
const DOWN: u8 = 2;

/// The breaker and the store's health, shared with `/readyz` and `/metrics`.
#[derive(Debug, Default)]
pub struct StoreHealth {
    /// [`UP`], [`DEGRADED`] or [`DOWN`]; the breaker is open while it is not [`UP`].
    state: AtomicU8,
    last_error: Mutex<Option<StoreError>>,
    probing: AtomicBool,
    /// Calls that passed the deadline.
    pub timeouts: AtomicU64,
    /// Calls answered at once by the open breaker.
    pub short_circuited: AtomicU64,
    /// Times the breaker opened.
    pub opened: AtomicU64,
}

impl StoreHealth {
    pub fn state(&self) -> StoreState {
        match self.state.load(Ordering::Acquire) {
            UP => StoreState::Up,
            DEGRADED => StoreState::Degraded,
            _ => StoreState::Down,
        }
    }

    pub fn is_open(&self) -> bool {
        self.state() != StoreState::Up
    }

    /// The error that opened the breaker (or the last probe's), while it is open.
    pub fn last_error(&self) -> Option<StoreError> {
        if !self.is_open() {
            return None;
        }
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<StoreError>> {
        self.last_error
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// An outage: the breaker opens (or stays open, with this error).
    fn failed(&self, error: &StoreError) {
        let state = match StoreState::of(error.failure) {
            StoreState::Degraded => DEGRADED,
            _ => DOWN,
        };
        *self.lock() = Some(error.clone());
        let before = self.state.swap(state, Ordering::AcqRel);
        if before == UP {
            self.opened.fetch_add(1, Ordering::Relaxed);
            tracing::error!(%error, "OAuth store failing: its calls are refused at once until a probe succeeds");
        }
    }

    /// A success: the breaker closes.
    fn succeeded(&self) {
        if self.state.swap(UP, Ordering::AcqRel) != UP {
            tracing::info!("OAuth store reachable again");
        }
    }
}

/// A [`TokenStore`] with a deadline on every call and a breaker in front ([module docs](self)).
#[derive(Debug)]
pub struct GuardedStore {
    inner: Arc<dyn TokenStore>,
    deadline: Duration,
    health: Arc<StoreHealth>,
}

impl GuardedStore {
    pub fn new(inner: Arc<dyn TokenStore>, deadline: Duration) -> Arc<GuardedStore> {
        Arc::new(GuardedStore {
            inner,
            deadline,
            health: Arc::new(StoreHealth::default()),
        })
    }

    pub fn health(&self) -> &Arc<StoreHealth> {
        &self.health
    }

    /// The store without the guard: for the start's schema migration, which may wait for
    /// another instance's and must not be cut at a request's deadline.
    pub fn unguarded(&self) -> &Arc<dyn TokenStore> {
        &self.inner
    }

    /// A failure seen outside the guard (the start's unguarded call): an outage opens the
    /// breaker as a guarded call's would.
    pub fn record_outage(self: &Arc<Self>, error: &StoreError) {
        if error.is_outage() {
            self.health.failed(error);
            self.start_probing();
        }
    }

    /// A probe now, under the deadline, unless the breaker is open (then its state at once):
    /// what `/readyz` reports.
    pub async fn check(self: &Arc<Self>) -> Result<(), StoreError> {
        match self.health.last_error() {
            Some(error) => {
                self.start_probing();
                Err(error)
            }
            None => self.call(|store| store.probe()).await,
        }
    }

    /// `work` on the store, unless the breaker is open (then not even begun), under the
    /// deadline.
    fn call<'a, T: Send + 'a>(
        self: &'a Arc<Self>,
        work: impl FnOnce(&'a dyn TokenStore) -> StoreFuture<'a, T> + Send + 'a,
    ) -> StoreFuture<'a, T> {
        Box::pin(async move {
            if let Some(error) = self.health.last_error() {
                self.health.short_circuited.fetch_add(1, Ordering::Relaxed);
                self.start_probing();
                return Err(error);
            }
            let result = match tokio::time::timeout(self.deadline, work(&*self.inner)).await {
                Ok(result) => result,
                Err(_) => {
                    self.health.timeouts.fetch_add(1, Ordering::Relaxed);
                    // A server that refuses connections is down, not slow.
                    match self.inner.reach().await {
                        Err(refused) => Err(refused),
                        Ok(()) => Err(StoreError::slow(format!(
                            "{}: no answer within {} ms (STOREGATE_DATABASE_TIMEOUT_MS)",
                            self.inner.describe(),
                            self.deadline.as_millis()
                        ))),
                    }
                }
            };
            match &result {
                Err(error) if error.is_outage() => {
                    self.health.failed(error);
                    self.start_probing();
                }
                _ => {}
            }
            result
        })
    }

    /// One prober at a time while the breaker is open.
    fn start_probing(self: &Arc<Self>) {
        if self.health.probing.swap(true, Ordering::AcqRel) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            self.health.probing.store(false, Ordering::Release);
            return;
        };
        let guard = Arc::downgrade(self);
        runtime.spawn(async move {
            loop {
                tokio::time::sleep(PROBE_EVERY).await;
                let Some(guard) = guard.upgrade() else { return };
                let probe = tokio::time::timeout(PROBE_BOUND, guard.inner.probe()).await;
                match probe {
                    Ok(Err(error)) if error.is_outage() => guard.health.failed(&error),
                    // Reachable and answering (an answer that refused something is no
                    // outage either): closed.
                    Ok(_) => {
                        guard.health.succeeded();
                        guard.health.probing.store(false, Ordering::Release);
                        // A call that failed meanwhile opened it again while this prober
                        // still ran, so it started none: go on probing.
                        if !guard.health.is_open()
                            || guard.health.probing.swap(true, Ordering::AcqRel)
                        {
                            return;
                        }
                    }
                    Err(_) => guard.health.failed(&StoreError::slow(format!(
                        "{}: the probe had no answer within {} s",
                        guard.inner.describe(),
                        PROBE_BOUND.as_secs()
                    ))),
                }
            }
        });
    }
}

/// Every call of the store, through [`GuardedStore::call`]. `Arc<Self>` methods cannot
/// implement the trait directly, so the trait is implemented for a handle holding the Arc.
#[derive(Debug, Clone)]
pub struct Guarded(pub Arc<GuardedStore>);

impl TokenStore for Guarded {
    fn describe(&self) -> String {
        self.0.inner.describe()
    }
    fn ping(&self) -> StoreFuture<'_, ()> {
        self.0.call(move |s| s.ping())
    }
    fn reach(&self) -> StoreFuture<'_, ()> {
        self.0.inner.reach()
    }
    fn probe(&self) -> StoreFuture<'_, ()> {
        self.0.call(move |s| s.probe())
    }
    fn consumer_by_key<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<Consumer>> {
        self.0.call(move |s| s.consumer_by_key(key))
    }
    fn consumer_by_id(&self, id: i64) -> StoreFuture<'_, Option<Consumer>> {
        self.0.call(move |s| s.consumer_by_id(id))
    }
    fn consumers(&self) -> StoreFuture<'_, Vec<Consumer>> {
        self.0.call(move |s| s.consumers())
    }
    fn upsert_consumer<'a>(&'a self, consumer: &'a NewConsumer) -> StoreFuture<'a, Consumer> {
        self.0.call(move |s| s.upsert_consumer(consumer))
    }
    fn token<'a>(&'a self, token: &'a str) -> StoreFuture<'a, Option<Token>> {
        self.0.call(move |s| s.token(token))
    }
    fn create_request_token<'a>(
        &'a self,
        consumer_id: i64,
        callback: &'a str,
    ) -> StoreFuture<'a, Token> {
        self.0
            .call(move |s| s.create_request_token(consumer_id, callback))
    }
    fn authorize_request_token<'a>(
        &'a self,
        token: &'a str,
        owner: Owner,
    ) -> StoreFuture<'a, Option<String>> {
        self.0
            .call(move |s| s.authorize_request_token(token, owner))
    }
    fn delete_request_token<'a>(&'a self, token: &'a str) -> StoreFuture<'a, ()> {
        self.0.call(move |s| s.delete_request_token(token))
    }
    fn exchange<'a>(&'a self, request: &'a Token) -> StoreFuture<'a, Exchanged> {
        self.0.call(move |s| s.exchange(request))
    }
    fn import_access_token<'a>(&'a self, token: &'a ImportedToken) -> StoreFuture<'a, bool> {
        self.0.call(move |s| s.import_access_token(token))
    }
    fn list_access_tokens(
        &self,
        customer_id: Option<u64>,
        limit: u32,
        offset: u64,
    ) -> StoreFuture<'_, Vec<AccessTokenInfo>> {
        self.0
            .call(move |s| s.list_access_tokens(customer_id, limit, offset))
    }
    fn revoke_token(&self, id: i64) -> StoreFuture<'_, bool> {
        self.0.call(move |s| s.revoke_token(id))
    }
    fn revoke_customer(&self, customer_id: u64, at_ms: u64) -> StoreFuture<'_, usize> {
        self.0.call(move |s| s.revoke_customer(customer_id, at_ms))
    }
    fn customer_revocations(&self, since_ms: u64) -> StoreFuture<'_, Vec<(u64, u64)>> {
        self.0.call(move |s| s.customer_revocations(since_ms))
    }
    fn prune_revocations(&self, before_ms: u64) -> StoreFuture<'_, u64> {
        self.0.call(move |s| s.prune_revocations(before_ms))
    }
    fn claim_nonce<'a>(&'a self, key: &'a str, ttl: Duration) -> StoreFuture<'a, bool> {
        self.0.call(move |s| s.claim_nonce(key, ttl))
    }
    fn export(&self) -> StoreFuture<'_, Export> {
        self.0.call(move |s| s.export())
    }
    fn put_store_session<'a>(&'a self, customer_id: u64, session: &'a str) -> StoreFuture<'a, ()> {
        self.0
            .call(move |s| s.put_store_session(customer_id, session))
    }
    fn store_session(&self, customer_id: u64) -> StoreFuture<'_, Option<String>> {
        self.0.call(move |s| s.store_session(customer_id))
    }
    fn set_consumer_rate_limit<'a>(
        &'a self,
        key: &'a str,
        rate: Option<crate::config::Rate>,
    ) -> StoreFuture<'a, bool> {
        self.0.call(move |s| s.set_consumer_rate_limit(key, rate))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::oauth::fake_store::Fake;
    use std::time::Instant;

    fn guarded(fake: &Arc<Fake>) -> (Arc<GuardedStore>, Guarded) {
        let store: Arc<dyn TokenStore> = fake.clone();
        let guard = GuardedStore::new(store, Duration::from_millis(100));
        (guard.clone(), Guarded(guard))
    }

    #[tokio::test]
    async fn a_hung_store_costs_one_deadline_then_nothing_until_a_probe_finds_it_back() {
        let fake = Arc::new(Fake::default());
        let (guard, store) = guarded(&fake);
        assert!(store.token("t").await.is_ok());
        assert_eq!(guard.health().state(), StoreState::Up);

        fake.hung.store(true, Ordering::SeqCst);
        let began = Instant::now();
        let error = store.token("t").await.unwrap_err();
        assert_eq!(error.failure, Failure::Slow, "{error}");
        assert!(began.elapsed() < Duration::from_millis(500));
        assert_eq!(guard.health().state(), StoreState::Degraded);
        // Open: refused at once, without asking the store.
        let reads = fake.reads.load(Ordering::SeqCst);
        let began = Instant::now();
        for _ in 0..10 {
            assert!(store.token("t").await.is_err());
        }
        assert!(began.elapsed() < Duration::from_millis(50));
        assert_eq!(fake.reads.load(Ordering::SeqCst), reads, "not asked");
        assert_eq!(guard.health().short_circuited.load(Ordering::SeqCst), 10);
        assert_eq!(guard.check().await.unwrap_err().failure, Failure::Slow);

        // Resumed: the probe closes the breaker within moments.
        fake.hung.store(false, Ordering::SeqCst);
        let began = Instant::now();
        while guard.health().is_open() {
            assert!(began.elapsed() < Duration::from_secs(2), "never closed");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(store.token("t").await.is_ok());
        assert_eq!(guard.health().opened.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_refused_connection_is_down_and_an_answer_changes_nothing() {
        let fake = Arc::new(Fake::default());
        let (guard, store) = guarded(&fake);
        // A refusal the store answered (the fake's unused calls) is no outage.
        assert!(store.consumers().await.is_err());
        assert_eq!(guard.health().state(), StoreState::Up);

        fake.down.store(true, Ordering::SeqCst);
        assert_eq!(store.token("t").await.unwrap_err().failure, Failure::Down);
        assert_eq!(guard.health().state(), StoreState::Down);
        assert!(
            guard
                .health()
                .last_error()
                .unwrap()
                .to_string()
                .contains("fake")
        );
        fake.down.store(false, Ordering::SeqCst);
        let began = Instant::now();
        while guard.health().is_open() {
            assert!(began.elapsed() < Duration::from_secs(2), "never closed");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(guard.check().await.is_ok());
    }
}
