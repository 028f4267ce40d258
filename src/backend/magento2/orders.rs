//! Sales order calls: the order repository's search and single reads, and the order's
//! status history (the original's order comments): its list and adding an entry.

use http::Method;
use serde_json::Value;

use super::{Magento, Scope, SearchCriteria, UpstreamError};
use crate::backend::port::Direction;
use crate::backend::port::SearchResult;

impl Magento {
    /// `GET /V1/orders?searchCriteria...`.
    pub async fn search_orders(
        &self,
        criteria: &SearchCriteria,
    ) -> Result<SearchResult<Value>, UpstreamError> {
        self.get_json(
            Scope::Default,
            "/V1/orders",
            &super::search::to_query(criteria),
        )
        .await
    }

    /// `GET /V1/orders/{id}`, by `entity_id` (not the increment id).
    pub async fn order(&self, id: u64) -> Result<Value, UpstreamError> {
        self.get_json(Scope::Default, &format!("/V1/orders/{id}"), &[])
            .await
    }

    /// `GET /V1/orders/{id}/comments`: the order's status history, oldest first.
    pub async fn order_comments(&self, id: u64) -> Result<Vec<Value>, UpstreamError> {
        let result: SearchResult<Value> = self
            .get_json(Scope::Default, &format!("/V1/orders/{id}/comments"), &[])
            .await?;
        let mut entries = result.items;
        entries.sort_by_key(history_id);
        Ok(entries)
    }

    /// `POST /V1/orders/{id}/comments` with one status history entry (`comment`, `status`,
    /// `is_customer_notified`, `is_visible_on_front`). Magento answers `true`, not the
    /// entry, so the history is read again: the new entry is the newest with this text.
    pub async fn add_order_comment(&self, id: u64, entry: Value) -> Result<u64, UpstreamError> {
        let text = entry
            .get("comment")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let body = serde_json::json!({ "statusHistory": entry });
        self.call(
            Method::POST,
            Scope::Default,
            &format!("/V1/orders/{id}/comments"),
            &[],
            Some(&body),
        )
        .await?;
        self.order_comments(id)
            .await?
            .iter()
            .filter(|h| h.get("comment").and_then(Value::as_str).unwrap_or_default() == text)
            .map(history_id)
            .max()
            .filter(|&id| id > 0)
            .ok_or_else(|| {
                UpstreamError::Protocol("the added comment is not in the order's history".into())
            })
    }

    /// One status history entry by id. Magento 2 has no read of one entry, nor a search of
    /// them: the entry is looked for in the orders updated most recently (adding a comment
    /// updates its order), [`COMMENT_SEARCH_PAGES`] pages of 100, projected to their
    /// histories.
    pub async fn find_order_comment(
        &self,
        comment_id: u64,
    ) -> Result<Option<Value>, UpstreamError> {
        for page in 1..=COMMENT_SEARCH_PAGES {
            let criteria = SearchCriteria::new()
                .sort("updated_at", Direction::Desc)
                .page(100, page)
                .fields("items[entity_id,status_histories],total_count");
            let result = self.search_orders(&criteria).await?;
            let found = result
                .items
                .iter()
                .filter_map(|order| order.get("status_histories").and_then(Value::as_array))
                .flatten()
                .find(|h| history_id(h) == comment_id);
            if let Some(found) = found {
                return Ok(Some(found.clone()));
            }
            if u64::from(page) * 100 >= result.total_count {
                break;
            }
        }
        Ok(None)
    }
}

/// How many pages of 100 orders [`Magento::find_order_comment`] searches.
pub const COMMENT_SEARCH_PAGES: u32 = 20;

fn history_id(entry: &Value) -> u64 {
    entry
        .get("entity_id")
        .and_then(|v| v.as_u64().or_else(|| v.as_str()?.trim().parse().ok()))
        .unwrap_or(0)
}
