//! What a signed call needs from the OAuth store, kept in the process: consumers and access
//! tokens already read, so the signed-call path does not ask the database every time, and
//! keeps working on what it knows while the database fails.
//!
//! Freshness: an entry is used without asking the store for [`SHARED_FRESH`] when a
//! revocation anywhere in the fleet reaches this instance at once (Redis is configured and
//! up: every instance publishes "forget" on the channel when it revokes or replaces a
//! token, and a subscriber that missed messages forgets everything when it resubscribes),
//! and for only [`LOCAL_FRESH`] otherwise: without Redis, another instance's (or the CLI's)
//! revocation is seen within that second, the promise a fleet without Redis gets. A
//! revocation through this instance forgets at once in either case.
//!
//! Failure: past its freshness an entry is read again; if the store fails then, the entry
//! still serves for up to [`STALE_MAX`] (signed calls of tokens already verified keep
//! working through a database outage), counted in `storegate_oauth_store_fallbacks_total`.
//! What was never read (a new consumer, a new sign-in) cannot be vouched for: those calls
//! get the store's 503. A forgotten entry is gone, never a fallback, so a revoked token
//! cannot come back from here.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::store::{Consumer, StoreError, Token, TokenStore};

/// How revocations travel between instances (the shared state implements it over Redis;
/// authentication knows nothing of Redis).
pub trait RevocationChannel: Send + Sync + std::fmt::Debug {
    /// Whether the other instances' revocations reach this one at once right now.
    fn live(&self) -> bool;
    /// Tells the other instances to drop what they verified.
    fn announce(&self);
}

/// Fresh for this long while revocations arrive by Redis.
pub const SHARED_FRESH: Duration = Duration::from_secs(30);
/// Fresh for this long otherwise (no Redis, or Redis down).
pub const LOCAL_FRESH: Duration = Duration::from_secs(1);
/// Served for this long past freshness while the store fails.
pub const STALE_MAX: Duration = Duration::from_secs(15 * 60);
/// Entries kept at most (each a few hundred bytes); past it the map starts over.
const MAX_ENTRIES: usize = 100_000;

#[derive(Debug, Default)]
struct Entries {
    consumers: HashMap<String, (Consumer, Instant)>,
    tokens: HashMap<String, (Token, Instant)>,
}

/// The in-process cache of verified OAuth credentials, and the store's health as the
/// signed calls see it.
#[derive(Debug)]
pub struct VerifiedCache {
    entries: Mutex<Entries>,
    /// Bumped by every forget: a read that began before it must not put back what it read.
    generation: AtomicU64,
    shared: Option<Arc<dyn RevocationChannel>>,
    /// Overrides both freshness periods (`Config::oauth_cache_fresh`).
    fresh: Option<Duration>,
    /// The last store call's outcome (`storegate_oauth_store_up`, `/readyz`).
    store_up: AtomicBool,
    pub fallbacks: AtomicU64,
}

impl VerifiedCache {
    pub fn new(
        shared: Option<Arc<dyn RevocationChannel>>,
        fresh: Option<Duration>,
    ) -> VerifiedCache {
        VerifiedCache {
            entries: Mutex::default(),
            generation: AtomicU64::new(0),
            shared,
            fresh,
            store_up: AtomicBool::new(true),
            fallbacks: AtomicU64::new(0),
        }
    }

    fn fresh_for(&self) -> Duration {
        if let Some(fresh) = self.fresh {
            return fresh;
        }
        match &self.shared {
            Some(channel) if channel.live() => SHARED_FRESH,
            _ => LOCAL_FRESH,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn store_up(&self) -> bool {
        self.store_up.load(Ordering::Relaxed)
    }

    /// Records a store call's outcome; a change is logged once.
    pub fn observe<T>(&self, result: &Result<T, StoreError>) {
        let up = result.is_ok();
        if self.store_up.swap(up, Ordering::Relaxed) != up {
            match result {
                Ok(_) => tracing::info!("OAuth store reachable again"),
                Err(error) => tracing::error!(%error, "OAuth store failing"),
            }
        }
    }

    /// Drops everything, here only (a revocation arrived, or messages may have been missed).
    pub fn forget_here(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        let mut entries = self.lock();
        entries.consumers.clear();
        entries.tokens.clear();
    }

    /// Drops everything here and tells every other instance to (a revocation, a token
    /// replaced, a consumer changed through this one).
    pub fn forget_everywhere(&self) {
        self.forget_here();
        if let Some(channel) = &self.shared {
            channel.announce();
        }
    }

    /// The consumer with `key`: from here while fresh, else from the store.
    pub async fn consumer(
        &self,
        store: &dyn TokenStore,
        key: &str,
    ) -> Result<Option<Consumer>, StoreError> {
        let known = self.lock().consumers.get(key).cloned();
        if let Some((consumer, at)) = &known
            && at.elapsed() < self.fresh_for()
        {
            return Ok(Some(consumer.clone()));
        }
        let generation = self.generation.load(Ordering::SeqCst);
        let read = store.consumer_by_key(key).await;
        self.observe(&read);
        match read {
            Ok(found) => {
                let mut entries = self.lock();
                match &found {
                    Some(consumer) if self.generation.load(Ordering::SeqCst) == generation => {
                        if entries.consumers.len() >= MAX_ENTRIES {
                            entries.consumers.clear();
                        }
                        entries
                            .consumers
                            .insert(key.to_owned(), (consumer.clone(), Instant::now()));
                    }
                    _ => {
                        entries.consumers.remove(key);
                    }
                }
                Ok(found)
            }
            Err(error) => self.fallback(known, error),
        }
    }

    /// The access token `value` (any state: the caller checks it), from here while fresh,
    /// else from the store. Only live access tokens are kept.
    pub async fn access_token(
        &self,
        store: &dyn TokenStore,
        value: &str,
    ) -> Result<Option<Token>, StoreError> {
        let known = self.lock().tokens.get(value).cloned();
        if let Some((token, at)) = &known
            && at.elapsed() < self.fresh_for()
        {
            return Ok(Some(token.clone()));
        }
        let generation = self.generation.load(Ordering::SeqCst);
        let read = store.token(value).await;
        self.observe(&read);
        match read {
            Ok(found) => {
                let mut entries = self.lock();
                match &found {
                    Some(token)
                        if token.kind == super::store::Kind::Access
                            && !token.revoked
                            && self.generation.load(Ordering::SeqCst) == generation =>
                    {
                        if entries.tokens.len() >= MAX_ENTRIES {
                            entries.tokens.clear();
                        }
                        entries
                            .tokens
                            .insert(value.to_owned(), (token.clone(), Instant::now()));
                    }
                    _ => {
                        entries.tokens.remove(value);
                    }
                }
                Ok(found)
            }
            Err(error) => self.fallback(known, error),
        }
    }

    fn fallback<T>(
        &self,
        known: Option<(T, Instant)>,
        error: StoreError,
    ) -> Result<Option<T>, StoreError> {
        match known {
            Some((value, at)) if at.elapsed() < STALE_MAX => {
                self.fallbacks.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(%error, "OAuth store failing: a credential verified before serves");
                Ok(Some(value))
            }
            _ => Err(error),
        }
    }
}
