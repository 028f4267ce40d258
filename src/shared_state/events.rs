//! What instances tell each other on the Redis channel, and how it is written.
//!
//! JSON, because tags hold SKUs and a SKU may hold any character: a separator-based format
//! would let a SKU with a `|` or a newline split into tags nobody invalidated.

use serde::{Deserialize, Serialize};

/// One message on the channel. `origin` is the sending instance, which skips its own
/// messages (it applied them before sending).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// Drop every cache entry showing one of these tags; with `hold_off_ms`, also keep them
    /// from being served for that long (a write whose outcome is unknown: `hold_off`). An
    /// older instance ignores the field and only invalidates.
    Invalidate {
        origin: String,
        tags: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hold_off_ms: Option<u64>,
    },
    /// Drop every cache entry.
    InvalidateAll { origin: String },
    /// Refuse the customer's tokens issued at or before `at` (ms since the epoch).
    Revoke {
        origin: String,
        customer: u64,
        at: u64,
    },
    /// Drop OAuth credentials verified in-process (`oauth::verified`): the access tokens
    /// `tokens` (replaced by a sign-in, revoked), or every token of `customer` (deleted), or,
    /// naming neither, everything. An older instance ignores the fields and drops
    /// everything, which is safe.
    #[serde(rename = "oauth_forget")]
    OAuthForget {
        origin: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tokens: Vec<i64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        customer: Option<u64>,
    },
}

impl Event {
    pub fn origin(&self) -> &str {
        match self {
            Event::Invalidate { origin, .. }
            | Event::InvalidateAll { origin }
            | Event::Revoke { origin, .. }
            | Event::OAuthForget { origin, .. } => origin,
        }
    }

    pub fn encode(&self) -> String {
        // A derived Serialize of strings and numbers cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// None for anything else on the channel (a newer version's event, garbage).
    pub fn decode(bytes: &[u8]) -> Option<Event> {
        serde_json::from_slice(bytes).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_tags_whole() {
        for event in [
            Event::Invalidate {
                origin: "a".into(),
                tags: vec!["s:odd|sku\nwith\ttabs".into(), "p:1".into()],
                hold_off_ms: None,
            },
            Event::Invalidate {
                origin: "a".into(),
                tags: vec!["p:1".into()],
                hold_off_ms: Some(60_000),
            },
            Event::InvalidateAll { origin: "b".into() },
            Event::Revoke {
                origin: "c".into(),
                customer: 7,
                at: 1_700_000_000_000,
            },
            Event::OAuthForget {
                origin: "d".into(),
                tokens: Vec::new(),
                customer: None,
            },
            Event::OAuthForget {
                origin: "d".into(),
                tokens: vec![4, 5],
                customer: None,
            },
            Event::OAuthForget {
                origin: "d".into(),
                tokens: Vec::new(),
                customer: Some(9),
            },
        ] {
            assert_eq!(Event::decode(event.encode().as_bytes()), Some(event));
        }
        assert_eq!(Event::decode(b"not json"), None);
        // What an instance from before hold-offs sends, and what it reads of ours.
        assert_eq!(
            Event::decode(br#"{"event":"invalidate","origin":"a","tags":["p:1"]}"#),
            Some(Event::Invalidate {
                origin: "a".into(),
                tags: vec!["p:1".into()],
                hold_off_ms: None
            })
        );
        assert_eq!(Event::decode(br#"{"event":"unknown","origin":"x"}"#), None);
        // An older instance's forget names nothing: everything.
        assert_eq!(
            Event::decode(br#"{"event":"oauth_forget","origin":"o"}"#),
            Some(Event::OAuthForget {
                origin: "o".into(),
                tokens: Vec::new(),
                customer: None
            })
        );
    }
}
