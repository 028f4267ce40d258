//! Stock calls: Magento 2's legacy CatalogInventory API (`/V1/stockItems/...`).
//!
//! It is deprecated in favour of MSI but present in every 2.4 install, and it is the only
//! API that knows stock item ids. Stock items are addressed by SKU; the one call that lists
//! them with their ids is the low-stock report, which with a threshold at the largest
//! quantity Magento can store lists every item (with a quantity) in stock item id order.

use bytes::Bytes;
use http::Method;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Magento, Scope, UpstreamError, segment};
use crate::backend::port::lenient_u64;

/// The largest quantity `cataloginventory_stock_item.qty` (decimal 12,4) can hold: as the
/// low-stock threshold it selects every stock item.
pub const EVERY_QTY: &str = "99999999.9999";

/// The two ids of a stock item, read from a low-stock page.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct StockPair {
    #[serde(deserialize_with = "lenient_u64")]
    pub item_id: u64,
    #[serde(deserialize_with = "lenient_u64")]
    pub product_id: u64,
}

impl Magento {
    /// `GET /V1/stockItems/{sku}`: the stock item of a product, raw.
    pub async fn stock_item(&self, sku: &str) -> Result<Bytes, UpstreamError> {
        self.get(
            Scope::Default,
            &format!("/V1/stockItems/{}", segment(sku)),
            &[],
        )
        .await
    }

    /// `GET /V1/stockItems/lowStock/`: one page (1-based) of the stock items whose quantity
    /// is at most `max_qty`, in the default scope (0), raw.
    pub async fn stock_items_page(
        &self,
        max_qty: &str,
        page: u32,
        size: u32,
    ) -> Result<Bytes, UpstreamError> {
        let query = [
            ("scopeId".to_owned(), "0".to_owned()),
            ("qty".to_owned(), max_qty.to_owned()),
            ("currentPage".to_owned(), page.max(1).to_string()),
            ("pageSize".to_owned(), size.max(1).to_string()),
        ];
        self.get(Scope::Default, "/V1/stockItems/lowStock/", &query)
            .await
    }

    /// `PUT /V1/products/{sku}/stockItems/{itemId}` in admin scope with only the fields to
    /// change. Magento finds the row by SKU; the item id in the path is informative.
    pub async fn update_stock_item(
        &self,
        sku: &str,
        item_id: u64,
        changes: Value,
    ) -> Result<(), UpstreamError> {
        let body = json!({ "stockItem": changes });
        self.call(
            Method::PUT,
            Scope::All,
            &format!("/V1/products/{}/stockItems/{item_id}", segment(sku)),
            &[],
            Some(&body),
        )
        .await
        .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_read_numbers_and_numeric_strings() {
        let pair: StockPair =
            serde_json::from_str(r#"{"item_id": 15, "product_id": "1", "qty": 4}"#).unwrap();
        assert_eq!((pair.item_id, pair.product_id), (15, 1));
        assert!(serde_json::from_str::<StockPair>(r#"{"item_id": 15}"#).is_err());
    }
}
