//! `GET /V1/products-render-info`: storefront prices, URLs, images and buttons.
//!
//! It is the only REST call that reports final prices (special price inside its date window,
//! tier prices for guests) and prices with tax (`extension_attributes.tax_adjustments`, using
//! the rate of the product's tax class). Only enabled products visible in catalog or search
//! and assigned to the store's website are returned; there is no `total_count`.

use base64::Engine;
use serde_json::{Map, Value, json};

use crate::api::call::Call;
use crate::api::products;
use crate::model::directory::currency_symbol;
use crate::model::product::Product;
use crate::model::store::StoreUrls;
use crate::state::Db;
use crate::webapi::clock;
use crate::webapi::error::{ApiError, ApiResult, ErrorItem};
use crate::webapi::input::{self, num, round2};
use crate::webapi::messages;
use crate::webapi::search::SearchCriteria;

/// Customer group of anonymous shoppers, and Magento's "all groups" marker.
const GUEST_GROUP: i64 = 0;
const ALL_GROUPS: i64 = 32000;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Prices {
    pub(crate) final_price: f64,
    pub(crate) regular_price: f64,
    pub(crate) special_price: Option<f64>,
    pub(crate) minimal_price: f64,
    pub(crate) max_price: f64,
    pub(crate) max_regular_price: f64,
    pub(crate) minimal_regular_price: f64,
}

impl Prices {
    fn map(self, f: impl Fn(f64) -> f64) -> Prices {
        Prices {
            final_price: f(self.final_price),
            regular_price: f(self.regular_price),
            special_price: self.special_price.map(&f),
            minimal_price: f(self.minimal_price),
            max_price: f(self.max_price),
            max_regular_price: f(self.max_regular_price),
            minimal_regular_price: f(self.minimal_regular_price),
        }
    }

    fn to_json(self, symbol: &str) -> Value {
        let format = |v: f64| format!("<span class=\"price\">{symbol}{v:.2}</span>");
        json!({
            "final_price": num(self.final_price),
            "max_price": num(self.max_price),
            "max_regular_price": num(self.max_regular_price),
            "minimal_regular_price": num(self.minimal_regular_price),
            "special_price": self.special_price.map(num),
            "minimal_price": num(self.minimal_price),
            "regular_price": num(self.regular_price),
            "formatted_prices": {
                "final_price": format(self.final_price),
                "max_price": format(self.max_price),
                "minimal_price": format(self.minimal_price),
                "max_regular_price": format(self.max_regular_price),
                "minimal_regular_price": format(self.minimal_regular_price),
                "special_price": self.special_price.map(format),
                "regular_price": format(self.regular_price)
            }
        })
    }
}

/// The special price when today is inside its (optional) date window.
pub(crate) fn active_special_price(product: &Product, store_id: u32, today: &str) -> Option<f64> {
    let special: f64 = product
        .custom_text("special_price", store_id)?
        .parse()
        .ok()?;
    let from = product.custom_text("special_from_date", store_id);
    let to = product.custom_text("special_to_date", store_id);
    let date = |d: &String| d.get(..10).unwrap_or(d).to_string();
    if from.as_ref().is_some_and(|f| date(f).as_str() > today) {
        return None;
    }
    if to.as_ref().is_some_and(|t| date(t).as_str() < today) {
        return None;
    }
    Some(special)
}

fn guest_tiers(product: &Product) -> impl Iterator<Item = (f64, f64)> + '_ {
    product.tier_prices.iter().filter_map(|tier| {
        let group = tier.get("customer_group_id").and_then(Value::as_i64)?;
        if group != GUEST_GROUP && group != ALL_GROUPS {
            return None;
        }
        Some((
            tier.get("qty").and_then(Value::as_f64)?,
            tier.get("value").and_then(Value::as_f64)?,
        ))
    })
}

fn simple_prices(product: &Product, store_id: u32, today: &str) -> Prices {
    let regular = product.price.unwrap_or(0.0);
    let special = active_special_price(product, store_id, today);
    let mut final_price = special.map_or(regular, |s| s.min(regular));
    let mut minimal = final_price;
    for (qty, value) in guest_tiers(product) {
        if qty <= 1.0 {
            final_price = final_price.min(value);
        }
        minimal = minimal.min(value);
    }
    Prices {
        final_price,
        regular_price: regular,
        special_price: special,
        minimal_price: minimal.min(final_price),
        max_price: final_price,
        max_regular_price: regular,
        minimal_regular_price: regular,
    }
}

/// Prices as the storefront shows them; configurables aggregate their enabled children.
pub(crate) fn prices(db: &Db, product: &Product, store_id: u32, today: &str) -> Prices {
    if product.type_id != "configurable" {
        return simple_prices(product, store_id, today);
    }
    let children: Vec<Prices> = product
        .configurable_links
        .iter()
        .filter_map(|id| db.products.get(id))
        .filter(|child| child.status(store_id) == 1)
        .map(|child| simple_prices(child, store_id, today))
        .collect();
    if children.is_empty() {
        return simple_prices(product, store_id, today);
    }
    let min = |f: fn(&Prices) -> f64| children.iter().map(f).fold(f64::INFINITY, f64::min);
    let max = |f: fn(&Prices) -> f64| children.iter().map(f).fold(f64::NEG_INFINITY, f64::max);
    Prices {
        final_price: min(|p| p.final_price),
        regular_price: min(|p| p.regular_price),
        special_price: None,
        minimal_price: min(|p| p.minimal_price),
        max_price: max(|p| p.final_price),
        max_regular_price: max(|p| p.regular_price),
        minimal_regular_price: min(|p| p.regular_price),
    }
}

pub(crate) fn is_salable(db: &Db, product: &Product, store_id: u32) -> bool {
    if product.status(store_id) != 1 {
        return false;
    }
    if product.type_id == "configurable" {
        return product.stock.is_in_stock
            && product.configurable_links.iter().any(|id| {
                db.products
                    .get(id)
                    .is_some_and(|c| c.status(store_id) == 1 && c.stock.is_in_stock)
            });
    }
    product.stock.is_in_stock
}

/// A stable stand-in for the resize hash Magento puts in cached image URLs.
fn cache_hash(code: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in code.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!(
        "{hash:016x}{:016x}",
        hash.rotate_left(29) ^ 0x9e37_79b9_7f4a_7c15
    )
}

const IMAGE_VIEWS: [(&str, &str, u32, u32); 3] = [
    (
        "recently_viewed_products_grid_content_widget",
        "small_image",
        240,
        300,
    ),
    (
        "recently_viewed_products_list_content_widget",
        "small_image",
        270,
        340,
    ),
    (
        "recently_viewed_products_images_names_widget",
        "thumbnail",
        75,
        90,
    ),
];

fn images(product: &Product, store_id: u32, urls: &StoreUrls) -> Vec<Value> {
    let name = product.name(store_id).unwrap_or("").to_string();
    IMAGE_VIEWS
        .iter()
        .map(|(code, role, width, height)| {
            let file = product.roles.get(*role).or_else(|| product.roles.get("image"));
            let (url, label) = match file {
                Some(file) => {
                    let label = product
                        .media
                        .iter()
                        .find(|e| &e.file == file)
                        .and_then(|e| e.values(store_id).label)
                        .filter(|l| !l.is_empty())
                        .unwrap_or_else(|| name.clone());
                    (
                        format!("{}catalog/product/cache/{}{}", urls.media_url, cache_hash(code), file),
                        label,
                    )
                }
                None => (
                    format!(
                        "{}frontend/Magento/luma/en_US/Magento_Catalog/images/product/placeholder/{role}.jpg",
                        urls.static_url
                    ),
                    name.clone(),
                ),
            };
            json!({
                "url": url,
                "code": code,
                "height": height,
                "width": width,
                "label": label,
                "resized_width": width,
                "resized_height": height
            })
        })
        .collect()
}

fn button(action: &str, product_id: u64, uenc: &str, url: &str, required_options: bool) -> Value {
    let post_data =
        json!({"action": action, "data": {"product": product_id.to_string(), "uenc": uenc}});
    json!({
        "post_data": post_data.to_string(),
        "url": url,
        "required_options": required_options
    })
}

fn render(
    db: &Db,
    product: &Product,
    store_id: u32,
    currency: &str,
    urls: &StoreUrls,
    today: &str,
) -> Value {
    let symbol = currency_symbol(currency);
    let price = prices(db, product, store_id, today);
    let rate = db.catalog.tax_rate(product.tax_class_id(store_id));
    let with_tax = price.map(|v| round2(v * (1.0 + rate / 100.0)));
    let mut price_info = price.to_json(&symbol);
    let mut extension = Map::new();
    if let Some(msrp) = product
        .custom_text("msrp", store_id)
        .and_then(|m| m.parse::<f64>().ok())
    {
        extension.insert(
            "msrp".into(),
            json!({
                "msrp_price": format!("<span class=\"price\">{symbol}{msrp:.2}</span>"),
                "is_applicable": "",
                "is_shown_price_on_gesture": "",
                "msrp_message": "",
                "explanation_message": "Our price is lower than the manufacturer's \"minimum advertised price.\" As a result, we cannot show you the price in catalog or the product page."
            }),
        );
    }
    extension.insert("tax_adjustments".into(), with_tax.to_json(&symbol));
    extension.insert("weee_attributes".into(), json!([]));
    extension.insert(
        "weee_adjustment".into(),
        json!(format!(
            "<span class=\"price\">{symbol}{:.2}</span>",
            with_tax.final_price
        )),
    );
    if let Value::Object(info) = &mut price_info {
        info.insert("extension_attributes".into(), Value::Object(extension));
    }
    let url = format!(
        "{}{}.html",
        urls.base_url,
        product
            .url_key(store_id)
            .unwrap_or_else(|| product.id.to_string())
    );
    let uenc = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(url.as_bytes());
    let cart_url = format!(
        "{}checkout/cart/add/uenc/{uenc}/product/{}/",
        urls.base_url, product.id
    );
    let compare_action = format!("{}catalog/product_compare/add/", urls.base_url);
    let wishlist_action = format!("{}wishlist/index/add/", urls.base_url);
    json!({
        "add_to_cart_button": button(&cart_url, product.id, &uenc, &cart_url, product.has_required_options()),
        "add_to_compare_button": button(&compare_action, product.id, &uenc, &compare_action, false),
        "price_info": price_info,
        "images": images(product, store_id, urls),
        "url": url,
        "id": product.id,
        "name": product.name(store_id).unwrap_or(""),
        "type": product.type_id,
        "is_salable": if is_salable(db, product, store_id) { "1" } else { "" },
        "store_id": store_id,
        "currency_code": currency,
        "extension_attributes": {
            "review_html": "",
            "wishlist_button": button(&wishlist_action, product.id, &uenc, &wishlist_action, false)
        }
    })
}

/// `GET /V1/products-render-info?searchCriteria...&storeId=N&currencyCode=USD`
pub(crate) fn list(call: &Call) -> ApiResult<Value> {
    let criteria = SearchCriteria::from_query(&call.query)?;
    let store_param = call.query_str("storeId");
    let currency = call.query_str("currencyCode");
    let mut missing = Vec::new();
    if criteria.is_none() {
        missing.push(ErrorItem::required("searchCriteria"));
    }
    if store_param.is_none() {
        missing.push(ErrorItem::required("storeId"));
    }
    if currency.is_none() {
        missing.push(ErrorItem::required("currencyCode"));
    }
    let (Some(criteria), Some(store_param), Some(currency)) = (criteria, store_param, currency)
    else {
        return Err(ApiError::aggregate(missing));
    };
    let store_id = input::to_int(&json!(store_param))?;
    let db = call.db();
    let store = u32::try_from(store_id)
        .ok()
        .and_then(|id| db.stores.by_id(id))
        .ok_or_else(|| ApiError::not_found(messages::STORE_NOT_FOUND))?;
    let store_id = store.id;
    let website = i64::from(store.website_id);
    let (page, _) = products::search(&db, &criteria, store_id, |p| {
        p.status(store_id) == 1
            && matches!(p.visibility(store_id), 2..=4)
            && p.website_ids.contains(&website)
    })?;
    let urls = StoreUrls::new(&call.origin);
    let today = clock::format_date(clock::now());
    let items: Vec<Value> = page
        .into_iter()
        .map(|p| render(&db, p, store_id, currency, &urls, &today))
        .collect();
    Ok(json!({ "items": items }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_hash_is_stable_hex() {
        let hash = cache_hash("recently_viewed_products_grid_content_widget");
        assert_eq!(hash.len(), 32);
        assert!(hash.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(
            hash,
            cache_hash("recently_viewed_products_grid_content_widget")
        );
    }
}
