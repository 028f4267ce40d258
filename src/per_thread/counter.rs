//! A counter kept in [`STRIPES`] cache-line-sized stripes: a thread adds to the stripe it
//! was given at its first count, a read adds the stripes up. Two threads share a stripe
//! only when more than [`STRIPES`] threads count, and then it is still correct, only slower.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crossbeam_utils::CachePadded;

/// Stripes per counter: more than the workers of any machine the gateway runs on, at 128
/// bytes each (`CachePadded`'s size on x86-64, where prefetching pairs lines).
pub const STRIPES: usize = 32;

/// The calling thread's stripe: handed out in turn at a thread's first count.
fn stripe() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local!(static STRIPE: usize = NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES);
    STRIPE.try_with(|s| *s).unwrap_or(0)
}

/// The counter.
#[derive(Debug)]
pub struct Counter {
    stripes: Box<[CachePadded<AtomicU64>]>,
}

impl Default for Counter {
    fn default() -> Counter {
        Counter {
            stripes: (0..STRIPES)
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect(),
        }
    }
}

impl Counter {
    pub fn add(&self, n: u64) {
        self.stripes[stripe()].fetch_add(n, Ordering::Relaxed);
    }

    pub fn inc(&self) {
        self.add(1);
    }

    /// The total: every stripe read once, so a read racing counts may miss the newest.
    pub fn get(&self) -> u64 {
        self.stripes.iter().map(|s| s.load(Ordering::Relaxed)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn counts_from_many_threads_add_up() {
        let counter = Arc::new(Counter::default());
        let threads: Vec<_> = (0..STRIPES + 5)
            .map(|_| {
                let counter = counter.clone();
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        counter.inc();
                    }
                    counter.add(3);
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(counter.get(), (STRIPES as u64 + 5) * 1003);
    }
}
