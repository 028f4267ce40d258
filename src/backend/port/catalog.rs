//! The catalog: products read and written, listed, rendered for shoppers, and what their
//! records say about prices and assignments.
//!
//! A product record crosses the port in the store's own shape (bytes, as the cache keeps
//! them): the adapter's mapping files (`mappings/<kind>/product.toml`) say what each field
//! means, and [`ProductRecords`] reads the few things the layers above reason about (group
//! and tier prices, websites and categories, a rendering's final prices).

use async_trait::async_trait;
use bytes::Bytes;
use serde_json::Value;

use super::error::BackendError;
use super::query::SearchCriteria;
use super::records::{CategoryLink, IdSku, Page, Scope};

/// A quantity tier of a shopper's product view as the store rendered it for them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RenderedTier {
    pub qty: f64,
    pub price_with_tax: f64,
    pub price_without_tax: f64,
}

/// A price of a product for a customer group from a quantity on (quantity 1: the group's
/// price).
#[derive(Debug, Clone, PartialEq)]
pub struct TierPrice {
    /// The customer group (32000: every group); `None` when the store names none.
    pub group: Option<u64>,
    /// 0: every website.
    pub website_id: u64,
    pub qty: f64,
    pub value: f64,
    /// The value is a percentage off, not a price.
    pub percent: bool,
}

impl TierPrice {
    /// The gateway's own form of a tier, which the mapping files' `group_price` and
    /// `tier_price` types read (under `prices.tiers`) and write.
    pub fn to_value(&self) -> Value {
        serde_json::json!({"group": self.group, "website_id": self.website_id, "qty": self.qty,
            "value": self.value, "percent": self.percent})
    }

    /// A tier in the gateway's own form; None when it has no value.
    pub fn from_value(entry: &Value) -> Option<TierPrice> {
        const OWN: TierFields = TierFields {
            group: "/group",
            website_id: "/website_id",
            qty: Some("/qty"),
            value: "/value",
        };
        let percent = entry.get("percent").and_then(Value::as_bool);
        TierPrice::read(entry, &OWN, percent.unwrap_or(false))
    }

    /// A tier entry of a store's record, its fields where `fields` says (ids and numbers
    /// read leniently; no website: 0, every website; no quantity: 1); None when it has no
    /// value. Whether the value is a percentage each store says its own way: `percent`.
    pub fn read(entry: &Value, fields: &TierFields, percent: bool) -> Option<TierPrice> {
        use crate::backend::values::{as_f64, id_at};
        let qty = fields.qty.and_then(|at| entry.pointer(at));
        Some(TierPrice {
            group: id_at(entry, fields.group),
            website_id: id_at(entry, fields.website_id).unwrap_or(0),
            qty: qty.and_then(as_f64).unwrap_or(1.0),
            value: entry.pointer(fields.value).and_then(as_f64)?,
            percent,
        })
    }
}

/// Where a store's tier entry holds a [`TierPrice`]'s values (JSON pointers).
#[derive(Debug, Clone, Copy)]
pub struct TierFields {
    pub group: &'static str,
    pub website_id: &'static str,
    /// `None`: the entries have no quantity (group prices: 1).
    pub qty: Option<&'static str>,
    pub value: &'static str,
}

/// A page of every product's id and SKU ([`Catalog::product_ids`]).
#[derive(Debug, Clone, Default)]
pub struct IdPage {
    pub items: Vec<IdSku>,
    /// More pages follow.
    pub more: bool,
}

/// Which price lists a product update sends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SentPrices {
    pub group: bool,
    pub tier: bool,
}

/// Where a product is assigned: its categories and its websites (ids, ascending).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Assignments {
    pub category_ids: Vec<u64>,
    pub website_ids: Vec<u64>,
}

/// Who prices a signed-in customer's products.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CustomerPrices {
    /// The store renders for anonymous shoppers only; the gateway works out a customer
    /// group's tiers from the product record (Magento 2's rendering endpoint).
    FromGroup,
    /// The store renders for each signed-in customer itself (their group's prices, their
    /// tax) when the back end holds a session of theirs (OpenMage).
    FromStore,
}

/// The storefront's view of some products (final and tax-inclusive prices, salability,
/// URLs), one record each in the store's shape, each with its `id`.
#[derive(Debug, Clone, Default)]
pub struct Renderings {
    pub items: Vec<Value>,
    /// They were made for the customer asked about (their group, their tax), not for an
    /// anonymous shopper.
    pub for_customer: bool,
    /// The customer's session was refused by the store and is forgotten: their price group
    /// changes (the caller drops what it cached of it).
    pub session_dropped: bool,
}

/// A product to write: the record in the store's shape (the product mapping's write
/// fields) and what the gateway adds to it.
#[derive(Debug, Clone, Default)]
pub struct ProductDraft {
    pub record: Value,
    /// The group and tier prices to set, in the gateway's form; `None`: none sent.
    pub tiers: Option<Vec<TierPrice>>,
    /// Which price lists the client sent: a list it did not send keeps its entries.
    pub sent: SentPrices,
    /// For a create: the website to publish it on.
    pub website: Option<u64>,
}

/// Products: read, listed, rendered, written.
#[async_trait]
pub trait Catalog: Send + Sync {
    /// A product by SKU as `scope` sees it, in the store's shape (with its stock item
    /// where the store has one).
    async fn product(&self, scope: Scope<'_>, sku: &str) -> Result<Bytes, BackendError>;
    /// A page of products matching `criteria`, as the admin sees them in `scope`.
    async fn search_products(
        &self,
        scope: Scope<'_>,
        criteria: &SearchCriteria,
    ) -> Result<Page, BackendError>;
    /// A page of the products a shopper of a store view may see (enabled, visible in the
    /// catalog or search, on the view's website, and whatever else the store's storefront
    /// leaves out) matching `criteria`. `website_id`: the store view's website, when the
    /// lists of a store view are asked for (None: the default store's lists).
    async fn search_shopper_products(
        &self,
        scope: Scope<'_>,
        website_id: Option<u64>,
        criteria: &SearchCriteria,
    ) -> Result<Page, BackendError>;
    /// The SKUs of product ids (the API addresses products by id).
    async fn skus_of(&self, ids: &[u64]) -> Result<Vec<IdSku>, BackendError>;
    /// A page (1-based) of every product's id and SKU, in id order: what the gateway's
    /// product index is loaded from when it starts, so that a cold product read need not
    /// ask for its SKU first. `None` (the default): the store has no cheap list of them,
    /// and ids are looked up when they are asked for ([`Catalog::skus_of`]).
    async fn product_ids(&self, _page: u32) -> Result<Option<IdPage>, BackendError> {
        Ok(None)
    }
    /// A category's products in its order; `store_view`: as that store view lists them (a
    /// store that indexes anchor categories per view adds their children's products), else
    /// the category's own.
    async fn category_products(
        &self,
        category_id: u64,
        store_view: Option<&str>,
    ) -> Result<Vec<CategoryLink>, BackendError>;
    /// The search field that holds a product's categories, when the store's product search
    /// can filter by it and then finds exactly a category's products as
    /// [`Catalog::category_products`] lists them (a category's page then costs one round
    /// trip: the list of its products and their records asked for side by side). `None`
    /// (the default): its products are searched by SKU once the category's list is known.
    fn category_filter(&self) -> Option<&'static str> {
        None
    }
    /// Whether a shopper's search ([`Catalog::search_shopper_products`]) answers with the
    /// storefront's anonymous renderings of the same store view, as [`Catalog::render`]
    /// would for an anonymous shopper (OpenMage: both are the store's own Guest list). Then
    /// an anonymous shopper's page takes its renderings from its search: one store call,
    /// not two asking the same thing.
    fn shopper_search_renders(&self) -> bool {
        false
    }
    /// Who prices a signed-in customer's products ([`CustomerPrices`]).
    fn customer_prices(&self) -> CustomerPrices {
        CustomerPrices::FromGroup
    }
    /// The storefront's renderings of the products matching `criteria` in a store view and
    /// currency: for `customer` where the store renders for customers and a session of
    /// theirs is kept, else for an anonymous shopper (the NOT LOGGED IN group).
    async fn render(
        &self,
        store_id: u64,
        currency: &str,
        criteria: &SearchCriteria,
        customer: Option<u64>,
    ) -> Result<Renderings, BackendError>;
    /// Creates a product; the store's record of it. A store the gateway only reads: the
    /// default says so.
    async fn create_product(&self, _draft: ProductDraft) -> Result<Value, BackendError> {
        Err(BackendError::Unsupported("creating a product".into()))
    }
    /// Changes a product in `scope`; the store's record of it, where the store answers an
    /// update with one (else its `id` and `sku`: a read-back costs calls nobody reads).
    async fn update_product(
        &self,
        _scope: Scope<'_>,
        _sku: &str,
        _draft: ProductDraft,
    ) -> Result<Value, BackendError> {
        Err(BackendError::Unsupported("changing a product".into()))
    }
    async fn delete_product(&self, _sku: &str) -> Result<(), BackendError> {
        Err(BackendError::Unsupported("deleting a product".into()))
    }
}

/// What a product record (as [`Catalog::product`] gave it) and a rendering (as
/// [`Catalog::render`] gave it) say, read by the adapter that knows their shape.
pub trait ProductRecords: Send + Sync {
    /// The fields of a product record that hold group or tier prices (a view that shows one
    /// depends on the caller's customer group).
    fn price_fields(&self) -> &'static [&'static str];
    /// The group and tier prices of a product record.
    fn tier_prices(&self, product: &Value) -> Vec<TierPrice>;
    /// Removes from a product record every group or tier price `keep` refuses, wherever the
    /// store holds them (a shopper's record must hold no other group's price).
    fn keep_tier_prices(&self, product: &mut Value, keep: &dyn Fn(&TierPrice) -> bool);
    /// The final price without and with tax of a rendering.
    fn final_prices(&self, render: &Value) -> (Option<f64>, Option<f64>);
    /// The quantity tiers a rendering holds, as the store computed them for whom it
    /// rendered (`None`, the default: the rendering has none; the gateway works them out).
    fn rendered_tiers(&self, _render: &Value) -> Option<Vec<RenderedTier>> {
        None
    }
    /// Where a product record is assigned.
    fn assignments(&self, product: &Value) -> Assignments;
    /// Is a product record on a website? True when the record does not say.
    fn on_website(&self, product: &Value, website_id: u64) -> bool;
}

/// Changes to a product's categories and websites (the original's
/// `/products/:id/categories` and `/products/:id/websites`; where a product is, its record
/// says: [`ProductRecords::assignments`]). A store the gateway only reads: the defaults say
/// so.
#[async_trait]
pub trait ProductLinks: Send + Sync {
    async fn assign_category(&self, _category_id: u64, _sku: &str) -> Result<(), BackendError> {
        Err(BackendError::Unsupported("assigning a category".into()))
    }
    async fn unassign_category(&self, _category_id: u64, _sku: &str) -> Result<(), BackendError> {
        Err(BackendError::Unsupported("unassigning a category".into()))
    }
    async fn assign_website(&self, _sku: &str, _website_id: u64) -> Result<(), BackendError> {
        Err(BackendError::Unsupported("assigning a website".into()))
    }
    async fn unassign_website(&self, _sku: &str, _website_id: u64) -> Result<(), BackendError> {
        Err(BackendError::Unsupported("unassigning a website".into()))
    }
}
