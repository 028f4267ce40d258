//! The tag clock: what makes invalidation by tag O(tags) without visiting entries
//! (the module docs of [`crate::cache`] say how). A global sequence, and per slot the
//! sequence of its last invalidation; an entry is valid while no slot of its tags, and no
//! "purge everything", has moved past the sequence it read before its fetch.

use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use super::Entry;

/// Number of invalidation slots (a power of two). 64 Ki slots are 512 KiB.
pub(super) const SLOTS: usize = 1 << 16;

/// The tag clock: a global sequence and, per slot, the sequence of its last invalidation.
pub(super) struct TagClock {
    seq: AtomicU64,
    /// Sequence of the last "purge everything".
    all: AtomicU64,
    slots: Box<[AtomicU64]>,
}

impl TagClock {
    pub(super) fn new() -> TagClock {
        TagClock {
            seq: AtomicU64::new(0),
            all: AtomicU64::new(0),
            slots: (0..SLOTS).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    pub(super) fn now(&self) -> u64 {
        self.seq.load(Ordering::SeqCst)
    }

    pub(super) fn slot(tag: &str) -> u32 {
        // SipHash with fixed keys: stable within a process, which is all we need.
        let mut hasher = std::hash::DefaultHasher::new();
        tag.hash(&mut hasher);
        (hasher.finish() as usize & (SLOTS - 1)) as u32
    }

    pub(super) fn invalidate(&self, tags: &[String]) {
        let seq = self.seq.fetch_add(1, Ordering::SeqCst) + 1;
        for tag in tags {
            self.slots[Self::slot(tag) as usize].fetch_max(seq, Ordering::SeqCst);
        }
    }

    pub(super) fn invalidate_all(&self) {
        let seq = self.seq.fetch_add(1, Ordering::SeqCst) + 1;
        self.all.fetch_max(seq, Ordering::SeqCst);
    }

    /// No invalidation of `tags`, and no purge of everything, since reading `seq`.
    pub(super) fn valid_since(&self, seq: u64, tags: &[&str]) -> bool {
        self.all.load(Ordering::SeqCst) <= seq
            && tags
                .iter()
                .all(|tag| self.slots[Self::slot(tag) as usize].load(Ordering::SeqCst) <= seq)
    }

    pub(super) fn valid(&self, entry: &Entry) -> bool {
        self.all.load(Ordering::SeqCst) <= entry.seq
            && entry
                .slots
                .iter()
                .all(|&slot| self.slots[slot as usize].load(Ordering::SeqCst) <= entry.seq)
    }
}
