//! The rolling window every limit counts in: at most `limit` admissions in any window of
//! `W`, kept as [`BUCKETS`] counters of `W / BUCKETS` each.
//!
//! Why not one counter per fixed window: a client could spend a whole budget at the end of
//! one window and another at the start of the next, twice the limit in a moment (the
//! "double burst" of fixed windows). Why not GCRA (`governor`, `redis-cell`): with a burst
//! of `N` it refills one request every `W/N` after it, so `20/10s` lets 24 through in the
//! two seconds after a burst, where a client reading "20 per 10 s" expects 20. Why not a
//! log of every admission: its memory grows with the limit, per client. Buckets keep a
//! window to 11 numbers per client, and count what left the window only in part by the
//! share of its bucket still inside (the oldest bucket weighs what is left of it), so an
//! admission stops counting about `W` after it was made, within a bucket's width.
//!
//! The same arithmetic runs in Redis for the fleet (`fleet.rs`'s script); the counts it
//! hands back are read with [`Window::from_counts`], so both agree on what is left and
//! when to come back.

/// Buckets a window is cut into.
pub const BUCKETS: u64 = 10;

/// Counters kept: the window's buckets and the one leaving it.
const RING: usize = BUCKETS as usize + 1;

/// A client's admissions in the last window, by bucket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Window {
    /// The newest bucket written (`now / width`); the others are the [`RING`] - 1 before it.
    latest: u64,
    counts: [u32; RING],
}

/// How a window's numbers stand at a moment, for the answer's headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    /// Requests that would still be admitted now.
    pub remaining: u32,
    /// Milliseconds until the next one would be admitted (0 while some remain).
    pub retry_ms: u64,
    /// Milliseconds until nothing counted now is left in the window.
    pub reset_ms: u64,
}

/// A bucket's width in milliseconds, for a window of `window_ms`.
pub fn width_ms(window_ms: u64) -> u64 {
    (window_ms / BUCKETS).max(1)
}

impl Window {
    /// The window Redis keeps, from its buckets' `(index, count)` pairs at `now_ms`.
    pub fn from_counts(now_ms: u64, width: u64, counts: &[(u64, u32)]) -> Window {
        let mut window = Window {
            latest: now_ms / width,
            ..Window::default()
        };
        for &(index, count) in counts {
            if index <= window.latest && index + (RING as u64) > window.latest {
                window.counts[(index % RING as u64) as usize] = count;
            }
        }
        window
    }

    /// Moves the newest bucket to `current`, emptying the ones that came back round.
    fn advance(&mut self, current: u64) {
        if current <= self.latest {
            return;
        }
        let gone = (current - self.latest).min(RING as u64);
        for step in 1..=gone {
            self.counts[((self.latest + step) % RING as u64) as usize] = 0;
        }
        self.latest = current;
    }

    fn at(&self, index: u64) -> u32 {
        if index > self.latest || index + (RING as u64) <= self.latest {
            0
        } else {
            self.counts[(index % RING as u64) as usize]
        }
    }

    /// Admissions counted at `now_ms`: the buckets inside the window, and the oldest by the
    /// share of it still inside.
    pub fn count(&self, now_ms: u64, width: u64) -> f64 {
        let current = now_ms / width;
        let into = (now_ms - current * width) as f64 / width as f64;
        let mut total = 0.0;
        for back in 0..BUCKETS {
            if let Some(index) = current.checked_sub(back) {
                total += f64::from(self.at(index));
            }
        }
        if let Some(oldest) = current.checked_sub(BUCKETS) {
            total += f64::from(self.at(oldest)) * (1.0 - into);
        }
        total
    }

    /// Takes up to `want` admissions at `now_ms` under `limit`; how many it got.
    pub fn take(&mut self, now_ms: u64, width: u64, limit: u32, want: u32) -> u32 {
        let current = now_ms / width;
        self.advance(current);
        let free = free(f64::from(limit) - self.count(now_ms, width));
        let granted = want.min(free);
        let slot = (current % RING as u64) as usize;
        self.counts[slot] = self.counts[slot].saturating_add(granted);
        granted
    }

    /// Gives back `n` admissions taken in bucket `index` and not used.
    pub fn give_back(&mut self, index: u64, n: u32) {
        if index <= self.latest && index + (RING as u64) > self.latest {
            let slot = (index % RING as u64) as usize;
            self.counts[slot] = self.counts[slot].saturating_sub(n);
        }
    }

    /// Whether nothing is counted any more at `now_ms` (the window can be forgotten).
    pub fn is_empty_at(&self, now_ms: u64, width: u64) -> bool {
        self.count(now_ms, width) < 1e-9
    }

    /// What is left under `limit` at `now_ms`, when the next admission would be, and when
    /// everything counted now has left the window.
    pub fn standing(&self, now_ms: u64, width: u64, limit: u32) -> Standing {
        let current = now_ms / width;
        let into = (now_ms - current * width) as f64 / width as f64;
        let count = self.count(now_ms, width);
        let remaining = free(f64::from(limit) - count);
        // The count falls as the oldest bucket slides out: linearly across one bucket's
        // width, then the next one becomes the oldest, and so on.
        let mut retry = 0.0;
        if remaining == 0 {
            let mut excess = count - (f64::from(limit) - 1.0);
            let mut elapsed = 0.0;
            for step in 0..=BUCKETS {
                let Some(oldest) = (current + step).checked_sub(BUCKETS) else {
                    elapsed += if step == 0 { 1.0 - into } else { 1.0 };
                    continue;
                };
                let left = if step == 0 { 1.0 - into } else { 1.0 };
                let weight = f64::from(self.at(oldest));
                if weight * left >= excess - 1e-9 && weight > 0.0 {
                    elapsed += excess / weight;
                    excess = 0.0;
                    break;
                }
                excess -= weight * left;
                elapsed += left;
            }
            if excess > 1e-9 {
                // More counted than the buckets hold: back when all of it left.
                elapsed = (BUCKETS + 1) as f64 - into;
            }
            retry = elapsed * width as f64;
        }
        let newest = (0..RING as u64)
            .filter_map(|back| current.checked_sub(back))
            .find(|&index| self.at(index) > 0);
        let reset_ms = match newest {
            Some(index) => ((index + BUCKETS + 1) * width).saturating_sub(now_ms),
            None => 0,
        };
        Standing {
            remaining,
            retry_ms: retry.ceil() as u64,
            reset_ms,
        }
    }

    /// The bucket `now_ms` falls in.
    pub fn bucket_of(now_ms: u64, width: u64) -> u64 {
        now_ms / width
    }
}

/// Whole admissions that fit in `room` (a little slack for the weights' rounding).
fn free(room: f64) -> u32 {
    let room = (room + 1e-9).floor();
    if room <= 0.0 {
        0
    } else if room >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        room as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: u64 = 10_000;

    #[test]
    fn no_more_than_the_limit_in_any_window() {
        let width = width_ms(W);
        let mut window = Window::default();
        let start = 1_000_000;
        let mut admitted = 0;
        // One attempt every 50 ms for 2 s: the limit, and not one more.
        for i in 0..40 {
            admitted += window.take(start + i * 50, width, 20, 1);
        }
        assert_eq!(admitted, 20);
        // Back 10 s after the burst (which took its first second), whole again soon after.
        let burst_end = start + 20 * 50;
        assert_eq!(window.take(burst_end + 2_000, width, 20, 1), 0);
        let later = start + W + 1_100;
        assert_eq!(window.take(later, width, 20, 20), 20);
    }

    #[test]
    fn no_double_burst_at_a_window_edge() {
        // Twenty at the very end of one bucket grid's window, then attempts right after.
        let width = width_ms(W);
        let mut window = Window::default();
        let edge = 10 * W;
        assert_eq!(window.take(edge - 50, width, 20, 20), 20);
        assert_eq!(window.take(edge + 50, width, 20, 20), 0);
        assert_eq!(window.take(edge + 2_000, width, 20, 20), 0);
    }

    #[test]
    fn standing_says_when_to_come_back() {
        let width = width_ms(W);
        let mut window = Window::default();
        let t0 = 5 * W;
        window.take(t0, width, 20, 20);
        let s = window.standing(t0 + 100, width, 20);
        assert_eq!(s.remaining, 0);
        // The bucket of t0 starts leaving 10 s after it began; one admission's worth of it
        // has left 1/20 of a bucket later.
        assert!(s.retry_ms >= 9_900 && s.retry_ms <= 10_000, "{s:?}");
        assert!(s.reset_ms >= 10_900 && s.reset_ms <= 11_000, "{s:?}");
        let later = t0 + 100 + s.retry_ms;
        assert_eq!(window.take(later, width, 20, 1), 1);
        assert_eq!(window.standing(t0, width, 20).retry_ms, 10_050);
        let fresh = Window::default().standing(t0, width, 20);
        assert_eq!(
            (fresh.remaining, fresh.retry_ms, fresh.reset_ms),
            (20, 0, 0)
        );
    }

    #[test]
    fn given_back_admissions_count_no_more_and_redis_counts_read_the_same() {
        let width = width_ms(W);
        let mut window = Window::default();
        let now = 7 * W + 300;
        assert_eq!(window.take(now, width, 20, 15), 15);
        window.give_back(Window::bucket_of(now, width), 5);
        assert_eq!(window.take(now, width, 20, 20), 10);
        let redis = Window::from_counts(now, width, &[(Window::bucket_of(now, width), 20)]);
        assert_eq!(
            redis.standing(now, width, 20),
            window.standing(now, width, 20)
        );
        assert!(!window.is_empty_at(now, width));
        assert!(window.is_empty_at(now + W + width, width));
    }
}
