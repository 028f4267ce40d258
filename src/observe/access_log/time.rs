//! The time at the head of an access line: the wall-clock time of a request's end (from
//! the monotonic reading the request took already), split as tracing-subscriber's timer
//! splits it, and its `YYYY-MM-DDTHH:MM:SS` written without a formatter.

use std::io::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

/// The wall-clock time of `at`: from a pair of readings (monotonic, wall clock) the thread
/// takes at most once a second, rather than one more reading of the clock per line. A step
/// of the system clock shows in the lines within a second.
pub(super) fn wall_time(at: std::time::Instant) -> SystemTime {
    thread_local! {
        static ANCHOR: std::cell::Cell<Option<(std::time::Instant, SystemTime)>> =
            const { std::cell::Cell::new(None) };
    }
    let from = |(instant, wall): (std::time::Instant, SystemTime)| match at
        .checked_duration_since(instant)
    {
        Some(later) => wall + later,
        None => wall - instant.duration_since(at),
    };
    ANCHOR
        .try_with(|anchor| {
            // Within the anchor's second: one subtraction of the two instants.
            if let Some((instant, wall)) = anchor.get()
                && let Some(later) = at.checked_duration_since(instant)
                && later < std::time::Duration::from_secs(1)
            {
                return wall + later;
            }
            let pair = (std::time::Instant::now(), SystemTime::now());
            anchor.set(Some(pair));
            from(pair)
        })
        .unwrap_or_else(|_| SystemTime::now())
}

/// Seconds since the epoch (negative before it) and the microseconds of that second, as
/// tracing-subscriber's `SystemTime` timer splits a time.
pub(super) fn timestamp(time: SystemTime) -> (i64, u32) {
    let (secs, nanos) = match time.duration_since(UNIX_EPOCH) {
        Ok(d) => (d.as_secs() as i64, d.subsec_nanos()),
        Err(e) => {
            let d = e.duration();
            match d.subsec_nanos() {
                0 => (-(d.as_secs() as i64), 0),
                n => (-(d.as_secs() as i64) - 1, 1_000_000_000 - n),
            }
        }
    };
    (secs, nanos / 1_000)
}

/// `YYYY-MM-DDTHH:MM:SS` of a second since the epoch (a year past 9999 as `+10000`, one
/// before year 0 as `-0001`, as tracing-subscriber writes them).
pub(super) fn write_date(out: &mut Vec<u8>, secs: i64) {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    if (0..=9999).contains(&year) {
        push_padded(out, year as u64, 4);
    } else if year > 9999 {
        let _ = write!(out, "+{year}");
    } else {
        let _ = write!(out, "{year:05}");
    }
    out.push(b'-');
    push_padded(out, u64::from(month), 2);
    out.push(b'-');
    push_padded(out, u64::from(day), 2);
    out.push(b'T');
    push_padded(out, (rem / 3600) as u64, 2);
    out.push(b':');
    push_padded(out, (rem / 60 % 60) as u64, 2);
    out.push(b':');
    push_padded(out, (rem % 60) as u64, 2);
}

/// The proleptic Gregorian date of a day since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `value` in decimal, zero-padded to `width` digits.
fn push_padded(out: &mut Vec<u8>, value: u64, width: usize) {
    let mut digits = itoa::Buffer::new();
    let text = digits.format(value);
    for _ in text.len()..width {
        out.push(b'0');
    }
    out.extend_from_slice(text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wall_time_of_an_instant_is_the_clocks() {
        let before = SystemTime::now();
        let at = std::time::Instant::now();
        let after = SystemTime::now();
        // Anchored now, and from the anchor later (an instant before it, one after it).
        for _ in 0..2 {
            let wall = wall_time(at);
            assert!(
                wall >= before - std::time::Duration::from_millis(1),
                "{wall:?} {before:?}"
            );
            assert!(
                wall <= after + std::time::Duration::from_millis(1),
                "{wall:?} {after:?}"
            );
        }
        let later = at + std::time::Duration::from_millis(300);
        let wall = wall_time(later);
        let expected = before + std::time::Duration::from_millis(300);
        let off = wall
            .duration_since(expected)
            .unwrap_or_else(|e| e.duration());
        assert!(off < std::time::Duration::from_millis(5), "{off:?}");
    }
}
