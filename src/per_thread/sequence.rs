//! Numbers unique within the process (request ids, trace and span ids), drawn without a
//! write every worker shares: each thread takes a block of [`BLOCK`] numbers off the
//! shared counter at once and hands them out alone. Numbers stay unique; across threads
//! they are no longer in the order requests came in, which nothing reads them for.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::LocalKey;

/// Numbers a thread takes off the shared counter at once.
pub const BLOCK: u64 = 4096;

/// A process-wide sequence handed out in per-thread blocks. `local` is the thread's own
/// place for its current block (`next`, `end`), one per sequence.
pub struct Sequence {
    shared: AtomicU64,
    local: &'static LocalKey<Cell<(u64, u64)>>,
}

impl Sequence {
    /// A sequence starting at 1.
    pub const fn new(local: &'static LocalKey<Cell<(u64, u64)>>) -> Sequence {
        Sequence {
            shared: AtomicU64::new(1),
            local,
        }
    }

    /// The next number of this thread's block, taking a new block when it is used up.
    pub fn next(&self) -> u64 {
        self.local
            .try_with(|block| {
                let (mut next, mut end) = block.get();
                if next == end {
                    next = self.shared.fetch_add(BLOCK, Ordering::Relaxed);
                    end = next + BLOCK;
                }
                block.set((next + 1, end));
                next
            })
            // A thread being torn down: one number off the shared counter (every
            // `fetch_add` reserves a range of its own, so numbers stay unique).
            .unwrap_or_else(|_| self.shared.fetch_add(1, Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    thread_local!(static LOCAL: Cell<(u64, u64)> = const { Cell::new((0, 0)) });
    static NUMBERS: Sequence = Sequence::new(&LOCAL);

    #[test]
    fn numbers_are_unique_across_threads_and_blocks() {
        let threads: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    (0..3 * BLOCK + 7)
                        .map(|_| NUMBERS.next())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut seen = HashSet::new();
        for thread in threads {
            for n in thread.join().unwrap() {
                assert!(n > 0, "never zero");
                assert!(seen.insert(n), "{n} handed out twice");
            }
        }
        assert_eq!(seen.len() as u64, 4 * (3 * BLOCK + 7));
    }
}
