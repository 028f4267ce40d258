//! A product's category and website assignments (the original's `/products/:id/categories`
//! and `/products/:id/websites`): a category record, the websites, and the link
//! repositories' writes. Magento 2 keeps the assignments on the product
//! (`extension_attributes.category_links` and `website_ids`), which the product read
//! already carries; only the writes and the records they name need calls of their own.
//! Writes run in the admin scope (`/rest/all`), like every catalog write.

use bytes::Bytes;
use http::Method;
use serde_json::json;

use super::{Magento, Scope, UpstreamError, segment};

impl Magento {
    /// `GET /V1/categories/{id}`, raw: the caller caches the bytes.
    pub async fn category(&self, id: u64) -> Result<Bytes, UpstreamError> {
        self.get(Scope::Default, &format!("/V1/categories/{id}"), &[])
            .await
    }

    /// `GET /V1/store/websites`, raw: the caller caches the bytes.
    pub async fn websites(&self) -> Result<Bytes, UpstreamError> {
        self.get(Scope::Default, "/V1/store/websites", &[]).await
    }

    /// `POST /V1/categories/{id}/products`: assigns the product (an upsert of the link).
    pub async fn assign_category(
        &self,
        category_id: u64,
        sku: &str,
        position: i64,
    ) -> Result<(), UpstreamError> {
        let body = json!({"productLink": {
            "sku": sku,
            "position": position,
            "category_id": category_id.to_string(),
        }});
        self.call(
            Method::POST,
            Scope::All,
            &format!("/V1/categories/{category_id}/products"),
            &[],
            Some(&body),
        )
        .await
        .map(|_| ())
    }

    /// `DELETE /V1/categories/{id}/products/{sku}`.
    pub async fn unassign_category(
        &self,
        category_id: u64,
        sku: &str,
    ) -> Result<(), UpstreamError> {
        self.call(
            Method::DELETE,
            Scope::All,
            &format!("/V1/categories/{category_id}/products/{}", segment(sku)),
            &[],
            None,
        )
        .await
        .map(|_| ())
    }

    /// `POST /V1/products/{sku}/websites`.
    pub async fn assign_website(&self, sku: &str, website_id: u64) -> Result<(), UpstreamError> {
        let body = json!({"productWebsiteLink": {"sku": sku, "website_id": website_id}});
        self.call(
            Method::POST,
            Scope::All,
            &format!("/V1/products/{}/websites", segment(sku)),
            &[],
            Some(&body),
        )
        .await
        .map(|_| ())
    }

    /// `DELETE /V1/products/{sku}/websites/{websiteId}`.
    pub async fn unassign_website(&self, sku: &str, website_id: u64) -> Result<(), UpstreamError> {
        self.call(
            Method::DELETE,
            Scope::All,
            &format!("/V1/products/{}/websites/{website_id}", segment(sku)),
            &[],
            None,
        )
        .await
        .map(|_| ())
    }
}
