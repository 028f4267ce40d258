//! Timestamps in Magento's `YYYY-MM-DD HH:MM:SS` (UTC) form.
//!
//! Magento stores and returns dates as plain strings, and clients compare them as strings, so
//! the sandbox keeps seconds since the epoch internally (cheap for 100k generated products)
//! and formats them on output.

use std::time::{SystemTime, UNIX_EPOCH};

pub(crate) fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Days since 1970-01-01 to a civil (year, month, day), proleptic Gregorian.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let month = i64::from(month);
    let doy = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

pub(crate) fn format_datetime(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

pub(crate) fn format_date(secs: i64) -> String {
    format_datetime(secs)[..10].to_string()
}

/// Parses `YYYY-MM-DD` with an optional ` HH:MM:SS` (or `T`-separated) time part.
pub(crate) fn parse_datetime(text: &str) -> Option<i64> {
    let text = text.trim();
    let date = text.get(..10)?;
    let mut parts = date.split('-');
    let year: i64 = parts.next()?.parse().ok()?;
    let month: u32 = parts.next()?.parse().ok()?;
    let day: u32 = parts.next()?.parse().ok()?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let mut secs = days_from_civil(year, month, day) * 86_400;
    let rest = text.get(10..).unwrap_or("").trim_start_matches(['T', ' ']);
    if !rest.is_empty() {
        let mut time = rest.get(..8).unwrap_or(rest).split(':');
        let h: i64 = time.next()?.parse().ok()?;
        let mi: i64 = time.next().unwrap_or("0").parse().ok()?;
        let s: i64 = time.next().unwrap_or("0").parse().ok()?;
        secs += h * 3600 + mi * 60 + s;
    }
    Some(secs)
}

/// Normalizes a date attribute value the way Magento stores it (`2024-01-31 00:00:00`).
pub(crate) fn normalize_datetime(text: &str) -> Option<String> {
    parse_datetime(text).map(format_datetime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let secs = parse_datetime("2024-02-29 13:45:07").unwrap_or_default();
        assert_eq!(format_datetime(secs), "2024-02-29 13:45:07");
        assert_eq!(format_datetime(0), "1970-01-01 00:00:00");
        assert_eq!(
            normalize_datetime("2030-12-31").as_deref(),
            Some("2030-12-31 00:00:00")
        );
        assert_eq!(parse_datetime("not a date"), None);
    }
}
