//! The shape the replay bench's settings share: a list of rules, each for every endpoint or
//! for one (`GET /api/rest/products/{}=fixed:200ms; lognormal:median=150ms,p99=900ms`), the
//! endpoint written as the cassettes name it. `latency` and `faults` give the right-hand
//! sides their meaning.

/// One rule as written: the endpoint it is for (`None`: every endpoint), its setting, and
/// the rule's own text for messages and the control API.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule<'a> {
    pub endpoint: Option<String>,
    pub setting: &'a str,
    pub text: &'a str,
}

/// Splits `text` into rules: separated by `;` or line ends; `METHOD /path=SETTING` is for
/// that endpoint, `*=SETTING` or a bare `SETTING` for every endpoint. `key` names the
/// setting in errors.
pub fn rules<'a>(text: &'a str, key: &str) -> Result<Vec<Rule<'a>>, String> {
    let mut out = Vec::new();
    for text in text
        .split([';', '\n'])
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        if let Some(setting) = text.strip_prefix("*=") {
            out.push(Rule {
                endpoint: None,
                setting: setting.trim(),
                text,
            });
            continue;
        }
        match endpoint_prefix(text) {
            Some((method, rest)) => {
                let Some((path, setting)) = rest.split_once('=') else {
                    return Err(format!(
                        "{key}: {text:?} names an endpoint but no setting (write ENDPOINT=SETTING)"
                    ));
                };
                let path = path.trim();
                if !path.starts_with('/') {
                    return Err(format!(
                        "{key}: in {text:?}, the endpoint's path {path:?} does not start with /"
                    ));
                }
                out.push(Rule {
                    endpoint: Some(endpoint(method, path)),
                    setting: setting.trim(),
                    text,
                });
            }
            None => out.push(Rule {
                endpoint: None,
                setting: text,
                text,
            }),
        }
    }
    Ok(out)
}

/// `GET /api/rest/...` -> (`GET`, `/api/rest/...`): a rule for one endpoint starts with an HTTP method
/// and a space.
fn endpoint_prefix(text: &str) -> Option<(&str, &str)> {
    let (method, rest) = text.split_once(' ')?;
    let known = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
    known
        .iter()
        .any(|m| m.eq_ignore_ascii_case(method))
        .then_some((method, rest.trim_start()))
}

/// An endpoint as a rule writes it, its method in capitals and its named placeholders
/// (`{sku}`) plain (`{}`): `GET /api/rest/products/{}` for `get /api/rest/products/{id}`.
/// The replayer matches it against each call as the call's store names it (so a scope a
/// store puts before its path may be written or not).
pub fn endpoint(method: &str, path: &str) -> String {
    let mut plain = String::with_capacity(path.len());
    let mut inside = false;
    for c in path.chars() {
        match c {
            '{' => {
                inside = true;
                plain.push_str("{}");
            }
            '}' => inside = false,
            c if !inside => plain.push(c),
            _ => {}
        }
    }
    format!("{} {plain}", method.to_ascii_uppercase())
}

/// `200ms`, `1s`, `1.5s`, `2m`: a duration as people write one. `what` names the part.
pub fn duration(text: &str, what: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    // humantime has no fractions; `1.5s` and `0.25s` are common enough to take here.
    if let Some(seconds) = text.strip_suffix('s').filter(|s| s.contains('.'))
        && let Ok(value) = seconds.parse::<f64>()
        && value.is_finite()
        && value >= 0.0
    {
        return Ok(std::time::Duration::from_secs_f64(value));
    }
    humantime::parse_duration(text)
        .map_err(|e| format!("{what}: {text:?} is not a duration such as 200ms, 2s or 30d ({e})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_are_global_or_for_one_endpoint() {
        let rules = rules(
            "lognormal:median=150ms,p99=900ms; get /api/rest/products/{sku}=fixed:200ms\n*=recorded",
            "K",
        )
        .unwrap();
        assert_eq!(rules.len(), 3);
        assert_eq!(rules[0].endpoint, None);
        assert_eq!(rules[0].setting, "lognormal:median=150ms,p99=900ms");
        assert_eq!(
            rules[1].endpoint.as_deref(),
            Some("GET /api/rest/products/{}")
        );
        assert_eq!(rules[1].setting, "fixed:200ms");
        assert_eq!(rules[2].setting, "recorded");
        assert_eq!(
            endpoint("GET", "/api/rest/products/{id}/images"),
            "GET /api/rest/products/{}/images"
        );
        assert_eq!(
            endpoint("GET", "/api/rest/products/{}"),
            "GET /api/rest/products/{}"
        );
        assert!(super::rules("GET /api/rest/products/{}", "K").is_err());
        assert!(super::rules("GET V1=fixed:1ms", "K").is_err());
        assert_eq!(duration("1.5s", "x").unwrap().as_millis(), 1500);
        assert_eq!(duration("30d", "x").unwrap().as_secs(), 30 * 86_400);
        assert!(duration("soon", "x").unwrap_err().contains("\"soon\""));
    }
}
