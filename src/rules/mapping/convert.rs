//! Field types: how an upstream value becomes a spec value (read) and back (write).
//!
//! The spec's conventions are the defaults here: most numbers are strings (`"5"`,
//! `"12.5000"`), empty values are `null` in JSON and an empty element in XML, booleans are
//! `1`/empty in XML. A mapping names a type per field, so an operator can change a field's
//! rendering without a rebuild.

use serde::Deserialize;
use serde_json::{Map, Number, Value};

/// The type of a mapped field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldType {
    /// Text.
    String,
    /// A JSON integer.
    Int,
    /// An integer written as a string (`"5"`), as the original sent database values.
    IntString,
    /// A decimal with four places, as a string (`"12.5000"`).
    Decimal4,
    /// A JSON number.
    Number,
    /// `"1"` or `"0"`.
    Flag,
    /// A JSON boolean (XML: `1` or empty).
    Bool,
    /// True when the source is present and not empty (an array of custom options, say).
    Nonempty,
    /// `YYYY-MM-DD HH:MM:SS` (a date alone, or ISO 8601 in UTC, shown in that form); `null`
    /// when unset.
    Datetime,
    /// ISO 8601 (`YYYY-MM-DDTHH:MM:SS+00:00`; Magento keeps UTC), as the original showed a
    /// single product's dates; `null` when unset.
    DatetimeIso,
    /// A media file path turned into a URL with the store's media base URL.
    MediaUrl,
    /// A list of scalars, as they are.
    List,
    /// A nested record described by `[objects.<name>]`.
    Object,
    /// Magento 2 tier prices with quantity 1, shown as the original's group prices.
    GroupPrice,
    /// Magento 2 tier prices with a quantity above 1, shown as the original's tier prices.
    TierPrice,
    /// [`FieldType::GroupPrice`] with the original's JSON types: `cust_group` an integer,
    /// and `is_percent`.
    GroupPriceOriginal,
    /// [`FieldType::TierPrice`] with the original's JSON types.
    TierPriceOriginal,
    /// A shopper's tier prices (`{qty, price_with_tax, price_without_tax}`, as the gateway
    /// works them out or the store renders them) with the original's `qty`: a string with
    /// four places (`"5.0000"`), the prices numbers. Read only.
    ShopperTiersOriginal,
    /// Any JSON, unchanged.
    Raw,
}

impl FieldType {
    /// For the group and tier price types: (group prices?, the original's JSON types?).
    pub fn tier_kind(self) -> Option<(bool, bool)> {
        match self {
            FieldType::GroupPrice => Some((true, false)),
            FieldType::TierPrice => Some((false, false)),
            FieldType::GroupPriceOriginal => Some((true, true)),
            FieldType::TierPriceOriginal => Some((false, true)),
            _ => None,
        }
    }
}

/// The JSON type Magento expects on write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendType {
    String,
    Int,
    Number,
    Bool,
}

pub use crate::backend::values::{as_f64, as_i64};

use crate::backend::port::TierPrice;

fn truthy(value: &Value) -> bool {
    match value {
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty() && s != "0" && !s.eq_ignore_ascii_case("false"),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        Value::Null => false,
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A JSON number, integral when the value is.
pub fn number(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        Value::Number((f as i64).into())
    } else {
        Number::from_f64(f)
            .map(Value::Number)
            .unwrap_or(Value::Null)
    }
}

pub fn decimal4(f: f64) -> String {
    format!("{f:.4}")
}

/// Magento dates are `YYYY-MM-DD HH:MM:SS` or `YYYY-MM-DD`; show them in the long form.
/// OpenMage's REST API sends a single record's `created_at` in ISO 8601 in UTC
/// (`2026-11-26T09:51:27+00:00`): the same instant in the long form.
fn datetime_out(value: &Value) -> Value {
    match value {
        Value::String(s) if s.trim().is_empty() => Value::Null,
        Value::String(s) => {
            let s = s.trim();
            if s.len() == 10 && parse_date_parts(s).is_some() {
                Value::String(format!("{s} 00:00:00"))
            } else if let Some(long) = iso_utc_to_long(s) {
                Value::String(long)
            } else {
                Value::String(s.to_owned())
            }
        }
        _ => Value::Null,
    }
}

/// `YYYY-MM-DDTHH:MM:SS+00:00` (or `...Z`) as `YYYY-MM-DD HH:MM:SS`; `None` for any other
/// form, other offsets included (they are shown as sent).
fn iso_utc_to_long(s: &str) -> Option<String> {
    let (date, rest) = s.split_once('T')?;
    let time = rest
        .strip_suffix("+00:00")
        .or_else(|| rest.strip_suffix('Z'))?;
    let clock = time.len() == 8
        && time.bytes().enumerate().all(|(i, b)| match i {
            2 | 5 => b == b':',
            _ => b.is_ascii_digit(),
        });
    (date.len() == 10 && parse_date_parts(date).is_some() && clock)
        .then(|| format!("{date} {time}"))
}

/// The value a spec field shows for an upstream value (`None` when the source is absent).
/// `media_base` is the store's media URL base (ending in `/`) for `MediaUrl`.
pub fn read(ty: FieldType, source: Option<&Value>, media_base: &str) -> Value {
    let Some(source) = source else {
        return match ty {
            FieldType::Nonempty => Value::Bool(false),
            ty if ty.tier_kind().is_some() => Value::Array(Vec::new()),
            _ => Value::Null,
        };
    };
    match ty {
        FieldType::String => match source {
            Value::Array(_) | Value::Object(_) => Value::Null,
            other => Value::String(text(other)),
        },
        FieldType::Int => as_i64(source)
            .map(|i| Value::Number(i.into()))
            .unwrap_or(Value::Null),
        FieldType::IntString => as_i64(source)
            .map(|i| Value::String(i.to_string()))
            .unwrap_or(Value::Null),
        FieldType::Decimal4 => as_f64(source)
            .map(|f| Value::String(decimal4(f)))
            .unwrap_or(Value::Null),
        FieldType::Number => match source {
            // Keep Magento's own number as it is (34 stays 34, not 34.0).
            Value::Number(n) => Value::Number(n.clone()),
            other => as_f64(other).map(number).unwrap_or(Value::Null),
        },
        FieldType::Flag => Value::String(if truthy(source) { "1" } else { "0" }.to_owned()),
        FieldType::Bool | FieldType::Nonempty => Value::Bool(truthy(source)),
        FieldType::Datetime => datetime_out(source),
        FieldType::DatetimeIso => match datetime_out(source) {
            Value::String(s) if s.len() == 19 => {
                Value::String(format!("{}T{}+00:00", &s[..10], &s[11..]))
            }
            other => other,
        },
        FieldType::MediaUrl => match source {
            Value::String(file) if !file.is_empty() && file != "no_selection" => {
                let file = if file.starts_with('/') {
                    file.clone()
                } else {
                    format!("/{file}")
                };
                Value::String(format!("{media_base}catalog/product{file}"))
            }
            _ => Value::Null,
        },
        FieldType::List => match source {
            Value::Array(items) => Value::Array(items.clone()),
            Value::Null => Value::Array(Vec::new()),
            other => Value::Array(vec![other.clone()]),
        },
        FieldType::Raw => source.clone(),
        FieldType::GroupPrice
        | FieldType::TierPrice
        | FieldType::GroupPriceOriginal
        | FieldType::TierPriceOriginal => {
            let (group, original) = ty.tier_kind().unwrap_or_default();
            Value::Array(tier_entries(source, group, original))
        }
        FieldType::ShopperTiersOriginal => match source {
            Value::Array(tiers) => Value::Array(
                tiers
                    .iter()
                    .map(|tier| {
                        let mut tier = tier.clone();
                        if let Some(qty) = tier.get("qty").and_then(as_f64) {
                            tier["qty"] = Value::String(decimal4(qty));
                        }
                        tier
                    })
                    .collect(),
            ),
            _ => Value::Array(Vec::new()),
        },
        // Objects are read by the engine, field by field.
        FieldType::Object => source.clone(),
    }
}

/// "All customer groups" in a tier price.
const ALL_GROUPS: u64 = 32000;

/// Group or tier prices in the API's shape, from tiers in the gateway's own form
/// ([`TierPrice::to_value`]; group prices are tiers of quantity 1). `original`: the
/// original's JSON types (`cust_group` the integer 32000 for all groups, and `is_percent`).
fn tier_entries(source: &Value, group: bool, original: bool) -> Vec<Value> {
    let Some(list) = source.as_array() else {
        return Vec::new();
    };
    list.iter()
        .filter_map(TierPrice::from_value)
        .filter_map(|tier| {
            if (tier.qty <= 1.0) != group {
                return None;
            }
            let mut out = Map::new();
            out.insert(
                "website_id".into(),
                Value::String(tier.website_id.to_string()),
            );
            let group_id = tier.group.unwrap_or(0);
            // The original: all groups as the integer 32000 (its constant), one group as
            // the database's string.
            out.insert(
                "cust_group".into(),
                if original && group_id == ALL_GROUPS {
                    Value::Number(group_id.into())
                } else {
                    Value::String(group_id.to_string())
                },
            );
            out.insert("price".into(), Value::String(decimal4(tier.value)));
            if !group {
                out.insert("price_qty".into(), Value::String(decimal4(tier.qty)));
            }
            // The original's types: a group price's `is_percent` a boolean, a tier's an
            // integer. (Its group prices said `true` whatever they were: it reported whether
            // the column was loaded, `isset()`; the gateway says what the price is.)
            if original {
                out.insert(
                    "is_percent".into(),
                    if group {
                        Value::Bool(tier.percent)
                    } else {
                        Value::Number(u8::from(tier.percent).into())
                    },
                );
            }
            Some(Value::Object(out))
        })
        .collect()
}

/// Why a client value cannot be written. The text names the field.
pub type WriteError = String;

/// Is this client value empty (`""`, `null`, or whitespace)?
pub fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        _ => false,
    }
}

/// A client value as text, for messages that quote it.
pub fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The upstream value for a client value of a spec field.
pub fn write(
    ty: FieldType,
    upstream: BackendType,
    field: &str,
    value: &Value,
) -> Result<Value, WriteError> {
    let invalid = || {
        format!(
            "Invalid value \"{}\" for attribute \"{field}\".",
            text(value)
        )
    };
    if matches!(value, Value::Array(_) | Value::Object(_))
        && !matches!(
            ty,
            FieldType::List
                | FieldType::Raw
                | FieldType::Object
                | FieldType::GroupPrice
                | FieldType::TierPrice
                | FieldType::GroupPriceOriginal
                | FieldType::TierPriceOriginal
        )
    {
        return Err(invalid());
    }
    let normalized: Value = match ty {
        FieldType::String => Value::String(text(value)),
        FieldType::Int | FieldType::IntString => {
            if is_empty(value) {
                Value::Null
            } else {
                Value::Number(as_i64(value).ok_or_else(invalid)?.into())
            }
        }
        FieldType::Decimal4 | FieldType::Number => {
            if is_empty(value) {
                Value::Null
            } else {
                let f = as_f64(value).ok_or_else(|| {
                    format!("Please enter a valid number in the \"{field}\" field.")
                })?;
                Value::Number(Number::from_f64(f).ok_or_else(invalid)?)
            }
        }
        FieldType::Flag | FieldType::Bool => match value {
            Value::Bool(b) => Value::Bool(*b),
            other => match as_i64(other) {
                Some(0) => Value::Bool(false),
                Some(1) => Value::Bool(true),
                _ => return Err(invalid()),
            },
        },
        FieldType::Datetime | FieldType::DatetimeIso => {
            if is_empty(value) {
                Value::Null
            } else {
                Value::String(
                    parse_datetime(&text(value))
                        .ok_or_else(|| format!("Invalid date in the \"{field}\" field."))?,
                )
            }
        }
        FieldType::List => match value {
            Value::Array(items) => Value::Array(items.clone()),
            other => Value::Array(vec![other.clone()]),
        },
        FieldType::Raw | FieldType::Object => value.clone(),
        FieldType::GroupPrice
        | FieldType::TierPrice
        | FieldType::GroupPriceOriginal
        | FieldType::TierPriceOriginal => {
            let (group, _) = ty.tier_kind().unwrap_or_default();
            return write_tiers(group, field, value);
        }
        FieldType::Nonempty | FieldType::MediaUrl | FieldType::ShopperTiersOriginal => {
            return Err(invalid());
        }
    };
    Ok(to_backend(upstream, normalized))
}

/// Casts a normalised value to the JSON type Magento expects.
fn to_backend(upstream: BackendType, value: Value) -> Value {
    match (upstream, &value) {
        (_, Value::Null) => Value::Null,
        (BackendType::String, Value::Bool(b)) => Value::String(if *b { "1" } else { "0" }.into()),
        (BackendType::String, Value::Number(n)) => Value::String(n.to_string()),
        (BackendType::Int, Value::Bool(b)) => Value::Number(i64::from(*b).into()),
        (BackendType::Int, Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f as i64))
            .map(|i| Value::Number(i.into()))
            .unwrap_or(value),
        (BackendType::Number, Value::Bool(b)) => Value::Number(i64::from(*b).into()),
        (BackendType::Bool, Value::Number(n)) => Value::Bool(n.as_f64().is_some_and(|f| f != 0.0)),
        _ => value,
    }
}

/// The original's group/tier price entries as tiers in the gateway's own form (the back end
/// writes them in its store's shape: `Backend::put_tier_prices`).
fn write_tiers(group: bool, field: &str, value: &Value) -> Result<Value, WriteError> {
    let entries: Vec<&Value> = match value {
        Value::Array(items) => items.iter().collect(),
        // One entry sent as an object (XML with a single data_item reads as a list already).
        Value::Object(_) => vec![value],
        v if is_empty(v) => Vec::new(),
        _ => return Err(format!("Invalid value for \"{field}\" in request.")),
    };
    let mut out = Vec::new();
    for (i, entry) in entries.into_iter().enumerate() {
        let set = format!("{field}:{i}");
        let Value::Object(map) = entry else {
            return Err(format!("Invalid value for \"{set}\" in request."));
        };
        let website = match map.get("website_id").filter(|v| !is_empty(v)) {
            Some(v) => as_i64(v)
                .filter(|w| *w >= 0)
                .ok_or_else(|| format!("Invalid \"website_id\" value in the \"{set}\" set."))?,
            None => 0,
        };
        let group_id = match map.get("cust_group").filter(|v| !is_empty(v)) {
            Some(v) => as_i64(v)
                .filter(|g| *g >= 0)
                .ok_or_else(|| format!("Invalid \"cust_group\" value in the \"{set}\" set"))?,
            None => 32000,
        };
        let price = map.get("price").filter(|v| !is_empty(v)).ok_or_else(|| {
            format!("The \"price\" value in the \"{set}\" set is a required field.")
        })?;
        let price = as_f64(price).filter(|p| *p >= 0.0).ok_or_else(|| {
            format!(
                "Please enter a number 0 or greater in the \"price\" field in the \"{set}\" set."
            )
        })?;
        let qty = if group {
            1.0
        } else {
            let qty = map
                .get("price_qty")
                .filter(|v| !is_empty(v))
                .ok_or_else(|| {
                    format!("The \"price_qty\" value in the \"{set}\" set is a required field.")
                })?;
            as_f64(qty)
                .filter(|q| *q > 0.0)
                .ok_or_else(|| format!("Please enter a number greater than 0 in the \"price_qty\" field in the \"{set}\" set."))?
        };
        out.push(
            TierPrice {
                group: u64::try_from(group_id).ok(),
                website_id: u64::try_from(website).unwrap_or(0),
                qty,
                value: price,
                percent: false,
            }
            .to_value(),
        );
    }
    Ok(Value::Array(out))
}

fn parse_date_parts(s: &str) -> Option<(u32, u32, u32)> {
    let (y, rest) = s.split_once('-')?;
    let (m, d) = rest.split_once('-')?;
    let (y, m, d) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    valid_date(y, m, d).then_some((y, m, d))
}

fn valid_date(y: u32, m: u32, d: u32) -> bool {
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400) => 29,
        2 => 28,
        _ => return false,
    };
    (1000..=9999).contains(&y) && d >= 1 && d <= days
}

/// Accepts the date forms the spec shows (`YYYY-MM-DD HH:MM:SS`, `YYYY-MM-DD`,
/// `MM/DD/YYYY`, `DD.MM.YYYY`, each with an optional time) and gives Magento's form.
pub fn parse_datetime(input: &str) -> Option<String> {
    let input = input.trim();
    let (date, time) = match input.split_once([' ', 'T']) {
        Some((d, t)) => (d, Some(t.trim())),
        None => (input, None),
    };
    let (y, m, d) = if date.contains('-') {
        parse_date_parts(date)?
    } else if let Some((m, rest)) = date.split_once('/') {
        let (d, y) = rest.split_once('/')?;
        (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?)
    } else if let Some((d, rest)) = date.split_once('.') {
        let (m, y) = rest.split_once('.')?;
        (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?)
    } else {
        return None;
    };
    if !valid_date(y, m, d) {
        return None;
    }
    let (hh, mm, ss) = match time {
        None | Some("") => (0, 0, 0),
        Some(t) => {
            let t = t.trim_end_matches('Z');
            let mut parts = t.split(':');
            let hh: u32 = parts.next()?.parse().ok()?;
            let mm: u32 = parts.next().unwrap_or("0").parse().ok()?;
            let ss: u32 = parts
                .next()
                .unwrap_or("0")
                .split('.')
                .next()?
                .parse()
                .ok()?;
            if parts.next().is_some() || hh > 23 || mm > 59 || ss > 59 {
                return None;
            }
            (hh, mm, ss)
        }
    };
    Some(format!("{y:04}-{m:02}-{d:02} {hh:02}:{mm:02}:{ss:02}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_spec_conventions() {
        use FieldType as T;
        // OpenMage's single records: ISO 8601 in UTC; another offset is not converted:
        // shown as sent.
        let (utc, zulu, east) = (
            "2026-11-26T09:51:27+00:00",
            "2026-11-26T09:51:27Z",
            "2026-11-26T09:51:27+02:00",
        );
        let (day, midnight) = ("2024-01-02", "2024-01-02 00:00:00");
        let plain = "2026-11-26 09:51:27";
        let cases: Vec<(FieldType, Option<Value>, &str, Value)> = vec![
            (T::Decimal4, Some(json!(12.5)), "", json!("12.5000")),
            (T::Decimal4, Some(json!("3")), "", json!("3.0000")),
            (T::IntString, Some(json!(5)), "", json!("5")),
            (T::Int, Some(json!("5")), "", json!(5)),
            (T::Flag, Some(json!(true)), "", json!("1")),
            (T::Flag, Some(json!("")), "", json!("0")),
            (T::Bool, Some(json!([1])), "", json!(true)),
            (T::Nonempty, None, "", json!(false)),
            (T::Datetime, Some(json!(day)), "", json!(midnight)),
            (T::Datetime, Some(json!("")), "", Value::Null),
            (T::Datetime, Some(json!(utc)), "", json!(plain)),
            (T::Datetime, Some(json!(zulu)), "", json!(plain)),
            (T::DatetimeIso, Some(json!(utc)), "", json!(utc)),
            (T::Datetime, Some(json!(east)), "", json!(east)),
            (T::MediaUrl, Some(json!("no_selection")), "x", Value::Null),
            (T::String, None, "", Value::Null),
            (T::Number, Some(json!("9.99")), "", json!(9.99)),
        ];
        for (field_type, value, base, expected) in cases {
            let shown = read(field_type, value.as_ref(), base);
            assert_eq!(shown, expected, "{field_type:?} {value:?}");
        }
        assert_eq!(
            read(
                T::MediaUrl,
                Some(&json!("/m/b/bag.jpg")),
                "https://s/media/"
            ),
            json!("https://s/media/catalog/product/m/b/bag.jpg")
        );
    }

    #[test]
    fn tier_prices_split_into_group_and_tier() {
        let tiers = json!([
            {"group": 32000, "qty": 1, "value": 9, "website_id": 0, "percent": false},
            {"group": 1, "qty": 5, "value": 8.5}
        ]);
        assert_eq!(
            read(FieldType::GroupPrice, Some(&tiers), ""),
            json!([{"website_id": "0", "cust_group": "32000", "price": "9.0000"}])
        );
        assert_eq!(
            read(FieldType::TierPrice, Some(&tiers), ""),
            json!([{"website_id": "0", "cust_group": "1", "price": "8.5000", "price_qty": "5.0000"}])
        );
        let written = write(
            FieldType::TierPrice,
            BackendType::Number,
            "tier_price",
            &json!([{"website_id": "0", "cust_group": "1", "price": "8.5", "price_qty": "5"}]),
        )
        .unwrap();
        assert_eq!(
            written,
            json!([{"group": 1, "qty": 5.0, "value": 8.5, "website_id": 0, "percent": false}])
        );
        let err = write(
            FieldType::TierPrice,
            BackendType::Number,
            "tier_price",
            &json!([{"price": "1"}]),
        )
        .unwrap_err();
        assert_eq!(
            err,
            "The \"price_qty\" value in the \"tier_price:0\" set is a required field."
        );
    }

    #[test]
    fn writes_convert_and_name_the_field() {
        assert_eq!(
            write(
                FieldType::Decimal4,
                BackendType::Number,
                "price",
                &json!("10.5")
            )
            .unwrap(),
            json!(10.5)
        );
        assert_eq!(
            write(
                FieldType::IntString,
                BackendType::String,
                "tax_class_id",
                &json!(2)
            )
            .unwrap(),
            json!("2")
        );
        assert_eq!(
            write(
                FieldType::Flag,
                BackendType::Bool,
                "is_in_stock",
                &json!("1")
            )
            .unwrap(),
            json!(true)
        );
        assert_eq!(
            write(
                FieldType::Decimal4,
                BackendType::Number,
                "price",
                &json!("abc")
            )
            .unwrap_err(),
            "Please enter a valid number in the \"price\" field."
        );
        assert_eq!(
            write(FieldType::Int, BackendType::Int, "status", &json!({"a": 1})).unwrap_err(),
            r#"Invalid value "{"a":1}" for attribute "status"."#
        );
    }

    #[test]
    fn dates_in_every_form_the_spec_shows() {
        for (text, expected) in [
            ("2024-02-29 13:05:00", "2024-02-29 13:05:00"),
            ("2024-02-01", "2024-02-01 00:00:00"),
            ("02/15/2024", "2024-02-15 00:00:00"),
            ("15.02.2024", "2024-02-15 00:00:00"),
            ("2024-01-02T03:04:05Z", "2024-01-02 03:04:05"),
        ] {
            assert_eq!(parse_datetime(text).as_deref(), Some(expected), "{text}");
        }
        for bad in [
            "2023-02-29",
            "13/01/2024",
            "tomorrow",
            "2024-01-01 25:00:00",
            "",
            "1.1",
        ] {
            assert_eq!(parse_datetime(bad), None, "{bad}");
        }
    }
}
