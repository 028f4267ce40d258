//! Sales order calls (read-only): the order repository's search and single reads.

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
}
