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
//! 256 MiB cache from the bodies. Here a pair costs its SKU and about 40 bytes, and the
//! table holds at most [`MAX_PAIRS`].
//!
//! A pair is as trustworthy as a cached `sku_of` entry was: it is dropped by any
//! invalidation of its product's tags (`p:<id>`, `s:<sku>`, here or from another instance)
//! or a purge of everything made after the clock reading taken before the fetch that found
//! it. It does not expire by itself: how old it is goes with it, and the callers decide
//! (a write takes only a pair younger than the cache's TTL; a read takes any and checks the
//! record it got is the product it asked for).

use std::collections::HashMap;
use std::sync::RwLock;
use std::time::Duration;

use tokio::time::Instant;

use super::tag_clock::TagClock;
use super::tags as tag;

/// Pairs kept at most (about 40 bytes and the SKU each: some 30 MiB for the largest
/// catalogs). Past it, new pairs are not kept (their ids are looked up as before).
pub const MAX_PAIRS: usize = 500_000;

struct Pair {
    sku: Box<str>,
    /// The tag clock's reading before the fetch that found it.
    seq: u64,
    /// When it was found, in seconds since the index was made.
    found: u32,
}

pub(super) struct SkuIndex {
    pairs: RwLock<HashMap<u64, Pair>>,
    origin: Instant,
}

impl SkuIndex {
    pub(super) fn new() -> SkuIndex {
        SkuIndex {
            pairs: RwLock::new(HashMap::new()),
            origin: Instant::now(),
        }
    }

    /// The SKU paired with `id`, and how long ago the pair was found, when the clock has not
    /// invalidated it since. An invalidated pair is dropped.
    pub(super) fn get(&self, clock: &TagClock, id: u64) -> Option<(Box<str>, Duration)> {
        let (sku, seq, found) = {
            let pairs = self.pairs.read().ok()?;
            let pair = pairs.get(&id)?;
            (pair.sku.clone(), pair.seq, pair.found)
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

    /// Keeps pairs found by a fetch that began at clock reading `seq`.
    pub(super) fn insert<'a>(&self, seq: u64, pairs: impl IntoIterator<Item = (u64, &'a str)>) {
        let found = u32::try_from(self.origin.elapsed().as_secs()).unwrap_or(u32::MAX);
        let Ok(mut table) = self.pairs.write() else {
            return;
        };
        for (id, sku) in pairs {
            if sku.is_empty() {
                continue;
            }
            if table.len() >= MAX_PAIRS && !table.contains_key(&id) {
                continue;
            }
            table.insert(
                id,
                Pair {
                    sku: sku.into(),
                    seq,
                    found,
                },
            );
        }
    }

    pub(super) fn forget(&self, id: u64) {
        if let Ok(mut table) = self.pairs.write() {
            table.remove(&id);
        }
    }

    /// Pairs held (some may be invalidated and not yet dropped).
    pub(super) fn len(&self) -> usize {
        self.pairs.read().map_or(0, |t| t.len())
    }

    /// Drops every pair (a purge of everything: they are invalid anyway) and gives their
    /// memory back.
    pub(super) fn clear(&self) {
        if let Ok(mut table) = self.pairs.write() {
            *table = HashMap::new();
        }
    }
}

/// The index as the rest of the gateway sees it. Without a cache (a zero TTL) it keeps
/// nothing: every read goes to the store, its SKU lookup included.
impl super::Cache {
    /// The SKU the index pairs with product `id`, and the pair's age.
    pub fn indexed_sku(&self, id: u64) -> Option<(std::sync::Arc<str>, Duration)> {
        let (sku, age) = self.skus.get(&self.clock, id)?;
        Some((sku.into(), age))
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
}
