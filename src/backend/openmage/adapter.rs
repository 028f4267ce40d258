//! The OpenMage client as the back-end port: each operation of [`Backend`] in the calls of
//! the store's own REST API.
//!
//! The store speaks the API's own field names, so most records cross the port as the store
//! sent them (its admin view), with the few additions the layers above read by name (an
//! `id`; a product's `website_ids` and `category_ids`, its `images`; a customer's
//! `addresses` and default address ids) composed from the store's other routes. What the
//! store's REST API lacks (store views, a directory, categories, attribute sets) is
//! answered from configuration or left to the store's own checks; each case is named at
//! its operation and in docs/decisions/openmage-adapter.md.
//!
//! The store addresses products by id where the port (Magento 2's key) passes SKUs: the
//! adapter keeps a SKU-to-id map, filled by every list it reads, and asks the store
//! (`filter` on `sku`) on a miss (`records.rs`). The larger operations live beside this
//! file, one per area (`catalog.rs`, `media.rs`, `stock.rs`, `people.rs`, `sales.rs`,
//! `links.rs`); this file maps the port onto them.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::lists::{self};
use super::segment;
use crate::backend::port::{
    AddressEdit, Answer, Assignments, Backend, Category, CategoryLink, CircuitState, Country,
    IdSku, Image, ImageChange, ImageRefusal, NewImage, OrderParts, RegionChoice, RenderedTier,
    Scope, SearchCriteria, SearchResult, SentPrices, StoreConfig, StoreSession, StoreView,
    TierPrice, UpstreamError,
};
use crate::backend::values::{as_f64, as_i64};

pub use super::records::{OpenMageBackend, View};
use super::records::{bytes_of, image, keep_tiers, not_yet, parse, text, tiers};

impl Backend for OpenMageBackend {
    fn default_store(&self) -> &str {
        self.client.default_store()
    }

    fn circuit_state(&self) -> CircuitState {
        self.client.circuit_state()
    }

    fn circuit_probe(&self) -> Arc<dyn Fn() -> CircuitState + Send + Sync> {
        self.client.circuit_probe()
    }

    fn ping(&self) -> Answer<'_, ()> {
        Box::pin(async move {
            let query = vec![("limit".to_owned(), "1".to_owned())];
            self.client.get("/stockitems", &query).await.map(|_| ())
        })
    }

    fn credentials_refused(&self) -> BoxFuture<'_, Option<String>> {
        Box::pin(async move {
            let query = vec![("limit".to_owned(), "1".to_owned())];
            match self.client.get("/stockitems", &query).await {
                Err(UpstreamError::Status {
                    status: status @ (401 | 403),
                    error,
                }) => Some(format!(
                    "the store refuses the gateway's OAuth token ({status}: {})",
                    error.text()
                )),
                _ => None,
            }
        })
    }

    // The store's REST API lists no store views: they are the configured ones, each checked
    // once here (the store answers 400 "Requested store is invalid" for one it lacks), so a
    // wrong `STOREGATE_OPENMAGE_STORE_VIEWS` shows on the first read and in `/readyz`.
    fn store_views(&self) -> Answer<'_, Bytes> {
        Box::pin(async move {
            let checks = self.views.iter().map(|view| async move {
                let query = vec![
                    ("limit".to_owned(), "1".to_owned()),
                    ("attrs[]".to_owned(), "entity_id".to_owned()),
                ];
                match self.client.get(&format!("/products/store/{}", view.id), &query).await {
                    Err(UpstreamError::Status { status: 400, .. }) => Err(UpstreamError::Protocol(
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
            Ok(bytes_of(&self.store_views_value()))
        })
    }

    fn read_store_views(&self, raw: &[u8]) -> Result<Vec<StoreView>, UpstreamError> {
        serde_json::from_slice(raw).map_err(|e| UpstreamError::Protocol(e.to_string()))
    }

    fn store_configs(&self) -> Answer<'_, Bytes> {
        Box::pin(async move {
            let configs: Vec<Value> = self
                .store_views_value()
                .as_array()
                .into_iter()
                .flatten()
                .map(|view| {
                    json!({"id": view["id"], "code": view["code"], "website_id": view["website_id"],
                        "base_url": format!("{}/", self.base),
                        "base_media_url": format!("{}/media/", self.base),
                        "base_currency_code": ""})
                })
                .collect();
            Ok(bytes_of(&Value::Array(configs)))
        })
    }

    fn read_store_configs(&self, raw: &[u8]) -> Result<Vec<StoreConfig>, UpstreamError> {
        serde_json::from_slice(raw).map_err(|e| UpstreamError::Protocol(e.to_string()))
    }

    // No directory in the store's REST API: the store checks an address's country itself.
    fn countries(&self) -> Answer<'_, Bytes> {
        Box::pin(async { Err(not_yet("the country directory")) })
    }

    fn read_countries(&self, _raw: &[u8]) -> Result<Vec<Country>, UpstreamError> {
        Err(not_yet("the country directory"))
    }

    fn read_list(&self, raw: &[u8]) -> Result<SearchResult<Value>, UpstreamError> {
        lists::read_page(raw).map(Self::with_ids)
    }

    fn product<'a>(&'a self, scope: Scope<'a>, sku: &'a str) -> Answer<'a, Bytes> {
        Box::pin(async move {
            let id = self.id_of_sku(sku).await?;
            Ok(bytes_of(&self.product_record(scope, id).await?))
        })
    }

    fn search_products<'a>(
        &'a self,
        scope: Scope<'a>,
        criteria: &'a SearchCriteria,
    ) -> Answer<'a, Bytes> {
        Box::pin(OpenMageBackend::search_products(self, scope, criteria))
    }

    fn search_shopper_products<'a>(
        &'a self,
        scope: Scope<'a>,
        _website_id: Option<u64>,
        criteria: &'a SearchCriteria,
    ) -> Answer<'a, Bytes> {
        Box::pin(OpenMageBackend::search_shopper_products(
            self,
            scope,
            _website_id,
            criteria,
        ))
    }

    fn skus_of<'a>(&'a self, ids: &'a [u64]) -> Answer<'a, Vec<IdSku>> {
        Box::pin(OpenMageBackend::skus_of(self, ids))
    }

    fn render_info<'a>(
        &'a self,
        store_id: u64,
        _currency: &'a str,
        criteria: &'a SearchCriteria,
        customer: Option<&'a StoreSession>,
    ) -> Answer<'a, Bytes> {
        Box::pin(OpenMageBackend::render_info(
            self, store_id, criteria, customer,
        ))
    }

    fn renders_for_customers(&self) -> bool {
        true
    }

    fn store_session(&self, customer_id: u64, customer_token: &str) -> Option<StoreSession> {
        OpenMageBackend::store_session(customer_id, customer_token)
    }

    fn read_render_tiers(&self, render: &Value) -> Option<Vec<RenderedTier>> {
        OpenMageBackend::read_render_tiers(render)
    }

    fn read_render_items(&self, raw: &[u8]) -> Result<Vec<Value>, UpstreamError> {
        Ok(Self::with_ids(lists::read_page(raw)?).items)
    }

    fn price_fields(&self) -> &'static [&'static str] {
        &["group_price", "tier_price"]
    }

    /// The store's own two lists: group prices (quantity 1) and tiers.
    fn put_tier_prices(&self, product: &mut Value, tiers: &[TierPrice]) {
        let entry = |tier: &TierPrice| {
            let mut entry = json!({"website_id": tier.website_id,
                "cust_group": tier.group.unwrap_or(32000), "price": tier.value});
            if tier.qty > 1.0 {
                entry["price_qty"] = json!(tier.qty);
            }
            entry
        };
        let (group, tier): (Vec<&TierPrice>, Vec<&TierPrice>) =
            tiers.iter().partition(|t| t.qty <= 1.0);
        product["group_price"] = Value::Array(group.into_iter().map(entry).collect());
        product["tier_price"] = Value::Array(tier.into_iter().map(entry).collect());
    }

    fn read_tier_prices(&self, product: &Value) -> Vec<TierPrice> {
        tiers(product)
    }

    fn keep_tier_prices(&self, product: &mut Value, keep: &dyn Fn(&TierPrice) -> bool) {
        keep_tiers(product, keep)
    }

    fn read_final_prices(&self, render: &Value) -> (Option<f64>, Option<f64>) {
        (
            render.get("final_price_without_tax").and_then(as_f64),
            render.get("final_price_with_tax").and_then(as_f64),
        )
    }

    fn category_products<'a>(
        &'a self,
        category_id: u64,
        store_view: Option<&'a str>,
    ) -> Answer<'a, Vec<CategoryLink>> {
        Box::pin(OpenMageBackend::category_products(
            self,
            category_id,
            store_view,
        ))
    }

    fn create_product(&self, product: Value) -> Answer<'_, Value> {
        Box::pin(OpenMageBackend::create_product(self, product))
    }

    fn update_product<'a>(
        &'a self,
        scope: Scope<'a>,
        sku: &'a str,
        product: Value,
        _prices: SentPrices,
    ) -> Answer<'a, Value> {
        // The store keeps group and tier prices in lists of their own: a list not sent is
        // left as it is, nothing to merge.
        Box::pin(async move {
            let id = self.id_of_sku(sku).await?;
            let suffix = match scope {
                Scope::Store(code) => format!("/store/{}", segment(code)),
                Scope::Default | Scope::All => String::new(),
            };
            self.client
                .put(&format!("/products/{id}{suffix}"), &product)
                .await?;
            if let Some(new_sku) = product.get("sku").and_then(Value::as_str) {
                self.forget(sku);
                self.remember(new_sku, id);
            }
            self.product_record(Scope::All, id).await
        })
    }

    fn on_website(&self, product: &Value, website_id: u64) -> bool {
        match product.get("website_ids") {
            Some(Value::Array(ids)) => ids
                .iter()
                .any(|id| as_i64(id).is_some_and(|id| id as u64 == website_id)),
            _ => true,
        }
    }

    fn place_on_website(&self, product: &mut Value, website_id: u64) {
        product["website_ids"] = json!([website_id]);
    }

    fn delete_product<'a>(&'a self, sku: &'a str) -> Answer<'a, ()> {
        Box::pin(OpenMageBackend::delete_product(self, sku))
    }

    fn product_in<'a>(
        &'a self,
        scope: Scope<'a>,
        sku: &'a str,
        store_id: Option<u64>,
    ) -> Answer<'a, Bytes> {
        Box::pin(OpenMageBackend::product_in(self, scope, sku, store_id))
    }

    fn read_images(&self, product: &Value) -> Vec<Image> {
        product
            .get("images")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(image)
            .collect()
    }

    fn add_image<'a>(&'a self, scope: Scope<'a>, sku: &'a str, new: NewImage) -> Answer<'a, u64> {
        Box::pin(OpenMageBackend::add_image(self, scope, sku, new))
    }

    fn update_image<'a>(
        &'a self,
        scope: Scope<'a>,
        sku: &'a str,
        existing: &'a Image,
        change: ImageChange,
    ) -> Answer<'a, ()> {
        Box::pin(OpenMageBackend::update_image(
            self, scope, sku, existing, change,
        ))
    }

    fn remove_image<'a>(
        &'a self,
        scope: Scope<'a>,
        sku: &'a str,
        existing: &'a Image,
    ) -> Answer<'a, ()> {
        // The store itself keeps a store view's removal as "no image" there.
        Box::pin(async move {
            let id = self.id_of_sku(sku).await?;
            let image = existing.id;
            let path = match scope {
                Scope::Store(code) => {
                    format!("/products/{id}/images/{image}/store/{}", segment(code))
                }
                Scope::Default | Scope::All => format!("/products/{id}/images/{image}"),
            };
            self.client.delete(&path, None).await.map(|_| ())
        })
    }

    fn image_refusal(&self, error: &UpstreamError) -> Option<ImageRefusal> {
        match error {
            UpstreamError::Status { status: 404, error } if error.text().contains("image") => {
                Some(ImageRefusal::NotFound)
            }
            _ => None,
        }
    }

    // The store refuses an image for a product whose attribute set has no gallery itself.
    fn attribute_set_attributes(&self, _set_id: u64) -> Answer<'_, Bytes> {
        Box::pin(async { Ok(Bytes::from_static(b"true")) })
    }

    fn read_takes_images(&self, _raw: &[u8]) -> Result<bool, UpstreamError> {
        Ok(true)
    }

    fn stock_item<'a>(&'a self, sku: &'a str) -> Answer<'a, Bytes> {
        Box::pin(OpenMageBackend::stock_item(self, sku))
    }

    fn stock_items_page<'a>(
        &'a self,
        max_qty: Option<&'a str>,
        page: u32,
        size: u32,
    ) -> Answer<'a, Bytes> {
        Box::pin(OpenMageBackend::stock_items_page(self, max_qty, page, size))
    }

    fn update_stock_item<'a>(
        &'a self,
        _sku: &'a str,
        item_id: u64,
        changes: Value,
    ) -> Answer<'a, ()> {
        Box::pin(OpenMageBackend::update_stock_item(
            self, _sku, item_id, changes,
        ))
    }

    fn customer_token<'a>(&'a self, username: &'a str, password: &'a str) -> Answer<'a, String> {
        Box::pin(OpenMageBackend::customer_token(self, username, password))
    }

    fn customer_me<'a>(&'a self, customer_token: &'a str) -> Answer<'a, Value> {
        Box::pin(OpenMageBackend::customer_me(self, customer_token))
    }

    fn customer(&self, id: u64) -> Answer<'_, Value> {
        Box::pin(self.customer_record(id))
    }

    fn search_customers<'a>(
        &'a self,
        criteria: &'a SearchCriteria,
    ) -> Answer<'a, SearchResult<Value>> {
        Box::pin(OpenMageBackend::search_customers(self, criteria))
    }

    fn create_customer<'a>(&'a self, customer: Value, password: &'a str) -> Answer<'a, Value> {
        Box::pin(OpenMageBackend::create_customer(self, customer, password))
    }

    fn save_customer(&self, id: u64, customer: Value) -> Answer<'_, Value> {
        Box::pin(OpenMageBackend::save_customer(self, id, customer))
    }

    fn delete_customer(&self, id: u64) -> Answer<'_, ()> {
        Box::pin(async move {
            self.client
                .delete(&format!("/customers/{id}"), None)
                .await
                .map(|_| ())
        })
    }

    fn address(&self, id: u64) -> Answer<'_, Value> {
        Box::pin(async move {
            let mut address = parse(
                &self
                    .client
                    .get(&format!("/customers/addresses/{id}"), &[])
                    .await?,
            )?;
            address["id"] = json!(id);
            Ok(address)
        })
    }

    /// The addresses composed into the customer record, their flags as booleans too.
    fn addresses_of(&self, customer: &Value) -> Vec<Value> {
        let mut list: Vec<Value> = customer
            .get("addresses")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for address in &mut list {
            for (flag, field) in [
                ("is_default_billing", "default_billing"),
                ("is_default_shipping", "default_shipping"),
            ] {
                let on = address.get(flag).and_then(as_i64).is_some_and(|v| v != 0);
                address[field] = json!(on);
            }
        }
        list
    }

    fn default_addresses(&self, customer: &Value) -> (Option<u64>, Option<u64>) {
        let id = |key: &str| {
            customer
                .get(key)
                .and_then(as_i64)
                .and_then(|id| u64::try_from(id).ok())
                .filter(|&id| id > 0)
        };
        (id("default_billing"), id("default_shipping"))
    }

    /// The store keeps a region as its name (or the text given).
    fn set_region(&self, fields: &mut serde_json::Map<String, Value>, region: RegionChoice<'_>) {
        let value = match region {
            RegionChoice::None => Value::Null,
            RegionChoice::Predefined(r) => json!(r.name),
            RegionChoice::Text(text) => json!(text),
        };
        fields.insert("region".into(), value);
    }

    // The store writes one address at a time (`writes_addresses`): never asked.
    fn customer_with_address(&self, customer: &Value, _edit: &AddressEdit) -> Value {
        customer.clone()
    }

    fn new_address_id(
        &self,
        _saved: &Value,
        _before: &std::collections::HashSet<u64>,
        _sent: &Value,
    ) -> Option<u64> {
        None
    }

    fn writes_addresses(&self) -> bool {
        true
    }

    fn addresses_stand_alone(&self) -> bool {
        true
    }

    fn add_address(&self, customer_id: u64, address: Value) -> Answer<'_, u64> {
        Box::pin(OpenMageBackend::add_address(self, customer_id, address))
    }

    fn update_address(&self, id: u64, address: Value) -> Answer<'_, ()> {
        Box::pin(OpenMageBackend::update_address(self, id, address))
    }

    fn delete_address(&self, id: u64) -> Answer<'_, ()> {
        Box::pin(async move {
            self.client
                .delete(&format!("/customers/addresses/{id}"), None)
                .await
                .map(|_| ())
        })
    }

    fn search_orders<'a>(
        &'a self,
        criteria: &'a SearchCriteria,
    ) -> Answer<'a, SearchResult<Value>> {
        Box::pin(OpenMageBackend::search_orders(self, criteria))
    }

    fn order(&self, id: u64) -> Answer<'_, Value> {
        Box::pin(async move { parse(&self.client.get(&format!("/orders/{id}"), &[]).await?) })
    }

    fn order_parts(&self, order: &Value) -> OrderParts {
        let addresses = order
            .get("addresses")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|a| (text(a.get("address_type")), a.clone()))
            .collect();
        let tax_name = order
            .get("tax_name")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned);
        OrderParts {
            tax_name,
            tax_rate: order.get("tax_rate").and_then(as_f64),
            addresses,
            comments: order
                .get("order_comments")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            items: order
                .get("order_items")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
        }
    }

    fn order_comments(&self, order_id: u64) -> Answer<'_, Vec<Value>> {
        Box::pin(OpenMageBackend::order_comments(self, order_id))
    }

    fn add_order_comment(&self, order_id: u64, comment: Value) -> Answer<'_, u64> {
        Box::pin(OpenMageBackend::add_order_comment(self, order_id, comment))
    }

    fn order_comment(&self, comment_id: u64) -> Answer<'_, Option<Value>> {
        Box::pin(OpenMageBackend::order_comment(self, comment_id))
    }

    fn read_assignments(&self, product: &Value) -> Assignments {
        let ids = |field: &str| {
            let mut ids: Vec<u64> = product
                .get(field)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|v| as_i64(v).and_then(|i| u64::try_from(i).ok()))
                .collect();
            ids.sort_unstable();
            ids.dedup();
            ids
        };
        Assignments {
            category_ids: ids("category_ids"),
            website_ids: ids("website_ids"),
        }
    }

    fn category(&self, id: u64) -> Answer<'_, Bytes> {
        Box::pin(OpenMageBackend::category(self, id))
    }

    fn read_category(&self, raw: &[u8]) -> Result<Category, UpstreamError> {
        let value = parse(raw)?;
        Ok(Category {
            id: value.get("id").and_then(as_i64).unwrap_or(0) as u64,
            is_active: value
                .get("is_active")
                .and_then(Value::as_bool)
                .unwrap_or(true),
        })
    }

    /// The websites of the configured store views.
    fn websites(&self) -> Answer<'_, Bytes> {
        Box::pin(async move {
            let mut ids: Vec<u64> = self.views.iter().map(|v| v.website_id).collect();
            ids.sort_unstable();
            ids.dedup();
            Ok(bytes_of(&json!(ids)))
        })
    }

    fn read_websites(&self, raw: &[u8]) -> Result<Vec<u64>, UpstreamError> {
        serde_json::from_slice(raw).map_err(|e| UpstreamError::Protocol(e.to_string()))
    }

    fn assign_category<'a>(&'a self, category_id: u64, sku: &'a str) -> Answer<'a, ()> {
        Box::pin(OpenMageBackend::assign_category(self, category_id, sku))
    }

    fn unassign_category<'a>(&'a self, category_id: u64, sku: &'a str) -> Answer<'a, ()> {
        Box::pin(OpenMageBackend::unassign_category(self, category_id, sku))
    }

    fn assign_website<'a>(&'a self, sku: &'a str, website_id: u64) -> Answer<'a, ()> {
        Box::pin(OpenMageBackend::assign_website(self, sku, website_id))
    }

    fn unassign_website<'a>(&'a self, sku: &'a str, website_id: u64) -> Answer<'a, ()> {
        Box::pin(OpenMageBackend::unassign_website(self, sku, website_id))
    }
}
