//! A product's categories and websites (the original's routes beyond the contract), and
//! whether a category is there (the store has no category route: its product list answers).

use bytes::Bytes;
use serde_json::json;

use super::records::{OpenMageBackend, bytes_of, not_found};
use crate::backend::port::UpstreamError;

impl OpenMageBackend {
    /// The store's REST API has no category reads: a category is there when the store
    /// lists its products (it answers 400 "Category not found." otherwise).
    pub(super) async fn category(&self, id: u64) -> Result<Bytes, UpstreamError> {
        let query = vec![("limit".to_owned(), "1".to_owned())];
        match self
            .client
            .get(&format!("/products/category/{id}"), &query)
            .await
        {
            Ok(_) => Ok(bytes_of(&json!({"id": id, "is_active": true}))),
            Err(UpstreamError::Status { status: 400, error })
                if error.text().contains("Category not found") =>
            {
                Err(not_found())
            }
            Err(e) => Err(e),
        }
    }

    pub(super) async fn assign_category(
        &self,
        category_id: u64,
        sku: &str,
    ) -> Result<(), UpstreamError> {
        let id = self.id_of_sku(sku).await?;
        let body = json!({ "category_id": category_id });
        self.client
            .post(&format!("/products/{id}/categories"), &body)
            .await
            .map(|_| ())
    }

    pub(super) async fn unassign_category(
        &self,
        category_id: u64,
        sku: &str,
    ) -> Result<(), UpstreamError> {
        let id = self.id_of_sku(sku).await?;
        self.client
            .delete(&format!("/products/{id}/categories/{category_id}"), None)
            .await
            .map(|_| ())
    }

    pub(super) async fn assign_website(
        &self,
        sku: &str,
        website_id: u64,
    ) -> Result<(), UpstreamError> {
        let id = self.id_of_sku(sku).await?;
        let body = json!({ "website_id": website_id });
        self.client
            .post(&format!("/products/{id}/websites"), &body)
            .await
            .map(|_| ())
    }

    pub(super) async fn unassign_website(
        &self,
        sku: &str,
        website_id: u64,
    ) -> Result<(), UpstreamError> {
        let id = self.id_of_sku(sku).await?;
        self.client
            .delete(&format!("/products/{id}/websites/{website_id}"), None)
            .await
            .map(|_| ())
    }
}
