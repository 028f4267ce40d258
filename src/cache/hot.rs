//! The entries a worker thread served last, kept by that thread, so that a repeat hit of a
//! popular entry touches nothing another worker writes.
//!
//! A lookup in moka writes shared memory on every read, by design: it counts the entry's
//! references up and down, stamps its last access, and queues the read for its eviction
//! policy; and handing the entry out counts the entry's own `Arc` up and down. When two
//! workers serve the same popular entry, every one of those writes moves a cache line
//! between the cores, on every hit (issue 23: a hit cost measurably less with one worker
//! than with two). So each thread keeps, in a small direct-mapped table of its own
//! ([`SLOTS`] slots), the entries it found in moka, and a repeat hit borrows the entry from
//! there: no reference is counted, nothing shared is written.
//!
//! What makes a kept entry safe to serve is exactly what makes a moka entry safe to serve,
//! checked on every hit by the cache (`Cache::with_fresh`): its age, the tag clock (any
//! invalidation since its fetch, here or from another instance, purges included) and the
//! hold-offs. One more: moka tells the cache of every entry it drops or replaces (the
//! eviction listener), which marks the entry `superseded`, and a kept entry so marked is
//! dropped here. A replaced entry is one that had turned stale, invalid or held off, which
//! the checks above already refuse; the mark makes it certain.
//!
//! Memory: a slot keeps its entry alive after moka dropped it, until the slot is looked up
//! or taken by another key. Only entries of at most [`WEIGHT_MAX`] bytes are kept, so a
//! thread holds at most `SLOTS × WEIGHT_MAX` (2 MiB) beyond the cache's own bound.
//!
//! moka no longer sees the repeat hits a thread serves from here, so its eviction policy
//! counts them less: a popular entry may look unpopular to it and be evicted under memory
//! pressure, after which the slot drops it and the next hit goes to moka again.

use std::cell::RefCell;
use std::sync::Arc;

use crate::cache::Entry;

/// Slots per thread.
pub const SLOTS: usize = 64;

/// Entries weighing more than this are not kept (their weight as the cache's weigher counts
/// it, the body and its compressed variants).
pub const WEIGHT_MAX: usize = 32 * 1024;

/// One kept entry: the cache it came from, its key, the entry.
struct Slot {
    cache: u64,
    key: Box<str>,
    entry: Arc<Entry>,
}

thread_local! {
    static KEPT: RefCell<Vec<Option<Slot>>> = const { RefCell::new(Vec::new()) };
}

/// Calls `serve` with the entry this thread keeps for `key` of cache `cache`, if it keeps
/// one and `serve` takes it (`Some`). A superseded entry is dropped from its slot.
pub fn with<R>(cache: u64, key: &str, serve: impl FnOnce(&Arc<Entry>) -> Option<R>) -> Option<R> {
    let slot = crate::per_thread::slot::of(cache, key, SLOTS);
    KEPT.try_with(|kept| {
        let mut kept = kept.try_borrow_mut().ok()?;
        let found = kept.get_mut(slot)?;
        let entry = match found {
            Some(s) if s.cache == cache && *s.key == *key => &s.entry,
            _ => return None,
        };
        if entry.is_superseded() {
            *found = None;
            return None;
        }
        serve(entry)
    })
    .ok()
    .flatten()
}

/// Keeps `entry` for `key` of cache `cache` in this thread's slot, if it is light enough.
pub fn keep(cache: u64, key: &str, entry: &Arc<Entry>) {
    if entry.value.weight() > WEIGHT_MAX || entry.is_superseded() {
        return;
    }
    let slot = crate::per_thread::slot::of(cache, key, SLOTS);
    let _ = KEPT.try_with(|kept| {
        if let Ok(mut kept) = kept.try_borrow_mut() {
            if kept.is_empty() {
                kept.resize_with(SLOTS, || None);
            }
            kept[slot] = Some(Slot {
                cache,
                key: key.into(),
                entry: entry.clone(),
            });
        }
    });
}
