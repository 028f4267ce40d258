//! The read cache in front of product and image reads.
//!
//! One weight-bounded moka cache holds everything the catalog path reuses: id-to-SKU pairs,
//! raw upstream records, and rendered response bodies (keyed by path, list parameters, user
//! type and format, so a hit does no mapping and no serialisation). One budget
//! (`STOREGATE_CACHE_MAX_BYTES`) bounds it all, weighed by real byte sizes.
//!
//! **Coalescing.** Misses go through moka's per-key compute, which runs callers for one key
//! one after the other: the first fetches, the rest find its fresh entry. N concurrent cold
//! reads make one upstream call.
//!
//! **Invalidation by tags.** Every entry carries the tags of what it shows (`p:<product
//! id>`, `s:<sku>`, `pl` for product lists, ...). Tags hash into a fixed table of slots, each
//! holding the sequence number of the last invalidation that touched it. An entry remembers
//! the sequence number read just *before* its fetch began; it is valid while none of its
//! slots has moved past that. Invalidating is O(tags), checking is O(entry tags), nothing is
//! scanned, and a fetch that raced a write can never be taken for fresh: its number is older
//! than the write's invalidation. Two tags sharing a slot only cost an extra miss.
//!
//! **Staleness.** Past its TTL, a still-valid entry may be served for
//! `STOREGATE_STALE_IF_ERROR_SECS` more: at once while one background refresh runs
//! (stale-while-revalidate), or when the refresh fails (stale-if-error). Invalidated
//! entries are never served: they are known to be wrong.

use std::future::Future;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::HeaderValue;
use moka::ops::compute::{CompResult, Op};
use sha2::{Digest, Sha256};
use tokio::time::Instant;

/// Number of invalidation slots (a power of two). 64 Ki slots are 512 KiB.
const SLOTS: usize = 1 << 16;
/// What an entry costs besides its payload: key, bookkeeping, moka's own node.
const ENTRY_OVERHEAD: u32 = 256;

/// A rendered response body, ready to send.
#[derive(Debug, Clone)]
pub struct Body {
    pub bytes: Bytes,
    pub etag: HeaderValue,
    pub content_type: &'static str,
}

impl Body {
    pub fn new(bytes: Bytes, content_type: &'static str) -> Body {
        let digest = Sha256::digest(&bytes);
        let mut tag = String::with_capacity(34);
        tag.push('"');
        for byte in &digest[..16] {
            tag.push_str(&format!("{byte:02x}"));
        }
        tag.push('"');
        Body {
            bytes,
            // Hex digits and quotes are always a valid header value.
            etag: HeaderValue::from_str(&tag).expect("hex is a valid header value"),
            content_type,
        }
    }
}

/// What the cache holds.
#[derive(Debug, Clone)]
pub enum Value {
    /// A raw upstream answer.
    Bytes(Bytes),
    /// A short text such as a SKU.
    Text(Arc<str>),
    /// A rendered response.
    Body(Body),
}

impl Value {
    fn weight(&self) -> usize {
        match self {
            Value::Bytes(b) => b.len(),
            Value::Text(t) => t.len(),
            Value::Body(b) => b.bytes.len() + 64,
        }
    }
}

/// What a fetch produced: the value and the tags of what it shows.
#[derive(Debug)]
pub struct Fetched {
    pub value: Value,
    pub tags: Vec<String>,
}

impl Fetched {
    pub fn new(value: Value, tags: Vec<String>) -> Fetched {
        Fetched { value, tags }
    }
}

/// A cached entry.
#[derive(Debug)]
pub struct Entry {
    pub value: Value,
    stored_at: Instant,
    /// Invalidation sequence number read before the fetch began.
    seq: u64,
    slots: Box<[u32]>,
    refreshing: AtomicBool,
}

/// How an answer came out of the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Served from a fresh entry.
    Hit,
    /// Fetched now (possibly by another caller we waited for).
    Fetched,
    /// Past its TTL, served while a background refresh runs.
    StaleWhileRevalidate,
    /// Past its TTL, served because the refresh failed.
    StaleIfError,
}

impl Source {
    pub fn is_stale(self) -> bool {
        matches!(self, Source::StaleWhileRevalidate | Source::StaleIfError)
    }
}

/// Counters for `/metrics`.
#[derive(Debug, Default)]
pub struct Stats {
    pub hits: AtomicU64,
    pub misses: AtomicU64,
    pub coalesced: AtomicU64,
    pub stale_while_revalidate: AtomicU64,
    pub stale_if_error: AtomicU64,
    pub evictions: Arc<AtomicU64>,
    pub invalidations: AtomicU64,
}

/// The tag clock: a global sequence and, per slot, the sequence of its last invalidation.
struct TagClock {
    seq: AtomicU64,
    /// Sequence of the last "purge everything".
    all: AtomicU64,
    slots: Box<[AtomicU64]>,
}

impl TagClock {
    fn new() -> TagClock {
        TagClock {
            seq: AtomicU64::new(0),
            all: AtomicU64::new(0),
            slots: (0..SLOTS).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    fn now(&self) -> u64 {
        self.seq.load(Ordering::SeqCst)
    }

    fn slot(tag: &str) -> u32 {
        // SipHash with fixed keys: stable within a process, which is all we need.
        let mut hasher = std::hash::DefaultHasher::new();
        tag.hash(&mut hasher);
        (hasher.finish() as usize & (SLOTS - 1)) as u32
    }

    fn invalidate(&self, tags: &[String]) {
        let seq = self.seq.fetch_add(1, Ordering::SeqCst) + 1;
        for tag in tags {
            self.slots[Self::slot(tag) as usize].fetch_max(seq, Ordering::SeqCst);
        }
    }

    fn invalidate_all(&self) {
        let seq = self.seq.fetch_add(1, Ordering::SeqCst) + 1;
        self.all.fetch_max(seq, Ordering::SeqCst);
    }

    fn valid(&self, entry: &Entry) -> bool {
        self.all.load(Ordering::SeqCst) <= entry.seq
            && entry
                .slots
                .iter()
                .all(|&slot| self.slots[slot as usize].load(Ordering::SeqCst) <= entry.seq)
    }
}

pub struct Cache {
    store: Option<moka::future::Cache<Arc<str>, Arc<Entry>>>,
    clock: TagClock,
    ttl: Duration,
    stale: Duration,
    stats: Stats,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("enabled", &self.store.is_some())
            .field("ttl", &self.ttl)
            .field("stale", &self.stale)
            .finish()
    }
}

impl Cache {
    /// A zero `ttl` turns caching off: every read goes to the upstream.
    pub fn new(max_bytes: u64, ttl: Duration, stale: Duration) -> Cache {
        let stats = Stats::default();
        let store = (!ttl.is_zero()).then(|| {
            let evictions = stats.evictions.clone();
            moka::future::Cache::builder()
                .max_capacity(max_bytes)
                .weigher(|key: &Arc<str>, entry: &Arc<Entry>| {
                    let weight = key.len() + entry.value.weight() + entry.slots.len() * 4;
                    u32::try_from(weight)
                        .unwrap_or(u32::MAX)
                        .saturating_add(ENTRY_OVERHEAD)
                })
                // moka's own expiry only reclaims memory; freshness is decided here.
                .time_to_live(ttl + stale + Duration::from_secs(1))
                .eviction_listener(move |_key, _value, cause| {
                    if cause.was_evicted() {
                        evictions.fetch_add(1, Ordering::Relaxed);
                    }
                })
                .build()
        });
        Cache {
            store,
            clock: TagClock::new(),
            ttl,
            stale,
            stats,
        }
    }

    pub fn enabled(&self) -> bool {
        self.store.is_some()
    }

    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Weighted size and entry count, for metrics and the memory benchmark.
    pub fn usage(&self) -> (u64, u64) {
        match &self.store {
            Some(store) => (store.weighted_size(), store.entry_count()),
            None => (0, 0),
        }
    }

    /// Seconds an entry stays fresh from now on, for `Cache-Control: max-age`.
    pub fn remaining(&self, entry: &Entry) -> Duration {
        self.ttl.saturating_sub(entry.stored_at.elapsed())
    }

    /// Drops every entry that shows one of these tags.
    pub fn invalidate(&self, tags: &[String]) {
        if tags.is_empty() {
            return;
        }
        self.stats.invalidations.fetch_add(1, Ordering::Relaxed);
        self.clock.invalidate(tags);
    }

    /// Drops everything.
    pub fn invalidate_all(&self) {
        self.stats.invalidations.fetch_add(1, Ordering::Relaxed);
        self.clock.invalidate_all();
    }

    /// A fresh, valid entry, without fetching. The hit path.
    pub async fn fresh(&self, key: &str) -> Option<Arc<Entry>> {
        let store = self.store.as_ref()?;
        let entry = store.get(key).await?;
        (self.clock.valid(&entry) && entry.stored_at.elapsed() < self.ttl).then(|| {
            self.stats.hits.fetch_add(1, Ordering::Relaxed);
            entry
        })
    }

    /// The entry for `key`, fetching it (once, however many callers ask) when it is missing,
    /// invalidated or expired. `fetch` must be `'static` because a stale entry is refreshed
    /// in the background.
    pub async fn get_or_fetch<F, Fut, E>(
        self: &Arc<Self>,
        key: &str,
        fetch: F,
    ) -> Result<(Arc<Entry>, Source), E>
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = Result<Fetched, E>> + Send + 'static,
        E: Send + Sync + 'static,
    {
        let Some(store) = &self.store else {
            // No cache: fetch every time, no coalescing (the benchmark's miss path).
            self.stats.misses.fetch_add(1, Ordering::Relaxed);
            let fetched = fetch().await?;
            let entry = Arc::new(Entry {
                value: fetched.value,
                stored_at: Instant::now(),
                seq: 0,
                slots: Box::new([]),
                refreshing: AtomicBool::new(false),
            });
            return Ok((entry, Source::Fetched));
        };

        let current = store.get(key).await;
        if let Some(entry) = &current
            && self.clock.valid(entry)
        {
            let age = entry.stored_at.elapsed();
            if age < self.ttl {
                self.stats.hits.fetch_add(1, Ordering::Relaxed);
                return Ok((entry.clone(), Source::Hit));
            }
            if age < self.ttl + self.stale {
                // Serve it now and refresh once in the background.
                if !entry.refreshing.swap(true, Ordering::SeqCst) {
                    let cache = self.clone();
                    let key: Arc<str> = key.into();
                    let stale_entry = entry.clone();
                    tokio::spawn(async move {
                        if cache.refresh(key, fetch).await.is_err() {
                            // Let a later caller try again.
                            stale_entry.refreshing.store(false, Ordering::SeqCst);
                        }
                    });
                }
                self.stats
                    .stale_while_revalidate
                    .fetch_add(1, Ordering::Relaxed);
                return Ok((entry.clone(), Source::StaleWhileRevalidate));
            }
        }

        match self.refresh(key.into(), fetch).await {
            Ok(found) => Ok(found),
            Err(error) => {
                // Stale-if-error only ever serves an entry that is still valid.
                if let Some(entry) = current
                    && self.clock.valid(&entry)
                    && entry.stored_at.elapsed() < self.ttl + self.stale
                {
                    self.stats.stale_if_error.fetch_add(1, Ordering::Relaxed);
                    return Ok((entry, Source::StaleIfError));
                }
                Err(error)
            }
        }
    }

    /// Fetches and stores, serialised per key with anyone else doing the same.
    async fn refresh<F, Fut, E>(&self, key: Arc<str>, fetch: F) -> Result<(Arc<Entry>, Source), E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Fetched, E>>,
        E: Send + Sync + 'static,
    {
        let store = self.store.as_ref().expect("refresh runs only with a cache");
        let result = store
            .entry(key)
            .and_try_compute_with(|existing| async move {
                if let Some(existing) = existing {
                    let entry = existing.into_value();
                    if self.clock.valid(&entry) && entry.stored_at.elapsed() < self.ttl {
                        return Ok(Op::Nop);
                    }
                }
                let seq = self.clock.now();
                let fetched = fetch().await?;
                let mut slots: Vec<u32> = fetched.tags.iter().map(|t| TagClock::slot(t)).collect();
                slots.sort_unstable();
                slots.dedup();
                Ok(Op::Put(Arc::new(Entry {
                    value: fetched.value,
                    stored_at: Instant::now(),
                    seq,
                    slots: slots.into_boxed_slice(),
                    refreshing: AtomicBool::new(false),
                })))
            })
            .await?;
        match result {
            CompResult::Inserted(entry) | CompResult::ReplacedWith(entry) => {
                self.stats.misses.fetch_add(1, Ordering::Relaxed);
                Ok((entry.into_value(), Source::Fetched))
            }
            CompResult::Unchanged(entry) => {
                self.stats.coalesced.fetch_add(1, Ordering::Relaxed);
                Ok((entry.into_value(), Source::Fetched))
            }
            CompResult::StillNone(_) | CompResult::Removed(_) => {
                unreachable!("the compute closure only puts or keeps an entry")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn cache(ttl: u64, stale: u64) -> Arc<Cache> {
        Arc::new(Cache::new(
            1 << 20,
            Duration::from_secs(ttl),
            Duration::from_secs(stale),
        ))
    }

    fn text(entry: &Entry) -> &str {
        match &entry.value {
            Value::Text(t) => t,
            _ => panic!("not text"),
        }
    }

    async fn get(
        cache: &Arc<Cache>,
        key: &str,
        calls: &Arc<AtomicUsize>,
        answer: Result<&'static str, ()>,
    ) -> Result<(String, Source), ()> {
        let calls = calls.clone();
        cache
            .get_or_fetch(key, move || async move {
                calls.fetch_add(1, Ordering::SeqCst);
                answer.map(|a| Fetched::new(Value::Text(a.into()), vec!["p:1".into()]))
            })
            .await
            .map(|(e, s)| (text(&e).to_owned(), s))
    }

    #[tokio::test]
    async fn concurrent_misses_make_one_fetch() {
        let cache = cache(60, 0);
        let calls = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..50 {
            let cache = cache.clone();
            let calls = calls.clone();
            tasks.push(tokio::spawn(async move {
                cache
                    .get_or_fetch("k", move || async move {
                        calls.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        Ok::<_, ()>(Fetched::new(Value::Text("v".into()), vec![]))
                    })
                    .await
                    .unwrap()
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn invalidation_by_tag_and_all() {
        let cache = cache(60, 0);
        let calls = Arc::new(AtomicUsize::new(0));
        assert_eq!(
            get(&cache, "k", &calls, Ok("a")).await.unwrap().1,
            Source::Fetched
        );
        assert_eq!(
            get(&cache, "k", &calls, Ok("b")).await.unwrap(),
            ("a".into(), Source::Hit)
        );
        cache.invalidate(&["p:2".into()]);
        assert_eq!(get(&cache, "k", &calls, Ok("b")).await.unwrap().0, "a");
        cache.invalidate(&["p:1".into()]);
        assert!(cache.fresh("k").await.is_none());
        assert_eq!(get(&cache, "k", &calls, Ok("b")).await.unwrap().0, "b");
        cache.invalidate_all();
        assert_eq!(get(&cache, "k", &calls, Ok("c")).await.unwrap().0, "c");
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn stale_while_revalidate_then_stale_if_error() {
        let cache = cache(10, 30);
        let calls = Arc::new(AtomicUsize::new(0));
        get(&cache, "k", &calls, Ok("a")).await.unwrap();
        tokio::time::advance(Duration::from_secs(11)).await;
        // Expired but within the window: served at once, refreshed behind.
        let (v, s) = get(&cache, "k", &calls, Ok("b")).await.unwrap();
        assert_eq!((v.as_str(), s), ("a", Source::StaleWhileRevalidate));
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert_eq!(
            get(&cache, "k", &calls, Ok("x")).await.unwrap(),
            ("b".into(), Source::Hit)
        );
        // Expire again; the background refresh fails, so the stale entry keeps being served.
        tokio::time::advance(Duration::from_secs(11)).await;
        assert_eq!(
            get(&cache, "k", &calls, Err(())).await.unwrap().1,
            Source::StaleWhileRevalidate
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
        // Past TTL + window: nothing stale may be served any more.
        tokio::time::advance(Duration::from_secs(40)).await;
        assert!(get(&cache, "k", &calls, Err(())).await.is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn stale_if_error_on_the_foreground_path_and_never_after_invalidation() {
        let cache = Arc::new(Cache::new(
            1 << 20,
            Duration::from_secs(10),
            Duration::from_secs(30),
        ));
        let calls = Arc::new(AtomicUsize::new(0));
        get(&cache, "k", &calls, Ok("a")).await.unwrap();
        tokio::time::advance(Duration::from_secs(11)).await;
        // First caller after expiry gets SWR; make its refresh fail, then a second caller
        // finds the refresh flag cleared and the entry still stale.
        get(&cache, "k", &calls, Err(())).await.unwrap();
        tokio::time::sleep(Duration::from_millis(1)).await;
        cache.invalidate(&["p:1".into()]);
        assert!(get(&cache, "k", &calls, Err(())).await.is_err());
    }

    #[tokio::test]
    async fn a_fetch_that_raced_a_write_is_not_kept() {
        let cache = cache(60, 0);
        let c2 = cache.clone();
        let (_, source) = cache
            .get_or_fetch("k", move || async move {
                // The write lands while we are fetching the old state.
                c2.invalidate(&["p:1".into()]);
                Ok::<_, ()>(Fetched::new(Value::Text("old".into()), vec!["p:1".into()]))
            })
            .await
            .unwrap();
        assert_eq!(source, Source::Fetched);
        assert!(cache.fresh("k").await.is_none());
    }

    #[tokio::test]
    async fn disabled_cache_always_fetches() {
        let cache = Arc::new(Cache::new(1 << 20, Duration::ZERO, Duration::ZERO));
        let calls = Arc::new(AtomicUsize::new(0));
        get(&cache, "k", &calls, Ok("a")).await.unwrap();
        get(&cache, "k", &calls, Ok("a")).await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }
}
