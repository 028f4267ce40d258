//! The `fields=` response projection of Magento's REST layer (`FieldsFilter`).
//!
//! `fields=items[id,sku],total_count` keeps only the named keys, recursing into nested
//! objects and into every element of lists. Like Magento, an unparsable filter yields `[]`, and
//! an object left with no keys prints as a PHP empty array, `[]`.

use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq)]
struct Node {
    name: String,
    children: Option<Vec<Node>>,
}

struct Parser<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
}

impl Parser<'_> {
    fn list(&mut self, nested: bool) -> Option<Vec<Node>> {
        let mut nodes = Vec::new();
        loop {
            let mut name = String::new();
            while let Some(&c) = self.chars.peek() {
                if c == ',' || c == '[' || c == ']' {
                    break;
                }
                name.push(c);
                self.chars.next();
            }
            let name = name.trim().to_string();
            let mut children = None;
            if self.chars.peek() == Some(&'[') {
                self.chars.next();
                children = Some(self.list(true)?);
                if self.chars.next() != Some(']') {
                    return None;
                }
            }
            if name.is_empty() {
                return None;
            }
            nodes.push(Node { name, children });
            match self.chars.peek() {
                Some(',') => {
                    self.chars.next();
                }
                Some(']') if nested => return Some(nodes),
                None if !nested => return Some(nodes),
                _ => return None,
            }
        }
    }
}

fn parse(filter: &str) -> Option<Vec<Node>> {
    let mut parser = Parser {
        chars: filter.chars().peekable(),
    };
    parser.list(false)
}

fn empty_as_php(map: Map<String, Value>) -> Value {
    if map.is_empty() {
        Value::Array(Vec::new())
    } else {
        Value::Object(map)
    }
}

fn apply(value: Value, filter: &[Node]) -> Value {
    match value {
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|item| match item {
                    Value::Object(map) => intersect(map, filter),
                    other => other,
                })
                .collect(),
        ),
        Value::Object(map) => intersect(map, filter),
        other => other,
    }
}

fn intersect(map: Map<String, Value>, filter: &[Node]) -> Value {
    let mut out = Map::new();
    for (key, value) in map {
        let Some(node) = filter.iter().find(|n| n.name == key) else {
            continue;
        };
        let value = match (&node.children, value) {
            (Some(children), v @ (Value::Array(_) | Value::Object(_))) => apply(v, children),
            (_, v) => v,
        };
        out.insert(key, value);
    }
    empty_as_php(out)
}

/// Applies a `fields` filter to a response body; array and object bodies only.
pub(crate) fn project(body: Value, filter: &str) -> Value {
    if !(body.is_array() || body.is_object()) {
        return body;
    }
    match parse(filter) {
        Some(nodes) => apply(body, &nodes),
        None => Value::Array(Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn projects_lists_and_nested_objects() {
        let body = json!({
            "items": [{"id": 1, "sku": "a", "name": "A", "extension_attributes": {"stock_item": {"qty": 3, "item_id": 9}}}],
            "total_count": 1,
            "search_criteria": {}
        });
        let out = project(
            body,
            "items[id,sku,extension_attributes[stock_item[qty]]],total_count",
        );
        assert_eq!(
            out,
            json!({"items": [{"id": 1, "sku": "a", "extension_attributes": {"stock_item": {"qty": 3}}}], "total_count": 1})
        );
    }

    #[test]
    fn broken_filter_gives_empty_array() {
        assert_eq!(project(json!({"a": 1}), "items[id"), json!([]));
        assert_eq!(project(json!({"a": 1}), "b"), json!([]));
    }
}
