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
//! What is forgotten is what changed ([`Forget`]): the tokens a sign-in replaced, one
//! revoked token, a deleted customer's tokens. A sign-in used to empty the cache on every
//! instance, and with the database down then, every token not used since got a 503: the
//! tokens a sign-in does not touch stay verified.
//!
//! Failure: past its freshness an entry is read again; if the store fails then, the entry
//! still serves for up to [`STALE_MAX`] (signed calls of tokens already verified keep
//! working through a database outage), counted in `storegate_oauth_store_fallbacks_total`.
//! What was never read (a new consumer, a new sign-in) cannot be vouched for: those calls
//! get the store's 503. A forgotten entry is gone, never a fallback, so a revoked token
//! cannot come back from here.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::store::{Consumer, Owner, StoreError, Token, TokenStore};

/// How revocations travel between instances (the shared state implements it over Redis;
/// authentication knows nothing of Redis).
pub trait RevocationChannel: Send + Sync + std::fmt::Debug {
    /// Whether the other instances' revocations reach this one at once right now.
    fn live(&self) -> bool;
    /// Tells the other instances to drop what `forget` names.
    fn announce(&self, forget: &Forget);
}

/// What an instance drops of what it verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Forget {
    /// These access tokens, by id: replaced by a sign-in, or revoked one by one.
    Tokens(Vec<i64>),
    /// Every access token of this customer (a deleted customer).
    Customer(u64),
    /// Everything: a consumer changed, or revocations may have been missed.
    All,
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

/// The in-process cache of verified OAuth credentials.
#[derive(Debug)]
pub struct VerifiedCache {
    entries: Mutex<Entries>,
    /// Bumped by every forget: a read that began before it must not put back what it read.
    generation: AtomicU64,
    shared: Option<Arc<dyn RevocationChannel>>,
    /// Overrides both freshness periods (`Config::oauth_cache_fresh`).
    fresh: Option<Duration>,
    /// Signed calls served from an entry past its freshness while the store failed.
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

    /// Drops what `forget` names, here only (another instance's revocation arrived, or
    /// messages may have been missed).
    pub fn forget_here(&self, forget: &Forget) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        let mut entries = self.lock();
        match forget {
            Forget::All => {
                entries.consumers.clear();
                entries.tokens.clear();
            }
            Forget::Tokens(ids) => entries
                .tokens
                .retain(|_, (token, _)| !ids.contains(&token.id)),
            Forget::Customer(id) => entries
                .tokens
                .retain(|_, (token, _)| token.owner != Some(Owner::Customer(*id))),
        }
    }

    /// Drops what `forget` names here and tells every other instance to (a revocation, a
    /// token replaced, a customer deleted through this one).
    pub fn forget_everywhere(&self, forget: Forget) {
        if matches!(&forget, Forget::Tokens(ids) if ids.is_empty()) {
            return;
        }
        self.forget_here(&forget);
        if let Some(channel) = &self.shared {
            channel.announce(&forget);
        }
    }

    /// How many access tokens are kept (tests, and what an operator may ask).
    pub fn tokens_kept(&self) -> usize {
        self.lock().tokens.len()
    }

    /// The consumer with `key`: from here while fresh, else from the store.
    pub async fn consumer(
        &self,
        store: &dyn TokenStore,
        key: &str,
    ) -> Result<Option<Consumer>, StoreError> {
        let read = || store.consumer_by_key(key);
        self.kept_or_read(|e| &mut e.consumers, key, read, |_| true)
            .await
    }

    /// The access token `value` (any state: the caller checks it), from here while fresh,
    /// else from the store. Only live access tokens are kept.
    pub async fn access_token(
        &self,
        store: &dyn TokenStore,
        value: &str,
    ) -> Result<Option<Token>, StoreError> {
        let live = |token: &Token| token.kind == super::store::Kind::Access && !token.revoked;
        self.kept_or_read(|e| &mut e.tokens, value, || store.token(value), live)
            .await
    }

    /// The entry `key` of the map `entries` picks, from here while fresh, else read from
    /// the store: kept when `keep` takes it and nothing was forgotten meanwhile, dropped
    /// when the store no longer has it (or `keep` refuses it); on the store's outage, what
    /// was kept serves a while ([`VerifiedCache::fallback`]).
    async fn kept_or_read<T, Read>(
        &self,
        entries: fn(&mut Entries) -> &mut HashMap<String, (T, Instant)>,
        key: &str,
        read: impl FnOnce() -> Read,
        keep: impl Fn(&T) -> bool,
    ) -> Result<Option<T>, StoreError>
    where
        T: Clone,
        Read: std::future::Future<Output = Result<Option<T>, StoreError>>,
    {
        let known = entries(&mut self.lock()).get(key).cloned();
        if let Some((value, at)) = &known
            && at.elapsed() < self.fresh_for()
        {
            return Ok(Some(value.clone()));
        }
        let generation = self.generation.load(Ordering::SeqCst);
        match read().await {
            Ok(found) => {
                let mut all = self.lock();
                let map = entries(&mut all);
                match &found {
                    Some(value)
                        if keep(value) && self.generation.load(Ordering::SeqCst) == generation =>
                    {
                        if map.len() >= MAX_ENTRIES {
                            map.clear();
                        }
                        map.insert(key.to_owned(), (value.clone(), Instant::now()));
                    }
                    _ => {
                        map.remove(key);
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
            // Only an outage: a store that answered is believed.
            Some((value, at)) if error.is_outage() && at.elapsed() < STALE_MAX => {
                self.fallbacks.fetch_add(1, Ordering::Relaxed);
                // One line per interval, not one per signed call, while the store fails.
                crate::observe::log_limit::warn(
                    "oauth_store_verified_fallback",
                    format_args!(
                        "the OAuth store is failing ({error}): credentials verified before serve"
                    ),
                );
                Ok(Some(value))
            }
            _ => Err(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::oauth::fake_store::Fake;

    #[tokio::test]
    async fn fresh_entries_spare_the_store_and_stale_ones_serve_while_it_fails() {
        let store = Fake::default();
        let cache = VerifiedCache::new(None, Some(Duration::from_millis(50)));
        assert!(cache.access_token(&store, "t").await.unwrap().is_some());
        assert!(cache.access_token(&store, "t").await.unwrap().is_some());
        assert_eq!(
            store.reads.load(Ordering::SeqCst),
            1,
            "the second was fresh"
        );

        tokio::time::sleep(Duration::from_millis(60)).await;
        store.down.store(true, Ordering::SeqCst);
        let served = cache.access_token(&store, "t").await.unwrap();
        assert!(
            served.is_some(),
            "verified before: served while the store fails"
        );
        assert_eq!(cache.fallbacks.load(Ordering::SeqCst), 1);
        // Never verified: the store's error.
        assert!(cache.access_token(&store, "other").await.is_err());
    }

    #[tokio::test]
    async fn a_forgotten_or_revoked_token_never_comes_back_from_the_cache() {
        let store = Fake::default();
        let cache = VerifiedCache::new(None, Some(Duration::from_secs(60)));
        assert!(cache.access_token(&store, "t").await.unwrap().is_some());
        cache.forget_here(&Forget::All);
        store.down.store(true, Ordering::SeqCst);
        assert!(
            cache.access_token(&store, "t").await.is_err(),
            "forgotten: no stale fallback"
        );
        // A revoked token read from the store is not kept either.
        store.down.store(false, Ordering::SeqCst);
        store.revoked.store(true, Ordering::SeqCst);
        let read = cache.access_token(&store, "t").await.unwrap().unwrap();
        assert!(read.revoked);
        store.down.store(true, Ordering::SeqCst);
        assert!(cache.access_token(&store, "t").await.is_err());
    }

    #[tokio::test]
    async fn a_forget_drops_only_what_it_names() {
        let store = Fake::default();
        let cache = VerifiedCache::new(None, Some(Duration::from_millis(1)));
        // Ids are the values' lengths: "a" is 1, "bb" is 2; both are customer 7's.
        for value in ["a", "bb"] {
            assert!(cache.access_token(&store, value).await.unwrap().is_some());
        }
        cache.forget_here(&Forget::Tokens(vec![1]));
        assert_eq!(cache.tokens_kept(), 1);
        tokio::time::sleep(Duration::from_millis(5)).await;
        store.down.store(true, Ordering::SeqCst);
        assert!(
            cache.access_token(&store, "a").await.is_err(),
            "the replaced one"
        );
        assert!(
            cache.access_token(&store, "bb").await.unwrap().is_some(),
            "the other one still serves while the store is down"
        );
        cache.forget_here(&Forget::Customer(8));
        assert_eq!(cache.tokens_kept(), 1, "another customer's");
        cache.forget_here(&Forget::Customer(7));
        assert_eq!(cache.tokens_kept(), 0);
    }
}
