//! Paths into upstream records: `product.custom_attributes.url_key`,
//! `render.price_info.final_price`, `qty`.
//!
//! Some stores keep attributes in a list of `{"attribute_code", "value"}` entries (Magento 2's
//! `custom_attributes`). A path segment that meets such an array selects the entry by code;
//! for writes, a mapping file names its attribute lists (`attribute_lists = [...]`), so a
//! write through one adds or replaces an entry there, and the engine names no store's field.

use serde_json::{Map, Value};

/// A parsed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path {
    segments: Vec<String>,
    /// The index of a segment that names an attribute list, when one more segment (the
    /// attribute's code) follows it.
    list_at: Option<usize>,
}

impl Path {
    /// A path where `attribute_lists` name the record lists that hold attributes by code.
    pub fn parse_in(text: &str, attribute_lists: &[String]) -> Result<Path, String> {
        let mut path = Path::parse(text)?;
        let n = path.segments.len();
        path.list_at = (0..n.saturating_sub(1))
            .rev()
            .find(|&i| i + 2 == n && attribute_lists.contains(&path.segments[i]));
        Ok(path)
    }

    /// The attribute's code, when this path selects one from an attribute list.
    pub fn attribute_code(&self) -> Option<&str> {
        self.list_at
            .and_then(|i| self.segments.get(i + 1))
            .map(String::as_str)
    }

    pub fn parse(text: &str) -> Result<Path, String> {
        let segments: Vec<String> = text.split('.').map(str::to_owned).collect();
        if segments
            .iter()
            .any(|s| s.is_empty() || !s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        {
            return Err(format!("{text:?} is not a path like product.url_key"));
        }
        Ok(Path {
            segments,
            list_at: None,
        })
    }

    pub fn segments(&self) -> &[String] {
        &self.segments
    }

    /// The value at this path, if any. `null` counts as absent.
    pub fn get<'v>(&self, root: &'v Value) -> Option<&'v Value> {
        let mut current = root;
        for segment in &self.segments {
            current = match current {
                Value::Object(map) => map.get(segment)?,
                Value::Array(list) => match segment.parse::<usize>() {
                    Ok(index) => list.get(index)?,
                    Err(_) => attribute(list, segment)?,
                },
                _ => return None,
            };
        }
        (!current.is_null()).then_some(current)
    }

    /// Writes `value` at this path, creating objects on the way. Through an attribute list
    /// it writes an `{attribute_code, value}` entry.
    pub fn set(&self, root: &mut Value, value: Value) {
        set_in(root, &self.segments, self.list_at, value);
    }
}

fn attribute<'v>(list: &'v [Value], code: &str) -> Option<&'v Value> {
    list.iter()
        .find(|entry| entry.get("attribute_code").and_then(Value::as_str) == Some(code))
        .and_then(|entry| entry.get("value"))
}

fn set_in(node: &mut Value, segments: &[String], list_at: Option<usize>, value: Value) {
    let Some((first, rest)) = segments.split_first() else {
        *node = value;
        return;
    };
    if list_at == Some(0) && rest.len() == 1 {
        if !node.is_object() {
            *node = Value::Object(Map::new());
        }
        let map = node.as_object_mut().expect("just made an object");
        let list = map
            .entry(first.clone())
            .or_insert_with(|| Value::Array(Vec::new()));
        if !list.is_array() {
            *list = Value::Array(Vec::new());
        }
        let list = list.as_array_mut().expect("just made an array");
        let code = &rest[0];
        let entry = serde_json::json!({"attribute_code": code, "value": value});
        match list
            .iter_mut()
            .find(|e| e.get("attribute_code").and_then(Value::as_str) == Some(code))
        {
            Some(existing) => *existing = entry,
            None => list.push(entry),
        }
        return;
    }
    if !node.is_object() {
        *node = Value::Object(Map::new());
    }
    let map = node.as_object_mut().expect("just made an object");
    let child = map.entry(first.clone()).or_insert(Value::Null);
    set_in(child, rest, list_at.and_then(|i| i.checked_sub(1)), value);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_plain_and_custom_attribute_paths() {
        let doc = json!({"product": {"id": 5, "custom_attributes": [
            {"attribute_code": "url_key", "value": "bag"}], "n": null}});
        assert_eq!(
            Path::parse("product.id").unwrap().get(&doc),
            Some(&json!(5))
        );
        assert_eq!(
            Path::parse("product.custom_attributes.url_key")
                .unwrap()
                .get(&doc),
            Some(&json!("bag"))
        );
        assert_eq!(
            Path::parse("product.custom_attributes.color")
                .unwrap()
                .get(&doc),
            None
        );
        assert_eq!(Path::parse("product.n").unwrap().get(&doc), None);
        assert_eq!(Path::parse("product.id.x").unwrap().get(&doc), None);
        assert!(Path::parse("a..b").is_err());
        assert!(Path::parse("a.b-c").is_err());
    }

    #[test]
    fn writes_create_structure_and_custom_attributes() {
        let lists = ["custom_attributes".to_owned()];
        let attribute = |text: &str| Path::parse_in(text, &lists).unwrap();
        // Not named an attribute list: an object like any other.
        let mut plain = json!({});
        Path::parse("product.custom_attributes.url_key")
            .unwrap()
            .set(&mut plain, json!("k"));
        assert_eq!(
            plain,
            json!({"product": {"custom_attributes": {"url_key": "k"}}})
        );
        assert_eq!(
            attribute("product.custom_attributes.url_key").attribute_code(),
            Some("url_key")
        );
        assert_eq!(
            attribute("product.custom_attributes.a.b").attribute_code(),
            None
        );
        let mut doc = json!({});
        Path::parse("product.sku")
            .unwrap()
            .set(&mut doc, json!("a"));
        attribute("product.custom_attributes.url_key").set(&mut doc, json!("k"));
        attribute("product.custom_attributes.url_key").set(&mut doc, json!("k2"));
        Path::parse("product.extension_attributes.stock_item.qty")
            .unwrap()
            .set(&mut doc, json!(3));
        assert_eq!(
            doc,
            json!({"product": {"sku": "a", "custom_attributes": [{"attribute_code": "url_key", "value": "k2"}],
                   "extension_attributes": {"stock_item": {"qty": 3}}}})
        );
    }
}
