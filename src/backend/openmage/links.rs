//! A product's categories and websites (the original's routes beyond the contract).

use async_trait::async_trait;
use serde_json::json;

use super::records::OpenMageBackend;
use crate::backend::port::{BackendError, ProductLinks};

#[async_trait]
impl ProductLinks for OpenMageBackend {
    async fn assign_category(&self, category_id: u64, sku: &str) -> Result<(), BackendError> {
        let id = self.id_of_sku(sku).await?;
        let body = json!({ "category_id": category_id });
        self.client
            .post(&format!("/products/{id}/categories"), &body)
            .await
            .map(|_| ())
    }

    async fn unassign_category(&self, category_id: u64, sku: &str) -> Result<(), BackendError> {
        let id = self.id_of_sku(sku).await?;
        self.client
            .delete(&format!("/products/{id}/categories/{category_id}"), None)
            .await
            .map(|_| ())
    }

    async fn assign_website(&self, sku: &str, website_id: u64) -> Result<(), BackendError> {
        let id = self.id_of_sku(sku).await?;
        let body = json!({ "website_id": website_id });
        self.client
            .post(&format!("/products/{id}/websites"), &body)
            .await
            .map(|_| ())
    }

    async fn unassign_website(&self, sku: &str, website_id: u64) -> Result<(), BackendError> {
        let id = self.id_of_sku(sku).await?;
        self.client
            .delete(&format!("/products/{id}/websites/{website_id}"), None)
            .await
            .map(|_| ())
    }
}
