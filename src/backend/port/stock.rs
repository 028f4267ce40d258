//! Stock items: one product's, a page of them, and an update.

use async_trait::async_trait;
use bytes::Bytes;
use serde_json::Value;

use super::error::BackendError;
use super::records::Page;

#[async_trait]
pub trait Stock: Send + Sync {
    /// A product's stock item, in the store's shape.
    async fn stock_item(&self, sku: &str) -> Result<Bytes, BackendError>;
    /// A page (1-based) of stock items whose quantity is at most `max_qty` (every item:
    /// `None`), in the store's item order.
    async fn stock_items_page(
        &self,
        max_qty: Option<&str>,
        page: u32,
        size: u32,
    ) -> Result<Page, BackendError>;
    /// Changes a product's stock item (`changes`: the stock item mapping's write fields).
    /// A store the gateway only reads: the default says so.
    async fn update_stock_item(
        &self,
        _sku: &str,
        _item_id: u64,
        _changes: Value,
    ) -> Result<(), BackendError> {
        Err(BackendError::Unsupported("changing a stock item".into()))
    }
}
