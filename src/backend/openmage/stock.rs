//! Stock items through the store's REST API, found by their product.

use async_trait::async_trait;
use bytes::Bytes;
use serde_json::Value;

use super::lists::{self, As};
use super::records::{OpenMageBackend, bytes_of, not_found};
use crate::backend::port::{BackendError, Page, SearchCriteria, Stock};

#[async_trait]
impl Stock for OpenMageBackend {
    async fn stock_item(&self, sku: &str) -> Result<Bytes, BackendError> {
        let id = self.id_of_sku(sku).await?;
        let query = vec![
            ("filter[0][attribute]".to_owned(), "product_id".to_owned()),
            ("filter[0][eq]".to_owned(), id.to_string()),
            ("limit".to_owned(), "1".to_owned()),
        ];
        let raw = self.client.get("/stockitems", &query).await?;
        let item = lists::items(&raw)?
            .into_iter()
            .next()
            .ok_or_else(not_found)?;
        Ok(bytes_of(&item))
    }

    async fn stock_items_page(
        &self,
        max_qty: Option<&str>,
        page: u32,
        size: u32,
    ) -> Result<Page, BackendError> {
        let mut criteria = SearchCriteria::new();
        if let Some(max) = max_qty {
            criteria = criteria.filter("qty", max, "lteq");
        }
        let criteria = criteria.page(size, page);
        self.client
            .page(As::Admin, "/stockitems", &criteria, &[])
            .await
    }

    async fn update_stock_item(
        &self,
        _sku: &str,
        item_id: u64,
        changes: Value,
    ) -> Result<(), BackendError> {
        self.client
            .put(&format!("/stockitems/{item_id}"), &changes)
            .await
            .map(|_| ())
    }
}
