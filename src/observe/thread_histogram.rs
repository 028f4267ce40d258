//! A latency histogram that each thread records into alone, summed when `/metrics` is read.
//!
//! `prometheus-client`'s `Histogram` keeps its buckets behind one mutex. Every request
//! records its latency, so with two workers serving cache hits that mutex and its buckets
//! were a cache line moving between the cores on every request: the lock's compare-and-swap
//! and the bucket's increment were the two hottest instructions of the request metrics
//! (`perf annotate`, issue 23). Here a thread records into a shard of its own (its counts
//! allocated by that thread, so on that thread's pages), and a scrape adds the shards up.
//!
//! The exposition is `prometheus-client`'s own (`MetricEncoder::encode_histogram`, with the
//! same buckets and `+Inf`), so `/metrics` reads exactly as before. A thread's shard is
//! folded into the histogram's `retired` counts when the thread ends, so no count is lost
//! and series never go down.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use prometheus_client::encoding::{EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::{MetricType, TypedMetric};

/// One thread's counts (or the shared counts of threads that ended and of records made
/// without a shard).
#[derive(Debug)]
pub struct Shard {
    /// Per bucket, the last one `+Inf`; not cumulative.
    counts: Box<[AtomicU64]>,
    count: AtomicU64,
    /// The sum of the values, as `f64` bits.
    sum: AtomicU64,
}

impl Shard {
    fn new(buckets: usize) -> Shard {
        Shard {
            counts: (0..buckets).map(|_| AtomicU64::new(0)).collect(),
            count: AtomicU64::new(0),
            sum: AtomicU64::new(0f64.to_bits()),
        }
    }

    /// Records `value` in bucket `index`. Read-modify-writes, so that the retired shard can
    /// take records from any thread; on a thread's own shard they touch only its lines.
    fn record(&self, index: usize, value: f64) {
        self.counts[index].fetch_add(1, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
        let _ = self
            .sum
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
                Some((f64::from_bits(bits) + value).to_bits())
            });
    }

    /// Adds `other`'s counts to this shard's.
    fn absorb(&self, other: &Shard) {
        for (mine, theirs) in self.counts.iter().zip(other.counts.iter()) {
            mine.fetch_add(theirs.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        self.count
            .fetch_add(other.count.load(Ordering::Relaxed), Ordering::Relaxed);
        let sum = f64::from_bits(other.sum.load(Ordering::Relaxed));
        let _ = self
            .sum
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
                Some((f64::from_bits(bits) + sum).to_bits())
            });
    }
}

#[derive(Debug)]
struct Inner {
    /// Upper bounds, finite, ascending; `+Inf` is implied after them.
    bounds: Box<[f64]>,
    /// Live threads' shards.
    shards: Mutex<Vec<Arc<Shard>>>,
    /// Ended threads' counts, and records made without a shard.
    retired: Shard,
}

impl Inner {
    fn bucket(&self, value: f64) -> usize {
        if value.is_nan() {
            return self.bounds.len();
        }
        self.bounds
            .iter()
            .position(|bound| value <= *bound)
            .unwrap_or(self.bounds.len())
    }
}

/// The histogram: cheap to clone (one `Arc`), as a metric family's members are.
#[derive(Debug, Clone)]
pub struct ThreadHistogram {
    inner: Arc<Inner>,
}

impl ThreadHistogram {
    pub fn new(bounds: &[f64]) -> ThreadHistogram {
        let bounds: Box<[f64]> = bounds.iter().copied().filter(|b| b.is_finite()).collect();
        let buckets = bounds.len() + 1;
        ThreadHistogram {
            inner: Arc::new(Inner {
                bounds,
                shards: Mutex::new(Vec::new()),
                retired: Shard::new(buckets),
            }),
        }
    }

    /// A shard for the calling thread to record into from now on (kept by the thread; its
    /// counts are folded into the histogram when it is dropped).
    pub fn shard(&self) -> ThreadShard {
        let shard = Arc::new(Shard::new(self.inner.bounds.len() + 1));
        self.inner
            .shards
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(shard.clone());
        ThreadShard {
            histogram: self.inner.clone(),
            shard,
        }
    }

    /// Records `value` without a shard (into the shared counts).
    pub fn observe(&self, value: f64) {
        self.inner.retired.record(self.inner.bucket(value), value);
    }

    /// Sum, count and per-bucket counts (not cumulative), over every shard.
    fn totals(&self) -> (f64, u64, Vec<(f64, u64)>) {
        let total = Shard::new(self.inner.bounds.len() + 1);
        {
            let shards = self
                .inner
                .shards
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            // Under the lock, so that a shard being retired is counted once.
            total.absorb(&self.inner.retired);
            for shard in shards.iter() {
                total.absorb(shard);
            }
        }
        let buckets = self
            .inner
            .bounds
            .iter()
            .copied()
            .chain(std::iter::once(f64::INFINITY))
            .zip(total.counts.iter().map(|c| c.load(Ordering::Relaxed)))
            .collect();
        (
            f64::from_bits(total.sum.load(Ordering::Relaxed)),
            total.count.load(Ordering::Relaxed),
            buckets,
        )
    }
}

/// A thread's shard of a [`ThreadHistogram`].
#[derive(Debug)]
pub struct ThreadShard {
    histogram: Arc<Inner>,
    shard: Arc<Shard>,
}

impl ThreadShard {
    pub fn observe(&self, value: f64) {
        self.shard.record(self.histogram.bucket(value), value);
    }
}

impl Drop for ThreadShard {
    fn drop(&mut self) {
        let mut shards = self
            .histogram
            .shards
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        shards.retain(|s| !Arc::ptr_eq(s, &self.shard));
        self.histogram.retired.absorb(&self.shard);
    }
}

impl TypedMetric for ThreadHistogram {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for ThreadHistogram {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        let (sum, count, buckets) = self.totals();
        encoder.encode_histogram::<NoLabelSet>(sum, count, &buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_client::encoding::text::encode;
    use prometheus_client::metrics::histogram::Histogram;
    use prometheus_client::registry::Registry;

    const BOUNDS: [f64; 4] = [0.001, 0.01, 0.1, 1.0];
    // Powers of two and their sums are exact, so the sum does not depend on the order in
    // which the shards are added up; 1.0 is a bucket's bound, which it belongs to.
    const VALUES: [f64; 9] = [
        0.000_488_281_25,
        0.000_976_562_5,
        0.007_812_5,
        0.0625,
        0.5,
        3.0,
        0.0,
        0.25,
        1.0,
    ];

    fn exposition(
        metric: impl EncodeMetric + TypedMetric + std::fmt::Debug + Send + Sync + 'static,
    ) -> String {
        let mut registry = Registry::default();
        registry.register("latency", "help", metric);
        let mut out = String::new();
        encode(&mut out, &registry).unwrap();
        out
    }

    /// The exposition is the library histogram's, byte for byte, whichever threads recorded.
    #[test]
    fn reads_as_the_library_histogram_does() {
        let theirs = Histogram::new(BOUNDS);
        for v in VALUES {
            theirs.observe(v);
        }
        let ours = ThreadHistogram::new(&BOUNDS);
        let threads: Vec<_> = VALUES
            .chunks(3)
            .map(|chunk| {
                let (ours, chunk) = (ours.clone(), chunk.to_vec());
                std::thread::spawn(move || {
                    let shard = ours.shard();
                    for v in chunk {
                        shard.observe(v);
                    }
                    // Kept alive past the read below by returning it.
                    shard
                })
            })
            .collect();
        let shards: Vec<ThreadShard> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(exposition(ours.clone()), exposition(theirs.clone()));
        // Threads ending: their counts stay.
        drop(shards);
        assert_eq!(exposition(ours.clone()), exposition(theirs));
        assert!(ours.inner.shards.lock().unwrap().is_empty());
    }

    #[test]
    fn records_without_a_shard_count_too() {
        let ours = ThreadHistogram::new(&BOUNDS);
        ours.observe(0.05);
        ours.shard().observe(0.05);
        let (sum, count, buckets) = ours.totals();
        assert_eq!(count, 2);
        assert!((sum - 0.1).abs() < 1e-12);
        assert_eq!(buckets[2], (0.1, 2));
        assert_eq!(buckets[4], (f64::INFINITY, 0));
    }
}
