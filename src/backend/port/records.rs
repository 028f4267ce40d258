//! The shapes every area of the port shares: the scope a call runs in, a page of a list,
//! product ids and SKUs, and the lenient readers of the numbers stores send as strings.

use bytes::Bytes;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::error::BackendError;

/// Which store scope a call runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope<'a> {
    /// The configured default store view: reads.
    Default,
    /// A store view by code: store-specific reads and writes.
    Store(&'a str),
    /// The global level: writes of default values (no reads).
    All,
}

/// A list answer: the page's items and how many there are in all.
#[derive(Debug, Clone, Deserialize)]
pub struct SearchResult<T> {
    #[serde(default = "Vec::new")]
    pub items: Vec<T>,
    #[serde(default)]
    pub total_count: u64,
}

/// A page of a list (a product search, stock items) in the port's own form: a JSON object
/// with `items` (each with its `id`) and `total_count`, the form Magento 2 answers in, which
/// other adapters write theirs in. Kept as bytes so that the cache holds it at its real
/// weight, and read only when a resource renders it.
#[derive(Debug, Clone)]
pub struct Page(pub Bytes);

impl Page {
    /// The page's items and total.
    pub fn read(&self) -> Result<SearchResult<Value>, BackendError> {
        serde_json::from_slice(&self.0)
            .map_err(|e| BackendError::Protocol(format!("unexpected list body: {e}")))
    }

    /// A page written from its items, for an adapter whose store answers in another form.
    pub fn of(items: Vec<Value>, total_count: u64) -> Page {
        let value = serde_json::json!({"items": items, "total_count": total_count});
        Page(Bytes::from(value.to_string()))
    }
}

/// A product's id and SKU (the resources address products by id, stores by SKU).
#[derive(Debug, Clone, Deserialize)]
pub struct IdSku {
    #[serde(deserialize_with = "lenient_u64")]
    pub id: u64,
    pub sku: String,
}

/// A product of a category, with its position there.
#[derive(Debug, Clone, Deserialize)]
pub struct CategoryLink {
    pub sku: String,
    #[serde(default, deserialize_with = "lenient_i64")]
    pub position: i64,
}

/// Stores send some integers as strings (category ids, EAV values): accept both.
pub fn lenient_u64<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    lenient(
        d,
        serde_json::Number::as_u64,
        "not an unsigned integer",
        None,
    )
}

/// As [`lenient_u64`], signed; null is 0.
pub fn lenient_i64<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    lenient(d, serde_json::Number::as_i64, "not an integer", Some(0))
}

/// An integer from a JSON number (`from_number`, else `not_one`) or a numeric string;
/// `null`: `null`'s value, when it has one.
fn lenient<'de, D, T>(
    d: D,
    from_number: fn(&serde_json::Number) -> Option<T>,
    not_one: &'static str,
    null: Option<T>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    use serde::de::Error;
    match (Value::deserialize(d)?, null) {
        (Value::Number(n), _) => from_number(&n).ok_or_else(|| D::Error::custom(not_one)),
        (Value::String(s), _) => s.trim().parse().map_err(D::Error::custom),
        (Value::Null, Some(value)) => Ok(value),
        _ => Err(D::Error::custom("expected an integer")),
    }
}
