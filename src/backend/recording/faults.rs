//! Faults replay injects, each with a probability (`STOREGATE_REPLAY_FAULTS`, the control
//! API): the connection's (Toxiproxy's and WireMock's kinds), any HTTP status, and the
//! store's own failures by name ([`super::failures`]).
//!
//! `GET /api/rest/products/{}=maintenance@0.3; reset@0.01; http:500:{"message":"boom"}@0.1`

use std::time::Duration;

use super::failures::{self, Failure, Named};
use super::spec;

pub const KEY: &str = "STOREGATE_REPLAY_FAULTS";

/// One fault.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// The connection reset before an answer (TCP RST).
    Reset,
    /// No answer at all until the client gives up (its own deadline).
    Hang,
    /// The connection closed without a byte of answer.
    Empty,
    /// The head and part of the body, then the connection closed.
    Truncate,
    /// The whole answer, its body sent in small pieces over this long.
    Dribble(Duration),
    /// Any status with any body (JSON when it parses as JSON).
    Http { status: u16, body: Option<String> },
    /// The store's own failure.
    Store(Failure),
}

impl Fault {
    pub fn parse(text: &str) -> Result<Fault, String> {
        let text = text.trim();
        let (name, arg) = match text.split_once(':') {
            Some((name, arg)) => (name.trim(), Some(arg)),
            None => (text, None),
        };
        let lower = name.to_ascii_lowercase();
        let no_argument = |fault: Fault| match arg {
            Some(_) => Err(format!("{KEY}: {name} takes no argument, got {text:?}")),
            None => Ok(fault),
        };
        match lower.as_str() {
            "reset" => no_argument(Fault::Reset),
            "hang" | "timeout" => no_argument(Fault::Hang),
            "empty" => no_argument(Fault::Empty),
            "truncate" | "truncated" => no_argument(Fault::Truncate),
            "dribble" => Ok(Fault::Dribble(match arg {
                Some(arg) => spec::duration(arg, &format!("{KEY}: dribble's time"))?,
                None => Duration::from_secs(5),
            })),
            "http" | "status" => {
                let arg = arg.unwrap_or_default();
                let (status, body) = match arg.split_once(':') {
                    Some((status, body)) => (status, Some(body.to_owned())),
                    None => (arg, None),
                };
                let status = status
                    .trim()
                    .parse::<u16>()
                    .ok()
                    .filter(|s| (100..=599).contains(s))
                    .ok_or_else(|| {
                        format!(
                            "{KEY}: the status of {text:?} is not an HTTP status (100-599); write http:503 or http:503:BODY"
                        )
                    })?;
                Ok(Fault::Http { status, body })
            }
            _ => match Failure::parse(text).map_err(|e| format!("{KEY}: {e}"))? {
                Some(failure) => Ok(Fault::Store(failure)),
                None => Err(format!(
                    "{KEY}: unknown failure {name:?}; known: reset, hang, empty, truncate, dribble[:DURATION], http:STATUS[:BODY], {}",
                    failures::CATALOG
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            },
        }
    }

    /// Whether the recorded answer is still given (late or in pieces) rather than replaced.
    pub fn keeps_the_answer(&self) -> bool {
        matches!(
            self,
            Fault::Dribble(_) | Fault::Truncate | Fault::Store(Failure::SlowFirstByte(_))
        )
    }

    /// Its name, for the log and the counts.
    pub fn name(&self) -> String {
        match self {
            Fault::Reset => "reset".into(),
            Fault::Hang => "hang".into(),
            Fault::Empty => "empty".into(),
            Fault::Truncate => "truncate".into(),
            Fault::Dribble(_) => "dribble".into(),
            Fault::Http { status, .. } => format!("http:{status}"),
            Fault::Store(failure) => match failure {
                Failure::Maintenance => "maintenance",
                Failure::PhpFatal => "php_fatal",
                Failure::MemoryExhausted => "memory_exhausted",
                Failure::DbGone => "db_gone",
                Failure::SlowFirstByte(_) => "slow_first_byte",
                Failure::OAuthTimestampRefused => "oauth_timestamp_refused",
                Failure::RateLimited => "rate_limited",
                Failure::TokenThrottled => "token_throttled",
                Failure::PhpFpmDown => "php_fpm_down",
                Failure::PhpTimeout => "php_timeout",
            }
            .into(),
        }
    }
}

/// A fault for one endpoint or all, with its probability.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultRule {
    pub endpoint: Option<String>,
    pub fault: Fault,
    pub probability: f64,
    /// As written, for the control API.
    pub text: String,
}

/// Reads rules such as `GET /api/rest/products/{}=maintenance@0.3`; a rule without `@P` always
/// fires.
pub fn parse(text: &str) -> Result<Vec<FaultRule>, String> {
    let mut out = Vec::new();
    for rule in spec::rules(text, KEY)? {
        let (fault, probability) = split_probability(rule.setting, rule.text)?;
        out.push(FaultRule {
            endpoint: rule.endpoint,
            fault: Fault::parse(fault)?,
            probability,
            text: rule.text.to_owned(),
        });
    }
    Ok(out)
}

/// `maintenance@0.3` -> (`maintenance`, 0.3). The probability is what follows the last `@`
/// when that looks like a number (an HTTP body may hold `@` of its own).
fn split_probability<'a>(setting: &'a str, rule: &str) -> Result<(&'a str, f64), String> {
    let Some((fault, probability)) = setting.rsplit_once('@') else {
        return Ok((setting, 1.0));
    };
    let probability = probability.trim();
    let numeric = !probability.is_empty()
        && probability
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'));
    let is_http = {
        let lower = setting.trim_start().to_ascii_lowercase();
        lower.starts_with("http:") || lower.starts_with("status:")
    };
    if !numeric {
        if is_http {
            return Ok((setting, 1.0));
        }
        return Err(format!(
            "{KEY}: the probability {probability:?} in {rule:?} is not a number from 0 to 1"
        ));
    }
    match probability.parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok((fault, p)),
        _ => Err(format!(
            "{KEY}: the probability {probability} in {rule:?} is outside 0-1"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_read_with_their_probability() {
        let rules = parse(
            "GET /api/rest/products/{}=maintenance@0.3; reset@0.01\nhttp:500:{\"message\":\"a@b\"}; dribble:2s@1",
        )
        .unwrap();
        assert_eq!(
            rules[0].endpoint.as_deref(),
            Some("GET /api/rest/products/{}")
        );
        assert_eq!(rules[0].fault, Fault::Store(Failure::Maintenance));
        assert_eq!(rules[0].probability, 0.3);
        assert_eq!(
            (rules[1].fault.clone(), rules[1].probability),
            (Fault::Reset, 0.01)
        );
        assert_eq!(
            rules[2].fault,
            Fault::Http {
                status: 500,
                body: Some("{\"message\":\"a@b\"}".into())
            }
        );
        assert_eq!(rules[2].probability, 1.0);
        assert_eq!(rules[3].fault, Fault::Dribble(Duration::from_secs(2)));
    }

    #[test]
    fn bad_rules_say_which_part() {
        for (bad, says) in [
            ("maintenance@1.5", "outside 0-1"),
            ("maintenance@-0.1", "outside 0-1"),
            ("maintenance@often", "\"often\""),
            ("gremlins@0.5", "unknown failure \"gremlins\""),
            ("GET /api/rest/products/{}=gremlins", "unknown failure"),
            ("http:999", "not an HTTP status"),
            ("reset:3s", "takes no argument"),
            ("dribble:slowly", "dribble's time"),
            ("GET /api/rest/products/{}", "no setting"),
        ] {
            let error = parse(bad).unwrap_err();
            assert!(
                error.contains(KEY) && error.contains(says),
                "{bad}: {error}"
            );
        }
        assert!(parse("gremlins").unwrap_err().contains("maintenance"));
    }
}
