//! The small JSON path language of the scrubbing and ignore rules: `customer.dob`,
//! `items[*].email`, `items[0].sku`, `$.a.b`, and `..dob` for a field at any depth.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    AnyKey,
    Index(usize),
    AnyIndex,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonPath {
    /// `..name`: the steps apply from any object or array at any depth.
    anywhere: bool,
    steps: Vec<Step>,
}

impl JsonPath {
    pub fn parse(text: &str) -> Result<JsonPath, String> {
        let bad = || format!("{text:?} is not a JSON path such as customer.dob or items[*].email");
        let mut rest = text.trim();
        let mut anywhere = false;
        if let Some(after) = rest.strip_prefix("..") {
            anywhere = true;
            rest = after;
        } else if let Some(after) = rest.strip_prefix("$.") {
            rest = after;
        } else if rest == "$" {
            rest = "";
        }
        let mut steps = Vec::new();
        for part in rest.split('.') {
            if part.is_empty() {
                return Err(bad());
            }
            let (name, mut indexes) = match part.find('[') {
                Some(at) => (&part[..at], &part[at..]),
                None => (part, ""),
            };
            match name {
                "" if indexes.is_empty() => return Err(bad()),
                "" => {}
                "*" => steps.push(Step::AnyKey),
                name => steps.push(Step::Key(name.to_owned())),
            }
            while !indexes.is_empty() {
                let close = indexes.find(']').ok_or_else(bad)?;
                let inner = &indexes[1..close];
                steps.push(match inner {
                    "*" => Step::AnyIndex,
                    n => Step::Index(n.parse().map_err(|_| bad())?),
                });
                indexes = &indexes[close + 1..];
                if !indexes.is_empty() && !indexes.starts_with('[') {
                    return Err(bad());
                }
            }
        }
        if steps.is_empty() {
            return Err(bad());
        }
        Ok(JsonPath { anywhere, steps })
    }

    /// Calls `edit` on every value the path reaches (the parent holds it: an object
    /// field or an array item).
    pub fn for_each(&self, value: &mut Value, edit: &mut dyn FnMut(&mut Value)) {
        if self.anywhere {
            let mut visit = |v: &mut Value| walk(&self.steps, v, edit);
            descend(value, &mut visit);
        } else {
            walk(&self.steps, value, edit);
        }
    }

    /// Removes every value the path reaches from its parent object (array items are set
    /// to null, so that positions keep their meaning).
    pub fn remove(&self, value: &mut Value) {
        let Some((last, parents)) = self.steps.split_last() else {
            return;
        };
        let parent = JsonPath {
            anywhere: self.anywhere,
            steps: parents.to_vec(),
        };
        let mut cut = |v: &mut Value| match (last, v) {
            (Step::Key(k), Value::Object(map)) => {
                map.shift_remove(k);
            }
            (Step::AnyKey, Value::Object(map)) => map.clear(),
            (Step::Index(i), Value::Array(list)) => {
                if let Some(item) = list.get_mut(*i) {
                    *item = Value::Null;
                }
            }
            (Step::AnyIndex, Value::Array(list)) => list.clear(),
            _ => {}
        };
        if parents.is_empty() {
            if self.anywhere {
                descend(value, &mut cut);
            } else {
                cut(value);
            }
        } else {
            parent.for_each(value, &mut cut);
        }
    }
}

/// `visit` on `value` and everything under it.
fn descend(value: &mut Value, visit: &mut dyn FnMut(&mut Value)) {
    visit(value);
    match value {
        Value::Object(map) => map.values_mut().for_each(|v| descend(v, visit)),
        Value::Array(list) => list.iter_mut().for_each(|v| descend(v, visit)),
        _ => {}
    }
}

fn walk(steps: &[Step], value: &mut Value, edit: &mut dyn FnMut(&mut Value)) {
    let Some((step, rest)) = steps.split_first() else {
        edit(value);
        return;
    };
    match (step, value) {
        (Step::Key(k), Value::Object(map)) => {
            if let Some(v) = map.get_mut(k) {
                walk(rest, v, edit);
            }
        }
        (Step::AnyKey, Value::Object(map)) => map.values_mut().for_each(|v| walk(rest, v, edit)),
        (Step::Index(i), Value::Array(list)) => {
            if let Some(v) = list.get_mut(*i) {
                walk(rest, v, edit);
            }
        }
        (Step::AnyIndex, Value::Array(list)) => list.iter_mut().for_each(|v| walk(rest, v, edit)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(path: &str, mut value: Value) -> Value {
        JsonPath::parse(path)
            .unwrap()
            .for_each(&mut value, &mut |v| *v = json!("X"));
        value
    }

    #[test]
    fn paths_reach_what_they_name() {
        assert_eq!(
            set(
                "customer.dob",
                json!({"customer": {"dob": "1990", "id": 1}})
            ),
            json!({"customer": {"dob": "X", "id": 1}})
        );
        assert_eq!(
            set(
                "$.items[*].email",
                json!({"items": [{"email": "a"}, {"email": "b"}]})
            ),
            json!({"items": [{"email": "X"}, {"email": "X"}]})
        );
        assert_eq!(
            set("items[1]", json!({"items": [1, 2]})),
            json!({"items": [1, "X"]})
        );
        assert_eq!(
            set("..dob", json!({"a": [{"dob": 1}], "b": {"c": {"dob": 2}}})),
            json!({"a": [{"dob": "X"}], "b": {"c": {"dob": "X"}}})
        );
        assert_eq!(
            set("a.*", json!({"a": {"x": 1, "y": 2}})),
            json!({"a": {"x": "X", "y": "X"}})
        );
    }

    #[test]
    fn removal_and_bad_paths() {
        let mut v = json!({"product": {"sku": "a", "updated_at": "now"}});
        JsonPath::parse("product.updated_at")
            .unwrap()
            .remove(&mut v);
        assert_eq!(v, json!({"product": {"sku": "a"}}));
        let mut v = json!({"a": {"t": 1}, "b": [{"t": 2}]});
        JsonPath::parse("..t").unwrap().remove(&mut v);
        assert_eq!(v, json!({"a": {}, "b": [{}]}));
        for bad in ["", "a..b", "a[x]", "a[1", "$", "a[1]b"] {
            assert!(JsonPath::parse(bad).is_err(), "{bad}");
        }
    }
}
