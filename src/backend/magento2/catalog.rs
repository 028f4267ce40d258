//! Catalog calls: store views and configs, products, product rendering info, categories.
//!
//! Product records are returned as raw bytes: the cache stores them as they came (their
//! weight is then their real size) and the mapping reads them as JSON only when it has to
//! render. Small, stable shapes (store views, id-to-SKU pairs) are typed.

use crate::backend::port::{SentPrices, TierPrice};
use crate::backend::values::{as_f64, as_i64};
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

/// One entry of a product's `tier_prices` (Magento 2 has no group prices: they are tiers
/// of quantity 1).
fn tier_price(entry: &Value) -> Option<TierPrice> {
    Some(TierPrice {
        group: entry
            .get("customer_group_id")
            .and_then(as_i64)
            .and_then(|g| u64::try_from(g).ok()),
        website_id: entry
            .pointer("/extension_attributes/website_id")
            .and_then(as_i64)
            .and_then(|w| u64::try_from(w).ok())
            .unwrap_or(0),
        qty: entry.get("qty").and_then(as_f64).unwrap_or(1.0),
        value: entry.get("value").and_then(as_f64)?,
        percent: entry
            .pointer("/extension_attributes/percentage_value")
            .is_some_and(|v| !v.is_null()),
    })
}

/// Tiers as `tier_prices` entries (group prices are tiers of quantity 1).
pub fn put_tier_prices(product: &mut Value, tiers: &[TierPrice]) {
    let entries: Vec<Value> = tiers
        .iter()
        .map(|tier| {
            serde_json::json!({
                "customer_group_id": tier.group.unwrap_or(32000),
                "qty": tier.qty,
                "value": tier.value,
                "extension_attributes": {"website_id": tier.website_id},
            })
        })
        .collect();
    product["tier_prices"] = Value::Array(entries);
}

/// The tiers of a product record's `tier_prices`.
pub fn tier_prices(product: &Value) -> Vec<TierPrice> {
    product
        .get("tier_prices")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(tier_price)
        .collect()
}

/// Drops the entries of `tier_prices` that `keep` refuses (and those it cannot read).
pub fn keep_tier_prices(product: &mut Value, keep: &dyn Fn(&TierPrice) -> bool) {
    if let Some(list) = product.get_mut("tier_prices").and_then(Value::as_array_mut) {
        list.retain(|entry| tier_price(entry).is_some_and(|tier| keep(&tier)));
    }
}

/// Group prices are Magento's `tier_prices` of quantity 1: when an update sends one kind,
/// the entries of the other kind are copied from the current record.
pub fn keep_unsent_prices(changes: &mut Value, current: &Value, sent: SentPrices) {
    let keep: Vec<Value> = current
        .get("tier_prices")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|entry| {
            let qty = entry.get("qty").and_then(as_f64).unwrap_or(1.0);
            // Sent group prices: keep the quantity tiers, and the other way round.
            if sent.group { qty > 1.0 } else { qty <= 1.0 }
        })
        .cloned()
        .collect();
    if let Some(list) = changes.get_mut("tier_prices").and_then(Value::as_array_mut) {
        list.extend(keep);
    }
}

/// A render-info entry's final price without tax, and with it (`tax_adjustments`).
pub fn final_prices(render: &Value) -> (Option<f64>, Option<f64>) {
    let info = &render["price_info"];
    (
        info.get("final_price").and_then(as_f64),
        info.pointer("/extension_attributes/tax_adjustments/final_price")
            .and_then(as_f64),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tiers_are_read_and_the_refused_ones_leave_the_record() {
        let mut product = json!({"tier_prices": [
            {"customer_group_id": 32000, "qty": 1, "value": 32, "extension_attributes": {"website_id": 0}},
            {"customer_group_id": 2, "qty": 2, "value": 20, "extension_attributes": {"website_id": 1}},
            {"qty": 6, "value": 1}
        ]});
        let tiers = tier_prices(&product);
        assert_eq!(tiers.len(), 3);
        assert_eq!(
            (tiers[1].group, tiers[1].website_id, tiers[1].qty),
            (Some(2), 1, 2.0)
        );
        assert_eq!(tiers[2].group, None);
        keep_tier_prices(&mut product, &|tier| tier.group != Some(2));
        let text = product.to_string();
        assert!(!text.contains("\"value\":20"), "{text}");
        assert_eq!(product["tier_prices"].as_array().unwrap().len(), 2);
        let render = json!({"price_info": {"final_price": 34,
            "extension_attributes": {"tax_adjustments": {"final_price": 36.85}}}});
        assert_eq!(final_prices(&render), (Some(34.0), Some(36.85)));
        assert_eq!(final_prices(&Value::Null), (None, None));
    }
}
