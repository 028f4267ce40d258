//! The gateway's answer against the store's own, field by field.
//!
//! Key order is not compared (the gateway's follows its views: docs/openmage-mappings.md).
//! Paths name fields with dots (`stock_data.qty`); an item of a list (an array, or the
//! store's object keyed by id) is `*` when both sides have it, and its key (`3`, `[2]`) when
//! only one side does. Every difference must be listed in [`Known`], and every listed one
//! must still be there: the lists below each check are the exact differences.

use std::collections::BTreeMap;

use serde_json::Value;

/// The differences expected between the gateway's answer and the store's.
#[derive(Debug, Clone, Copy, Default)]
pub struct Known {
    /// Fields in the store's answer, not in the gateway's.
    pub store_only: &'static [&'static str],
    /// Fields in the gateway's answer, not in the store's (mostly the empty values the
    /// store leaves out and the gateway shows as null).
    pub gateway_only: &'static [&'static str],
    /// Fields in both, with other values.
    pub differ: &'static [&'static str],
    /// An error: the gateway's message where it is not the store's.
    pub message: Option<&'static str>,
}

impl Known {
    /// The same answer.
    pub const NONE: Known = Known {
        store_only: &[],
        gateway_only: &[],
        differ: &[],
        message: None,
    };
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    StoreOnly,
    GatewayOnly,
    Differ,
}

impl Kind {
    fn describe(self) -> &'static str {
        match self {
            Kind::StoreOnly => "only the store's answer has",
            Kind::GatewayOnly => "only the gateway's answer has",
            Kind::Differ => "the values differ at",
        }
    }
}

type Seen = BTreeMap<(Kind, String), String>;

fn join(path: &str, segment: &str) -> String {
    if path.is_empty() {
        segment.to_owned()
    } else {
        format!("{path}.{segment}")
    }
}

/// The store's lists of products, customers and orders: an object keyed by entity id.
pub fn keyed_list(value: &Value) -> bool {
    value.as_object().is_some_and(|map| {
        !map.is_empty()
            && map
                .iter()
                .all(|(k, v)| k.bytes().all(|b| b.is_ascii_digit()) && v.is_object())
    })
}

/// `value` as JSON, cut at `chars` characters (with an ellipsis).
fn cut_at(value: &Value, chars: usize) -> String {
    let text = value.to_string();
    if text.chars().count() > chars {
        let cut: String = text.chars().take(chars).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// `value` short enough for a line of a difference.
fn short(value: &Value) -> String {
    cut_at(value, 120)
}

fn walk(path: &str, gateway: &Value, store: &Value, seen: &mut Seen) {
    match (gateway, store) {
        (Value::Object(g), Value::Object(s)) => {
            let keyed = keyed_list(gateway) && keyed_list(store);
            for (key, value) in s {
                match g.get(key) {
                    Some(other) => {
                        let segment = if keyed { "*" } else { key.as_str() };
                        walk(&join(path, segment), other, value, seen);
                    }
                    None => {
                        seen.entry((Kind::StoreOnly, join(path, key)))
                            .or_insert_with(|| short(value));
                    }
                }
            }
            for (key, value) in g {
                if !s.contains_key(key) {
                    seen.entry((Kind::GatewayOnly, join(path, key)))
                        .or_insert_with(|| short(value));
                }
            }
        }
        (Value::Array(g), Value::Array(s)) => {
            for i in 0..g.len().max(s.len()) {
                match (g.get(i), s.get(i)) {
                    (Some(a), Some(b)) => walk(&join(path, "*"), a, b, seen),
                    (None, Some(b)) => {
                        seen.entry((Kind::StoreOnly, join(path, &format!("[{i}]"))))
                            .or_insert_with(|| short(b));
                    }
                    (Some(a), None) => {
                        seen.entry((Kind::GatewayOnly, join(path, &format!("[{i}]"))))
                            .or_insert_with(|| short(a));
                    }
                    (None, None) => {}
                }
            }
        }
        _ if gateway == store => {}
        _ => {
            seen.entry((Kind::Differ, path.to_owned()))
                .or_insert_with(|| format!("gateway {}, store {}", short(gateway), short(store)));
        }
    }
}

/// Panics, naming each one, when the differences between `gateway` and `store` are not
/// exactly `known`.
pub fn check(what: &str, gateway: &Value, store: &Value, known: &Known) {
    let problems = differences(gateway, store, known);
    assert!(
        problems.is_empty(),
        "{what}: the gateway's answer and the store's differ other than listed:\n{}\ngateway: {}\nstore:   {}",
        problems.join("\n"),
        short_long(gateway),
        short_long(store)
    );
}

/// The differences between `gateway` and `store` that `known` does not list, and the listed
/// ones not seen, one line each (empty: exactly as listed).
pub fn differences(gateway: &Value, store: &Value, known: &Known) -> Vec<String> {
    differences_with(gateway, store, known, false)
}

/// [`differences`], with `empty_extras`: a field only the gateway has is no difference when
/// it is empty (null, or an empty XML element), as the gateway shows an empty value where
/// the original leaves the field out (docs/openmage-mappings.md).
pub fn differences_with(
    gateway: &Value,
    store: &Value,
    known: &Known,
    empty_extras: bool,
) -> Vec<String> {
    let mut seen = Seen::new();
    walk("", gateway, store, &mut seen);
    if empty_extras {
        seen.retain(|(kind, _), sample| {
            !(*kind == Kind::GatewayOnly && (sample == "null" || sample == "\"\""))
        });
    }
    let mut expected: Vec<(Kind, String)> = Vec::new();
    for (kind, list) in [
        (Kind::StoreOnly, known.store_only),
        (Kind::GatewayOnly, known.gateway_only),
        (Kind::Differ, known.differ),
    ] {
        expected.extend(list.iter().map(|p| (kind, (*p).to_owned())));
    }
    let mut problems = Vec::new();
    for ((kind, path), sample) in &seen {
        if !expected.contains(&(*kind, path.clone())) {
            problems.push(format!(
                "  unexpected: {} {path} ({sample})",
                kind.describe()
            ));
        }
    }
    for (kind, path) in &expected {
        if !seen.contains_key(&(*kind, path.clone())) {
            problems.push(format!("  listed but not seen: {} {path}", kind.describe()));
        }
    }
    problems
}

/// `value` short enough to show whole in a failure.
fn short_long(value: &Value) -> String {
    cut_at(value, 4000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn differences_are_named_by_path() {
        let store = json!({"1": {"a": "1", "b": [1, 2], "c": {"d": 1}}, "3": {"a": "3"}});
        let gateway = json!({"1": {"a": "1", "b": [1], "c": {"d": 2}, "e": null}});
        let mut seen = Seen::new();
        walk("", &gateway, &store, &mut seen);
        let paths: Vec<(Kind, &str)> = seen.keys().map(|(k, p)| (*k, p.as_str())).collect();
        assert_eq!(
            paths,
            [
                (Kind::StoreOnly, "*.b.[1]"),
                (Kind::StoreOnly, "3"),
                (Kind::GatewayOnly, "*.e"),
                (Kind::Differ, "*.c.d"),
            ]
        );
    }
}
