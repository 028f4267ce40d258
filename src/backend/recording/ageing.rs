//! Cassettes that age (`STOREGATE_REPLAY_MAX_AGE`, `STOREGATE_REPLAY_STALE`): an answer
//! recorded against last year's store keeps a test green while the store has moved on.
//! Past the maximum age, replay warns (`warn`), refuses (`error`) or records the answer
//! again from the store (`record`, Polly.js's `expiresIn` and VCR's `re_record_interval`).
//!
//! An interaction without `recorded_at` (written before storegate kept the time) has an
//! unknown age and counts as stale: nothing says it is fresh.

use std::time::{Duration, SystemTime};

pub const MAX_AGE_KEY: &str = "STOREGATE_REPLAY_MAX_AGE";
pub const STALE_KEY: &str = "STOREGATE_REPLAY_STALE";

/// What to do with a stale answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stale {
    Warn,
    Error,
    Record,
}

impl Stale {
    pub fn name(self) -> &'static str {
        match self {
            Stale::Warn => "warn",
            Stale::Error => "error",
            Stale::Record => "record",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ageing {
    /// `None`: answers never age.
    pub max_age: Option<Duration>,
    pub stale: Option<Stale>,
}

/// How old an answer is, when it is too old.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Fresh,
    /// Older than the maximum age (`None`: no `recorded_at`, age unknown).
    Stale(Option<Duration>),
}

impl Ageing {
    pub fn parse(max_age: Option<&str>, stale: Option<&str>) -> Result<Ageing, String> {
        let max_age = max_age
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(|t| super::spec::duration(t, MAX_AGE_KEY))
            .transpose()?;
        let stale = match stale.map(|t| t.trim().to_ascii_lowercase()).as_deref() {
            None | Some("") => None,
            Some("warn") => Some(Stale::Warn),
            Some("error") => Some(Stale::Error),
            Some("record") => Some(Stale::Record),
            Some(other) => {
                return Err(format!(
                    "{STALE_KEY}: expected warn, error or record, got {other:?}"
                ));
            }
        };
        if stale.is_some() && max_age.is_none() {
            return Err(format!(
                "{STALE_KEY} is set but {MAX_AGE_KEY} is not: say how old an answer may be (e.g. 30d)"
            ));
        }
        Ok(Ageing { max_age, stale })
    }

    /// What is done with a stale answer (warn when only the age is set).
    pub fn action(&self) -> Stale {
        self.stale.unwrap_or(Stale::Warn)
    }

    /// The verdict on an answer recorded at `recorded_at`, at `now`.
    pub fn verdict(&self, recorded_at: Option<&str>, now: SystemTime) -> Verdict {
        let Some(max_age) = self.max_age else {
            return Verdict::Fresh;
        };
        match recorded_at.and_then(|t| parse_time(t).ok()) {
            Some(at) => {
                let age = now.duration_since(at).unwrap_or_default();
                if age > max_age {
                    Verdict::Stale(Some(age))
                } else {
                    Verdict::Fresh
                }
            }
            None => Verdict::Stale(None),
        }
    }
}

/// `2026-11-28T21:57:33Z` for now.
pub fn now_text() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

/// An RFC 3339 time: `Z` or an offset (`+01:00`, as HAR files write them), fractions allowed.
pub fn parse_time(text: &str) -> Result<SystemTime, String> {
    let text = text.trim();
    if let Ok(at) = humantime::parse_rfc3339_weak(text.trim_end_matches(['Z', 'z']))
        && (text.ends_with(['Z', 'z']) || !has_offset(text))
    {
        return Ok(at);
    }
    // An offset: the local time minus the offset is UTC.
    if has_offset(text) {
        let (local, offset) = text.split_at(text.len() - 6);
        let sign = if offset.starts_with('-') { -1i64 } else { 1 };
        let hours: i64 = offset[1..3].parse().map_err(|_| bad(text))?;
        let minutes: i64 = offset[4..6].parse().map_err(|_| bad(text))?;
        let at = humantime::parse_rfc3339_weak(local).map_err(|_| bad(text))?;
        let shift = Duration::from_secs(((hours * 60 + minutes) * 60) as u64);
        return Ok(if sign > 0 { at - shift } else { at + shift });
    }
    Err(bad(text))
}

fn has_offset(text: &str) -> bool {
    let bytes = text.as_bytes();
    let n = bytes.len();
    n > 16
        && text.contains('T')
        && matches!(bytes[n - 6], b'+' | b'-')
        && bytes[n - 3] == b':'
        && [n - 5, n - 4, n - 2, n - 1]
            .iter()
            .all(|&i| bytes[i].is_ascii_digit())
}

fn bad(text: &str) -> String {
    format!("{text:?} is not an RFC 3339 time such as 2026-11-28T21:57:33Z")
}

/// `45d 3h`: an age in days and hours (minutes and seconds under a day).
pub fn describe(age: Duration) -> String {
    let secs = age.as_secs();
    let (days, hours) = (secs / 86_400, secs % 86_400 / 3600);
    if days > 0 {
        return if hours > 0 {
            format!("{days}d {hours}h")
        } else {
            format!("{days}d")
        };
    }
    humantime::format_duration(Duration::from_secs(secs)).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_age_past_the_maximum() {
        let ageing = Ageing::parse(Some("30d"), Some("error")).unwrap();
        let now = parse_time("2026-11-28T00:00:00Z").unwrap();
        assert_eq!(
            ageing.verdict(Some("2026-11-20T00:00:00Z"), now),
            Verdict::Fresh
        );
        assert_eq!(
            ageing.verdict(Some("2026-10-01T12:00:00Z"), now),
            Verdict::Stale(Some(Duration::from_secs(57 * 86_400 + 12 * 3600)))
        );
        assert_eq!(ageing.verdict(None, now), Verdict::Stale(None));
        assert_eq!(Ageing::default().verdict(None, now), Verdict::Fresh);
        assert_eq!(
            describe(Duration::from_secs(57 * 86_400 + 12 * 3600)),
            "57d 12h"
        );
        assert_eq!(
            parse_time("2026-11-28T01:30:00.123+01:30").unwrap(),
            parse_time("2026-11-28T00:00:00.123Z").unwrap()
        );
        assert!(parse_time("yesterday").is_err());
        assert!(
            Ageing::parse(None, Some("error"))
                .unwrap_err()
                .contains(MAX_AGE_KEY)
        );
        assert!(
            Ageing::parse(Some("30d"), Some("panic"))
                .unwrap_err()
                .contains(STALE_KEY)
        );
        assert!(
            Ageing::parse(Some("a month"), None)
                .unwrap_err()
                .contains(MAX_AGE_KEY)
        );
    }
}
