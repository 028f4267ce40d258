//! Catalog calls: store views and configs, products, product rendering info, categories.
//!
//! Product records are returned as raw bytes: the cache stores them as they came (their
//! weight is then their real size) and the mapping reads them as JSON only when it has to
//! render. Small, stable shapes (store views, id-to-SKU pairs) are typed.

use bytes::Bytes;
use http::Method;
use serde_json::Value;

use super::{Magento, parse, search, segment};
use crate::backend::port::{
    CategoryLink, IdSku, Scope, SearchCriteria, SearchResult, UpstreamError,
};

impl Magento {
    /// `GET /V1/store/storeViews`, as it came (a list of [`StoreView`]): the caller caches
    /// the bytes.
    pub async fn store_views(&self) -> Result<Bytes, UpstreamError> {
        self.get(Scope::Default, "/V1/store/storeViews", &[]).await
    }

    /// `GET /V1/store/storeConfigs`, as it came (a list of [`StoreConfig`]): the caller
    /// caches the bytes.
    pub async fn store_configs(&self) -> Result<Bytes, UpstreamError> {
        self.get(Scope::Default, "/V1/store/storeConfigs", &[])
            .await
    }

    /// `GET /V1/products?searchCriteria...`, raw.
    pub async fn search_products(
        &self,
        scope: Scope<'_>,
        criteria: &SearchCriteria,
    ) -> Result<Bytes, UpstreamError> {
        self.get(scope, "/V1/products", &search::to_query(criteria))
            .await
    }

    /// `GET /V1/products/{sku}`, raw (the only read that carries the stock item).
    pub async fn product(&self, scope: Scope<'_>, sku: &str) -> Result<Bytes, UpstreamError> {
        self.get(scope, &format!("/V1/products/{}", segment(sku)), &[])
            .await
    }

    /// SKUs of product ids, through the cheapest search Magento has (a projection).
    pub async fn skus_of(&self, ids: &[u64]) -> Result<Vec<IdSku>, UpstreamError> {
        let list = ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
        let criteria = SearchCriteria::new()
            .filter("entity_id", list, "in")
            .page(ids.len().max(1) as u32, 1)
            .fields("items[id,sku],total_count");
        let result: SearchResult<IdSku> =
            parse(&self.search_products(Scope::Default, &criteria).await?)?;
        Ok(result.items)
    }

    /// `GET /V1/products-render-info`: final and tax-inclusive prices, salability, URLs.
    pub async fn render_info(
        &self,
        store_id: u64,
        currency: &str,
        criteria: &SearchCriteria,
    ) -> Result<Bytes, UpstreamError> {
        let mut query = search::to_query(criteria);
        query.push(("storeId".to_owned(), store_id.to_string()));
        query.push(("currencyCode".to_owned(), currency.to_owned()));
        self.get(Scope::Default, "/V1/products-render-info", &query)
            .await
    }

    /// The products of a category with their positions.
    pub async fn category_products(
        &self,
        category_id: u64,
    ) -> Result<Vec<CategoryLink>, UpstreamError> {
        self.get_json(
            Scope::Default,
            &format!("/V1/categories/{category_id}/products"),
            &[],
        )
        .await
    }

    /// `POST /V1/products` in admin scope. Magento upserts: check for the SKU first.
    pub async fn create_product(&self, product: Value) -> Result<Value, UpstreamError> {
        let body = serde_json::json!({ "product": product });
        self.send_json(Method::POST, Scope::All, "/V1/products", Some(&body))
            .await
    }

    /// `PUT /V1/products/{sku}` with only the fields to change.
    pub async fn update_product(
        &self,
        scope: Scope<'_>,
        sku: &str,
        product: Value,
    ) -> Result<Value, UpstreamError> {
        let body = serde_json::json!({ "product": product });
        self.send_json(
            Method::PUT,
            scope,
            &format!("/V1/products/{}", segment(sku)),
            Some(&body),
        )
        .await
    }

    pub async fn delete_product(&self, sku: &str) -> Result<(), UpstreamError> {
        self.call(
            Method::DELETE,
            Scope::All,
            &format!("/V1/products/{}", segment(sku)),
            &[],
            None,
        )
        .await
        .map(|_| ())
    }
}
