//! Two answers compared by shape, for back ends whose data differ (the sandbox's catalog is
//! not the store's): which fields there are and of which JSON type, not their values.
//!
//! A path names a field with dots; every item of a list (an array, or the original's object
//! keyed by id) is `*`, and a list's items are taken together (the original leaves a field
//! out of an item where it has no value, so one item need not show every field). A field
//! only one side has is a difference, except one the gateway has only as null (the gateway
//! shows an empty value as null where the original leaves it out: docs/openmage-mappings.md).
//! Types differ when both sides have a value at the path and no type is common to both.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::Known;
use crate::compare::keyed_list;

/// Path -> the JSON types seen there.
type Shape = BTreeMap<String, BTreeSet<&'static str>>;

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn join(path: &str, segment: &str) -> String {
    if path.is_empty() {
        segment.to_owned()
    } else {
        format!("{path}.{segment}")
    }
}

fn collect(path: &str, value: &Value, shape: &mut Shape) {
    shape
        .entry(path.to_owned())
        .or_default()
        .insert(kind(value));
    match value {
        Value::Object(map) if keyed_list(value) => {
            for item in map.values() {
                collect(&join(path, "*"), item, shape);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                collect(&join(path, key), item, shape);
            }
        }
        Value::Array(items) => {
            for item in items {
                collect(&join(path, "*"), item, shape);
            }
        }
        _ => {}
    }
}

fn shape_of(value: &Value) -> Shape {
    let mut shape = Shape::new();
    collect("", value, &mut shape);
    shape
}

/// Whether `path` is an item's (`*`) of a list that one side has empty: what the items of
/// the other side look like cannot be compared with nothing (the data differ).
fn under_an_empty_list(path: &str, ours: &Shape, theirs: &Shape) -> bool {
    let segments: Vec<&str> = path.split('.').collect();
    let Some(star) = segments.iter().position(|s| *s == "*") else {
        return false;
    };
    let list = segments[..star].join(".");
    let items = join(&list, "*");
    ours.contains_key(&list)
        && theirs.contains_key(&list)
        && (!ours.contains_key(&items) || !theirs.contains_key(&items))
}

/// The differences of shape `known` does not list, and the listed ones not seen.
pub fn differences(gateway: &Value, store: &Value, known: &Known) -> Vec<String> {
    let (ours, theirs) = (shape_of(gateway), shape_of(store));
    let mut seen: Vec<(&str, String, String)> = Vec::new();
    for (path, types) in &theirs {
        match ours.get(path) {
            None => {
                // Under a field of another type (reported as such), not again.
                let parent_is_ours = path.rsplit_once('.').is_none_or(|(parent, _)| {
                    ours.get(parent)
                        .is_some_and(|t| t.contains("object") || t.contains("array"))
                });
                if parent_is_ours && !under_an_empty_list(path, &ours, &theirs) {
                    seen.push(("store_only", path.clone(), format!("{types:?}")));
                }
            }
            Some(mine) => {
                let valued = |set: &BTreeSet<&'static str>| -> BTreeSet<&'static str> {
                    set.iter().copied().filter(|t| *t != "null").collect()
                };
                let (a, b) = (valued(mine), valued(types));
                if !a.is_empty() && !b.is_empty() && a.is_disjoint(&b) {
                    seen.push((
                        "differ",
                        path.clone(),
                        format!("gateway {a:?}, store {b:?}"),
                    ));
                }
            }
        }
    }
    for (path, types) in &ours {
        if theirs.contains_key(path) {
            continue;
        }
        // Reported once, at the field the store lacks, not again for what is under it.
        let parent_is_theirs = path
            .rsplit_once('.')
            .is_none_or(|(parent, _)| theirs.contains_key(parent));
        if !parent_is_theirs || under_an_empty_list(path, &ours, &theirs) {
            continue;
        }
        let beneath = format!("{path}.");
        let only_null = ours
            .range(path.clone()..)
            .take_while(|(p, _)| *p == path || p.starts_with(&beneath))
            .all(|(_, t)| t.iter().all(|t| *t == "null"));
        if !only_null {
            seen.push(("gateway_only", path.clone(), format!("{types:?}")));
        }
    }
    let mut problems = Vec::new();
    let listed = |kind: &str| -> &[&str] {
        match kind {
            "store_only" => known.store_only,
            "gateway_only" => known.gateway_only,
            _ => known.differ,
        }
    };
    for (kind, path, sample) in &seen {
        if !listed(kind).contains(&path.as_str()) {
            problems.push(format!("  unexpected {kind}: {path} ({sample})"));
        }
    }
    for (kind, list) in [
        ("store_only", known.store_only),
        ("gateway_only", known.gateway_only),
        ("differ", known.differ),
    ] {
        for path in list {
            if !seen.iter().any(|(k, p, _)| *k == kind && p == path) {
                problems.push(format!("  listed but not seen: {kind} {path}"));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shapes_not_values() {
        let store = json!({"1": {"a": "x", "b": "1"}, "2": {"a": "y", "c": ["p"]}});
        let gateway = json!({"7": {"a": "z", "b": null, "c": ["q"], "d": null, "e": 5}});
        let problems = differences(&gateway, &store, &Known::NONE);
        assert_eq!(problems, ["  unexpected gateway_only: *.e ({\"number\"})"]);
        let typed = json!({"7": {"a": 1, "b": "1", "c": "p"}});
        let problems = differences(&typed, &store, &Known::NONE);
        assert_eq!(problems.len(), 2, "{problems:?}");
        // Items of a list one side has empty are not compared.
        let empty = json!({"list": [], "a": 1});
        let full = json!({"list": [{"x": "1"}], "a": 2});
        assert!(differences(&empty, &full, &Known::NONE).is_empty());
        assert!(differences(&full, &empty, &Known::NONE).is_empty());
    }
}
