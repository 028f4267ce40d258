//! Sales orders: searched, read, and their comments (the status history).

use async_trait::async_trait;
use serde_json::Value;

use super::error::BackendError;
use super::query::SearchCriteria;
use super::records::SearchResult;

/// What the layers above read of an order besides its own fields, worked out by the
/// adapter from the store's record.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OrderParts {
    /// The applied taxes' names, joined with ", ".
    pub tax_name: Option<String>,
    /// The applied taxes' rates, summed.
    pub tax_rate: Option<f64>,
    /// Billing then shipping, each with its type (`billing`, `shipping`), as the store
    /// holds them (a street may be a list of lines or one string).
    pub addresses: Vec<(String, Value)>,
    /// The order's comments (its status history), oldest first.
    pub comments: Vec<Value>,
    /// The order's lines, as the store holds them.
    pub items: Vec<Value>,
}

#[async_trait]
pub trait Orders: Send + Sync {
    async fn search_orders(
        &self,
        criteria: &SearchCriteria,
    ) -> Result<SearchResult<Value>, BackendError>;
    async fn order(&self, id: u64) -> Result<Value, BackendError>;
    /// The taxes, addresses, comments and lines of an order record (as [`Orders::order`]
    /// or [`Orders::search_orders`] gave it).
    fn order_parts(&self, order: &Value) -> OrderParts;
    /// An order's comments (its status history), oldest first (by default: a store that
    /// keeps none).
    async fn order_comments(&self, _order_id: u64) -> Result<Vec<Value>, BackendError> {
        Ok(Vec::new())
    }
    /// Adds a comment to an order; the new comment's id.
    async fn add_order_comment(
        &self,
        _order_id: u64,
        _comment: Value,
    ) -> Result<u64, BackendError> {
        Err(BackendError::Unsupported("adding an order comment".into()))
    }
    /// One comment by its id, whichever order it is on; `None` when the store has none.
    async fn order_comment(&self, _comment_id: u64) -> Result<Option<Value>, BackendError> {
        Ok(None)
    }
}
