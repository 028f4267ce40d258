//! The store's list answers, made into the port's pages.
//!
//! The original answers a list as a JSON object keyed by id (products, customers, orders;
//! the key order is the sort order) or as an array (stock items), with no total anywhere,
//! and a page past the end repeats the last page. The port's page has its items in order and
//! a `total_count` the resources compare the offset with, so the adapter works one out:
//! fewer items than asked means the list ends on this page; a page after the first is checked
//! to be inside the list with two one-item reads (see [`past_the_end`]). A page answers in
//! the port's form ([`Page`]: `{"items": [...], "total_count": n}`, each item with its
//! `id`), raw for the cache.

use bytes::Bytes;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Value, json};

use super::OpenMage;
use super::search::MAX_LIMIT;
use crate::backend::port::{BackendError, Page, SearchCriteria, StoreSession};
use crate::backend::values::as_i64;

/// The items of a list answer, in the order the store sent them. An object's keys are the
/// ids: an item that lacks `entity_id` (a customer's own record) gets its key as one.
pub fn items(raw: &[u8]) -> Result<Vec<Value>, BackendError> {
    struct Items;
    impl<'de> Visitor<'de> for Items {
        type Value = Vec<Value>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list as an object keyed by id, or an array")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<Value>, A::Error> {
            let mut out = Vec::new();
            while let Some((key, mut item)) = map.next_entry::<String, Value>()? {
                if let Some(object) = item.as_object_mut() {
                    object.entry("entity_id").or_insert(Value::String(key));
                }
                out.push(item);
            }
            Ok(out)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Value>, A::Error> {
            let mut out = Vec::new();
            while let Some(item) = seq.next_element::<Value>()? {
                out.push(item);
            }
            Ok(out)
        }
    }
    let mut de = serde_json::Deserializer::from_slice(raw);
    de.deserialize_any(Items)
        .map_err(|e| BackendError::Protocol(format!("unexpected list: {e}")))
}

/// The numeric id of a record (`entity_id`, or `item_id` for stock items).
pub fn id_of(record: &Value) -> Option<u64> {
    ["entity_id", "item_id", "id"]
        .iter()
        .find_map(|k| record.get(*k).and_then(as_i64))
        .and_then(|id| u64::try_from(id).ok())
}

/// A page in the port's form: each item given its `id`.
fn envelope(mut items: Vec<Value>, total: u64) -> Page {
    for item in &mut items {
        if let Some(id) = id_of(item) {
            item["id"] = json!(id);
        }
    }
    Page::of(items, total)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Who a list is read as.
#[derive(Clone, Copy)]
pub enum As<'a> {
    Admin,
    Guest,
    /// A customer, with their kept session.
    Customer(&'a StoreSession),
}

impl OpenMage {
    async fn read_as(
        &self,
        who: As<'_>,
        path: &str,
        query: &[(String, String)],
    ) -> Result<Bytes, BackendError> {
        match who {
            As::Admin => self.get(path, query).await,
            As::Guest => self.get_as_guest(path, query).await,
            As::Customer(session) => self.get_for(path, query, session).await,
        }
    }

    /// One page of `path` (a collection) matching `criteria`, in the page envelope. A page
    /// larger than the store serves is read as several of its pages (of a size that divides
    /// both, so they line up with the page asked for).
    pub async fn page(
        &self,
        who: As<'_>,
        path: &str,
        criteria: &SearchCriteria,
        extra: &[(String, String)],
    ) -> Result<Page, BackendError> {
        let size = u64::from(criteria.page_size().unwrap_or(MAX_LIMIT).max(1));
        let page = u64::from(criteria.current_page().unwrap_or(1).max(1));
        let chunk = if size <= u64::from(MAX_LIMIT) {
            size
        } else {
            gcd(size, u64::from(MAX_LIMIT))
        };
        let mut query = super::search::filters(criteria)?;
        query.extend_from_slice(extra);
        let before = (page - 1) * size;
        if page > 1 && self.past_the_end(who, path, &query, before).await? {
            return Ok(envelope(Vec::new(), before));
        }
        let mut found: Vec<Value> = Vec::new();
        let mut previous: Option<Vec<Value>> = None;
        let mut ended = false;
        for part in 0..size / chunk {
            let mut paged = query.clone();
            paged.push(("limit".into(), chunk.to_string()));
            paged.push(("page".into(), (before / chunk + 1 + part).to_string()));
            let got = items(&self.read_as(who, path, &paged).await?)?;
            // Past the end the store repeats its last page.
            if previous.as_ref() == Some(&got) {
                ended = true;
                break;
            }
            let short = (got.len() as u64) < chunk;
            found.extend(got.iter().cloned());
            previous = Some(got);
            if short {
                ended = true;
                break;
            }
        }
        let total = before + found.len() as u64 + u64::from(!ended);
        Ok(envelope(found, total))
    }

    /// Is the item at offset `before` (0-based) past the end of the list? The store repeats
    /// its last item past the end, so the item at `before` and the one before it are read
    /// (pages of one): the same id twice means the list ended before `before`.
    async fn past_the_end(
        &self,
        who: As<'_>,
        path: &str,
        query: &[(String, String)],
        before: u64,
    ) -> Result<bool, BackendError> {
        let one = |page: u64| {
            let mut q = query.to_vec();
            q.push(("limit".into(), "1".into()));
            q.push(("page".into(), page.to_string()));
            q
        };
        let (at_query, previous_query) = (one(before + 1), one(before));
        // Both answered, whatever the first says: a recording replays the same calls.
        let (at, previous) = tokio::join!(
            self.read_as(who, path, &at_query),
            self.read_as(who, path, &previous_query),
        );
        let (at, previous) = (at?, previous?);
        let first = |raw: &[u8]| -> Result<Option<Value>, BackendError> {
            Ok(items(raw)?.into_iter().next())
        };
        Ok(match (first(&at)?, first(&previous)?) {
            (None, _) => true,
            (Some(a), Some(b)) => a == b,
            (Some(_), None) => false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_lists_keep_their_order_and_ids() {
        let raw = br#"{"5":{"entity_id":"5","sku":"e"},"4":{"sku":"d"}}"#;
        let list = items(raw).unwrap();
        assert_eq!(list[0]["sku"], "e");
        assert_eq!(list[1]["entity_id"], "4");
        assert_eq!(id_of(&list[1]), Some(4));
        assert_eq!(items(b"[]").unwrap().len(), 0);
        assert_eq!(items(br#"[{"item_id":"3"}]"#).unwrap().len(), 1);
        assert!(items(b"\"x\"").is_err());
        assert_eq!((gcd(300, 100), gcd(150, 100), gcd(101, 100)), (100, 50, 1));
    }
}
