//! Orders and their comments through the store's REST API.

use async_trait::async_trait;
use serde_json::Value;

use super::lists;
use super::records::{OpenMageBackend, parse, text};
use crate::backend::port::{BackendError, OrderParts, Orders, SearchCriteria, SearchResult};
use crate::backend::values::as_f64;

#[async_trait]
impl Orders for OpenMageBackend {
    async fn search_orders(
        &self,
        criteria: &SearchCriteria,
    ) -> Result<SearchResult<Value>, BackendError> {
        self.admin_search("/orders", criteria).await
    }

    async fn order(&self, id: u64) -> Result<Value, BackendError> {
        parse(&self.client.get(&format!("/orders/{id}"), &[]).await?)
    }

    /// The store's order record carries its addresses, comments and lines, and its tax
    /// name and rate, under the original's names.
    fn order_parts(&self, order: &Value) -> OrderParts {
        let list = |field: &str| {
            order
                .get(field)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        OrderParts {
            tax_name: order
                .get("tax_name")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
            tax_rate: order.get("tax_rate").and_then(as_f64),
            addresses: list("addresses")
                .into_iter()
                .map(|a| (text(a.get("address_type")), a))
                .collect(),
            comments: list("order_comments"),
            items: list("order_items"),
        }
    }

    async fn order_comments(&self, order_id: u64) -> Result<Vec<Value>, BackendError> {
        lists::items(
            &self
                .client
                .get(&format!("/orders/{order_id}/comments"), &[])
                .await?,
        )
    }

    async fn add_order_comment(&self, order_id: u64, comment: Value) -> Result<u64, BackendError> {
        let mut body = comment;
        if let Some(object) = body.as_object_mut() {
            // The order is the path's.
            object.remove("parent_id");
        }
        let path = format!("/orders/{order_id}/comments");
        self.create(&path, &body, "created comment id").await
    }

    async fn order_comment(&self, comment_id: u64) -> Result<Option<Value>, BackendError> {
        match self
            .client
            .get(&format!("/orders/comments/{comment_id}"), &[])
            .await
        {
            Ok(raw) => Ok(Some(parse(&raw)?)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }
}
