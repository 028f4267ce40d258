//! Query strings parsed the way PHP fills `$_GET`.
//!
//! Magento clients send `searchCriteria[filter_groups][0][filters][0][field]=sku`; PHP turns the
//! brackets into nested arrays before Magento sees them. This module builds the same nesting
//! as JSON objects (PHP arrays, numeric keys included) so the rest of the sandbox can read
//! search criteria like a decoded request body.

use serde_json::{Map, Value};

/// Splits `a[b][][c]` into `a` and the bracketed parts (`None` for `[]`, meaning "append").
fn split_key(key: &str) -> (String, Vec<Option<String>>) {
    let Some(open) = key.find('[') else {
        return (key.to_string(), Vec::new());
    };
    let base = key[..open].to_string();
    let mut parts = Vec::new();
    let mut rest = &key[open..];
    while let Some(stripped) = rest.strip_prefix('[') {
        let Some(close) = stripped.find(']') else {
            // PHP keeps an unbalanced bracket as part of the literal key.
            return (key.to_string(), Vec::new());
        };
        let part = &stripped[..close];
        parts.push(if part.is_empty() {
            None
        } else {
            Some(part.to_string())
        });
        rest = &stripped[close + 1..];
    }
    (base, parts)
}

fn insert(target: &mut Map<String, Value>, path: &[Option<String>], value: Value) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    let key = match first {
        Some(key) => key.clone(),
        None => next_index(target),
    };
    if rest.is_empty() {
        target.insert(key, value);
        return;
    }
    let slot = target
        .entry(key)
        .or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    if let Value::Object(child) = slot {
        insert(child, rest, value);
    }
}

/// PHP appends with the next integer key after the largest existing one.
fn next_index(map: &Map<String, Value>) -> String {
    map.keys()
        .filter_map(|k| k.parse::<u64>().ok())
        .max()
        .map_or(0, |max| max + 1)
        .to_string()
}

/// Parses a raw query string into PHP-style nested values.
pub(crate) fn parse(raw: &str) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, value) in form_urlencoded::parse(raw.as_bytes()) {
        let (base, mut parts) = split_key(&key);
        if base.is_empty() {
            continue;
        }
        parts.insert(0, Some(base));
        insert(&mut out, &parts, Value::String(value.into_owned()));
    }
    out
}

/// A top-level scalar query parameter.
pub(crate) fn scalar<'a>(query: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    query.get(name).and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nests_brackets_like_php() {
        let q = parse(
            "searchCriteria[filter_groups][0][filters][0][field]=sku&searchCriteria[filter_groups][0][filters][0][value]=24-MB%2501&searchCriteria[pageSize]=5&fields=items[id,sku]&x[]=a&x[]=b",
        );
        assert_eq!(
            q["searchCriteria"]["filter_groups"]["0"]["filters"]["0"]["value"],
            json!("24-MB%01")
        );
        assert_eq!(q["searchCriteria"]["pageSize"], json!("5"));
        assert_eq!(q["fields"], json!("items[id,sku]"));
        assert_eq!(q["x"], json!({"0": "a", "1": "b"}));
    }

    #[test]
    fn plus_is_a_space() {
        let q = parse("name=Joust+Duffle");
        assert_eq!(scalar(&q, "name"), Some("Joust Duffle"));
    }
}
