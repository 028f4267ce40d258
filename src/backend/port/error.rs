//! What can go wrong asking a back end, in the port's terms: [`BackendError`], whichever
//! store answered, with the store's own message ([`StoreMessage`]) where it sent one.
//!
//! A store's error message is a template with `%1` (positional) or `%name` (named)
//! placeholders and their parameters (Magento 2 writes them so; an adapter whose store
//! writes plain text gives a message without parameters). [`StoreMessage::text`]
//! substitutes them. What the client is told is decided above the port, once
//! (`rules::backend_errors`): nothing here knows the API's statuses or messages.

use serde_json::Value;

/// A store's error message, as an adapter read it from the store's error body.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoreMessage {
    /// The untranslated template, e.g. `No such entity with %fieldName = %fieldValue`.
    pub message: String,
    pub parameters: Value,
    /// Aggregated input errors (`One or more input exceptions have occurred.`).
    pub errors: Vec<StoreMessage>,
}

impl StoreMessage {
    /// Reads an error body in Magento 2's shape (`{"message", "parameters", "errors"}`);
    /// anything else gives an empty message (an HTML error page from a proxy, say).
    pub fn parse(body: &[u8]) -> StoreMessage {
        let Ok(value) = serde_json::from_slice::<Value>(body) else {
            return StoreMessage::default();
        };
        StoreMessage::from_value(&value)
    }

    fn from_value(value: &Value) -> StoreMessage {
        let message = value
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let parameters = value.get("parameters").cloned().unwrap_or(Value::Null);
        let errors = value
            .get("errors")
            .and_then(Value::as_array)
            .map(|list| list.iter().map(StoreMessage::from_value).collect())
            .unwrap_or_default();
        StoreMessage {
            message,
            parameters,
            errors,
        }
    }

    /// The message with its parameters substituted.
    pub fn text(&self) -> String {
        substitute(&self.message, &self.parameters)
    }

    /// One parameter by name (`fieldName`) or position (`1` is the first).
    pub fn parameter(&self, name: &str) -> Option<String> {
        let value = match &self.parameters {
            Value::Object(map) => map.get(name)?,
            Value::Array(list) => list.get(name.parse::<usize>().ok()?.checked_sub(1)?)?,
            _ => return None,
        };
        Some(scalar_text(value))
    }
}

fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Replaces `%1`.. and `%name` placeholders. Longest names first, so `%10` is not read as
/// `%1` followed by `0`, and `%fieldValue` is not read as `%field`.
pub fn substitute(template: &str, parameters: &Value) -> String {
    let mut pairs: Vec<(String, String)> = match parameters {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| (k.clone(), scalar_text(v)))
            .collect(),
        Value::Array(list) => list
            .iter()
            .enumerate()
            .map(|(i, v)| ((i + 1).to_string(), scalar_text(v)))
            .collect(),
        _ => Vec::new(),
    };
    pairs.sort_by_key(|pair| std::cmp::Reverse(pair.0.len()));
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    'outer: while let Some(pos) = rest.find('%') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        for (name, value) in &pairs {
            if after.starts_with(name.as_str()) {
                out.push_str(value);
                rest = &after[name.len()..];
                continue 'outer;
            }
        }
        out.push('%');
        rest = after;
    }
    out.push_str(rest);
    out
}

/// A back end's failure.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BackendError {
    /// The store answered with an error status.
    #[error("upstream answered {status}: {}", error.text())]
    Status { status: u16, error: StoreMessage },
    /// No answer within the deadline.
    #[error("upstream did not answer within the deadline")]
    Timeout,
    /// Could not connect, or the connection broke.
    #[error("upstream connection failed: {0}")]
    Connect(String),
    /// An answer we cannot use (not JSON, not the expected shape, truncated).
    #[error("upstream sent an unusable answer: {0}")]
    Protocol(String),
    /// We are not calling the upstream right now (the circuit is open).
    #[error("upstream is marked unavailable")]
    Unavailable,
    /// The back end has no such operation (its store lacks the feature): what, in words.
    #[error("{0} is not available with this back end")]
    Unsupported(String),
}

impl BackendError {
    pub fn status(&self) -> Option<u16> {
        match self {
            BackendError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    pub fn is_not_found(&self) -> bool {
        self.status() == Some(404)
    }

    /// Worth one retry for an idempotent read.
    pub fn is_transient(&self) -> bool {
        match self {
            BackendError::Connect(_) => true,
            BackendError::Status { status, .. } => matches!(status, 502..=504),
            _ => false,
        }
    }
}

/// A store's failures (5xx, timeouts, no connection, open circuit) let the cache serve a
/// stale record; its answers (404, 400, ...) and a missing feature do not.
impl crate::cache::FetchError for BackendError {
    fn allows_stale(&self) -> bool {
        !matches!(self, BackendError::Status { status, .. } if *status < 500)
            && !matches!(self, BackendError::Unsupported(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn substitutes_named_and_positional_parameters() {
        let e = StoreMessage::parse(
            br#"{"message":"No such entity with %fieldName = %fieldValue","parameters":{"fieldName":"customerId","fieldValue":"99"}}"#,
        );
        assert_eq!(e.text(), "No such entity with customerId = 99");
        assert_eq!(e.parameter("fieldName").as_deref(), Some("customerId"));
        assert_eq!(
            substitute(
                "a %1 b %2 %10",
                &json!(["x", 2, 3, 4, 5, 6, 7, 8, 9, "ten"])
            ),
            "a x b 2 ten"
        );
        assert_eq!(substitute("100% sure", &json!([])), "100% sure");
    }

    #[test]
    fn unreadable_bodies_give_empty_messages() {
        assert_eq!(StoreMessage::parse(b"<html>502</html>").message, "");
        let e = StoreMessage::parse(
            br#"{"message":"One or more input exceptions have occurred.","errors":[{"message":"\"%fieldName\" is required. Enter and try again.","parameters":{"fieldName":"firstname"}}]}"#,
        );
        assert_eq!(
            e.errors[0].text(),
            "\"firstname\" is required. Enter and try again."
        );
    }
}
