//! A product's categories and websites (the original's routes beyond the contract).

use async_trait::async_trait;
use serde_json::{Value, json};

use super::records::OpenMageBackend;
use crate::backend::port::{BackendError, ProductLinks};

#[async_trait]
impl ProductLinks for OpenMageBackend {
    async fn assign_category(&self, category_id: u64, sku: &str) -> Result<(), BackendError> {
        let body = json!({ "category_id": category_id });
        self.link(sku, "categories", &body).await
    }

    async fn unassign_category(&self, category_id: u64, sku: &str) -> Result<(), BackendError> {
        self.unlink(sku, "categories", category_id).await
    }

    async fn assign_website(&self, sku: &str, website_id: u64) -> Result<(), BackendError> {
        let body = json!({ "website_id": website_id });
        self.link(sku, "websites", &body).await
    }

    async fn unassign_website(&self, sku: &str, website_id: u64) -> Result<(), BackendError> {
        self.unlink(sku, "websites", website_id).await
    }
}

impl OpenMageBackend {
    /// `POST /products/{id}/{list}`: the product joins what `body` names.
    async fn link(&self, sku: &str, list: &str, body: &Value) -> Result<(), BackendError> {
        let id = self.id_of_sku(sku).await?;
        self.client
            .post(&format!("/products/{id}/{list}"), body)
            .await
            .map(|_| ())
    }

    /// `DELETE /products/{id}/{list}/{linked}`.
    async fn unlink(&self, sku: &str, list: &str, linked: u64) -> Result<(), BackendError> {
        let id = self.id_of_sku(sku).await?;
        self.client
            .delete(&format!("/products/{id}/{list}/{linked}"), None)
            .await
            .map(|_| ())
    }
}
