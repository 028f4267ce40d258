//! Sales order calls: the order repository's search and single reads, and the order's
//! status history (the original's order comments): its list and adding an entry.

use async_trait::async_trait;
use http::Method;
use serde_json::Value;

use super::{Magento, Scope, SearchCriteria};
use crate::backend::port::{BackendError, Direction, OrderParts, Orders, SearchResult};
use crate::backend::values::{as_f64, as_i64};

#[async_trait]
impl Orders for Magento {
    /// `GET /V1/orders?searchCriteria...`.
    async fn search_orders(
        &self,
        criteria: &SearchCriteria,
    ) -> Result<SearchResult<Value>, BackendError> {
        self.search("/V1/orders", criteria).await
    }

    /// `GET /V1/orders/{id}`, by `entity_id` (not the increment id).
    async fn order(&self, id: u64) -> Result<Value, BackendError> {
        self.get_json(Scope::Default, &format!("/V1/orders/{id}"), &[])
            .await
    }

    /// `GET /V1/orders/{id}/comments`: the order's status history, oldest first.
    fn order_parts(&self, order: &Value) -> OrderParts {
        parts(order)
    }

    async fn order_comments(&self, id: u64) -> Result<Vec<Value>, BackendError> {
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
    async fn add_order_comment(&self, id: u64, entry: Value) -> Result<u64, BackendError> {
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
                BackendError::Protocol("the added comment is not in the order's history".into())
            })
    }

    /// One status history entry by id. Magento 2 has no read of one entry, nor a search of
    /// them: the entry is looked for in the orders updated most recently (adding a comment
    /// updates its order), [`COMMENT_SEARCH_PAGES`] pages of 100, projected to their
    /// histories.
    async fn order_comment(&self, comment_id: u64) -> Result<Option<Value>, BackendError> {
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

/// How many pages of 100 orders [`Orders::order_comment`] searches.
pub const COMMENT_SEARCH_PAGES: u32 = 20;

fn history_id(entry: &Value) -> u64 {
    entry
        .get("entity_id")
        .and_then(|v| v.as_u64().or_else(|| v.as_str()?.trim().parse().ok()))
        .unwrap_or(0)
}

/// What an order record holds beside its fields: the tax name and rate from
/// `extension_attributes.applied_taxes`; billing from `billing_address` and shipping from
/// `extension_attributes.shipping_assignments[0].shipping.address`; the status history.
fn parts(order: &Value) -> OrderParts {
    let taxes: Vec<&Value> = order
        .pointer("/extension_attributes/applied_taxes")
        .and_then(Value::as_array)
        .map(|list| list.iter().collect())
        .unwrap_or_default();
    let names: Vec<String> = taxes
        .iter()
        .filter_map(|t| {
            ["title", "code"]
                .iter()
                .filter_map(|k| t.get(*k).and_then(Value::as_str))
                .find(|s| !s.is_empty())
                .map(str::to_owned)
        })
        .collect();
    let rates: Vec<f64> = taxes
        .iter()
        .filter_map(|t| t.get("percent").and_then(as_f64))
        .collect();
    let mut addresses = Vec::new();
    if let Some(billing) = order.get("billing_address").filter(|a| a.is_object()) {
        addresses.push(("billing".to_owned(), billing.clone()));
    }
    if let Some(shipping) = order
        .pointer("/extension_attributes/shipping_assignments/0/shipping/address")
        .filter(|a| a.is_object())
    {
        addresses.push(("shipping".to_owned(), shipping.clone()));
    }
    let mut comments: Vec<Value> = order
        .get("status_histories")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    comments.sort_by_key(|c| c.get("entity_id").and_then(as_i64).unwrap_or(0));
    OrderParts {
        tax_name: (!names.is_empty()).then(|| names.join(", ")),
        tax_rate: (!rates.is_empty()).then(|| rates.iter().sum::<f64>()),
        addresses,
        comments,
        items: order
            .get("items")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn taxes_addresses_and_comments_come_out_of_the_order() {
        let order = json!({
            "entity_id": 9,
            "billing_address": {"street": ["a", "b"], "city": "X"},
            "status_histories": [{"entity_id": 3}, {"entity_id": 1}],
            "extension_attributes": {
                "applied_taxes": [{"title": "T1", "percent": 5}, {"code": "T2", "percent": 2.5}],
                "shipping_assignments": [{"shipping": {"address": {"street": ["c"], "address_type": "shipping"}}}]
            }
        });
        let parts = parts(&order);
        assert_eq!(
            (parts.tax_name.as_deref(), parts.tax_rate),
            (Some("T1, T2"), Some(7.5))
        );
        let kinds: Vec<&str> = parts.addresses.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(kinds, ["billing", "shipping"]);
        assert_eq!(parts.addresses[0].1["street"], json!(["a", "b"]));
        assert_eq!(parts.comments[0]["entity_id"], 1);
        let none =
            super::parts(&json!({"entity_id": 1, "extension_attributes": {"applied_taxes": []}}));
        assert_eq!(none, OrderParts::default());
    }
}
