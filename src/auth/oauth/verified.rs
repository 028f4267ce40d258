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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::oauth::store::{
        AccessTokenInfo, Export, ImportedToken, Kind, NewConsumer, Owner, StoreFuture,
    };
    use std::sync::atomic::AtomicBool;

    /// A store whose access token and health the test sets.
    #[derive(Debug, Default)]
    struct Fake {
        down: AtomicBool,
        revoked: AtomicBool,
        reads: AtomicU64,
    }

    fn unused<T: Send + 'static>() -> StoreFuture<'static, T> {
        Box::pin(async { Err(StoreError("not used by these tests".into())) })
    }

    impl TokenStore for Fake {
        fn describe(&self) -> String {
            "fake".into()
        }
        fn ping(&self) -> StoreFuture<'_, ()> {
            unused()
        }
        fn consumer_by_key<'a>(&'a self, _: &'a str) -> StoreFuture<'a, Option<Consumer>> {
            unused()
        }
        fn consumer_by_id(&self, _: i64) -> StoreFuture<'_, Option<Consumer>> {
            unused()
        }
        fn consumers(&self) -> StoreFuture<'_, Vec<Consumer>> {
            unused()
        }
        fn upsert_consumer<'a>(&'a self, _: &'a NewConsumer) -> StoreFuture<'a, Consumer> {
            unused()
        }
        fn token<'a>(&'a self, value: &'a str) -> StoreFuture<'a, Option<Token>> {
            self.reads.fetch_add(1, Ordering::SeqCst);
            let down = self.down.load(Ordering::SeqCst);
            let revoked = self.revoked.load(Ordering::SeqCst);
            let token = Token {
                id: 1,
                consumer_id: 1,
                kind: Kind::Access,
                token: value.to_owned(),
                secret: "s".into(),
                verifier: None,
                callback_url: None,
                owner: Some(Owner::Customer(7)),
                authorized: true,
                revoked,
                created_at: 0,
            };
            Box::pin(async move {
                if down {
                    Err(StoreError("down".into()))
                } else {
                    Ok(Some(token))
                }
            })
        }
        fn create_request_token<'a>(&'a self, _: i64, _: &'a str) -> StoreFuture<'a, Token> {
            unused()
        }
        fn authorize_request_token<'a>(
            &'a self,
            _: &'a str,
            _: Owner,
        ) -> StoreFuture<'a, Option<String>> {
            unused()
        }
        fn delete_request_token<'a>(&'a self, _: &'a str) -> StoreFuture<'a, ()> {
            unused()
        }
        fn exchange<'a>(&'a self, _: &'a Token) -> StoreFuture<'a, Token> {
            unused()
        }
        fn import_access_token<'a>(&'a self, _: &'a ImportedToken) -> StoreFuture<'a, bool> {
            unused()
        }
        fn list_access_tokens(
            &self,
            _: Option<u64>,
            _: u32,
            _: u64,
        ) -> StoreFuture<'_, Vec<AccessTokenInfo>> {
            unused()
        }
        fn revoke_token(&self, _: i64) -> StoreFuture<'_, bool> {
            unused()
        }
        fn revoke_customer(&self, _: u64) -> StoreFuture<'_, usize> {
            unused()
        }
        fn claim_nonce<'a>(&'a self, _: &'a str, _: Duration) -> StoreFuture<'a, bool> {
            unused()
        }
        fn export(&self) -> StoreFuture<'_, Export> {
            unused()
        }
        fn put_store_session<'a>(&'a self, _: u64, _: &'a str) -> StoreFuture<'a, ()> {
            unused()
        }
        fn store_session(&self, _: u64) -> StoreFuture<'_, Option<String>> {
            unused()
        }
    }

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
        assert!(!cache.store_up());
        // Never verified: the store's error.
        assert!(cache.access_token(&store, "other").await.is_err());
    }

    #[tokio::test]
    async fn a_forgotten_or_revoked_token_never_comes_back_from_the_cache() {
        let store = Fake::default();
        let cache = VerifiedCache::new(None, Some(Duration::from_secs(60)));
        assert!(cache.access_token(&store, "t").await.unwrap().is_some());
        cache.forget_here();
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
}
