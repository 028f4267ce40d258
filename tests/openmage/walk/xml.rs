//! An XML answer as a tree the comparisons read like a JSON one: the gateway's own reader
//! (`storegate::http::xml::read_document`: elements as keys, `data_item`s as lists, leaves as
//! text), applied alike to the store's answer and the gateway's, an empty element as null
//! (what it stands for in both). The root element's name, which the reader drops, is kept as
//! `_root`, so `magento_api` against `service_api` shows.

use serde_json::Value;

pub fn tree(raw: &str) -> Option<Value> {
    let mut value =
        storegate::http::xml::read_document(raw, storegate::http::xml::Limits::default()).ok()?;
    let root = raw
        .split_once("?>")
        .map_or(raw, |(_, rest)| rest)
        .trim_start()
        .strip_prefix('<')
        .and_then(|rest| rest.split(['>', ' ', '/']).next())
        .unwrap_or_default()
        .to_owned();
    empty_as_null(&mut value);
    match &mut value {
        Value::Object(map) => {
            map.insert("_root".to_owned(), Value::String(root));
        }
        other => {
            let items = other.take();
            value = serde_json::json!({ "_root": root, "_items": items });
        }
    }
    Some(value)
}

fn empty_as_null(value: &mut Value) {
    match value {
        Value::String(text) if text.is_empty() => *value = Value::Null,
        Value::Array(items) => items.iter_mut().for_each(empty_as_null),
        Value::Object(map) => map.values_mut().for_each(empty_as_null),
        _ => {}
    }
}
