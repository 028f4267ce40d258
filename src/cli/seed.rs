//! `storegate sandbox --seed-from URL`: a store's catalog, stock, images, customers,
//! addresses and orders copied into a sandbox, so that a shop can rehearse the dual run
//! without a second store (docs/dual-run.md, "The rehearsal").
//!
//! The store is read through the gateway itself: a gateway over it (the serving back end's
//! kind and credentials, from the environment) is built in this process, and its API is
//! asked as Admin (and as Guest, for the fields only shoppers' views carry), so that
//! whatever kind of store it is (OpenMage or Magento 2), the port and the mappings read it.
//! What the API shows is written back in the sandbox's seed shapes (Magento 2's own,
//! `fixtures/sandbox/README.md`).
//!
//! Copied: products (names, SKUs, types simple and virtual, prices, special prices and their
//! dates, group and tier prices, weight, status, visibility, tax class, descriptions, meta
//! fields, URL keys, dates), their stock (quantity, in stock), their images (the files, labels,
//! positions, roles, excluded), customers (names, e-mail, group, dates), their addresses,
//! and orders with their lines and addresses. Not copied: passwords (each customer gets a
//! random one: sign-ins through the sandbox fail), configurable products' options and
//! children (copied as simple products), custom options, categories and their assignments
//! (the sandbox keeps its own), store views (one), attribute sets (every product in set 4),
//! and anything the API does not show.

use axum::body::Body;
use http::Request;
use serde_json::{Map, Value, json};
use storegate_sandbox::Seed;
use tower::ServiceExt;

use crate::config::{Config, Upstream};

/// Records read per page.
const PAGE: usize = 100;

/// Reads the store at `url` (through a gateway over it, `config` giving its kind and
/// credentials) into a sandbox seed.
pub async fn read(config: &Config, url: &str) -> Result<Seed, String> {
    let mut source = config.clone();
    let token = config
        .upstream
        .as_ref()
        .map(|u| u.token.clone())
        .unwrap_or_else(|| crate::config::Secret::new(""));
    source.upstream = Some(Upstream {
        url: url.trim_end_matches('/').to_owned(),
        token: token.clone(),
        oauth: config.upstream.as_ref().and_then(|u| u.oauth.clone()),
    });
    source.shadow = None;
    source.cache_ttl = std::time::Duration::ZERO;
    source.access_log = false;
    source.redis_url = None;
    source.shared_cache = false;
    source.data_dir = std::env::temp_dir().join(format!("storegate-seed-{}", std::process::id()));
    let mappings = crate::load_mappings(&source).map_err(|e| e.to_string())?;
    let key = random_text();
    let parts = crate::Parts {
        upstream_url: url.trim_end_matches('/').to_owned(),
        upstream_token: token.expose().to_owned(),
        admin_digests: vec![crate::auth::admin_key_digest(&key)],
        token_secret: random_text().into_bytes(),
        mappings,
    };
    let (router, _app) = crate::front::build(source, parts)?;
    let api = Api { router, key };
    let mut seed = Seed::default();
    let http = reqwest::Client::new();
    for listed in api.all("/products").await? {
        let Some(id) = number(&listed["entity_id"]).map(|n| n as u64) else {
            continue;
        };
        // The single record and the list's item show different fields (the list has the
        // special price and its dates): both.
        let mut admin = api.get(&format!("/products/{id}"), true).await?;
        if let (Some(single), Some(list)) = (admin.as_object_mut(), listed.as_object()) {
            for (name, value) in list {
                single.entry(name.clone()).or_insert_with(|| value.clone());
            }
        }
        let guest = api
            .get(&format!("/products/{id}"), false)
            .await
            .unwrap_or(Value::Null);
        let images = api
            .get(&format!("/products/{id}/images"), true)
            .await
            .unwrap_or(json!([]));
        let (product, files) = product(id, &admin, &guest, &images);
        for (file, url) in files {
            if let Some(bytes) = download(&http, &url).await {
                seed.media_files.push((file, bytes));
            }
        }
        seed.products.push(product);
    }
    for id in api.ids("/customers").await? {
        let record = api.get(&format!("/customers/{id}"), true).await?;
        let addresses = api
            .get(&format!("/customers/{id}/addresses"), true)
            .await
            .unwrap_or(json!([]));
        seed.customers.push(customer(&record, &addresses));
    }
    for order in api.all("/orders").await? {
        seed.orders.push(self::order(&order));
    }
    Ok(seed)
}

/// The gateway's API, in this process, as Admin (or Guest), in JSON.
struct Api {
    router: axum::Router,
    key: String,
}

impl Api {
    async fn get(&self, path: &str, admin: bool) -> Result<Value, String> {
        let mut request = Request::get(format!("/api/rest{path}"))
            .header("Accept", "application/json")
            .body(Body::empty())
            .map_err(|e| e.to_string())?;
        if admin {
            let bearer = format!("Bearer {}", self.key);
            request.headers_mut().insert(
                http::header::AUTHORIZATION,
                bearer.parse().map_err(|_| "a bad key".to_owned())?,
            );
        }
        let response = self
            .router
            .clone()
            .oneshot(request)
            .await
            .unwrap_or_else(|never| match never {});
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), 64 * 1024 * 1024)
            .await
            .map_err(|e| e.to_string())?;
        let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if !status.is_success() {
            let message = value["messages"]["error"][0]["message"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            return Err(format!("GET {path}: {status} {message}"));
        }
        Ok(value)
    }

    /// Every record of a list, page after page (objects keyed by id or arrays).
    async fn all(&self, path: &str) -> Result<Vec<Value>, String> {
        let mut out = Vec::new();
        for page in 1.. {
            let list = self
                .get(&format!("{path}?limit={PAGE}&page={page}"), true)
                .await?;
            let items: Vec<Value> = match list {
                Value::Object(map) => map.into_iter().map(|(_, v)| v).collect(),
                Value::Array(items) => items,
                _ => Vec::new(),
            };
            let last = items.len() < PAGE;
            out.extend(items);
            if last {
                break;
            }
        }
        Ok(out)
    }

    async fn ids(&self, path: &str) -> Result<Vec<u64>, String> {
        Ok(self
            .all(path)
            .await?
            .iter()
            .filter_map(|r| number(&r["entity_id"]).map(|n| n as u64))
            .collect())
    }
}

/// A number the API writes as a string (`"34.0000"`) or a number.
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn int(value: &Value) -> Option<i64> {
    number(value).map(|n| n as i64)
}

fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A product as `products.json` holds one, and its gallery's files with their URLs.
fn product(
    id: u64,
    admin: &Value,
    guest: &Value,
    images: &Value,
) -> (Value, Vec<(String, String)>) {
    let mut custom = Vec::new();
    let mut attribute = |code: &str, value: Option<Value>| {
        if let Some(value) = value {
            custom.push(json!({"attribute_code": code, "value": value}));
        }
    };
    let from = |field: &str| {
        [admin, guest]
            .into_iter()
            .find_map(|v| text(&v[field]))
            .map(Value::String)
    };
    for field in [
        "url_key",
        "description",
        "short_description",
        "meta_title",
        "meta_description",
        "meta_keyword",
        "special_price",
        "special_from_date",
        "special_to_date",
        "news_from_date",
        "news_to_date",
        "country_of_manufacture",
        "tax_class_id",
        "msrp",
    ] {
        attribute(field, from(field));
    }
    let mut tier_prices = Vec::new();
    for tier in admin["tier_price"].as_array().into_iter().flatten() {
        tier_prices.push(json!({
            "customer_group_id": int(&tier["cust_group"]).unwrap_or(32000),
            "qty": number(&tier["price_qty"]).unwrap_or(1.0),
            "value": number(&tier["price"]).unwrap_or(0.0),
        }));
    }
    for group in admin["group_price"].as_array().into_iter().flatten() {
        tier_prices.push(json!({
            "customer_group_id": int(&group["cust_group"]).unwrap_or(0),
            "qty": 1,
            "value": number(&group["price"]).unwrap_or(0.0),
        }));
    }
    let stock = &admin["stock_data"];
    let type_id = match admin["type_id"].as_str() {
        Some("virtual") => "virtual",
        _ => "simple",
    };
    let mut files = Vec::new();
    let mut gallery = Vec::new();
    for (n, image) in images.as_array().into_iter().flatten().enumerate() {
        let Some(url) = image["url"].as_str() else {
            continue;
        };
        let file = gallery_file(url).unwrap_or_else(|| format!("/seed/{id}/{n}.png"));
        gallery.push(json!({
            "id": int(&image["id"]).unwrap_or(n as i64 + 1),
            "media_type": "image",
            "label": image["label"].clone(),
            "position": int(&image["position"]).unwrap_or(n as i64 + 1),
            "disabled": int(&image["exclude"]) == Some(1),
            "types": image["types"].clone(),
            "file": file,
        }));
        files.push((file, url.to_owned()));
    }
    let mut product = Map::new();
    product.insert("id".into(), json!(id));
    product.insert("sku".into(), admin["sku"].clone());
    product.insert("name".into(), admin["name"].clone());
    product.insert("attribute_set_id".into(), json!(4));
    product.insert("type_id".into(), json!(type_id));
    product.insert(
        "price".into(),
        json!(number(&admin["price"]).unwrap_or(0.0)),
    );
    product.insert("status".into(), json!(int(&admin["status"]).unwrap_or(1)));
    product.insert(
        "visibility".into(),
        json!(int(&admin["visibility"]).unwrap_or(4)),
    );
    if let Some(weight) = number(&admin["weight"]) {
        product.insert("weight".into(), json!(weight));
    }
    for date in ["created_at", "updated_at"] {
        if let Some(at) = text(&admin[date]) {
            product.insert(date.into(), json!(at));
        }
    }
    product.insert(
        "extension_attributes".into(),
        json!({
            "website_ids": [1],
            "stock_item": stock_item(stock),
        }),
    );
    product.insert("custom_attributes".into(), Value::Array(custom));
    product.insert("tier_prices".into(), Value::Array(tier_prices));
    product.insert("media_gallery_entries".into(), Value::Array(gallery));
    (Value::Object(product), files)
}

/// The stock settings the API shows (`stock_data`), in Magento 2's types: flags as booleans,
/// `backorders` a number, quantities as numbers.
fn stock_item(stock: &Value) -> Value {
    let mut out = Map::new();
    for (name, value) in stock.as_object().into_iter().flatten() {
        let flag = name.starts_with("use_config_")
            || name.starts_with("is_")
            || name == "manage_stock"
            || name == "enable_qty_increments";
        let converted = match (flag, name.as_str()) {
            (true, _) => int(value).map(|n| json!(n == 1)),
            (false, "backorders") => int(value).map(|n| json!(n)),
            _ => number(value).map(|n| json!(n)),
        };
        if let Some(converted) = converted {
            out.insert(name.clone(), converted);
        }
    }
    out.entry("qty").or_insert(json!(0.0));
    out.entry("is_in_stock").or_insert(json!(false));
    Value::Object(out)
}

/// `/m/b/mb01.png` from a media URL (`.../media/catalog/product[/cache/<hash>]/m/b/mb01.png`).
fn gallery_file(url: &str) -> Option<String> {
    let (_, rest) = url.split_once("/catalog/product")?;
    let rest = match rest.strip_prefix("/cache/") {
        Some(cached) => &cached[cached.find('/')?..],
        None => rest,
    };
    (rest.len() > 1).then(|| rest.to_owned())
}

async fn download(http: &reqwest::Client, url: &str) -> Option<Vec<u8>> {
    let response = http.get(url).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    response.bytes().await.ok().map(|b| b.to_vec())
}

/// Copies the `fields` of `record` that hold text into `into`, as strings.
fn copy_texts(record: &Value, fields: &[&str], into: &mut Map<String, Value>) {
    for &field in fields {
        if let Some(value) = text(&record[field]) {
            into.insert(field.into(), json!(value));
        }
    }
}

/// A customer as `customers.json` holds one, with a random password (passwords are not
/// copied: the store keeps only their hashes, and the API shows none).
fn customer(record: &Value, addresses: &Value) -> Value {
    let id = int(&record["entity_id"]).unwrap_or(0);
    let mut customer = Map::new();
    customer.insert("id".into(), json!(id));
    let fields = [
        "email",
        "firstname",
        "lastname",
        "prefix",
        "middlename",
        "suffix",
        "taxvat",
        "created_at",
        "updated_at",
    ];
    copy_texts(record, &fields, &mut customer);
    customer.insert(
        "group_id".into(),
        json!(int(&record["group_id"]).unwrap_or(1)),
    );
    customer.insert("website_id".into(), json!(1));
    customer.insert("store_id".into(), json!(1));
    if let Some(flag) = int(&record["disable_auto_group_change"]) {
        customer.insert("disable_auto_group_change".into(), json!(flag));
    }
    let list: Vec<Value> = addresses
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            let mut address = Map::new();
            address.insert("id".into(), json!(int(&a["entity_id"]).unwrap_or(0)));
            let fields = [
                "firstname",
                "lastname",
                "city",
                "postcode",
                "country_id",
                "telephone",
                "company",
                "prefix",
                "middlename",
                "suffix",
                "fax",
                "vat_id",
            ];
            copy_texts(a, &fields, &mut address);
            address.insert("street".into(), a["street"].clone());
            if let Some(region) = text(&a["region"]) {
                address.insert("region".into(), json!({ "region": region }));
            }
            address.insert(
                "default_billing".into(),
                json!(int(&a["is_default_billing"]) == Some(1)),
            );
            address.insert(
                "default_shipping".into(),
                json!(int(&a["is_default_shipping"]) == Some(1)),
            );
            Value::Object(address)
        })
        .collect();
    customer.insert("addresses".into(), Value::Array(list));
    json!({ "customer": customer, "password": format!("Seeded-{}-9", random_text()) })
}

/// An order as `orders.json` holds one (Magento 2's `OrderInterface`).
fn order(record: &Value) -> Value {
    let mut order = Map::new();
    order.insert(
        "entity_id".into(),
        json!(int(&record["entity_id"]).unwrap_or(0)),
    );
    let Value::Object(fields) = record else {
        return Value::Object(order);
    };
    for (name, value) in fields {
        match name.as_str() {
            "entity_id" | "addresses" | "order_items" | "tax_name" | "tax_rate" => {}
            "customer_id" => {
                match int(value) {
                    Some(id) => order.insert("customer_id".into(), json!(id)),
                    None => order.insert("customer_is_guest".into(), json!(1)),
                };
            }
            "payment_method" => {
                order.insert("payment".into(), json!({ "method": value }));
            }
            _ if name.contains("amount")
                || name.contains("total")
                || name.contains("subtotal")
                || name.ends_with("_rate") =>
            {
                if let Some(n) = number(value) {
                    order.insert(name.clone(), json!(n));
                }
            }
            _ => {
                if !value.is_null() {
                    order.insert(name.clone(), value.clone());
                }
            }
        }
    }
    if let Some(status) = record["status"].as_str() {
        order.insert("state".into(), json!(status));
    }
    let items: Vec<Value> = record["order_items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| {
            let mut out = Map::new();
            for (name, value) in item.as_object().into_iter().flatten() {
                let numeric =
                    !matches!(name.as_str(), "sku" | "name" | "created_at" | "updated_at");
                match (numeric, number(value)) {
                    (true, Some(n)) if name.ends_with("_id") => {
                        out.insert(name.clone(), json!(n as i64));
                    }
                    (true, Some(n)) => {
                        out.insert(name.clone(), json!(n));
                    }
                    (false, _) if !value.is_null() => {
                        out.insert(name.clone(), value.clone());
                    }
                    _ => {}
                }
            }
            Value::Object(out)
        })
        .collect();
    order.insert("items".into(), Value::Array(items));
    let mut shipping = None;
    for address in record["addresses"].as_array().into_iter().flatten() {
        let mut out = address.as_object().cloned().unwrap_or_default();
        if let Some(street) = out.get("street").and_then(Value::as_str) {
            let lines: Vec<Value> = street.split('\n').map(|l| json!(l)).collect();
            out.insert("street".into(), Value::Array(lines));
        }
        out.retain(|_, v| !v.is_null());
        match address["address_type"].as_str() {
            Some("shipping") => shipping = Some(Value::Object(out)),
            _ => {
                order.insert("billing_address".into(), Value::Object(out));
            }
        }
    }
    let mut extension = json!({});
    if let Some(address) = shipping {
        extension["shipping_assignments"] = json!([{ "shipping": { "address": address } }]);
    }
    if let (Some(title), Some(rate)) = (text(&record["tax_name"]), number(&record["tax_rate"])) {
        extension["applied_taxes"] = json!([{ "code": title, "title": title, "percent": rate }]);
    }
    order.insert("extension_attributes".into(), extension);
    Value::Object(order)
}

fn random_text() -> String {
    let mut bytes = [0u8; 12];
    getrandom::fill(&mut bytes).expect("the operating system's random generator");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gallery_files_come_from_media_urls() {
        for url in [
            "http://shop/media/catalog/product/m/b/mb01.png",
            "http://shop/media/catalog/product/cache/ab12/m/b/mb01.png",
        ] {
            assert_eq!(gallery_file(url).as_deref(), Some("/m/b/mb01.png"), "{url}");
        }
        assert_eq!(gallery_file("http://shop/img.png"), None);
    }
}
