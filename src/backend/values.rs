//! Values as stores send them: numbers as JSON numbers or as strings ("5.0000", "1"),
//! flags as booleans or numbers. Read leniently here, once, for the adapters and for the
//! mapping engine above them.

use serde_json::Value;

/// Reads a number from a JSON number or a numeric string.
pub fn as_f64(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        _ => None,
    }
}

/// Reads an integer from a JSON number, a numeric string or a boolean.
pub fn as_i64(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| f as i64)
        }),
        Value::String(s) => {
            let s = s.trim();
            s.parse::<i64>().ok().or_else(|| {
                s.parse::<f64>()
                    .ok()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                    .map(|f| f as i64)
            })
        }
        Value::Bool(b) => Some(i64::from(*b)),
        _ => None,
    }
}

/// Reads an id (a non-negative integer, lenient as [`as_i64`]) at a JSON pointer
/// (`/customer_group_id`, `/extension_attributes/website_id`).
pub fn id_at(record: &Value, pointer: &str) -> Option<u64> {
    record
        .pointer(pointer)
        .and_then(as_i64)
        .and_then(|id| u64::try_from(id).ok())
}

/// The strings of a list field (an image's roles); empty when it is no list.
pub fn strings(list: Option<&Value>) -> Vec<String> {
    list.and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}
