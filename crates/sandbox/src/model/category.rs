//! Categories and their product assignments (served by `api::categories`).
//!
//! Assignments live on the products (`category_links`), like Magento's
//! `catalog_category_product` rows. The assigned-products list comes back in product id order
//! with each row's position: clients that want merchandising order must sort by position.

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Category {
    pub(crate) id: u64,
    pub(crate) parent_id: u64,
    pub(crate) name: String,
    pub(crate) is_active: bool,
    pub(crate) position: i64,
    pub(crate) level: i64,
    pub(crate) path: String,
    pub(crate) include_in_menu: bool,
    pub(crate) created_at: String,
    pub(crate) updated_at: String,
    #[serde(default)]
    pub(crate) custom_attributes: Vec<Value>,
}
