//! A toy third back end: a store that answers from memory, its records in Magento 2's shape
//! (so Magento 2's mapping files read them), loaded from the recorded fixtures. It is what a
//! new back end is: one folder implementing the port's traits, most of them by their
//! defaults (this store is read-only), and one line in a registry (`main.rs`).

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use serde_json::Value;
use storegate::backend::kind::{Settings, Wiring};
use storegate::backend::port::{
    Assignments, Backend, BackendError, Catalog, Category, CategoryLink, CircuitProbe,
    CircuitState, IdSku, Image, Media, OrderParts, Orders, Page, People, ProductLinks,
    ProductRecords, Renderings, Scope, SearchCriteria, SearchResult, SignIn, SignInFailure,
    SignedIn, Stock, StoreConfig, StoreSetup, StoreView, TierPrice,
};

/// The one customer who can sign in, and their password.
pub const CUSTOMER: (&str, &str) = ("jane.doe@example.com", "toy-password-1");

/// The store's memory.
#[derive(Debug)]
pub struct ToyStore {
    products: HashMap<String, Value>,
    renderings: Vec<Value>,
    views: Value,
    configs: Value,
    customer: Value,
    stock: Value,
}

fn fixture(name: &str) -> Value {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/magento2")
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let exchange: Value = serde_json::from_str(&text).unwrap();
    exchange["response"]["body"].clone()
}

fn not_found() -> BackendError {
    BackendError::Status {
        status: 404,
        error: Default::default(),
    }
}

fn unreadable(error: serde_json::Error) -> BackendError {
    BackendError::Protocol(error.to_string())
}

/// The registry's build for the toy kind: nothing to connect to.
pub fn build(_settings: &Settings, _wiring: &Wiring) -> Result<Arc<dyn Backend>, String> {
    let products: HashMap<String, Value> = [
        fixture("products/get-simple-24-mb01"),
        fixture("products/get-special-price-24-mb02"),
    ]
    .into_iter()
    .map(|p| (p["sku"].as_str().unwrap_or_default().to_owned(), p))
    .collect();
    Ok(Arc::new(ToyStore {
        products,
        renderings: fixture("products/render-info-1-2-6")["items"]
            .as_array()
            .cloned()
            .unwrap_or_default(),
        views: fixture("store/store-views"),
        configs: fixture("store/store-configs"),
        customer: fixture("customers/get-5"),
        stock: fixture("stock/get-24-mb01"),
    }))
}

impl ToyStore {
    fn page(&self, criteria: &SearchCriteria) -> Page {
        let mut items: Vec<Value> = self.products.values().cloned().collect();
        items.sort_by_key(|p| p["id"].as_u64());
        // The one filter the gateway asks a toy for: ids.
        for group in criteria.groups() {
            for condition in group {
                if condition.field == "entity_id" {
                    let ids: Vec<&str> = condition.value.split(',').collect();
                    items.retain(|p| ids.contains(&p["id"].to_string().as_str()));
                }
            }
        }
        let total = items.len() as u64;
        Page::of(items, total)
    }
}

#[async_trait]
impl StoreSetup for ToyStore {
    fn default_store(&self) -> &str {
        "default"
    }

    fn circuit(&self) -> CircuitProbe {
        Arc::new(|| CircuitState::Closed)
    }

    async fn ping(&self) -> Result<(), BackendError> {
        Ok(())
    }

    async fn credentials_refused(&self) -> Option<String> {
        None
    }

    async fn store_views(&self) -> Result<Vec<StoreView>, BackendError> {
        serde_json::from_value(self.views.clone()).map_err(unreadable)
    }

    async fn store_configs(&self) -> Result<Vec<StoreConfig>, BackendError> {
        serde_json::from_value(self.configs.clone()).map_err(unreadable)
    }

    async fn websites(&self) -> Result<Vec<u64>, BackendError> {
        Ok(vec![1])
    }

    async fn category(&self, id: u64) -> Result<Category, BackendError> {
        Ok(Category {
            id,
            is_active: true,
        })
    }
}

#[async_trait]
impl Catalog for ToyStore {
    async fn product(&self, _scope: Scope<'_>, sku: &str) -> Result<Bytes, BackendError> {
        let product = self.products.get(sku).ok_or_else(not_found)?;
        Ok(Bytes::from(product.to_string()))
    }

    async fn search_products(
        &self,
        _scope: Scope<'_>,
        criteria: &SearchCriteria,
    ) -> Result<Page, BackendError> {
        Ok(self.page(criteria))
    }

    async fn search_shopper_products(
        &self,
        _scope: Scope<'_>,
        _website_id: Option<u64>,
        criteria: &SearchCriteria,
    ) -> Result<Page, BackendError> {
        Ok(self.page(criteria))
    }

    async fn skus_of(&self, ids: &[u64]) -> Result<Vec<IdSku>, BackendError> {
        Ok(self
            .products
            .values()
            .filter_map(|p| {
                let id = p["id"].as_u64()?;
                ids.contains(&id).then(|| IdSku {
                    id,
                    sku: p["sku"].as_str().unwrap_or_default().to_owned(),
                })
            })
            .collect())
    }

    async fn category_products(
        &self,
        _category_id: u64,
        _store_view: Option<&str>,
    ) -> Result<Vec<CategoryLink>, BackendError> {
        Ok(Vec::new())
    }

    async fn render(
        &self,
        _store_id: u64,
        _currency: &str,
        criteria: &SearchCriteria,
        _customer: Option<u64>,
    ) -> Result<Renderings, BackendError> {
        let wanted: SearchResult<Value> = self.page(criteria).read()?;
        let ids: Vec<u64> = wanted
            .items
            .iter()
            .filter_map(|p| p["id"].as_u64())
            .collect();
        Ok(Renderings {
            items: self
                .renderings
                .iter()
                .filter(|r| r["id"].as_u64().is_some_and(|id| ids.contains(&id)))
                .cloned()
                .collect(),
            ..Renderings::default()
        })
    }
}

impl ProductRecords for ToyStore {
    fn price_fields(&self) -> &'static [&'static str] {
        &["tier_prices"]
    }

    fn tier_prices(&self, _product: &Value) -> Vec<TierPrice> {
        Vec::new()
    }

    fn keep_tier_prices(&self, _product: &mut Value, _keep: &dyn Fn(&TierPrice) -> bool) {}

    fn final_prices(&self, render: &Value) -> (Option<f64>, Option<f64>) {
        let price = render["price_info"]["final_price"].as_f64();
        (price, price)
    }

    fn assignments(&self, _product: &Value) -> Assignments {
        Assignments::default()
    }

    fn on_website(&self, _product: &Value, _website_id: u64) -> bool {
        true
    }
}

impl ProductLinks for ToyStore {}

#[async_trait]
impl Media for ToyStore {
    async fn product_gallery(
        &self,
        scope: Scope<'_>,
        sku: &str,
        _store_id: Option<u64>,
    ) -> Result<Bytes, BackendError> {
        self.product(scope, sku).await
    }

    fn images(&self, _product: &Value) -> Vec<Image> {
        Vec::new()
    }
}

#[async_trait]
impl Stock for ToyStore {
    async fn stock_item(&self, sku: &str) -> Result<Bytes, BackendError> {
        match self.products.contains_key(sku) {
            true => Ok(Bytes::from(self.stock.to_string())),
            false => Err(not_found()),
        }
    }

    async fn stock_items_page(
        &self,
        _max_qty: Option<&str>,
        _page: u32,
        _size: u32,
    ) -> Result<Page, BackendError> {
        Ok(Page::of(vec![self.stock.clone()], 1))
    }
}

#[async_trait]
impl People for ToyStore {
    async fn customer(&self, id: u64) -> Result<Value, BackendError> {
        match self.customer["id"].as_u64() == Some(id) {
            true => Ok(self.customer.clone()),
            false => Err(not_found()),
        }
    }

    async fn search_customers(
        &self,
        _criteria: &SearchCriteria,
    ) -> Result<SearchResult<Value>, BackendError> {
        Ok(SearchResult {
            items: vec![self.customer.clone()],
            total_count: 1,
        })
    }

    async fn address(&self, _id: u64) -> Result<Value, BackendError> {
        Err(not_found())
    }

    fn addresses_of(&self, customer: &Value) -> Vec<Value> {
        customer["addresses"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    fn default_addresses(&self, _customer: &Value) -> (Option<u64>, Option<u64>) {
        (None, None)
    }
}

#[async_trait]
impl Orders for ToyStore {
    async fn search_orders(
        &self,
        _criteria: &SearchCriteria,
    ) -> Result<SearchResult<Value>, BackendError> {
        Ok(SearchResult {
            items: Vec::new(),
            total_count: 0,
        })
    }

    async fn order(&self, _id: u64) -> Result<Value, BackendError> {
        Err(not_found())
    }

    fn order_parts(&self, _order: &Value) -> OrderParts {
        OrderParts::default()
    }
}

#[async_trait]
impl SignIn for ToyStore {
    async fn sign_in(&self, username: &str, password: &str) -> Result<SignedIn, SignInFailure> {
        if (username, password) != CUSTOMER {
            return Err(SignInFailure::Refused);
        }
        Ok(SignedIn {
            customer_id: self.customer["id"].as_u64().unwrap_or(0),
            session_kept: false,
            group: self.customer["group_id"].as_u64(),
        })
    }
}
