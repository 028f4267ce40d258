//! Product EAV attribute metadata, attribute sets and tax classes.
//!
//! Magento decides from this metadata how a `custom_attributes` value is stored (decimals come
//! back as `"32.000000"`, dates as `"2024-01-01 00:00:00"`, selects as numeric strings),
//! whether a write through a store code creates a store-view override (scope), and it silently
//! drops attribute codes it does not know. Attribute sets decide whether a product has a media
//! gallery at all.

use serde::Deserialize;
use serde_json::Value;

use crate::webapi::clock;
use crate::webapi::error::{ApiError, ApiResult};
use crate::webapi::input;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Scope {
    Global,
    Website,
    Store,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct AttributeMeta {
    pub(crate) attribute_code: String,
    pub(crate) default_frontend_label: String,
    pub(crate) scope: Scope,
    /// `varchar`, `text`, `int`, `decimal`, `datetime` or `static`.
    pub(crate) backend_type: String,
    /// `text`, `textarea`, `select`, `multiselect`, `boolean`, `price`, `date`, `media_image`...
    pub(crate) frontend_input: String,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct AttributeSet {
    pub(crate) attribute_set_id: i64,
    /// Whether the set contains the `media_gallery` attribute.
    pub(crate) has_media_gallery: bool,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct TaxClass {
    pub(crate) class_id: i64,
    /// Rate applied to catalog prices shown with tax, in percent.
    pub(crate) rate: f64,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct CatalogConfig {
    pub(crate) attribute_sets: Vec<AttributeSet>,
    pub(crate) attributes: Vec<AttributeMeta>,
    pub(crate) tax_classes: Vec<TaxClass>,
    /// Customer groups (`0` NOT LOGGED IN, `1` General, ...) and `32000` for "all groups".
    pub(crate) customer_groups: Vec<i64>,
}

/// Image roles a gallery entry can carry.
pub(crate) const IMAGE_ROLES: [&str; 4] = ["image", "small_image", "thumbnail", "swatch_image"];

impl CatalogConfig {
    pub(crate) fn attribute(&self, code: &str) -> Option<&AttributeMeta> {
        self.attributes.iter().find(|a| a.attribute_code == code)
    }

    pub(crate) fn position(&self, code: &str) -> usize {
        self.attributes
            .iter()
            .position(|a| a.attribute_code == code)
            .unwrap_or(usize::MAX)
    }

    pub(crate) fn attribute_set(&self, id: i64) -> Option<&AttributeSet> {
        self.attribute_sets
            .iter()
            .find(|s| s.attribute_set_id == id)
    }

    pub(crate) fn tax_rate(&self, class_id: i64) -> f64 {
        self.tax_classes
            .iter()
            .find(|c| c.class_id == class_id)
            .map_or(0.0, |c| c.rate)
    }

    pub(crate) fn is_store_scoped(&self, code: &str) -> bool {
        self.attribute(code)
            .is_some_and(|a| a.scope != Scope::Global)
    }

    pub(crate) fn label(&self, code: &str) -> String {
        self.attribute(code)
            .map_or_else(|| code.to_string(), |a| a.default_frontend_label.clone())
    }
}

/// Converts an input value to the text Magento stores for the attribute. `Ok(None)` means the
/// value is empty, which deletes the stored value.
pub(crate) fn normalize_value(meta: &AttributeMeta, value: &Value) -> ApiResult<Option<Value>> {
    let empty = match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    };
    if empty {
        return Ok(None);
    }
    if meta.frontend_input == "multiselect" {
        let text = match value {
            Value::Array(list) => list
                .iter()
                .map(input::to_string)
                .collect::<ApiResult<Vec<_>>>()?
                .join(","),
            other => input::to_string(other)?,
        };
        return Ok(Some(Value::String(text)));
    }
    let text = match value {
        Value::Array(_) | Value::Object(_) => return Err(ApiError::type_mismatch(value, "string")),
        other => input::to_string(other)?,
    };
    let stored = match meta.backend_type.as_str() {
        "decimal" => match text.trim().parse::<f64>() {
            Ok(number) if number.is_finite() => format!("{number:.6}"),
            _ if meta.frontend_input == "price" => {
                return Err(ApiError::bad_request(
                    "Please enter a number 0 or greater in this field.",
                ));
            }
            _ => text,
        },
        "datetime" => clock::normalize_datetime(&text).unwrap_or(text),
        "int" => match value {
            Value::Bool(b) => i64::from(*b).to_string(),
            _ => match text.trim().parse::<f64>() {
                Ok(number) if number.is_finite() => (number.trunc() as i64).to_string(),
                _ => text,
            },
        },
        _ => text,
    };
    Ok(Some(Value::String(stored)))
}

/// Magento's `formatUrlKey`: lower case, everything but letters and digits becomes `-`.
pub(crate) fn format_url_key(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut dash = false;
    for ch in text.trim().chars() {
        if ch.is_alphanumeric() {
            out.extend(ch.to_lowercase());
            dash = false;
        } else if !dash && !out.is_empty() {
            out.push('-');
            dash = true;
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(backend: &str, input: &str) -> AttributeMeta {
        AttributeMeta {
            attribute_code: "x".into(),
            default_frontend_label: "X".into(),
            scope: Scope::Global,
            backend_type: backend.into(),
            frontend_input: input.into(),
        }
    }

    #[test]
    fn values_are_stored_like_magento() {
        assert_eq!(
            normalize_value(&meta("decimal", "price"), &json!(7.99))
                .ok()
                .flatten(),
            Some(json!("7.990000"))
        );
        assert_eq!(
            normalize_value(&meta("datetime", "date"), &json!("2024-05-01"))
                .ok()
                .flatten(),
            Some(json!("2024-05-01 00:00:00"))
        );
        assert_eq!(
            normalize_value(&meta("int", "select"), &json!(2))
                .ok()
                .flatten(),
            Some(json!("2"))
        );
        assert_eq!(
            normalize_value(&meta("varchar", "text"), &json!(""))
                .ok()
                .flatten(),
            None
        );
        assert!(normalize_value(&meta("decimal", "price"), &json!("abc")).is_err());
        assert_eq!(format_url_key("Joust Duffle Bag!"), "joust-duffle-bag");
    }
}
