//! Stock calls: Magento 2's legacy CatalogInventory API (`/V1/stockItems/...`).
//!
//! It is deprecated in favour of MSI but present in every 2.4 install, and it is the only
//! API that knows stock item ids. Stock items are addressed by SKU; the one call that lists
//! them with their ids is the low-stock report, which with a threshold at the largest
//! quantity Magento can store lists every item (with a quantity) in stock item id order.

use async_trait::async_trait;
use bytes::Bytes;
use http::Method;
use serde_json::{Value, json};

use super::{Magento, Scope, segment};
use crate::backend::port::{BackendError, Page, Stock};

/// The largest quantity `cataloginventory_stock_item.qty` (decimal 12,4) can hold: as the
/// low-stock threshold it selects every stock item.
pub const EVERY_QTY: &str = "99999999.9999";

#[async_trait]
impl Stock for Magento {
    /// `GET /V1/stockItems/{sku}`: the stock item of a product, raw.
    async fn stock_item(&self, sku: &str) -> Result<Bytes, BackendError> {
        self.get(
            Scope::Default,
            &format!("/V1/stockItems/{}", segment(sku)),
            &[],
        )
        .await
    }

    /// `GET /V1/stockItems/lowStock/`: one page (1-based) of the stock items whose quantity
    /// is at most `max_qty`, in the default scope (0). Magento lists stock items through its
    /// low-stock report: a threshold it cannot store ([`EVERY_QTY`]) selects every item.
    async fn stock_items_page(
        &self,
        max_qty: Option<&str>,
        page: u32,
        size: u32,
    ) -> Result<Page, BackendError> {
        let max_qty = max_qty.unwrap_or(EVERY_QTY);
        let query = [
            ("scopeId".to_owned(), "0".to_owned()),
            ("qty".to_owned(), max_qty.to_owned()),
            ("currentPage".to_owned(), page.max(1).to_string()),
            ("pageSize".to_owned(), size.max(1).to_string()),
        ];
        self.get(Scope::Default, "/V1/stockItems/lowStock/", &query)
            .await
            .map(Page)
    }

    /// `PUT /V1/products/{sku}/stockItems/{itemId}` in admin scope with only the fields to
    /// change. Magento finds the row by SKU; the item id in the path is informative.
    async fn update_stock_item(
        &self,
        sku: &str,
        item_id: u64,
        changes: Value,
    ) -> Result<(), BackendError> {
        let body = json!({ "stockItem": changes });
        let path = format!("/V1/products/{}/stockItems/{item_id}", segment(sku));
        self.command(Method::PUT, Scope::All, &path, Some(&body))
            .await
    }
}
