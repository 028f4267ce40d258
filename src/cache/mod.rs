//! The read cache in front of product and image reads.
//!
//! One weight-bounded moka cache holds everything the catalog path reuses: id-to-SKU pairs,
//! raw upstream records, and rendered response bodies (keyed by path, list parameters, user
//! type and format, so a hit does no mapping and no serialisation). One budget
//! (`STOREGATE_CACHE_MAX_BYTES`) bounds it all, weighed by real byte sizes.
//!
//! **Coalescing.** Misses go through moka's per-key compute, which runs callers for one key
//! one after the other: the first fetches, the rest find the entry it put (any entry put
//! after they arrived, see [`Entry`]'s generation). N concurrent cold reads make one
//! upstream call.
//!
//! **Ages compose.** An entry built from other entries (a rendered body from records) is as
//! old as the oldest of them and, when one was served stale-if-error, is stale itself: a
//! body rendered while Magento is down carries `max-age=0` and the stale marker, and is
//! rebuilt as soon as Magento is back instead of a whole TTL later.
//!
//! **Invalidation by tags.** Every entry carries the tags of what it shows (`p:<product
//! id>`, `s:<sku>`, `pl` for product lists, ...). Tags hash into a fixed table of slots, each
//! holding the sequence number of the last invalidation that touched it. An entry remembers
//! the sequence number read just *before* its fetch began; it is valid while none of its
//! slots has moved past that. Invalidating is O(tags), checking is O(entry tags), nothing is
//! scanned, and a fetch that raced a write can never be taken for fresh: its number is older
//! than the write's invalidation. Two tags sharing a slot only cost an extra miss.
//!
//! **Staleness.** Past its TTL, a still-valid entry may still be served, in two windows
//! counted from its expiry:
//! - stale-while-revalidate (`STOREGATE_STALE_WHILE_REVALIDATE_SECS`, default 10 s): served at
//!   once while one background refresh runs, so a popular entry never makes a caller wait;
//! - stale-if-error (`STOREGATE_STALE_IF_ERROR_SECS`): past the first window a caller fetches
//!   in the foreground, and gets the stale entry if the upstream fails (a 5xx, a timeout, no
//!   connection, an open circuit). A stale entry served while the last refresh failed is
//!   reported as stale-if-error too, so the response says the upstream is failing.
//!
//! Only failures allow stale data ([`FetchError::allows_stale`]): a 404 is an answer, and
//! a background refresh that gets one drops the entry. Invalidated entries are never
//! served: they are known to be wrong.

mod census;
pub mod hit_headers;
pub mod hold_off;
pub mod hot;
pub mod keys;
mod renewal;
pub mod response;
mod second_level;
mod sku_index;
pub use sku_index::MAX_PAIRS as SKU_INDEX_MAX;
pub mod status;
pub use second_level::{FillTicket, SecondLevel, SecondLevelLookup};
mod tag_clock;
pub mod tags;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::http::content_coding::Variants;
use bytes::Bytes;
use http::HeaderValue;
use moka::ops::compute::{CompResult, Op};
use sha2::{Digest, Sha256};
use tokio::time::Instant;

use tag_clock::{SLOTS, TagClock};

/// What an entry costs besides its payload: our `Entry` and key allocations (~300 bytes)
/// and moka's per-entry bookkeeping (hash-table bucket, entry info, two deque nodes, the
/// key's `Arc`: ~370 bytes). Measured, not guessed: with 256 the resident size of a full
/// 256 MiB cache was 20% over the cap (bench row 6).
const ENTRY_OVERHEAD: u32 = 640;
/// Stale-while-revalidate window when none is configured (Varnish's default grace).
pub const DEFAULT_REVALIDATE_WINDOW: Duration = Duration::from_secs(10);

/// What a failed fetch says about serving stale data instead.
pub trait FetchError {
    /// True for failures of the upstream (5xx, timeouts, no connection, open circuit), when
    /// a stale entry is better than an error; false for answers such as 404 or 400.
    fn allows_stale(&self) -> bool;
}

/// A rendered response body, ready to send.
#[derive(Debug, Clone)]
pub struct Body {
    pub bytes: Bytes,
    pub etag: HeaderValue,
    pub content_type: &'static str,
    /// Its gzip, Brotli and zstd forms, made when the entry is filled (none for a small
    /// body): a hit picks one, it never compresses.
    pub variants: Option<Box<Variants>>,
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
        let variants = Variants::compress(&bytes, &tag);
        Body {
            bytes,
            // Hex digits and quotes are always a valid header value.
            etag: HeaderValue::from_str(&tag).expect("hex is a valid header value"),
            content_type,
            variants,
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
    /// The same value in allocations of exactly its size. A body read from a socket can be
    /// a slice of a larger read buffer, and a rendered one sits in a `Vec` grown by doubling:
    /// kept as they are, either would hold more memory than its weight says.
    fn compact(self) -> Value {
        match self {
            Value::Bytes(b) => Value::Bytes(Bytes::copy_from_slice(&b)),
            Value::Body(body) => Value::Body(Body {
                bytes: Bytes::copy_from_slice(&body.bytes),
                ..body
            }),
            text => text,
        }
    }

    fn weight(&self) -> usize {
        match self {
            Value::Bytes(b) => b.len(),
            Value::Text(t) => t.len(),
            Value::Body(b) => b.bytes.len() + 64 + b.variants.as_ref().map_or(0, |v| v.weight()),
        }
    }
}

/// What an invalidation covered, as told to the [`Cache::on_invalidate`] listener.
#[derive(Debug, Clone, Copy)]
pub enum Invalidation<'a> {
    Tags(&'a [String]),
    /// The tags of a write whose outcome is unknown: invalidated, and held off for the
    /// window (`hold_off`).
    HoldOff(&'a [String], Duration),
    All,
}

/// Told of every invalidation made in this process, so that it can be passed on to other
/// instances (`shared_state`).
pub type InvalidationListener = Box<dyn Fn(Invalidation<'_>) + Send + Sync>;

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
    /// When the data was fetched: for an entry built from other entries, when the oldest
    /// of them was. Freshness counts from here.
    stored_at: Instant,
    /// Order in which entries were put in the cache; callers who waited for a fetch take
    /// any entry put after they arrived, however old its data.
    generation: u64,
    /// Invalidation sequence number read before the fetch began.
    seq: u64,
    slots: Box<[u32]>,
    refreshing: AtomicBool,
    /// The upstream failed the last time this entry was refreshed, or the entry was built
    /// from data served stale because it failed: serving it says so.
    refresh_failed: AtomicBool,
    /// moka dropped or replaced it (under any of its keys): a thread's kept copy of it is no
    /// longer served (`hot`).
    superseded: AtomicBool,
}

impl Entry {
    fn new(value: Value, seq: u64, slots: Box<[u32]>, inputs: Inputs, generation: u64) -> Entry {
        let now = Instant::now();
        Entry {
            value,
            stored_at: inputs.oldest.get().map_or(now, |oldest| oldest.min(now)),
            generation,
            seq,
            slots,
            refreshing: AtomicBool::new(false),
            refresh_failed: AtomicBool::new(inputs.failed.get()),
            superseded: AtomicBool::new(false),
        }
    }

    /// moka dropped or replaced it (`hot`).
    fn is_superseded(&self) -> bool {
        self.superseded.load(Ordering::Relaxed)
    }
}

tokio::task_local! {
    /// What the fetch running in this task has read from the cache so far.
    static INPUTS: Inputs;
}

/// The entries a fetch was built from: a rendered body is as old as the oldest record in
/// it, and as stale. Without this, a body rendered from records served stale-if-error
/// would be stored as fresh and keep the old data a whole TTL after the upstream is back.
#[derive(Debug, Default)]
struct Inputs {
    oldest: std::cell::Cell<Option<Instant>>,
    failed: std::cell::Cell<bool>,
}

impl Inputs {
    /// The data of the current fetch is `age` old (it came from the second level).
    fn note_age(age: Duration) {
        let _ = INPUTS.try_with(|inputs| {
            let now = Instant::now();
            let fetched_at = now.checked_sub(age).unwrap_or(now);
            let oldest = inputs
                .oldest
                .get()
                .map_or(fetched_at, |o| o.min(fetched_at));
            inputs.oldest.set(Some(oldest));
        });
    }

    fn copy(&self) -> Inputs {
        Inputs {
            oldest: std::cell::Cell::new(self.oldest.get()),
            failed: std::cell::Cell::new(self.failed.get()),
        }
    }

    /// Notes an entry the current fetch (if any) uses.
    fn note(entry: &Entry, source: Source) {
        let _ = INPUTS.try_with(|inputs| {
            let oldest = inputs
                .oldest
                .get()
                .map_or(entry.stored_at, |o| o.min(entry.stored_at));
            inputs.oldest.set(Some(oldest));
            if source == Source::StaleIfError {
                inputs.failed.set(true);
            }
        });
    }
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
    /// Counted by every hit and miss: kept per thread (`per_thread::counter`).
    pub hits: crate::per_thread::counter::Counter,
    pub misses: crate::per_thread::counter::Counter,
    pub coalesced: AtomicU64,
    pub stale_while_revalidate: AtomicU64,
    pub stale_if_error: AtomicU64,
    pub refresh_failures: AtomicU64,
    pub evictions: Arc<AtomicU64>,
    pub invalidations: AtomicU64,
}

pub struct Cache {
    store: Option<moka::future::Cache<Arc<str>, Arc<Entry>>>,
    /// Unique in the process: which cache a thread's kept entry came from (`hot`).
    id: u64,
    clock: TagClock,
    ttl: Duration,
    /// Stale-while-revalidate window, from expiry.
    revalidate: Duration,
    /// Stale-if-error window, from expiry.
    stale: Duration,
    stats: Stats,
    /// Counts entries put in the cache (see [`Entry::generation`]).
    generations: AtomicU64,
    listener: std::sync::OnceLock<InvalidationListener>,
    second_level: std::sync::OnceLock<Arc<dyn SecondLevel>>,
    /// Tags of writes whose outcome is unknown, and until when (`hold_off`).
    holds: hold_off::HoldOffs,
    /// A field the front fills on every hit (the rate limits' `RateLimit`): its place is in
    /// every hit's map already, so filling it grows nothing (`Cache::reserve_hit_field`).
    hit_spare: std::sync::OnceLock<http::HeaderName>,
    /// Product ids and their SKUs, beside the weighted store (`sku_index`).
    skus: sku_index::SkuIndex,
    /// Another cache every invalidation of this one reaches too: the dual run's cache of
    /// the candidate back end's answers (`Cache::mirror_to`).
    mirror: std::sync::OnceLock<Arc<Cache>>,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("enabled", &self.store.is_some())
            .field("ttl", &self.ttl)
            .field("revalidate", &self.revalidate)
            .field("stale", &self.stale)
            .finish()
    }
}

impl Cache {
    /// A zero `ttl` turns caching off: every read goes to the upstream. `stale` is the
    /// stale-if-error window; the stale-while-revalidate window is the default one, capped
    /// by it.
    pub fn new(max_bytes: u64, ttl: Duration, stale: Duration) -> Cache {
        Cache::with_windows(max_bytes, ttl, DEFAULT_REVALIDATE_WINDOW.min(stale), stale)
    }

    /// A cache with both staleness windows given: `revalidate` (stale-while-revalidate) and
    /// `stale` (stale-if-error), each counted from an entry's expiry.
    pub fn with_windows(
        max_bytes: u64,
        ttl: Duration,
        revalidate: Duration,
        stale: Duration,
    ) -> Cache {
        let stats = Stats::default();
        let store = (!ttl.is_zero()).then(|| {
            let evictions = stats.evictions.clone();
            moka::future::Cache::builder()
                .max_capacity(max_bytes)
                .weigher(|key: &Arc<str>, entry: &Arc<Entry>| {
                    // Allocators round sizes up to their size classes: about an eighth more.
                    let payload = entry.value.weight();
                    let weight = key.len() + payload + payload / 8 + entry.slots.len() * 4;
                    u32::try_from(weight)
                        .unwrap_or(u32::MAX)
                        .saturating_add(ENTRY_OVERHEAD)
                })
                // moka's own expiry only reclaims memory; freshness is decided here.
                .time_to_live(ttl + stale.max(revalidate) + Duration::from_secs(1))
                .eviction_listener(move |_key, value: Arc<Entry>, cause| {
                    // Whatever the cause: a thread's kept copy must go to moka again (`hot`).
                    value.superseded.store(true, Ordering::Relaxed);
                    if cause.was_evicted() {
                        evictions.fetch_add(1, Ordering::Relaxed);
                    }
                })
                .build()
        });
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        Cache {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            store,
            clock: TagClock::new(),
            ttl,
            revalidate,
            stale,
            stats,
            generations: AtomicU64::new(0),
            listener: std::sync::OnceLock::new(),
            second_level: std::sync::OnceLock::new(),
            holds: hold_off::HoldOffs::new(SLOTS),
            hit_spare: std::sync::OnceLock::new(),
            skus: sku_index::SkuIndex::new(),
            mirror: std::sync::OnceLock::new(),
        }
    }

    /// From now on, every invalidation, hold-off and purge of this cache (a write through
    /// the gateway, another instance's, an operator's purge) applies to `other` as well
    /// (once; later calls are ignored). The dual run keeps the candidate's answers in a
    /// cache of their own, so that the two back ends' entries never mix; what a write
    /// makes stale is stale in both.
    pub fn mirror_to(&self, other: Arc<Cache>) {
        let _ = self.mirror.set(other);
    }

    /// Sets who is told of this process's invalidations (once; later calls are ignored).
    pub fn on_invalidate(&self, listener: InvalidationListener) {
        let _ = self.listener.set(listener);
    }

    /// Puts a shared second level behind this cache (once; later calls are ignored).
    pub fn set_second_level(&self, level: Arc<dyn SecondLevel>) {
        let _ = self.second_level.set(level);
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

    /// Lets the store finish its pending bookkeeping (evictions, sizes), so that
    /// [`Cache::usage`] is exact; `/metrics` calls it before reading.
    pub async fn settle(&self) {
        if let Some(store) = &self.store {
            store.run_pending_tasks().await;
        }
    }

    /// Seconds an entry stays fresh from now on, for `Cache-Control: max-age`.
    pub fn remaining(&self, entry: &Entry) -> Duration {
        self.remaining_at(entry.stored_at.elapsed())
    }

    /// What [`Cache::remaining`] says of an entry this old.
    pub fn remaining_at(&self, age: Duration) -> Duration {
        self.ttl.saturating_sub(age)
    }

    /// Seconds of freshness an entry has left, rounded up, negative once it is stale (by
    /// how much): `Cache-Status`'s `ttl`.
    pub fn freshness_secs(&self, entry: &Entry) -> i64 {
        self.freshness_secs_at(entry.stored_at.elapsed())
    }

    /// What [`Cache::freshness_secs`] says of an entry this old.
    pub fn freshness_secs_at(&self, age: Duration) -> i64 {
        match self.ttl.checked_sub(age) {
            Some(left) => i64::try_from(left.as_millis().div_ceil(1000)).unwrap_or(i64::MAX),
            None => -i64::try_from((age - self.ttl).as_millis().div_ceil(1000)).unwrap_or(i64::MAX),
        }
    }

    /// Drops every entry that shows one of these tags, here and (through the listener) in
    /// the other instances.
    pub fn invalidate(&self, tags: &[String]) {
        if tags.is_empty() {
            return;
        }
        self.invalidate_here(tags);
        if let Some(listener) = self.listener.get() {
            listener(Invalidation::Tags(tags));
        }
    }

    /// [`Cache::invalidate`] in this process only: how another instance's invalidation is
    /// applied.
    pub fn invalidate_here(&self, tags: &[String]) {
        if tags.is_empty() {
            return;
        }
        self.stats.invalidations.fetch_add(1, Ordering::Relaxed);
        self.clock.invalidate(tags);
        if let Some(mirror) = self.mirror.get() {
            mirror.invalidate_here(tags);
        }
    }

    /// After a write whose outcome is unknown: drops every entry that shows one of these
    /// tags and keeps them from being served from the cache for `window`, here and in the
    /// other instances (`hold_off`).
    pub fn hold_off(&self, tags: &[String], window: Duration) {
        if tags.is_empty() {
            return;
        }
        self.hold_off_here(tags, window);
        if let Some(listener) = self.listener.get() {
            listener(Invalidation::HoldOff(tags, window));
        }
    }

    /// [`Cache::hold_off`] in this process only.
    pub fn hold_off_here(&self, tags: &[String], window: Duration) {
        self.invalidate_here(tags);
        self.holds
            .hold(tags.iter().map(|t| TagClock::slot(t)), window);
        if let Some(mirror) = self.mirror.get() {
            mirror
                .holds
                .hold(tags.iter().map(|t| TagClock::slot(t)), window);
        }
    }

    /// True when an entry is held off (a write with an unknown outcome touched it): it is
    /// not served from the cache, and was fetched for this read.
    pub fn held_off(&self, entry: &Entry) -> bool {
        self.holds.holds(entry.stored_at, &entry.slots)
    }

    /// Valid (no invalidation since its fetch began) and not held off.
    fn usable(&self, entry: &Entry) -> bool {
        self.clock.valid(entry) && !self.held_off(entry)
    }

    /// True when what a fetch with these tags produced now would be held off.
    fn would_hold(&self, tags: &[String]) -> bool {
        let slots: Vec<u32> = tags.iter().map(|t| TagClock::slot(t)).collect();
        self.holds.holds(Instant::now(), &slots)
    }

    /// Drops everything, here and (through the listener) in the other instances.
    pub fn invalidate_all(&self) {
        self.invalidate_all_here();
        if let Some(listener) = self.listener.get() {
            listener(Invalidation::All);
        }
    }

    /// [`Cache::invalidate_all`] in this process only, and gives the memory back.
    pub fn invalidate_all_here(&self) {
        self.stats.invalidations.fetch_add(1, Ordering::Relaxed);
        self.clock.invalidate_all();
        self.skus.clear();
        if let Some(store) = &self.store {
            store.invalidate_all();
        }
        if let Some(mirror) = self.mirror.get() {
            mirror.invalidate_all_here();
        }
    }

    /// A fresh, valid entry, without fetching. The hit path.
    pub async fn fresh(&self, key: &str) -> Option<Arc<Entry>> {
        self.fresh_at(key, Instant::now()).await
    }

    /// [`Cache::fresh`] at `now`, the request's own reading of the clock: a cache hit reads
    /// the clock once for every step that asks how old an entry is.
    async fn fresh_at(&self, key: &str, now: Instant) -> Option<Arc<Entry>> {
        let store = self.store.as_ref()?;
        let entry = store.get(key).await?;
        (self.usable(&entry) && now.saturating_duration_since(entry.stored_at) < self.ttl).then(
            || {
                self.stats.hits.inc();
                Inputs::note(&entry, Source::Hit);
                entry
            },
        )
    }

    /// Calls `serve` with the fresh, valid entry for `key` at `now`, without fetching: the
    /// fast path's lookup. A repeat hit of a light entry borrows it from this thread's own
    /// copy (`hot`), so that no hit writes memory another worker writes; else the entry comes
    /// from moka (and this thread keeps it).
    pub async fn with_fresh<R>(
        &self,
        key: &str,
        now: Instant,
        serve: impl FnOnce(&Arc<Entry>) -> R,
    ) -> Option<R> {
        self.store.as_ref()?;
        let mut serve = Some(serve);
        let kept = hot::with(self.id, key, |entry| {
            // The checks a hit through moka makes (`fresh_at`).
            if !(self.usable(entry) && now.saturating_duration_since(entry.stored_at) < self.ttl) {
                return None;
            }
            self.stats.hits.inc();
            Inputs::note(entry, Source::Hit);
            serve.take().map(|serve| serve(entry))
        });
        if kept.is_some() {
            return kept;
        }
        let entry = self.fresh_at(key, now).await?;
        hot::keep(self.id, key, &entry);
        serve.take().map(|serve| serve(&entry))
    }

    /// Files a fresh entry under a second key too (the fast path's, see
    /// `response_cache`). Both keys share the entry, so an invalidation or the expiry of one
    /// is that of the other. The alias is weighed as the entry it holds: if the first key is
    /// evicted, the alias alone keeps the body alive, and must have paid for it. A hit
    /// through the alias is one lookup; an alias holding the first key instead would weigh
    /// less but cost every fast hit a second lookup (about a tenth of a hit's instructions,
    /// `bench/instructions.py`). At most a handful of aliases point at one entry: only the
    /// one canonical spelling of a request is filed, per audience and format.
    pub async fn alias(&self, key: Arc<str>, entry: &Arc<Entry>) {
        if let Some(store) = &self.store
            && self.usable(entry)
            && entry.stored_at.elapsed() < self.ttl
            && !entry.refresh_failed.load(Ordering::Relaxed)
        {
            store.insert(key, entry.clone()).await;
        }
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
        E: FetchError + Send + Sync + 'static,
    {
        // The fetch's future goes on the heap before it enters the cache's own futures
        // (coalescing, refresh, moka's compute), which would otherwise each hold a copy of
        // it: a product read's is tens of kilobytes unoptimised, and the copies overflowed a
        // test thread's 2 MiB stack.
        let fetch = move || Box::pin(fetch());
        let (entry, source) = self.lookup(key, fetch).await?;
        Inputs::note(&entry, source);
        Ok((entry, source))
    }

    /// [`Cache::get_or_fetch`] for an upstream record that every instance may share: on a
    /// miss here, the second level (when there is one) is asked before `fetch` runs, and
    /// given what it fetched. Hits of this level never reach the second one. Only for data
    /// that is the same for every caller (never a customer's).
    pub async fn get_or_fetch_shared<F, Fut, E>(
        self: &Arc<Self>,
        key: &str,
        fetch: F,
    ) -> Result<(Arc<Entry>, Source), E>
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = Result<Fetched, E>> + Send + 'static,
        E: FetchError + Send + Sync + 'static,
    {
        let Some(level) = self.second_level.get().cloned() else {
            return self.get_or_fetch(key, fetch).await;
        };
        let shared_key: Arc<str> = key.into();
        let cache = self.clone();
        self.get_or_fetch(key, move || async move {
            match level.lookup(&shared_key).await {
                // A record a write with an unknown outcome may have changed is read from
                // Magento, never from another instance's copy (`hold_off`).
                SecondLevelLookup::Hit { fetched, .. } if cache.would_hold(&fetched.tags) => {
                    fetch().await
                }
                SecondLevelLookup::Hit { fetched, age } => {
                    Inputs::note_age(age);
                    Ok(fetched)
                }
                SecondLevelLookup::Miss(ticket) => match fetch().await {
                    Ok(fetched) if cache.would_hold(&fetched.tags) => {
                        level.abandon(&shared_key, ticket).await;
                        Ok(fetched)
                    }
                    Ok(fetched) => {
                        level.store(&shared_key, ticket, &fetched).await;
                        Ok(fetched)
                    }
                    Err(error) => {
                        level.abandon(&shared_key, ticket).await;
                        Err(error)
                    }
                },
            }
        })
        .await
    }

    async fn lookup<F, Fut, E>(
        self: &Arc<Self>,
        key: &str,
        fetch: F,
    ) -> Result<(Arc<Entry>, Source), E>
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = Result<Fetched, E>> + Send + 'static,
        E: FetchError + Send + Sync + 'static,
    {
        let Some(store) = &self.store else {
            // No cache: fetch every time, no coalescing (the benchmark's miss path).
            self.stats.misses.inc();
            let fetched = fetch().await?;
            let entry = Entry::new(fetched.value, 0, Box::new([]), Inputs::default(), 0);
            return Ok((Arc::new(entry), Source::Fetched));
        };

        let current = store.get(key).await.filter(|entry| self.usable(entry));
        if let Some(entry) = &current {
            let age = entry.stored_at.elapsed();
            if age < self.ttl {
                self.stats.hits.inc();
                return Ok((entry.clone(), Source::Hit));
            }
            if age < self.ttl + self.revalidate {
                // Serve it now and refresh once in the background.
                if !entry.refreshing.swap(true, Ordering::SeqCst) {
                    self.spawn_refresh(key.into(), entry.clone(), fetch);
                }
                let source = if entry.refresh_failed.load(Ordering::Relaxed) {
                    self.stats.stale_if_error.fetch_add(1, Ordering::Relaxed);
                    Source::StaleIfError
                } else {
                    self.stats
                        .stale_while_revalidate
                        .fetch_add(1, Ordering::Relaxed);
                    Source::StaleWhileRevalidate
                };
                return Ok((entry.clone(), source));
            }
        }

        match self.refresh(key.into(), fetch, false).await {
            Ok(found) => Ok(found),
            Err(error) => {
                // Stale-if-error only ever serves an entry that is still valid, and only
                // when the upstream failed rather than answered.
                if error.allows_stale()
                    && let Some(entry) = current
                    && self.usable(&entry)
                    && entry.stored_at.elapsed() < self.ttl + self.stale
                {
                    entry.refresh_failed.store(true, Ordering::Relaxed);
                    self.stats.stale_if_error.fetch_add(1, Ordering::Relaxed);
                    return Ok((entry, Source::StaleIfError));
                }
                Err(error)
            }
        }
    }

    fn spawn_refresh<F, Fut, E>(self: &Arc<Self>, key: Arc<str>, stale: Arc<Entry>, fetch: F)
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = Result<Fetched, E>> + Send + 'static,
        E: FetchError + Send + Sync + 'static,
    {
        let cache = self.clone();
        tokio::spawn(async move {
            match cache.refresh(key.clone(), fetch, false).await {
                Ok(_) => {}
                Err(error) if error.allows_stale() => {
                    cache.stats.refresh_failures.fetch_add(1, Ordering::Relaxed);
                    stale.refresh_failed.store(true, Ordering::Relaxed);
                    // Let a later caller try again.
                    stale.refreshing.store(false, Ordering::SeqCst);
                }
                Err(_) => {
                    // The upstream answered that the record is gone (or no longer ours to
                    // see): the stale entry is wrong, drop it unless it was replaced since.
                    cache.stats.refresh_failures.fetch_add(1, Ordering::Relaxed);
                    if let Some(store) = &cache.store {
                        store
                            .entry(key)
                            .and_compute_with(|existing| async move {
                                match existing {
                                    Some(e) if Arc::ptr_eq(e.value(), &stale) => Op::Remove,
                                    _ => Op::Nop,
                                }
                            })
                            .await;
                    }
                }
            }
        });
    }

    /// Fetches and stores, serialised per key with anyone else doing the same: a caller
    /// who waited behind another's fetch takes its result instead of fetching again.
    async fn refresh<F, Fut, E>(
        &self,
        key: Arc<str>,
        fetch: F,
        renew: bool,
    ) -> Result<(Arc<Entry>, Source), E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Fetched, E>>,
        E: Send + Sync + 'static,
    {
        let store = self.store.as_ref().expect("refresh runs only with a cache");
        let arrived = self.generations.load(Ordering::SeqCst);
        let result = store
            .entry(key)
            .and_try_compute_with(|existing| async move {
                if let Some(existing) = existing {
                    let entry = existing.into_value();
                    // Fetched after this caller arrived: take it, held off or not (it is
                    // what Magento showed just now); else only a fresh, usable one (and
                    // none when renewing).
                    if self.clock.valid(&entry)
                        && ((!renew
                            && entry.stored_at.elapsed() < self.ttl
                            && !self.held_off(&entry))
                            || entry.generation > arrived)
                    {
                        return Ok(Op::Nop);
                    }
                }
                let seq = self.clock.now();
                let (fetched, inputs) = INPUTS
                    .scope(Inputs::default(), async {
                        let fetched = fetch().await;
                        (fetched, INPUTS.with(Inputs::copy))
                    })
                    .await;
                let fetched = fetched?;
                let mut slots: Vec<u32> = fetched.tags.iter().map(|t| TagClock::slot(t)).collect();
                slots.sort_unstable();
                slots.dedup();
                Ok(Op::Put(Arc::new(Entry::new(
                    fetched.value.compact(),
                    seq,
                    slots.into_boxed_slice(),
                    inputs,
                    self.generations.fetch_add(1, Ordering::SeqCst) + 1,
                ))))
            })
            .await?;
        let (entry, fetched_here) = match result {
            CompResult::Inserted(entry) | CompResult::ReplacedWith(entry) => {
                self.stats.misses.inc();
                (entry.into_value(), true)
            }
            CompResult::Unchanged(entry) => {
                self.stats.coalesced.fetch_add(1, Ordering::Relaxed);
                (entry.into_value(), false)
            }
            CompResult::StillNone(_) | CompResult::Removed(_) => {
                unreachable!("the compute closure only puts or keeps an entry")
            }
        };
        // Built from data the upstream could not refresh: say so.
        let source = if entry.refresh_failed.load(Ordering::Relaxed) {
            if fetched_here {
                self.stats.stale_if_error.fetch_add(1, Ordering::Relaxed);
            }
            Source::StaleIfError
        } else {
            Source::Fetched
        };
        Ok((entry, source))
    }
}

#[cfg(test)]
mod tests;
