//! Reading request values the way Magento's `ServiceInputProcessor` does.
//!
//! Magento converts loosely typed JSON to the declared PHP types: numeric strings become
//! numbers, `"1"`/`"0"`/`true`/`false` become booleans, and both `snake_case` and `camelCase`
//! keys name the same property. Anything it cannot convert is a 400 type-mismatch error.
//! The output side lives here too: PHP prints whole floats like `34`, not `34.0`.

use serde_json::{Map, Value};

use crate::webapi::error::{ApiError, ApiResult};

/// `attribute_set_id` -> `attributeSetId`.
pub(crate) fn camel_case(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper = false;
    for ch in snake.chars() {
        if ch == '_' {
            upper = true;
        } else if upper {
            out.extend(ch.to_uppercase());
            upper = false;
        } else {
            out.push(ch);
        }
    }
    out
}

/// Looks a property up by its snake_case name or its camelCase twin.
pub(crate) fn field<'a>(map: &'a Map<String, Value>, snake: &str) -> Option<&'a Value> {
    map.get(snake).or_else(|| {
        let camel = camel_case(snake);
        if camel == snake {
            None
        } else {
            map.get(&camel)
        }
    })
}

/// Like [`field`], but a JSON `null` counts as absent (Magento treats both the same).
pub(crate) fn present<'a>(map: &'a Map<String, Value>, snake: &str) -> Option<&'a Value> {
    field(map, snake).filter(|v| !v.is_null())
}

fn numeric_text(text: &str) -> Option<f64> {
    let trimmed = text.trim_start();
    if trimmed.is_empty() || trimmed.ends_with(char::is_whitespace) {
        return None;
    }
    let value: f64 = trimmed.parse().ok()?;
    value.is_finite().then_some(value)
}

pub(crate) fn to_float(value: &Value) -> ApiResult<f64> {
    match value {
        Value::Number(n) => n
            .as_f64()
            .ok_or_else(|| ApiError::type_mismatch(value, "float")),
        Value::String(s) => numeric_text(s).ok_or_else(|| ApiError::type_mismatch(value, "float")),
        Value::Bool(b) => Ok(if *b { 1.0 } else { 0.0 }),
        _ => Err(ApiError::type_mismatch(value, "float")),
    }
}

pub(crate) fn to_int(value: &Value) -> ApiResult<i64> {
    match value {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f.trunc() as i64))
            .ok_or_else(|| ApiError::type_mismatch(value, "int")),
        Value::String(s) => numeric_text(s)
            .map(|f| f.trunc() as i64)
            .ok_or_else(|| ApiError::type_mismatch(value, "int")),
        Value::Bool(b) => Ok(i64::from(*b)),
        _ => Err(ApiError::type_mismatch(value, "int")),
    }
}

pub(crate) fn to_bool(value: &Value) -> ApiResult<bool> {
    match value {
        Value::Bool(b) => Ok(*b),
        Value::Number(n) => Ok(n.as_f64().is_some_and(|f| f != 0.0)),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "1" | "true" => Ok(true),
            "0" | "false" | "" => Ok(false),
            _ => Err(ApiError::type_mismatch(value, "bool")),
        },
        _ => Err(ApiError::type_mismatch(value, "bool")),
    }
}

pub(crate) fn to_string(value: &Value) -> ApiResult<String> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(if *b { "1".into() } else { String::new() }),
        _ => Err(ApiError::type_mismatch(value, "string")),
    }
}

pub(crate) fn opt_int(map: &Map<String, Value>, key: &str) -> ApiResult<Option<i64>> {
    present(map, key).map(to_int).transpose()
}

pub(crate) fn opt_float(map: &Map<String, Value>, key: &str) -> ApiResult<Option<f64>> {
    present(map, key).map(to_float).transpose()
}

pub(crate) fn opt_bool(map: &Map<String, Value>, key: &str) -> ApiResult<Option<bool>> {
    present(map, key).map(to_bool).transpose()
}

pub(crate) fn opt_string(map: &Map<String, Value>, key: &str) -> ApiResult<Option<String>> {
    present(map, key).map(to_string).transpose()
}

/// An object-typed property; anything else but absent/null is a type mismatch.
pub(crate) fn opt_object<'a>(
    map: &'a Map<String, Value>,
    key: &str,
    type_name: &str,
) -> ApiResult<Option<&'a Map<String, Value>>> {
    match present(map, key) {
        None => Ok(None),
        Some(Value::Object(obj)) => Ok(Some(obj)),
        Some(other) => Err(ApiError::type_mismatch(other, type_name)),
    }
}

/// An array-typed property. PHP arrays decoded from JSON objects with numeric keys are lists
/// too, so an object is accepted and its values taken in order.
pub(crate) fn opt_array<'a>(
    map: &'a Map<String, Value>,
    key: &str,
    type_name: &str,
) -> ApiResult<Option<Vec<&'a Value>>> {
    match present(map, key) {
        None => Ok(None),
        Some(Value::Array(list)) => Ok(Some(list.iter().collect())),
        Some(Value::Object(obj)) => Ok(Some(obj.values().collect())),
        Some(other) => Err(ApiError::type_mismatch(other, type_name)),
    }
}

/// A JSON number the way PHP's encoder would print it: whole values without a fraction.
pub(crate) fn num(value: f64) -> Value {
    if value.is_finite() && value.fract() == 0.0 && value.abs() < 9.0e15 {
        Value::from(value as i64)
    } else {
        serde_json::Number::from_f64(value)
            .map(Value::Number)
            .unwrap_or(Value::Null)
    }
}

/// Rounds a money amount to cents, as Magento's price currency rounding does.
pub(crate) fn round2(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn conversions_follow_php() {
        assert_eq!(to_int(&json!("12")).ok(), Some(12));
        assert!(to_int(&json!("abc")).is_err());
        assert_eq!(to_bool(&json!("1")).ok(), Some(true));
        assert_eq!(to_float(&json!(" 1.5")).ok(), Some(1.5));
        assert_eq!(num(34.0), json!(34));
        assert_eq!(num(34.5), json!(34.5));
        assert_eq!(camel_case("attribute_set_id"), "attributeSetId");
    }

    #[test]
    fn camel_case_keys_are_accepted() {
        let body = json!({"attributeSetId": 4});
        let map = body.as_object().cloned().unwrap_or_default();
        assert_eq!(opt_int(&map, "attribute_set_id").ok().flatten(), Some(4));
    }
}
