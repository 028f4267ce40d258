//! The product entity: its store-scoped values and its Magento JSON shape.
//!
//! Values live at the admin scope (`defaults`) with optional store-view overrides; reading a
//! product through a store view merges the two, as Magento's EAV loading does. Generated
//! benchmark products keep only what differs between them and derive the rest (URL key,
//! tax class, description) on the fly, so 100,000 of them stay cheap.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::model::attributes::{CatalogConfig, IMAGE_ROLES};
use crate::model::media::{self, MediaEntry};
use crate::model::stock::StockItem;
use crate::model::store::ADMIN_STORE_ID;
use crate::webapi::clock;
use crate::webapi::input::num;
use crate::webapi::search::{FieldValue, Scalar};

/// Product types Magento knows; anything else is saved as `simple` (the type factory's
/// fallback), so the sandbox does the same.
pub(crate) const PRODUCT_TYPES: [&str; 6] = [
    "simple",
    "virtual",
    "configurable",
    "bundle",
    "grouped",
    "downloadable",
];

pub(crate) fn known_type(type_id: &str) -> &'static str {
    PRODUCT_TYPES
        .iter()
        .copied()
        .find(|t| *t == type_id)
        .unwrap_or("simple")
}

/// Values that can differ per store view.
#[derive(Debug, Clone, Default)]
pub(crate) struct ScopedValues {
    pub(crate) name: Option<String>,
    pub(crate) status: Option<i64>,
    pub(crate) visibility: Option<i64>,
    pub(crate) custom: BTreeMap<String, Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CategoryLink {
    pub(crate) category_id: u64,
    pub(crate) position: i64,
}

#[derive(Debug, Clone)]
pub(crate) struct Product {
    pub(crate) id: u64,
    pub(crate) sku: String,
    pub(crate) attribute_set_id: i64,
    pub(crate) type_id: &'static str,
    pub(crate) created_at: i64,
    pub(crate) updated_at: i64,
    pub(crate) price: Option<f64>,
    pub(crate) weight: Option<f64>,
    pub(crate) defaults: ScopedValues,
    pub(crate) overrides: BTreeMap<u32, ScopedValues>,
    pub(crate) website_ids: Vec<i64>,
    pub(crate) category_links: Vec<CategoryLink>,
    pub(crate) options: Vec<Value>,
    pub(crate) tier_prices: Vec<Value>,
    pub(crate) product_links: Vec<Value>,
    pub(crate) media: Vec<MediaEntry>,
    /// Image role (`image`, `small_image`, ...) -> gallery file. Global in the sandbox.
    pub(crate) roles: BTreeMap<String, String>,
    pub(crate) configurable_options: Vec<Value>,
    pub(crate) configurable_links: Vec<u64>,
    pub(crate) stock: StockItem,
    pub(crate) generated: bool,
}

impl Product {
    pub(crate) fn new(
        id: u64,
        sku: String,
        attribute_set_id: i64,
        type_id: &'static str,
        now: i64,
    ) -> Self {
        Product {
            id,
            sku,
            attribute_set_id,
            type_id,
            created_at: now,
            updated_at: now,
            price: None,
            weight: None,
            defaults: ScopedValues::default(),
            overrides: BTreeMap::new(),
            website_ids: vec![1],
            category_links: Vec::new(),
            options: Vec::new(),
            tier_prices: Vec::new(),
            product_links: Vec::new(),
            media: Vec::new(),
            roles: BTreeMap::new(),
            configurable_options: Vec::new(),
            configurable_links: Vec::new(),
            stock: StockItem::new(id),
            generated: false,
        }
    }

    fn store_values(&self, store_id: u32) -> Option<&ScopedValues> {
        if store_id == ADMIN_STORE_ID {
            None
        } else {
            self.overrides.get(&store_id)
        }
    }

    pub(crate) fn name(&self, store_id: u32) -> Option<&str> {
        self.store_values(store_id)
            .and_then(|s| s.name.as_deref())
            .or(self.defaults.name.as_deref())
    }

    pub(crate) fn status(&self, store_id: u32) -> i64 {
        self.store_values(store_id)
            .and_then(|s| s.status)
            .or(self.defaults.status)
            .unwrap_or(1)
    }

    pub(crate) fn visibility(&self, store_id: u32) -> i64 {
        self.store_values(store_id)
            .and_then(|s| s.visibility)
            .or(self.defaults.visibility)
            .unwrap_or(4)
    }

    fn generated_value(&self, code: &str) -> Option<Value> {
        if !self.generated {
            return None;
        }
        match code {
            "url_key" => Some(json!(self.sku.to_lowercase())),
            "tax_class_id" => Some(json!("2")),
            "description" => Some(json!(format!("<p>Generated product {}.</p>", self.sku))),
            "options_container" => Some(json!("container2")),
            _ => None,
        }
    }

    /// A custom attribute value as seen from a store view: store override, then default,
    /// then the derived value of generated products.
    pub(crate) fn custom_value(&self, code: &str, store_id: u32) -> Option<Cow<'_, Value>> {
        self.store_values(store_id)
            .and_then(|s| s.custom.get(code))
            .or_else(|| self.defaults.custom.get(code))
            .map(Cow::Borrowed)
            .or_else(|| self.generated_value(code).map(Cow::Owned))
    }

    pub(crate) fn custom_text(&self, code: &str, store_id: u32) -> Option<String> {
        self.custom_value(code, store_id)
            .and_then(|v| match v.as_ref() {
                Value::String(s) => Some(s.clone()),
                Value::Null => None,
                other => Some(other.to_string()),
            })
    }

    pub(crate) fn url_key(&self, store_id: u32) -> Option<String> {
        self.custom_text("url_key", store_id)
    }

    /// `url_key(store_id) == key` without allocating, for uniqueness scans over big catalogs.
    pub(crate) fn has_url_key(&self, store_id: u32, key: &str) -> bool {
        let stored = self
            .store_values(store_id)
            .and_then(|s| s.custom.get("url_key"))
            .or_else(|| self.defaults.custom.get("url_key"));
        match stored {
            Some(value) => value.as_str() == Some(key),
            None => {
                self.generated
                    && self.sku.eq_ignore_ascii_case(key)
                    && !key.chars().any(char::is_uppercase)
            }
        }
    }

    pub(crate) fn tax_class_id(&self, store_id: u32) -> i64 {
        self.custom_text("tax_class_id", store_id)
            .and_then(|t| t.parse().ok())
            .unwrap_or(0)
    }

    pub(crate) fn has_required_options(&self) -> bool {
        self.type_id == "configurable"
            || self
                .options
                .iter()
                .any(|o| o.get("is_require").and_then(Value::as_bool) == Some(true))
    }

    /// Every custom attribute visible from a store view, in attribute-set order.
    pub(crate) fn custom_attributes(
        &self,
        catalog: &CatalogConfig,
        store_id: u32,
    ) -> Vec<(String, Value)> {
        let mut codes: Vec<&str> = self.defaults.custom.keys().map(String::as_str).collect();
        if let Some(store) = self.store_values(store_id) {
            codes.extend(store.custom.keys().map(String::as_str));
        }
        if self.generated {
            codes.extend([
                "url_key",
                "tax_class_id",
                "description",
                "options_container",
            ]);
        }
        codes.sort_unstable();
        codes.dedup();
        let mut out: Vec<(String, Value)> = codes
            .into_iter()
            .filter_map(|code| {
                self.custom_value(code, store_id)
                    .map(|v| (code.to_string(), v.into_owned()))
            })
            .collect();
        for role in IMAGE_ROLES {
            if let Some(file) = self.roles.get(role) {
                out.push((role.to_string(), json!(file)));
            }
        }
        if !self.category_links.is_empty() {
            let ids: Vec<String> = self
                .category_links
                .iter()
                .map(|l| l.category_id.to_string())
                .collect();
            out.push(("category_ids".into(), json!(ids)));
        }
        let has_options = !self.options.is_empty() || self.type_id == "configurable";
        out.push((
            "has_options".into(),
            json!(if has_options { "1" } else { "0" }),
        ));
        out.push((
            "required_options".into(),
            json!(if self.has_required_options() {
                "1"
            } else {
                "0"
            }),
        ));
        out.sort_by_key(|(code, _)| catalog.position(code));
        out
    }

    /// The product in Magento's `ProductInterface` shape. Lists leave `stock_item` out, as
    /// Magento's repository does.
    pub(crate) fn to_json(
        &self,
        catalog: &CatalogConfig,
        store_id: u32,
        with_stock: bool,
    ) -> Value {
        let mut out = Map::new();
        out.insert("id".into(), json!(self.id));
        out.insert("sku".into(), json!(self.sku));
        if let Some(name) = self.name(store_id) {
            out.insert("name".into(), json!(name));
        }
        out.insert("attribute_set_id".into(), json!(self.attribute_set_id));
        if let Some(price) = self.price {
            out.insert("price".into(), num(price));
        }
        out.insert("status".into(), json!(self.status(store_id)));
        out.insert("visibility".into(), json!(self.visibility(store_id)));
        out.insert("type_id".into(), json!(self.type_id));
        out.insert(
            "created_at".into(),
            json!(clock::format_datetime(self.created_at)),
        );
        out.insert(
            "updated_at".into(),
            json!(clock::format_datetime(self.updated_at)),
        );
        if let Some(weight) = self.weight {
            out.insert("weight".into(), num(weight));
        }
        let mut ext = Map::new();
        ext.insert("website_ids".into(), json!(self.website_ids));
        let links: Vec<Value> = self
            .category_links
            .iter()
            .map(|l| json!({"position": l.position, "category_id": l.category_id.to_string()}))
            .collect();
        ext.insert("category_links".into(), Value::Array(links));
        if with_stock {
            ext.insert("stock_item".into(), self.stock.to_json());
        }
        if self.type_id == "configurable" {
            ext.insert(
                "configurable_product_options".into(),
                Value::Array(self.configurable_options.clone()),
            );
            ext.insert(
                "configurable_product_links".into(),
                json!(self.configurable_links),
            );
        }
        out.insert("extension_attributes".into(), Value::Object(ext));
        out.insert(
            "product_links".into(),
            Value::Array(self.product_links.clone()),
        );
        out.insert("options".into(), Value::Array(self.options.clone()));
        out.insert(
            "media_gallery_entries".into(),
            Value::Array(media::gallery_json(self, store_id)),
        );
        out.insert("tier_prices".into(), Value::Array(self.tier_prices.clone()));
        let custom: Vec<Value> = self
            .custom_attributes(catalog, store_id)
            .into_iter()
            .map(|(code, value)| json!({"attribute_code": code, "value": value}))
            .collect();
        out.insert("custom_attributes".into(), Value::Array(custom));
        Value::Object(out)
    }

    /// A column for `searchCriteria` filtering and sorting; `None` for unknown fields.
    pub(crate) fn field(
        &self,
        catalog: &CatalogConfig,
        store_id: u32,
        field: &str,
    ) -> Option<FieldValue<'_>> {
        let one = FieldValue::One;
        Some(match field {
            "entity_id" | "id" => one(Scalar::Num(self.id as f64)),
            "sku" => one(Scalar::text(self.sku.as_str())),
            "name" => one(self.name(store_id).map_or(Scalar::Null, Scalar::text)),
            "status" => one(Scalar::Num(self.status(store_id) as f64)),
            "visibility" => one(Scalar::Num(self.visibility(store_id) as f64)),
            "type_id" => one(Scalar::text(self.type_id)),
            "attribute_set_id" => one(Scalar::Num(self.attribute_set_id as f64)),
            "price" => one(self.price.map_or(Scalar::Null, Scalar::Num)),
            "weight" => one(self.weight.map_or(Scalar::Null, Scalar::Num)),
            "created_at" => one(Scalar::text(clock::format_datetime(self.created_at))),
            "updated_at" => one(Scalar::text(clock::format_datetime(self.updated_at))),
            "category_id" | "category_ids" => FieldValue::Set(
                self.category_links
                    .iter()
                    .map(|l| Scalar::Num(l.category_id as f64))
                    .collect(),
            ),
            "website_id" | "website_ids" => FieldValue::Set(
                self.website_ids
                    .iter()
                    .map(|w| Scalar::Num(*w as f64))
                    .collect(),
            ),
            "quantity_and_stock_status" => {
                one(Scalar::Num(f64::from(u8::from(self.stock.is_in_stock))))
            }
            "has_options" | "required_options" | "image" | "small_image" | "thumbnail"
            | "swatch_image" => {
                let attributes = self.custom_attributes(catalog, store_id);
                one(attributes
                    .into_iter()
                    .find(|(code, _)| code == field)
                    .and_then(|(_, v)| v.as_str().map(|s| Scalar::text(s.to_string())))
                    .unwrap_or(Scalar::Null))
            }
            code => {
                let meta = catalog.attribute(code)?;
                let text = self.custom_text(code, store_id);
                // Integer and decimal EAV tables compare numerically in SQL.
                let numeric = matches!(meta.backend_type.as_str(), "int" | "decimal")
                    && meta.frontend_input != "multiselect";
                one(match text {
                    None => Scalar::Null,
                    Some(t) if numeric => {
                        t.trim().parse::<f64>().map_or(Scalar::text(t), Scalar::Num)
                    }
                    Some(t) => Scalar::text(t),
                })
            }
        })
    }
}

/// Fields a product `searchCriteria` may use; others are "Invalid attribute name".
pub(crate) fn is_known_field(catalog: &CatalogConfig, field: &str) -> bool {
    matches!(
        field,
        "entity_id"
            | "id"
            | "sku"
            | "name"
            | "status"
            | "visibility"
            | "type_id"
            | "attribute_set_id"
            | "price"
            | "weight"
            | "created_at"
            | "updated_at"
            | "category_id"
            | "category_ids"
            | "website_id"
            | "website_ids"
            | "store_id"
            | "quantity_and_stock_status"
            | "has_options"
            | "required_options"
    ) || catalog.attribute(field).is_some()
}
