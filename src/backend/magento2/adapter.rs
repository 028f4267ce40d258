//! The Magento 2 client as the back-end port: each operation of [`Backend`] is one of the
//! client's calls (its paths live beside them, in this folder's other files).

use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;

use super::{Magento, parse};
use crate::backend::port::{
    AddressEdit, Answer, Assignments, Backend, Category, CategoryLink, CircuitState, Country,
    IdSku, Image, ImageChange, ImageRefusal, NewImage, OrderParts, RegionChoice, Scope,
    SearchCriteria, SearchResult, SentPrices, StoreConfig, StoreSession, StoreView, TierPrice,
    UpstreamError,
};

impl Backend for Magento {
    fn default_store(&self) -> &str {
        Magento::default_store(self)
    }

    fn circuit_state(&self) -> CircuitState {
        Magento::circuit_state(self)
    }

    fn circuit_probe(&self) -> Arc<dyn Fn() -> CircuitState + Send + Sync> {
        Magento::circuit_probe(self)
    }

    fn ping(&self) -> Answer<'_, ()> {
        Box::pin(Magento::ping(self))
    }

    fn credentials_refused(&self) -> futures_util::future::BoxFuture<'_, Option<String>> {
        Box::pin(Magento::credentials_refused(self))
    }

    fn store_views(&self) -> Answer<'_, Bytes> {
        Box::pin(Magento::store_views(self))
    }

    fn read_store_views(&self, raw: &[u8]) -> Result<Vec<StoreView>, UpstreamError> {
        parse(raw)
    }

    fn read_store_configs(&self, raw: &[u8]) -> Result<Vec<StoreConfig>, UpstreamError> {
        parse(raw)
    }

    fn read_countries(&self, raw: &[u8]) -> Result<Vec<Country>, UpstreamError> {
        parse(raw)
    }

    fn read_list(&self, raw: &[u8]) -> Result<SearchResult<Value>, UpstreamError> {
        parse(raw)
    }

    fn read_render_items(&self, raw: &[u8]) -> Result<Vec<Value>, UpstreamError> {
        #[derive(serde::Deserialize)]
        struct RenderItems {
            #[serde(default)]
            items: Vec<Value>,
        }
        Ok(parse::<RenderItems>(raw)?.items)
    }

    fn store_configs(&self) -> Answer<'_, Bytes> {
        Box::pin(Magento::store_configs(self))
    }

    fn countries(&self) -> Answer<'_, Bytes> {
        Box::pin(Magento::countries(self))
    }

    fn product<'a>(&'a self, scope: Scope<'a>, sku: &'a str) -> Answer<'a, Bytes> {
        Box::pin(Magento::product(self, scope, sku))
    }

    fn search_products<'a>(
        &'a self,
        scope: Scope<'a>,
        criteria: &'a SearchCriteria,
    ) -> Answer<'a, Bytes> {
        Box::pin(Magento::search_products(self, scope, criteria))
    }

    /// Magento 2's admin search with the storefront's conditions: enabled, visible in the
    /// catalog or search (2, 3, 4), and on the store view's website.
    fn search_shopper_products<'a>(
        &'a self,
        scope: Scope<'a>,
        website_id: Option<u64>,
        criteria: &'a SearchCriteria,
    ) -> Answer<'a, Bytes> {
        let mut shopper =
            criteria
                .clone()
                .filter("status", "1", "eq")
                .filter("visibility", "2,3,4", "in");
        if let Some(website) = website_id {
            shopper = shopper.filter("website_id", website.to_string(), "eq");
        }
        Box::pin(async move { Magento::search_products(self, scope, &shopper).await })
    }

    fn skus_of<'a>(&'a self, ids: &'a [u64]) -> Answer<'a, Vec<IdSku>> {
        Box::pin(Magento::skus_of(self, ids))
    }

    fn render_info<'a>(
        &'a self,
        store_id: u64,
        currency: &'a str,
        criteria: &'a SearchCriteria,
        // Magento 2's rendering endpoint answers for anonymous shoppers only: a customer's
        // group tiers are worked out by the gateway (`rules::pricing`).
        _customer: Option<&'a StoreSession>,
    ) -> Answer<'a, Bytes> {
        Box::pin(Magento::render_info(self, store_id, currency, criteria))
    }

    fn price_fields(&self) -> &'static [&'static str] {
        &["tier_prices"]
    }

    fn put_tier_prices(&self, product: &mut Value, tiers: &[TierPrice]) {
        super::catalog::put_tier_prices(product, tiers)
    }

    fn read_tier_prices(&self, product: &Value) -> Vec<TierPrice> {
        super::catalog::tier_prices(product)
    }

    fn keep_tier_prices(&self, product: &mut Value, keep: &dyn Fn(&TierPrice) -> bool) {
        super::catalog::keep_tier_prices(product, keep)
    }

    fn read_final_prices(&self, render: &Value) -> (Option<f64>, Option<f64>) {
        super::catalog::final_prices(render)
    }

    /// Magento 2's category links are global: the same in every store view.
    fn category_products<'a>(
        &'a self,
        category_id: u64,
        _store_view: Option<&'a str>,
    ) -> Answer<'a, Vec<CategoryLink>> {
        Box::pin(Magento::category_products(self, category_id))
    }

    fn create_product(&self, product: Value) -> Answer<'_, Value> {
        Box::pin(Magento::create_product(self, product))
    }

    fn update_product<'a>(
        &'a self,
        scope: Scope<'a>,
        sku: &'a str,
        product: Value,
        prices: SentPrices,
    ) -> Answer<'a, Value> {
        Box::pin(async move {
            let mut product = product;
            if prices.group != prices.tier {
                // Magento replaces arrays it is sent, and group and tier prices share
                // `tier_prices`: keep the kind the client did not send.
                let current = Magento::product(self, Scope::Default, sku).await?;
                let current: Value = super::parse(&current)?;
                super::catalog::keep_unsent_prices(&mut product, &current, prices);
            }
            Magento::update_product(self, scope, sku, product).await
        })
    }

    fn on_website(&self, product: &Value, website_id: u64) -> bool {
        super::links::on_website(product, website_id)
    }

    fn place_on_website(&self, product: &mut Value, website_id: u64) {
        product["extension_attributes"]["website_ids"] = serde_json::json!([website_id]);
    }

    fn delete_product<'a>(&'a self, sku: &'a str) -> Answer<'a, ()> {
        Box::pin(Magento::delete_product(self, sku))
    }

    fn product_in<'a>(
        &'a self,
        scope: Scope<'a>,
        sku: &'a str,
        store_id: Option<u64>,
    ) -> Answer<'a, Bytes> {
        Box::pin(Magento::product_in(self, scope, sku, store_id))
    }

    fn read_images(&self, product: &Value) -> Vec<Image> {
        super::media::images(product)
    }

    fn add_image<'a>(&'a self, scope: Scope<'a>, sku: &'a str, image: NewImage) -> Answer<'a, u64> {
        Box::pin(Magento::add_media(
            self,
            scope,
            sku,
            super::media::new_entry(image),
        ))
    }

    fn update_image<'a>(
        &'a self,
        scope: Scope<'a>,
        sku: &'a str,
        existing: &'a Image,
        change: ImageChange,
    ) -> Answer<'a, ()> {
        let entry = super::media::changed_entry(existing, change);
        Box::pin(Magento::update_media(self, scope, sku, existing.id, entry))
    }

    fn remove_image<'a>(
        &'a self,
        scope: Scope<'a>,
        sku: &'a str,
        existing: &'a Image,
    ) -> Answer<'a, ()> {
        match scope {
            Scope::Store(_) => {
                // Magento keeps one gallery per product: in one store view the image stays,
                // excluded there and in no role (SPEC 2.3 "set to No Image for the store").
                let hidden = ImageChange {
                    exclude: Some(true),
                    types: Some(Vec::new()),
                    ..ImageChange::default()
                };
                let entry = super::media::changed_entry(existing, hidden);
                Box::pin(Magento::update_media(self, scope, sku, existing.id, entry))
            }
            Scope::Default | Scope::All => Box::pin(Magento::delete_media(self, sku, existing.id)),
        }
    }

    fn image_refusal(&self, error: &UpstreamError) -> Option<ImageRefusal> {
        super::media::refusal(error)
    }

    fn read_takes_images(&self, raw: &[u8]) -> Result<bool, UpstreamError> {
        super::media::has_attribute(raw, "media_gallery")
    }

    fn attribute_set_attributes(&self, set_id: u64) -> Answer<'_, Bytes> {
        Box::pin(Magento::attribute_set_attributes(self, set_id))
    }

    fn stock_item<'a>(&'a self, sku: &'a str) -> Answer<'a, Bytes> {
        Box::pin(Magento::stock_item(self, sku))
    }

    fn stock_items_page<'a>(
        &'a self,
        max_qty: Option<&'a str>,
        page: u32,
        size: u32,
    ) -> Answer<'a, Bytes> {
        // Magento lists stock items through its low-stock report: a threshold it cannot
        // store selects every item.
        let max_qty = max_qty.unwrap_or(super::stock::EVERY_QTY);
        Box::pin(Magento::stock_items_page(self, max_qty, page, size))
    }

    fn update_stock_item<'a>(
        &'a self,
        sku: &'a str,
        item_id: u64,
        changes: Value,
    ) -> Answer<'a, ()> {
        Box::pin(Magento::update_stock_item(self, sku, item_id, changes))
    }

    fn customer_token<'a>(&'a self, username: &'a str, password: &'a str) -> Answer<'a, String> {
        Box::pin(Magento::customer_token(self, username, password))
    }

    fn customer_me<'a>(&'a self, customer_token: &'a str) -> Answer<'a, Value> {
        Box::pin(Magento::customer_me(self, customer_token))
    }

    fn customer(&self, id: u64) -> Answer<'_, Value> {
        Box::pin(Magento::customer(self, id))
    }

    fn search_customers<'a>(
        &'a self,
        criteria: &'a SearchCriteria,
    ) -> Answer<'a, SearchResult<Value>> {
        Box::pin(Magento::search_customers(self, criteria))
    }

    fn create_customer<'a>(&'a self, customer: Value, password: &'a str) -> Answer<'a, Value> {
        Box::pin(Magento::create_customer(self, customer, password))
    }

    fn save_customer(&self, id: u64, customer: Value) -> Answer<'_, Value> {
        Box::pin(Magento::save_customer(self, id, customer))
    }

    fn delete_customer(&self, id: u64) -> Answer<'_, ()> {
        Box::pin(Magento::delete_customer(self, id))
    }

    fn address(&self, id: u64) -> Answer<'_, Value> {
        Box::pin(Magento::address(self, id))
    }

    fn addresses_of(&self, customer: &Value) -> Vec<Value> {
        super::addresses::addresses_of(customer)
    }

    fn default_addresses(&self, customer: &Value) -> (Option<u64>, Option<u64>) {
        super::addresses::defaults_of(customer)
    }

    fn set_region(&self, fields: &mut serde_json::Map<String, Value>, region: RegionChoice<'_>) {
        super::addresses::set_region(fields, region)
    }

    fn customer_with_address(&self, customer: &Value, edit: &AddressEdit) -> Value {
        super::addresses::customer_with_address(customer, edit)
    }

    fn new_address_id(
        &self,
        saved: &Value,
        before: &std::collections::HashSet<u64>,
        sent: &Value,
    ) -> Option<u64> {
        super::addresses::new_address_id(saved, before, sent)
    }

    fn writes_addresses(&self) -> bool {
        false
    }

    // Magento 2 has no address create or update: the resource saves the customer.
    fn add_address(&self, _customer_id: u64, _address: Value) -> Answer<'_, u64> {
        Box::pin(async {
            Err(UpstreamError::Protocol(
                "Magento 2 writes addresses through the customer save".into(),
            ))
        })
    }

    fn update_address(&self, _id: u64, _address: Value) -> Answer<'_, ()> {
        Box::pin(async {
            Err(UpstreamError::Protocol(
                "Magento 2 writes addresses through the customer save".into(),
            ))
        })
    }

    fn delete_address(&self, id: u64) -> Answer<'_, ()> {
        Box::pin(Magento::delete_address(self, id))
    }

    fn search_orders<'a>(
        &'a self,
        criteria: &'a SearchCriteria,
    ) -> Answer<'a, SearchResult<Value>> {
        Box::pin(Magento::search_orders(self, criteria))
    }

    fn order(&self, id: u64) -> Answer<'_, Value> {
        Box::pin(Magento::order(self, id))
    }

    fn order_parts(&self, order: &Value) -> OrderParts {
        super::orders::parts(order)
    }

    fn order_comments(&self, order_id: u64) -> Answer<'_, Vec<Value>> {
        Box::pin(Magento::order_comments(self, order_id))
    }

    fn add_order_comment(&self, order_id: u64, comment: Value) -> Answer<'_, u64> {
        Box::pin(Magento::add_order_comment(self, order_id, comment))
    }

    fn order_comment(&self, comment_id: u64) -> Answer<'_, Option<Value>> {
        Box::pin(Magento::find_order_comment(self, comment_id))
    }

    fn read_assignments(&self, product: &Value) -> Assignments {
        super::links::read_assignments(product)
    }

    fn category(&self, id: u64) -> Answer<'_, Bytes> {
        Box::pin(Magento::category(self, id))
    }

    fn read_category(&self, raw: &[u8]) -> Result<Category, UpstreamError> {
        super::links::read_category(raw)
    }

    fn websites(&self) -> Answer<'_, Bytes> {
        Box::pin(Magento::websites(self))
    }

    fn read_websites(&self, raw: &[u8]) -> Result<Vec<u64>, UpstreamError> {
        super::links::read_websites(raw)
    }

    fn assign_category<'a>(&'a self, category_id: u64, sku: &'a str) -> Answer<'a, ()> {
        Box::pin(Magento::assign_category(self, category_id, sku))
    }

    fn unassign_category<'a>(&'a self, category_id: u64, sku: &'a str) -> Answer<'a, ()> {
        Box::pin(Magento::unassign_category(self, category_id, sku))
    }

    fn assign_website<'a>(&'a self, sku: &'a str, website_id: u64) -> Answer<'a, ()> {
        Box::pin(Magento::assign_website(self, sku, website_id))
    }

    fn unassign_website<'a>(&'a self, sku: &'a str, website_id: u64) -> Answer<'a, ()> {
        Box::pin(Magento::unassign_website(self, sku, website_id))
    }
}
