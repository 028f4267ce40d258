//! Store setup with OpenMage: the store's REST API lists no store views, no directory, no
//! websites and no categories, so the store views (and their websites) are the configured
//! ones (`STOREGATE_OPENMAGE_STORE_VIEWS`), each checked once against the store; a category
//! is there when the store lists its products; the store checks an address's country, and
//! an image's attribute set, itself.

use async_trait::async_trait;

use super::records::{OpenMageBackend, not_found};
use crate::backend::port::{
    BackendError, Category, CircuitProbe, StoreConfig, StoreSetup, StoreView,
};

#[async_trait]
impl StoreSetup for OpenMageBackend {
    fn default_store(&self) -> &str {
        self.client.default_store()
    }

    fn circuit(&self) -> CircuitProbe {
        self.client.circuit()
    }

    async fn ping(&self) -> Result<(), BackendError> {
        let query = vec![("limit".to_owned(), "1".to_owned())];
        self.client.get("/stockitems", &query).await.map(|_| ())
    }

    async fn credentials_refused(&self) -> Option<String> {
        let query = vec![("limit".to_owned(), "1".to_owned())];
        match self.client.get("/stockitems", &query).await {
            Err(BackendError::Status {
                status: status @ (401 | 403),
                error,
            }) => Some(format!(
                "the store refuses the gateway's OAuth token ({status}: {})",
                error.text()
            )),
            _ => None,
        }
    }

    /// The configured store views, each checked once here (the store answers 400 "Requested
    /// store is invalid" for one it lacks), so a wrong `STOREGATE_OPENMAGE_STORE_VIEWS`
    /// shows on the first read and in `/readyz`.
    async fn store_views(&self) -> Result<Vec<StoreView>, BackendError> {
        let checks = self.views.iter().map(|view| async move {
            let query = vec![
                ("limit".to_owned(), "1".to_owned()),
                ("attrs[]".to_owned(), "entity_id".to_owned()),
            ];
            match self.client.get(&format!("/products/store/{}", view.id), &query).await {
                Err(BackendError::Status { status: 400, .. }) => Err(BackendError::Protocol(
                    format!(
                        "STOREGATE_OPENMAGE_STORE_VIEWS names store view {} ({}), which the store does not have",
                        view.id, view.code
                    ),
                )),
                Err(e) => Err(e),
                Ok(_) => Ok(()),
            }
        });
        futures_util::future::try_join_all(checks).await?;
        serde_json::from_value(self.store_views_value())
            .map_err(|e| BackendError::Protocol(e.to_string()))
    }

    async fn store_configs(&self) -> Result<Vec<StoreConfig>, BackendError> {
        Ok(self
            .store_views_value()
            .as_array()
            .into_iter()
            .flatten()
            .map(|view| StoreConfig {
                id: view["id"].as_u64().unwrap_or(0),
                code: view["code"].as_str().unwrap_or_default().to_owned(),
                website_id: view["website_id"].as_u64().unwrap_or(0),
                base_url: format!("{}/", self.base),
                base_media_url: format!("{}/media/", self.base),
                base_currency_code: String::new(),
            })
            .collect())
    }

    /// The websites of the configured store views.
    async fn websites(&self) -> Result<Vec<u64>, BackendError> {
        let mut ids: Vec<u64> = self.views.iter().map(|v| v.website_id).collect();
        ids.sort_unstable();
        ids.dedup();
        Ok(ids)
    }

    /// The store's REST API has no category reads: a category is there when the store
    /// lists its products (it answers 400 "Category not found." otherwise).
    async fn category(&self, id: u64) -> Result<Category, BackendError> {
        let query = vec![("limit".to_owned(), "1".to_owned())];
        match self
            .client
            .get(&format!("/products/category/{id}"), &query)
            .await
        {
            Ok(_) => Ok(Category {
                id,
                is_active: true,
            }),
            Err(BackendError::Status { status: 400, error })
                if error.text().contains("Category not found") =>
            {
                Err(not_found())
            }
            Err(e) => Err(e),
        }
    }
}
