//! The in-memory store: every entity the sandbox serves, and the id sequences.
//!
//! One `RwLock` guards it all. Handlers hold the lock only while they read or change data
//! (never across an `.await`), which keeps concurrent benchmark traffic simple and correct.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use serde_json::Value;

pub(crate) mod media_files;
pub(crate) mod seed;

use crate::model::attributes::CatalogConfig;
use crate::model::category::Category;
use crate::model::customer::Customer;
use crate::model::directory::Directory;
use crate::model::product::Product;
use crate::model::store::Stores;

pub(crate) struct Db {
    pub(crate) stores: Stores,
    pub(crate) directory: Directory,
    pub(crate) catalog: CatalogConfig,
    pub(crate) categories: BTreeMap<u64, Category>,
    pub(crate) products: BTreeMap<u64, Product>,
    /// Lower-cased SKU -> product id (MySQL compares SKUs case-insensitively).
    pub(crate) sku_index: HashMap<String, u64>,
    pub(crate) next_product_id: u64,
    pub(crate) next_media_id: u64,
    pub(crate) next_option_id: u64,
    pub(crate) next_option_value_id: u64,
    /// Files under `media/catalog/product`, by their gallery path (`/m/b/mb01.png`).
    pub(crate) media_files: HashMap<String, Arc<[u8]>>,
    pub(crate) customers: BTreeMap<u64, Customer>,
    pub(crate) next_customer_id: u64,
    pub(crate) next_address_id: u64,
    /// Customer access tokens -> customer id.
    pub(crate) customer_tokens: HashMap<String, u64>,
    /// Orders are read-only and kept in Magento's own shape.
    pub(crate) orders: BTreeMap<u64, Value>,
}

impl Db {
    pub(crate) fn product_by_sku(&self, sku: &str) -> Option<&Product> {
        let id = self.sku_index.get(&sku.trim().to_lowercase())?;
        self.products.get(id)
    }

    pub(crate) fn product_id_by_sku(&self, sku: &str) -> Option<u64> {
        self.sku_index.get(&sku.trim().to_lowercase()).copied()
    }
}

/// Call counters per `METHOD /V1/path`, for tests and the benchmark script.
#[derive(Default)]
pub(crate) struct Stats {
    calls: Mutex<BTreeMap<String, u64>>,
}

impl Stats {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, u64>> {
        self.calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn record(&self, method: &str, path: &str) {
        *self.lock().entry(format!("{method} {path}")).or_insert(0) += 1;
    }

    /// Counts calls whose recorded path equals `path` either as sent or percent-decoded.
    pub(crate) fn count(&self, method: &str, path: &str) -> u64 {
        let exact = format!("{method} {path}");
        self.lock()
            .iter()
            .filter(|(key, _)| {
                key.as_str() == exact
                    || percent_encoding::percent_decode_str(key)
                        .decode_utf8_lossy()
                        .as_ref()
                        == exact
            })
            .map(|(_, n)| *n)
            .sum()
    }

    pub(crate) fn snapshot(&self) -> BTreeMap<String, u64> {
        self.lock().clone()
    }

    pub(crate) fn reset(&self) {
        self.lock().clear();
    }
}

pub(crate) struct Shared {
    pub(crate) db: RwLock<Db>,
    pub(crate) token: String,
    pub(crate) latency: Duration,
    pub(crate) stats: Stats,
    /// `http://addr` of the listener, used when a request carries no `Host` header.
    pub(crate) origin: String,
    /// The origin the store's URLs name when set (the gateway's public URL, which serves
    /// this sandbox's media): devices cannot reach the sandbox's own loopback address.
    pub(crate) public_origin: std::sync::OnceLock<String>,
}
