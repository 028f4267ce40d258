//! The product index's pairs, a product id and its SKU, kept beside the weighted store.
//!
//! Why: the API addresses products by id and Magento 2 by SKU, so a cold product read whose
//! SKU is not known asks the store for it first, one more round trip in a row before the
//! product itself (issue 33). The pairs are loaded when the gateway starts
//! (`records::lookups::keeper`), learned from every product list and create, and asked for
//! on demand for an id not known yet (`records::catalog::product_index`).
//!
//! Not in moka: a pair is a dozen bytes, and an entry there costs about 640 more (the
//! weigher's overhead, measured), so a catalog's worth of pairs would take a quarter of a
//! 256 MiB cache from the bodies. Here a pair costs 25 bytes in the table and its SKU's
//! bytes, and the table holds at most [`MAX_PAIRS`].
//!
//! **Compact** (issue 33, bench row 6): every SKU's bytes sit in one text buffer (its
//! length in the byte before it), and the table's slot holds where, the clock reading and
//! the age: 24 bytes a slot and no allocation per pair. With a `Box<str>` per pair (a
//! 40-byte slot, and a 16-byte block per SKU with the allocator's bookkeeping around it)
//! the 100,000 pairs loaded at start held about 7 MiB; they now hold about 4 (by layout:
//! the resident size at ready did not show the difference, docs/benchmarks.md).
//! A SKU dropped or replaced leaves its bytes behind in the buffer until they are half of
//! it, when the buffer is written again with the live ones only.
//!
//! A pair is as trustworthy as a cached `sku_of` entry was: it is dropped by any
//! invalidation of its product's tags (`p:<id>`, `s:<sku>`, here or from another instance)
//! or a purge of everything made after the clock reading taken before the fetch that found
//! it. It does not expire by itself: how old it is goes with it, and the callers decide
//! (a write takes only a pair younger than the cache's TTL; a read takes any and checks the
//! record it got is the product it asked for).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio::time::Instant;

use super::tag_clock::TagClock;
use super::tags as tag;

/// Pairs kept at most (about 25 bytes and the SKU each: some 25 MiB for the largest
/// catalogs). Past it, new pairs are not kept (their ids are looked up as before).
pub const MAX_PAIRS: usize = 500_000;

/// The longest SKU kept (its length is one byte in the buffer); Magento's are at most 64.
const MAX_SKU: usize = u8::MAX as usize;
/// Dropped bytes the buffer carries before it is written again without them (and only
/// when they are half of it).
const MIN_GARBAGE: usize = 64 * 1024;

/// Where a pair's SKU is, and when it was found.
struct Pair {
    /// The tag clock's reading before the fetch that found it.
    seq: u64,
    /// The SKU's length byte in [`Pairs::text`]; its bytes follow.
    at: u32,
    /// When it was found, in seconds since the index was made.
    found: u32,
}

/// The table and the buffer its SKUs are in.
#[derive(Default)]
struct Pairs {
    table: HashMap<u64, Pair>,
    text: Vec<u8>,
    /// Bytes of `text` no pair points to any more.
    garbage: usize,
}

impl Pairs {
    fn sku(&self, at: u32) -> Option<&str> {
        let at = at as usize;
        let len = usize::from(*self.text.get(at)?);
        std::str::from_utf8(self.text.get(at + 1..at + 1 + len)?).ok()
    }

    /// Appends `sku` to the buffer, where it starts (`None` when too long or the buffer is
    /// full).
    fn push(&mut self, sku: &str) -> Option<u32> {
        let len = u8::try_from(sku.len()).ok()?;
        let at = u32::try_from(self.text.len()).ok()?;
        u32::try_from(self.text.len() + 1 + sku.len()).ok()?;
        self.text.push(len);
        self.text.extend_from_slice(sku.as_bytes());
        Some(at)
    }

    fn drop_pair(&mut self, id: u64) {
        if let Some(pair) = self.table.remove(&id) {
            self.garbage += 1 + self.sku(pair.at).map_or(0, str::len);
            self.compact_if_wasteful();
        }
    }

    /// Writes the buffer again with the live SKUs only, once dropped ones are half of it.
    fn compact_if_wasteful(&mut self) {
        if self.garbage < MIN_GARBAGE || self.garbage * 2 < self.text.len() {
            return;
        }
        let mut text = Vec::with_capacity(self.text.len() - self.garbage);
        for pair in self.table.values_mut() {
            let at = pair.at as usize;
            let Some(&len) = self.text.get(at) else {
                continue;
            };
            let end = (at + 1 + usize::from(len)).min(self.text.len());
            // Fits: the new buffer is no longer than the old one.
            pair.at = text.len() as u32;
            text.extend_from_slice(&self.text[at..end]);
        }
        self.text = text;
        self.garbage = 0;
    }
}

pub(super) struct SkuIndex {
    pairs: RwLock<Pairs>,
    origin: Instant,
}

impl SkuIndex {
    pub(super) fn new() -> SkuIndex {
        SkuIndex {
            pairs: RwLock::new(Pairs::default()),
            origin: Instant::now(),
        }
    }

    /// The SKU paired with `id`, and how long ago the pair was found, when the clock has not
    /// invalidated it since. An invalidated pair is dropped.
    pub(super) fn get(&self, clock: &TagClock, id: u64) -> Option<(Arc<str>, Duration)> {
        let (sku, seq, found) = {
            let pairs = self.pairs.read().ok()?;
            let pair = pairs.table.get(&id)?;
            (Arc::<str>::from(pairs.sku(pair.at)?), pair.seq, pair.found)
        };
        if !clock.valid_since(seq, &[&tag::product(id), &tag::sku(&sku)]) {
            self.forget(id);
            return None;
        }
        let age = self
            .origin
            .elapsed()
            .saturating_sub(Duration::from_secs(u64::from(found)));
        Some((sku, age))
    }

    /// Keeps pairs found by a fetch that began at clock reading `seq`. A SKU longer than
    /// [`MAX_SKU`] is not kept (its id is looked up as before).
    pub(super) fn insert<'a>(&self, seq: u64, pairs: impl IntoIterator<Item = (u64, &'a str)>) {
        let found = u32::try_from(self.origin.elapsed().as_secs()).unwrap_or(u32::MAX);
        let Ok(mut held) = self.pairs.write() else {
            return;
        };
        for (id, sku) in pairs {
            if sku.is_empty() || sku.len() > MAX_SKU {
                continue;
            }
            let at = match held.table.get(&id) {
                // The same SKU again (a list page read again): its bytes stay where they are.
                Some(pair) if held.sku(pair.at) == Some(sku) => Some(pair.at),
                Some(_) => {
                    held.drop_pair(id);
                    held.push(sku)
                }
                None if held.table.len() >= MAX_PAIRS => None,
                None => held.push(sku),
            };
            if let Some(at) = at {
                held.table.insert(id, Pair { seq, at, found });
            }
        }
    }

    pub(super) fn forget(&self, id: u64) {
        if let Ok(mut held) = self.pairs.write() {
            held.drop_pair(id);
        }
    }

    /// Pairs held (some may be invalidated and not yet dropped).
    pub(super) fn len(&self) -> usize {
        self.pairs.read().map_or(0, |held| held.table.len())
    }

    /// Drops every pair (a purge of everything: they are invalid anyway) and gives their
    /// memory back.
    pub(super) fn clear(&self) {
        if let Ok(mut held) = self.pairs.write() {
            *held = Pairs::default();
        }
    }
}

/// The index as the rest of the gateway sees it. Without a cache (a zero TTL) it keeps
/// nothing: every read goes to the store, its SKU lookup included.
impl super::Cache {
    /// The SKU the index pairs with product `id`, and the pair's age.
    pub fn indexed_sku(&self, id: u64) -> Option<(Arc<str>, Duration)> {
        self.skus.get(&self.clock, id)
    }

    /// The tag clock's reading, to take before a fetch whose pairs go to
    /// [`Cache::index_skus`].
    pub fn clock_reading(&self) -> u64 {
        self.clock.now()
    }

    /// Keeps id-SKU pairs a fetch found that began at `reading` ([`Cache::clock_reading`]).
    pub fn index_skus<'a>(&self, reading: u64, pairs: impl IntoIterator<Item = (u64, &'a str)>) {
        if self.enabled() {
            self.skus.insert(reading, pairs);
        }
    }

    /// Drops product `id`'s pair (the store showed it is wrong).
    pub fn forget_sku(&self, id: u64) {
        self.skus.forget(id);
    }

    /// Pairs held, for `/readyz` and the log.
    pub fn indexed_skus(&self) -> usize {
        self.skus.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_go_with_their_products_invalidation_and_tell_their_age() {
        let clock = TagClock::new();
        let index = SkuIndex::new();
        index.insert(clock.now(), [(1, "A-1"), (2, "B-2"), (3, "")]);
        assert_eq!(&*index.get(&clock, 1).unwrap().0, "A-1");
        assert!(index.get(&clock, 1).unwrap().1 < Duration::from_secs(2));
        assert!(index.get(&clock, 3).is_none(), "an empty SKU is no pair");
        clock.invalidate(&[tag::sku("B-2")]);
        assert!(index.get(&clock, 2).is_none());
        assert_eq!(
            index.len(),
            1,
            "the invalidated pair is dropped when found so"
        );
        // A pair whose fetch began before an invalidation is not taken for valid.
        let before = clock.now();
        clock.invalidate(&[tag::product(4)]);
        index.insert(before, [(4, "D-4")]);
        assert!(index.get(&clock, 4).is_none());
        clock.invalidate_all();
        assert!(index.get(&clock, 1).is_none());
    }

    /// SKUs in one buffer: a pair replaced or dropped leaves bytes behind that the buffer
    /// sheds once they are half of it, and every pair still finds its own SKU afterwards.
    #[test]
    fn skus_share_one_buffer_that_sheds_dropped_ones() {
        let clock = TagClock::new();
        let index = SkuIndex::new();
        let sku = |id: u64, round: u32| format!("SKU-{id:06}-{round}");
        let ids = 0..20_000u64;
        let first: Vec<String> = ids.clone().map(|id| sku(id, 0)).collect();
        index.insert(
            clock.now(),
            ids.clone().zip(first.iter().map(String::as_str)),
        );
        let bytes = |index: &SkuIndex| index.pairs.read().unwrap().text.len();
        let full = bytes(&index);
        // The same SKUs again (a list read again): nothing is appended.
        index.insert(
            clock.now(),
            ids.clone().zip(first.iter().map(String::as_str)),
        );
        assert_eq!(bytes(&index), full);
        // Every SKU renamed twice: the buffer is written again rather than tripled.
        for round in 1..=2 {
            let renamed: Vec<String> = ids.clone().map(|id| sku(id, round)).collect();
            index.insert(
                clock.now(),
                ids.clone().zip(renamed.iter().map(String::as_str)),
            );
        }
        assert!(bytes(&index) < 2 * full, "{} of {full}", bytes(&index));
        for id in ids.clone().step_by(997) {
            assert_eq!(&*index.get(&clock, id).unwrap().0, sku(id, 2));
        }
        // Dropping most pairs sheds their bytes too; the rest are still found.
        for id in ids.clone().filter(|id| id % 10 != 0) {
            index.forget(id);
        }
        assert_eq!(index.len(), 2_000);
        assert!(bytes(&index) < full / 2, "{} of {full}", bytes(&index));
        for id in ids.step_by(10) {
            assert_eq!(&*index.get(&clock, id).unwrap().0, sku(id, 2));
        }
        // A SKU too long for its length byte is not kept; its id is looked up instead.
        let long = "L".repeat(MAX_SKU + 1);
        index.insert(clock.now(), [(99_999, long.as_str())]);
        assert!(index.get(&clock, 99_999).is_none());
    }
}
