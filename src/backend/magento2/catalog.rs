//! The catalog in Magento 2: products read and searched (the admin search; the storefront's
//! conditions added for shoppers), rendered (`/V1/products-render-info`), written, and
//! what its product records say (group and tier prices are `tier_prices` entries of
//! quantity 1; websites and category links in `extension_attributes`).
//!
//! Product records are returned as raw bytes: the cache stores them as they came (their
//! weight is then their real size) and the mapping reads them as JSON only when it has to
//! render.

use async_trait::async_trait;
use bytes::Bytes;
use http::Method;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Magento, parse, search, segment};
use crate::backend::port::{
    Assignments, BackendError, Catalog, CategoryLink, Direction, IdPage, IdSku, MAX_PAGE_SIZE,
    Page, ProductDraft, ProductRecords, Renderings, Scope, SearchCriteria, SearchResult,
    SentPrices, TierFields, TierPrice,
};
use crate::backend::values::as_f64;

#[async_trait]
impl Catalog for Magento {
    /// `GET /V1/products/{sku}` (the only read that carries the stock item).
    async fn product(&self, scope: Scope<'_>, sku: &str) -> Result<Bytes, BackendError> {
        self.get(scope, &format!("/V1/products/{}", segment(sku)), &[])
            .await
    }

    /// `GET /V1/products?searchCriteria...`: Magento's page is the port's form.
    async fn search_products(
        &self,
        scope: Scope<'_>,
        criteria: &SearchCriteria,
    ) -> Result<Page, BackendError> {
        self.get(scope, "/V1/products", &search::to_query(criteria))
            .await
            .map(Page)
    }

    /// The admin search with the storefront's conditions: enabled, visible in the catalog
    /// or search (2, 3, 4), and on the store view's website.
    async fn search_shopper_products(
        &self,
        scope: Scope<'_>,
        website_id: Option<u64>,
        criteria: &SearchCriteria,
    ) -> Result<Page, BackendError> {
        let mut shopper =
            criteria
                .clone()
                .filter("status", "1", "eq")
                .filter("visibility", "2,3,4", "in");
        if let Some(website) = website_id {
            shopper = shopper.filter("website_id", website.to_string(), "eq");
        }
        self.search_products(scope, &shopper).await
    }

    /// Through the cheapest search Magento has (a projection).
    async fn skus_of(&self, ids: &[u64]) -> Result<Vec<IdSku>, BackendError> {
        let list = ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
        let criteria = SearchCriteria::new()
            .filter("entity_id", list, "in")
            .page(ids.len().max(1) as u32, 1)
            .fields("items[id,sku],total_count");
        let page = self.search_products(Scope::Default, &criteria).await?;
        let result: SearchResult<IdSku> = parse(&page.0)?;
        Ok(result.items)
    }

    /// Every product's id and SKU, [`MAX_PAGE_SIZE`] a page, through the same projection.
    /// Magento repeats its last page past the end: its count says when to stop.
    async fn product_ids(&self, page: u32) -> Result<Option<IdPage>, BackendError> {
        let criteria = SearchCriteria::new()
            .sort("entity_id", Direction::Asc)
            .page(MAX_PAGE_SIZE, page)
            .fields("items[id,sku],total_count");
        let found = self.search_products(Scope::Default, &criteria).await?;
        let result: SearchResult<IdSku> = parse(&found.0)?;
        let more = !result.items.is_empty()
            && u64::from(page) * u64::from(MAX_PAGE_SIZE) < result.total_count;
        Ok(Some(IdPage {
            items: result.items,
            more,
        }))
    }

    /// Magento 2's category links are global: the same in every store view.
    async fn category_products(
        &self,
        category_id: u64,
        _store_view: Option<&str>,
    ) -> Result<Vec<CategoryLink>, BackendError> {
        self.get_json(
            Scope::Default,
            &format!("/V1/categories/{category_id}/products"),
            &[],
        )
        .await
    }

    /// The product search's `category_id` filter reads the same category links as
    /// `/V1/categories/{id}/products` (no anchor children, global in every store view).
    fn category_filter(&self) -> Option<&'static str> {
        Some("category_id")
    }

    /// `GET /V1/products-render-info`: final and tax-inclusive prices, salability, URLs.
    /// It answers for anonymous shoppers only: a customer's group tiers are worked out by
    /// the gateway (`rules::pricing`).
    async fn render(
        &self,
        store_id: u64,
        currency: &str,
        criteria: &SearchCriteria,
        _customer: Option<u64>,
    ) -> Result<Renderings, BackendError> {
        #[derive(Deserialize)]
        struct RenderItems {
            #[serde(default)]
            items: Vec<Value>,
        }
        let mut query = search::to_query(criteria);
        query.push(("storeId".to_owned(), store_id.to_string()));
        query.push(("currencyCode".to_owned(), currency.to_owned()));
        let raw = self
            .get(Scope::Default, "/V1/products-render-info", &query)
            .await?;
        Ok(Renderings {
            items: parse::<RenderItems>(&raw)?.items,
            ..Renderings::default()
        })
    }

    /// `POST /V1/products` in admin scope, with its website and prices. Magento upserts:
    /// the caller checks for the SKU first.
    async fn create_product(&self, draft: ProductDraft) -> Result<Value, BackendError> {
        let mut product = draft.record;
        if let Some(website) = draft.website {
            product["extension_attributes"]["website_ids"] = json!([website]);
        }
        if let Some(tiers) = &draft.tiers {
            put_tier_prices(&mut product, tiers);
        }
        let body = json!({ "product": product });
        self.send_json(Method::POST, Scope::All, "/V1/products", Some(&body))
            .await
    }

    /// `PUT /V1/products/{sku}` with only the fields to change. Magento replaces arrays it
    /// is sent, and group and tier prices share `tier_prices`: the kind the client did not
    /// send is read from the current record and kept.
    async fn update_product(
        &self,
        scope: Scope<'_>,
        sku: &str,
        draft: ProductDraft,
    ) -> Result<Value, BackendError> {
        let mut product = draft.record;
        if let Some(tiers) = &draft.tiers {
            put_tier_prices(&mut product, tiers);
        }
        if draft.sent.group != draft.sent.tier {
            let current = Catalog::product(self, Scope::Default, sku).await?;
            let current: Value = parse(&current)?;
            keep_unsent_prices(&mut product, &current, draft.sent);
        }
        let body = json!({ "product": product });
        self.send_json(
            Method::PUT,
            scope,
            &format!("/V1/products/{}", segment(sku)),
            Some(&body),
        )
        .await
    }

    async fn delete_product(&self, sku: &str) -> Result<(), BackendError> {
        self.delete(Scope::All, &format!("/V1/products/{}", segment(sku)))
            .await
    }
}

impl ProductRecords for Magento {
    fn price_fields(&self) -> &'static [&'static str] {
        &["tier_prices"]
    }

    fn tier_prices(&self, product: &Value) -> Vec<TierPrice> {
        tier_prices(product)
    }

    fn keep_tier_prices(&self, product: &mut Value, keep: &dyn Fn(&TierPrice) -> bool) {
        if let Some(list) = product.get_mut("tier_prices").and_then(Value::as_array_mut) {
            list.retain(|entry| tier_price(entry).is_some_and(|tier| keep(&tier)));
        }
    }

    /// A render-info entry's final price without tax, and with it (`tax_adjustments`).
    fn final_prices(&self, render: &Value) -> (Option<f64>, Option<f64>) {
        let info = &render["price_info"];
        (
            info.get("final_price").and_then(as_f64),
            info.pointer("/extension_attributes/tax_adjustments/final_price")
                .and_then(as_f64),
        )
    }

    fn assignments(&self, product: &Value) -> Assignments {
        super::links::read_assignments(product)
    }

    fn on_website(&self, product: &Value, website_id: u64) -> bool {
        super::links::on_website(product, website_id)
    }
}

/// One entry of a product's `tier_prices` (Magento 2 has no group prices: they are tiers
/// of quantity 1).
fn tier_price(entry: &Value) -> Option<TierPrice> {
    const FIELDS: TierFields = TierFields {
        group: "/customer_group_id",
        website_id: "/extension_attributes/website_id",
        qty: Some("/qty"),
        value: "/value",
    };
    let percent = entry.pointer("/extension_attributes/percentage_value");
    TierPrice::read(entry, &FIELDS, percent.is_some_and(|v| !v.is_null()))
}

/// Tiers as `tier_prices` entries (group prices are tiers of quantity 1).
fn put_tier_prices(product: &mut Value, tiers: &[TierPrice]) {
    let entries: Vec<Value> = tiers
        .iter()
        .map(|tier| {
            json!({
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
fn tier_prices(product: &Value) -> Vec<TierPrice> {
    product
        .get("tier_prices")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(tier_price)
        .collect()
}

/// Group prices are Magento's `tier_prices` of quantity 1: when an update sends one kind,
/// the entries of the other kind are copied from the current record.
fn keep_unsent_prices(changes: &mut Value, current: &Value, sent: SentPrices) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

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
        let magento =
            Magento::new("http://m2.test", "t", Duration::from_secs(1), "default").unwrap();
        magento.keep_tier_prices(&mut product, &|tier| tier.group != Some(2));
        let text = product.to_string();
        assert!(!text.contains("\"value\":20"), "{text}");
        assert_eq!(product["tier_prices"].as_array().unwrap().len(), 2);
        let render = json!({"price_info": {"final_price": 34,
            "extension_attributes": {"tax_adjustments": {"final_price": 36.85}}}});
        assert_eq!(magento.final_prices(&render), (Some(34.0), Some(36.85)));
        assert_eq!(magento.final_prices(&Value::Null), (None, None));
    }
}
