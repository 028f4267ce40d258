//! Store setup: what every request may need to know about the store before it asks for
//! anything else (its store views and their configuration, its directory, its websites and
//! categories, which attribute sets hold images), whether it answers at all, and the state
//! of the breaker in front of it.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::error::BackendError;
use super::health::CircuitProbe;
use super::records::lenient_u64;

/// A store view.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoreView {
    #[serde(deserialize_with = "lenient_u64")]
    pub id: u64,
    pub code: String,
    #[serde(default)]
    pub name: String,
    #[serde(default, deserialize_with = "lenient_u64")]
    pub website_id: u64,
}

/// A store view's configuration: its URLs and currency.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoreConfig {
    #[serde(deserialize_with = "lenient_u64")]
    pub id: u64,
    pub code: String,
    #[serde(default, deserialize_with = "lenient_u64")]
    pub website_id: u64,
    #[serde(default)]
    pub base_url: String,
    #[serde(default)]
    pub base_media_url: String,
    #[serde(default)]
    pub base_currency_code: String,
}

/// A country the store allows, with its predefined regions (none for most countries).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Country {
    pub id: String,
    #[serde(default)]
    pub two_letter_abbreviation: String,
    #[serde(default)]
    pub three_letter_abbreviation: String,
    #[serde(default)]
    pub full_name_english: String,
    #[serde(default)]
    pub available_regions: Vec<Region>,
}

/// A predefined region; its `id` is the number an address's `region_id` holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Region {
    #[serde(deserialize_with = "lenient_u64")]
    pub id: u64,
    #[serde(default)]
    pub code: String,
    #[serde(default)]
    pub name: String,
}

/// A category, as far as the gateway asks: is it there, is it shown to shoppers.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Category {
    pub id: u64,
    pub is_active: bool,
}

/// The store's setup, and its health.
#[async_trait]
pub trait StoreSetup: Send + Sync {
    /// The code of the store view reads default to.
    fn default_store(&self) -> &str;
    /// A reader of the circuit breaker's state in front of the store (`/readyz`, metrics).
    fn circuit(&self) -> CircuitProbe;
    /// One cheap call that shows the store answers.
    async fn ping(&self) -> Result<(), BackendError>;
    /// Some(why) when the store answers but refuses the gateway's credentials (every call
    /// would fail), None otherwise (`/readyz`).
    async fn credentials_refused(&self) -> Option<String>;
    /// The store views (the admin one, 0, among them).
    async fn store_views(&self) -> Result<Vec<StoreView>, BackendError>;
    async fn store_configs(&self) -> Result<Vec<StoreConfig>, BackendError>;
    /// The countries addresses may be in, with their predefined regions. A store without a
    /// directory the gateway can read checks addresses itself: the default says so.
    async fn countries(&self) -> Result<Vec<Country>, BackendError> {
        Err(BackendError::Unsupported("the country directory".into()))
    }
    /// The ids of the websites a product can be in.
    async fn websites(&self) -> Result<Vec<u64>, BackendError>;
    /// A category; an error with status 404 when there is none.
    async fn category(&self, id: u64) -> Result<Category, BackendError>;
    /// Can products of this attribute set hold images at all? A store that checks that
    /// itself when an image is added: yes, always (the default).
    async fn takes_images(&self, _attribute_set: u64) -> Result<bool, BackendError> {
        Ok(true)
    }
}
