//! The fields of an address write that every store takes the same way: the required ones,
//! the mapped ones converted, and the street, its lines past the second folded into the
//! second (DESIGN.md). Shared by the whole-customer writes (`addresses`) and the
//! one-at-a-time writes (`address_calls`).

use serde_json::{Map, Value, json};

use crate::app::AppState;
use crate::auth::UserType;
use crate::rules::mapping::convert::{is_empty, scalar_text};
use crate::rules::mapping::{ResourceMapping, View};

use super::customers::required;

/// DESIGN.md: street lines past the second are joined into the second with this.
pub const STREET_JOIN: &str = "; ";

/// Street lines as stored: trimmed, empty ones dropped, and everything past the second
/// line joined into the second.
pub fn fold_street(lines: &[String]) -> Vec<String> {
    let lines: Vec<&str> = lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    match lines.as_slice() {
        [] => Vec::new(),
        [one] => vec![(*one).to_owned()],
        [first, rest @ ..] => vec![(*first).to_owned(), rest.join(STREET_JOIN)],
    }
}

/// The street of a record (Magento keeps up to four lines), folded for the response.
pub(super) fn street_lines(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::Array(items)) => items
            .iter()
            .filter(|v| !v.is_array() && !v.is_object())
            .map(scalar_text)
            .collect(),
        Some(Value::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    }
}

/// The fields of a write every store takes as they are: the required ones there (on
/// create), the mapped ones converted, the street's lines folded. What is wrong is added to
/// `errors`.
pub(super) fn plain_fields(
    app: &AppState,
    user: UserType,
    input: &Map<String, Value>,
    creating: bool,
    errors: &mut Vec<String>,
) -> Map<String, Value> {
    let mapping = app.mappings.get("address");
    let mut fields = Map::new();
    for field in mapping.view(user, View::Required).iter() {
        let value = input.get(&field.name);
        let empty = match value {
            None => creating,
            Some(v) if field.name == "street" => {
                fold_street(&street_lines(Some(v))).is_empty() || v.is_object()
            }
            Some(v) => is_empty(v),
        };
        if empty {
            errors.push(required(&field.name));
        }
    }

    let mut root = json!({ "address": {} });
    if let Err(mut conversion) =
        ResourceMapping::write(&mapping.view(user, View::Write), input, &mut root)
    {
        errors.append(&mut conversion);
    }
    if let Value::Object(written) = root["address"].take() {
        fields = written;
    }

    if let Some(street) = input.get("street") {
        let bad = match street {
            Value::Object(_) => true,
            Value::Array(items) => items.iter().any(|v| v.is_array() || v.is_object()),
            _ => false,
        };
        if bad {
            errors.push("Invalid value for \"street\" in request.".into());
        } else {
            let lines = fold_street(&street_lines(Some(street)));
            if !lines.is_empty() {
                fields.insert("street".into(), json!(lines));
            }
        }
    }
    fields
}
