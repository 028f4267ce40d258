//! Sales order calls: the order repository's search and single reads, and the order's
//! status history (the original's order comments): its list and adding an entry.

use http::Method;
use serde_json::Value;

use super::{Magento, Scope, SearchCriteria, UpstreamError};
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

    /// `GET /V1/orders/{id}/comments`: the order's status history entries.
    pub async fn order_comments(&self, id: u64) -> Result<SearchResult<Value>, UpstreamError> {
        self.get_json(Scope::Default, &format!("/V1/orders/{id}/comments"), &[])
            .await
    }

    /// `POST /V1/orders/{id}/comments` with one status history entry (`comment`, `status`,
    /// `is_customer_notified`, `is_visible_on_front`). Magento answers `true`, not the
    /// entry: the caller reads the history again to learn its id.
    pub async fn add_order_comment(&self, id: u64, entry: Value) -> Result<(), UpstreamError> {
        let body = serde_json::json!({ "statusHistory": entry });
        self.call(
            Method::POST,
            Scope::Default,
            &format!("/V1/orders/{id}/comments"),
            &[],
            Some(&body),
        )
        .await
        .map(|_| ())
    }
}
