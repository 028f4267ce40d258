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
