//! The back-end port: what the gateway asks of a store, in the gateway's terms, one
//! operation per need. The resources, the records layer, the indexes and the sign-in pages
//! hold an `Arc<dyn Backend>` and never a client of one store; each back end is an adapter
//! folder that implements this trait (`magento2` today).
//!
//! Records come back as the store sent them (raw bytes, or parsed JSON for the records a
//! resource edits), so the cache keeps them at their real weight and parses them only to
//! render; what each field of a record means is the adapter's mapping files
//! (`STOREGATE_MAPPINGS`), not the resources'. Failures are [`UpstreamError`]s whichever
//! store answered. Recording and replay sit under every adapter, at the HTTP transport
//! (`crate::backend::transport`).

use std::sync::Arc;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

pub use super::error::{StoreMessage, UpstreamError};
pub use super::query::{Direction, MAX_PAGE_SIZE, SearchCriteria};
pub use super::resilience::CircuitState;

/// Which store scope a call runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope<'a> {
    /// The configured default store view: reads.
    Default,
    /// A store view by code: store-specific reads and writes.
    Store(&'a str),
    /// The global level: writes of default values (no reads).
    All,
}

/// A list answer: the page's items and how many there are in all.
#[derive(Debug, Clone, Deserialize)]
pub struct SearchResult<T> {
    #[serde(default = "Vec::new")]
    pub items: Vec<T>,
    #[serde(default)]
    pub total_count: u64,
}

/// A product's id and SKU (the resources address products by id, stores by SKU).
#[derive(Debug, Clone, Deserialize)]
pub struct IdSku {
    #[serde(deserialize_with = "lenient_u64")]
    pub id: u64,
    pub sku: String,
}

/// A product of a category, with its position there.
#[derive(Debug, Clone, Deserialize)]
pub struct CategoryLink {
    pub sku: String,
    #[serde(default, deserialize_with = "lenient_i64")]
    pub position: i64,
}

/// A store view.
#[derive(Debug, Clone, Deserialize)]
pub struct StoreView {
    #[serde(deserialize_with = "lenient_u64")]
    pub id: u64,
    pub code: String,
    #[serde(default)]
    pub name: String,
    #[serde(default, deserialize_with = "lenient_u64")]
    pub website_id: u64,
}

#[derive(Debug, Clone, Deserialize)]
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
#[derive(Debug, Clone, Deserialize)]
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
#[derive(Debug, Clone, Deserialize)]
pub struct Region {
    #[serde(deserialize_with = "lenient_u64")]
    pub id: u64,
    #[serde(default)]
    pub code: String,
    #[serde(default)]
    pub name: String,
}

/// A category, as far as the gateway asks: is it there, is it shown to shoppers.
#[derive(Debug, Clone)]
pub struct Category {
    pub id: u64,
    pub is_active: bool,
}

/// Where a product is assigned: its categories and its websites (ids, ascending).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Assignments {
    pub category_ids: Vec<u64>,
    pub website_ids: Vec<u64>,
}

/// An image of a product's gallery, as one store view (or the default values) holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    pub id: u64,
    /// The file's path in the store's media folder; its name tells the next default name.
    pub file: String,
    /// A string, or null when the image has none.
    pub label: Value,
    pub position: Option<i64>,
    /// Hidden from shoppers.
    pub exclude: bool,
    /// The roles it has (`image`, `small_image`, `thumbnail`).
    pub types: Vec<String>,
    /// The store's entry, which the image mapping files read.
    pub record: Value,
}

/// An image file checked by the gateway, its bytes in base64.
#[derive(Debug, Clone)]
pub struct ImageFile {
    pub base64: String,
    pub mime: &'static str,
    /// The file name the store should keep it under (`image_2.png`).
    pub name: String,
}

/// A new image: its file and values.
#[derive(Debug, Clone)]
pub struct NewImage {
    pub file: ImageFile,
    pub label: Option<Value>,
    pub position: i64,
    pub exclude: bool,
    pub types: Vec<String>,
}

/// What an image update sets; `None` keeps the image's value.
#[derive(Debug, Clone, Default)]
pub struct ImageChange {
    pub file: Option<ImageFile>,
    pub label: Option<Value>,
    pub position: Option<i64>,
    pub exclude: Option<bool>,
    pub types: Option<Vec<String>>,
}

/// A store's refusal of an image write that is the request's fault, in the gateway's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageRefusal {
    NotFound,
    BadBase64,
    BadMime,
}

/// An address write for a store that writes addresses by saving the whole customer
/// ([`Backend::writes_addresses`] false).
#[derive(Debug, Clone, Default)]
pub struct AddressEdit {
    /// The address changed, or None for a new one (`new_address`).
    pub target: Option<u64>,
    /// The fields set on the changed address.
    pub fields: serde_json::Map<String, Value>,
    /// `Some(true)`: make it the default billing (shipping) address; anything else
    /// changes no default.
    pub billing: Option<bool>,
    pub shipping: Option<bool>,
    pub new_address: Option<Value>,
}

/// The region an address is given.
#[derive(Debug, Clone, Copy)]
pub enum RegionChoice<'a> {
    /// No region (a country without predefined regions, or one that changed).
    None,
    /// One of the country's predefined regions.
    Predefined(&'a Region),
    /// Free text, for a country without predefined regions.
    Text(&'a str),
}

/// A customer's credentials with the store, kept by the gateway (in its OAuth store) so that
/// it can ask the store what the store shows that customer: their group's prices, with
/// their tax, as the store computes them ([`Backend::render_info`]). Obtained when the
/// customer signs in with their store password ([`Backend::store_session`]), or carried
/// over with the store's own access tokens (`storegate oauth import`). Stored as JSON;
/// `Debug` shows no secret.
#[derive(Clone, PartialEq, Eq, serde::Serialize, Deserialize)]
pub struct StoreSession {
    /// The customer it speaks for (the store's id).
    pub customer_id: u64,
    /// The OAuth consumer the token was issued to, with its secret; `None`: the gateway's
    /// own (`STOREGATE_UPSTREAM_CONSUMER_KEY`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumer: Option<(String, String)>,
    pub token: String,
    #[serde(default)]
    pub secret: String,
}

impl std::fmt::Debug for StoreSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreSession")
            .field("customer_id", &self.customer_id)
            .field("own_consumer", &self.consumer.is_some())
            .finish_non_exhaustive()
    }
}

impl StoreSession {
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    pub fn from_text(text: &str) -> Option<StoreSession> {
        serde_json::from_str(text).ok()
    }
}

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
        use super::values::{as_f64, as_i64};
        Some(TierPrice {
            group: entry
                .get("group")
                .and_then(as_i64)
                .and_then(|g| u64::try_from(g).ok()),
            website_id: entry
                .get("website_id")
                .and_then(as_i64)
                .and_then(|w| u64::try_from(w).ok())
                .unwrap_or(0),
            qty: entry.get("qty").and_then(as_f64).unwrap_or(1.0),
            value: entry.get("value").and_then(as_f64)?,
            percent: entry
                .get("percent")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        })
    }
}

/// Which price lists a product update sends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SentPrices {
    pub group: bool,
    pub tier: bool,
}

/// What the layers above read of an order besides its own fields, worked out by the
/// adapter from the store's record.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OrderParts {
    /// The applied taxes' names, joined with ", ".
    pub tax_name: Option<String>,
    /// The applied taxes' rates, summed.
    pub tax_rate: Option<f64>,
    /// Billing then shipping, each with its type (`billing`, `shipping`), as the store
    /// holds them (a street may be a list of lines or one string).
    pub addresses: Vec<(String, Value)>,
    /// The order's comments (its status history), oldest first.
    pub comments: Vec<Value>,
    /// The order's lines, as the store holds them.
    pub items: Vec<Value>,
}

/// Stores send some integers as strings (category ids, EAV values): accept both.
pub fn lenient_u64<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let value = Value::deserialize(d)?;
    match &value {
        Value::Number(n) => n
            .as_u64()
            .ok_or_else(|| serde::de::Error::custom("not an unsigned integer")),
        Value::String(s) => s.trim().parse().map_err(serde::de::Error::custom),
        _ => Err(serde::de::Error::custom("expected an integer")),
    }
}

fn lenient_i64<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    let value = Value::deserialize(d)?;
    match &value {
        Value::Number(n) => n
            .as_i64()
            .ok_or_else(|| serde::de::Error::custom("not an integer")),
        Value::String(s) => s.trim().parse().map_err(serde::de::Error::custom),
        Value::Null => Ok(0),
        _ => Err(serde::de::Error::custom("expected an integer")),
    }
}

/// What one operation of the port gives back, later.
pub type Answer<'a, T> = BoxFuture<'a, Result<T, UpstreamError>>;

/// A store behind the gateway. Every operation is one need of a resource or of the
/// machinery under them; an adapter may make several calls (or none) for one.
pub trait Backend: Send + Sync + std::fmt::Debug {
    /// The code of the store view reads default to.
    fn default_store(&self) -> &str;
    /// The circuit breaker's state, for `/readyz` and the metrics.
    fn circuit_state(&self) -> CircuitState;
    fn circuit_probe(&self) -> Arc<dyn Fn() -> CircuitState + Send + Sync>;
    /// One cheap call that shows the store answers.
    fn ping(&self) -> Answer<'_, ()>;
    /// Some(why) when the store answers but refuses the gateway's credentials (a wrong
    /// integration token: every call would fail), None otherwise (`/readyz`).
    fn credentials_refused(&self) -> BoxFuture<'_, Option<String>>;

    // Store views, their configuration, the directory: raw, for the cache, and read by the
    // adapter.
    fn store_views(&self) -> Answer<'_, Bytes>;
    fn read_store_views(&self, raw: &[u8]) -> Result<Vec<StoreView>, UpstreamError>;
    fn store_configs(&self) -> Answer<'_, Bytes>;
    fn read_store_configs(&self, raw: &[u8]) -> Result<Vec<StoreConfig>, UpstreamError>;
    fn countries(&self) -> Answer<'_, Bytes>;
    fn read_countries(&self, raw: &[u8]) -> Result<Vec<Country>, UpstreamError>;
    /// Reads a page of a product search or of stock items (raw, as cached).
    fn read_list(&self, raw: &[u8]) -> Result<SearchResult<Value>, UpstreamError>;

    // Products.
    fn product<'a>(&'a self, scope: Scope<'a>, sku: &'a str) -> Answer<'a, Bytes>;
    fn search_products<'a>(
        &'a self,
        scope: Scope<'a>,
        criteria: &'a SearchCriteria,
    ) -> Answer<'a, Bytes>;
    /// A page of the products a shopper of a store view may see (enabled, visible in the
    /// catalog or search, on the view's website, and whatever else the store's storefront
    /// leaves out) matching `criteria`. `website_id`: the store view's website, when the
    /// lists of a store view are asked for (None: the default store's lists).
    fn search_shopper_products<'a>(
        &'a self,
        scope: Scope<'a>,
        website_id: Option<u64>,
        criteria: &'a SearchCriteria,
    ) -> Answer<'a, Bytes>;
    fn skus_of<'a>(&'a self, ids: &'a [u64]) -> Answer<'a, Vec<IdSku>>;
    /// The storefront's view of products (final and tax-inclusive prices, salability,
    /// URLs) in a store view and currency: an anonymous shopper's (the NOT LOGGED IN
    /// group), or, given a customer's [`StoreSession`] and when the store can
    /// ([`Backend::renders_for_customers`]), that customer's. A session the store no longer
    /// takes is its 401 or 403.
    fn render_info<'a>(
        &'a self,
        store_id: u64,
        currency: &'a str,
        criteria: &'a SearchCriteria,
        customer: Option<&'a StoreSession>,
    ) -> Answer<'a, Bytes>;
    /// Does [`Backend::render_info`] render for a customer's session (their group's prices,
    /// their tax), or only anonymously (the gateway then works out a group's tiers itself)?
    fn renders_for_customers(&self) -> bool {
        false
    }
    /// The session to keep for a customer who signed in with [`Backend::customer_token`]'s
    /// token; `None` when [`Backend::render_info`] has no use for one.
    fn store_session(&self, _customer_id: u64, _customer_token: &str) -> Option<StoreSession> {
        None
    }
    /// The quantity tiers a rendering holds, as the store computed them for whom it
    /// rendered (`None`: the rendering has none; the gateway works them out).
    fn read_render_tiers(&self, _render: &Value) -> Option<Vec<RenderedTier>> {
        None
    }
    /// The products of a [`Backend::render_info`] answer, one record each.
    fn read_render_items(&self, raw: &[u8]) -> Result<Vec<Value>, UpstreamError>;
    /// The fields of a product record that hold group or tier prices (a view that shows
    /// one depends on the caller's customer group).
    fn price_fields(&self) -> &'static [&'static str];
    /// Writes group and tier prices (all of one record's) into a product record about to be
    /// saved, in the store's shape.
    fn put_tier_prices(&self, product: &mut Value, tiers: &[TierPrice]);
    /// The group and tier prices of a product record.
    fn read_tier_prices(&self, product: &Value) -> Vec<TierPrice>;
    /// Removes from a product record every group or tier price `keep` refuses, wherever the
    /// store holds them (a shopper's record must hold no other group's price).
    fn keep_tier_prices(&self, product: &mut Value, keep: &dyn Fn(&TierPrice) -> bool);
    /// The final price without and with tax of a storefront rendering (as
    /// [`Backend::read_render_items`] gave it).
    fn read_final_prices(&self, render: &Value) -> (Option<f64>, Option<f64>);
    /// A category's products in its order; `store_view`: as that store view lists them (a
    /// store that indexes anchor categories per view adds their children's products), else
    /// the category's own.
    fn category_products<'a>(
        &'a self,
        category_id: u64,
        store_view: Option<&'a str>,
    ) -> Answer<'a, Vec<CategoryLink>>;
    fn create_product(&self, product: Value) -> Answer<'_, Value>;
    /// Changes a product. `prices` says which price lists the client sent: a list it did
    /// not send keeps its entries (where a store keeps both in one list, the adapter reads
    /// the other's entries first).
    fn update_product<'a>(
        &'a self,
        scope: Scope<'a>,
        sku: &'a str,
        product: Value,
        prices: SentPrices,
    ) -> Answer<'a, Value>;
    /// Is a product record on a website? True when the record does not say.
    fn on_website(&self, product: &Value, website_id: u64) -> bool;
    /// Puts a new product record (before [`Backend::create_product`]) on a website.
    fn place_on_website(&self, product: &mut Value, website_id: u64);
    fn delete_product<'a>(&'a self, sku: &'a str) -> Answer<'a, ()>;

    // Images.
    /// A product with its media gallery as a store view sees it.
    fn product_in<'a>(
        &'a self,
        scope: Scope<'a>,
        sku: &'a str,
        store_id: Option<u64>,
    ) -> Answer<'a, Bytes>;
    /// The images of a product record (as [`Backend::product_in`] gave it), videos left out.
    fn read_images(&self, product: &Value) -> Vec<Image>;
    /// Adds an image; its id. Through a store view the values are that view's.
    fn add_image<'a>(&'a self, scope: Scope<'a>, sku: &'a str, image: NewImage) -> Answer<'a, u64>;
    /// Changes an image (`existing`, as [`Backend::read_images`] gave it in that scope).
    fn update_image<'a>(
        &'a self,
        scope: Scope<'a>,
        sku: &'a str,
        existing: &'a Image,
        change: ImageChange,
    ) -> Answer<'a, ()>;
    /// Removes an image: from the product through [`Scope::All`], from one store view's
    /// showing through [`Scope::Store`] (excluded there, in no role).
    fn remove_image<'a>(
        &'a self,
        scope: Scope<'a>,
        sku: &'a str,
        existing: &'a Image,
    ) -> Answer<'a, ()>;
    /// When a failed image write was the request's fault, which fault.
    fn image_refusal(&self, error: &UpstreamError) -> Option<ImageRefusal>;
    /// The attributes of an attribute set, raw for the cache.
    fn attribute_set_attributes(&self, set_id: u64) -> Answer<'_, Bytes>;
    /// Can products of this attribute set (as [`Backend::attribute_set_attributes`] gave
    /// it) hold images at all?
    fn read_takes_images(&self, raw: &[u8]) -> Result<bool, UpstreamError>;

    // Stock items.
    fn stock_item<'a>(&'a self, sku: &'a str) -> Answer<'a, Bytes>;
    /// A page of stock items whose quantity is at most `max_qty` (every item: `None`).
    fn stock_items_page<'a>(
        &'a self,
        max_qty: Option<&'a str>,
        page: u32,
        size: u32,
    ) -> Answer<'a, Bytes>;
    fn update_stock_item<'a>(
        &'a self,
        sku: &'a str,
        item_id: u64,
        changes: Value,
    ) -> Answer<'a, ()>;

    // Customers and their addresses; sign-in checks.
    /// Checks a customer's credentials; gives a token to act as that customer.
    fn customer_token<'a>(&'a self, username: &'a str, password: &'a str) -> Answer<'a, String>;
    /// The customer a token from [`Backend::customer_token`] belongs to.
    fn customer_me<'a>(&'a self, customer_token: &'a str) -> Answer<'a, Value>;
    fn customer(&self, id: u64) -> Answer<'_, Value>;
    fn search_customers<'a>(
        &'a self,
        criteria: &'a SearchCriteria,
    ) -> Answer<'a, SearchResult<Value>>;
    fn create_customer<'a>(&'a self, customer: Value, password: &'a str) -> Answer<'a, Value>;
    fn save_customer(&self, id: u64, customer: Value) -> Answer<'_, Value>;
    fn delete_customer(&self, id: u64) -> Answer<'_, ()>;
    /// An address by id. With the id of its customer (`customer_id`) where the store says
    /// it; an OpenMage address does not, and carries its own default flags instead.
    fn address(&self, id: u64) -> Answer<'_, Value>;
    /// A customer record's addresses (as [`Backend::customer`] gave it), each with its
    /// default flags as booleans (`default_billing`, `default_shipping`).
    fn addresses_of(&self, customer: &Value) -> Vec<Value>;
    /// A customer record's default billing and shipping address ids.
    fn default_addresses(&self, customer: &Value) -> (Option<u64>, Option<u64>);
    /// Writes an address's region into its fields, in the store's shape.
    fn set_region(&self, fields: &mut serde_json::Map<String, Value>, region: RegionChoice<'_>);
    /// For a store that writes addresses by saving the customer: the customer to save,
    /// with one address changed or added as `edit` says, every other as it came.
    fn customer_with_address(&self, customer: &Value, edit: &AddressEdit) -> Value;
    /// The id a customer save (its answer, `saved`) gave a new address: the one not among
    /// `before`; should several be new, the one holding what was `sent`.
    fn new_address_id(
        &self,
        saved: &Value,
        before: &std::collections::HashSet<u64>,
        sent: &Value,
    ) -> Option<u64>;
    /// True: the store adds and changes one address at a time ([`Backend::add_address`],
    /// [`Backend::update_address`]) and checks countries and regions itself. False: an
    /// address is written by saving its whole customer ([`Backend::save_customer`]), and the
    /// gateway checks it against [`Backend::countries`] first (Magento 2).
    fn writes_addresses(&self) -> bool;
    /// True: a single address record ([`Backend::address`]) is the whole answer, its own
    /// default flags and dates in the store's single-record form (OpenMage), so a customer's
    /// own address is read that way once it is known to be theirs. False: an address's
    /// defaults live on its customer's record (Magento 2).
    fn addresses_stand_alone(&self) -> bool {
        false
    }
    /// Adds an address (the address mapping's write fields) to a customer; its id.
    fn add_address(&self, customer_id: u64, address: Value) -> Answer<'_, u64>;
    /// Changes an address's fields.
    fn update_address(&self, id: u64, address: Value) -> Answer<'_, ()>;
    fn delete_address(&self, id: u64) -> Answer<'_, ()>;

    // Orders.
    fn search_orders<'a>(&'a self, criteria: &'a SearchCriteria)
    -> Answer<'a, SearchResult<Value>>;
    fn order(&self, id: u64) -> Answer<'_, Value>;
    /// The taxes, addresses and comments of an order record (as [`Backend::order`] or
    /// [`Backend::search_orders`] gave it).
    fn order_parts(&self, order: &Value) -> OrderParts;
    /// An order's comments (its status history), oldest first.
    fn order_comments(&self, order_id: u64) -> Answer<'_, Vec<Value>>;
    /// Adds a comment to an order; the new comment's id.
    fn add_order_comment(&self, order_id: u64, comment: Value) -> Answer<'_, u64>;
    /// One comment by its id, whichever order it is on; `None` when the store has none.
    fn order_comment(&self, comment_id: u64) -> Answer<'_, Option<Value>>;

    // A product's categories and websites (the original's `/products/:id/categories` and
    // `/products/:id/websites`).
    /// Where a product record (as [`Backend::product`] gave it) is assigned.
    fn read_assignments(&self, product: &Value) -> Assignments;
    /// A category, raw for the cache; an error with status 404 when there is none.
    fn category(&self, id: u64) -> Answer<'_, Bytes>;
    fn read_category(&self, raw: &[u8]) -> Result<Category, UpstreamError>;
    /// The websites, raw for the cache.
    fn websites(&self) -> Answer<'_, Bytes>;
    /// The ids of the websites a product can be in.
    fn read_websites(&self, raw: &[u8]) -> Result<Vec<u64>, UpstreamError>;
    fn assign_category<'a>(&'a self, category_id: u64, sku: &'a str) -> Answer<'a, ()>;
    fn unassign_category<'a>(&'a self, category_id: u64, sku: &'a str) -> Answer<'a, ()>;
    fn assign_website<'a>(&'a self, sku: &'a str, website_id: u64) -> Answer<'a, ()>;
    fn unassign_website<'a>(&'a self, sku: &'a str, website_id: u64) -> Answer<'a, ()>;
}
