//! Builds the starting store from `fixtures/sandbox/*.json`, compiled into the binary.
//!
//! Products and store-view overrides go through the same save code as REST writes, so the
//! seed is stored exactly as a client's write would be; gallery files and ids are pinned so
//! the fixture README can promise them. Generated benchmark products are appended after the
//! seed with SKUs `GEN-000001`, ...

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::model::attributes::{CatalogConfig, IMAGE_ROLES};
use crate::model::category::Category;
use crate::model::customer::{self, Address, Customer};
use crate::model::directory::Directory;
use crate::model::image;
use crate::model::media::{self, MediaEntry, MediaValues};
use crate::model::product::Product;
use crate::model::product_save;
use crate::model::store::{ADMIN_STORE_ID, Stores};
use crate::state::Db;
use crate::webapi::clock;
use crate::webapi::input;

const STORE_JSON: &str = include_str!("../../../../fixtures/sandbox/store.json");
const CATALOG_JSON: &str = include_str!("../../../../fixtures/sandbox/catalog_config.json");
const DIRECTORY_JSON: &str = include_str!("../../../../fixtures/sandbox/directory.json");
const CATEGORIES_JSON: &str = include_str!("../../../../fixtures/sandbox/categories.json");
const PRODUCTS_JSON: &str = include_str!("../../../../fixtures/sandbox/products.json");
const OVERRIDES_JSON: &str = include_str!("../../../../fixtures/sandbox/store_view_overrides.json");
const CUSTOMERS_JSON: &str = include_str!("../../../../fixtures/sandbox/customers.json");
const ORDERS_JSON: &str = include_str!("../../../../fixtures/sandbox/orders.json");

/// Timestamp of generated products, so runs are reproducible.
const GENERATED_AT: &str = "2024-01-01 00:00:00";

#[derive(Deserialize)]
struct CustomerFixture {
    customer: Map<String, Value>,
    password: String,
}

fn parse<T: serde::de::DeserializeOwned>(name: &str, text: &str) -> Result<T, String> {
    serde_json::from_str(text).map_err(|e| format!("fixture {name}: {e}"))
}

fn api(context: &str, error: crate::webapi::error::ApiError) -> String {
    format!("{context}: {} {:?}", error.message, error.parameters)
}

fn timestamp(map: &Map<String, Value>, key: &str) -> Option<i64> {
    map.get(key)
        .and_then(Value::as_str)
        .and_then(clock::parse_datetime)
}

/// The whole seeded store plus `generated_products` extra simple products.
pub(crate) fn build(generated_products: usize) -> Result<Db, String> {
    let mut db = empty()?;
    seed_products(&mut db)?;
    seed_overrides(&mut db)?;
    seed_customers(&mut db)?;
    let orders: Vec<Value> = parse("orders.json", ORDERS_JSON)?;
    seed_orders(&mut db, orders, "orders.json")?;
    generate_products(&mut db, generated_products);
    Ok(db)
}

/// The fixtures' stores, directory, categories and catalog configuration, with another
/// store's products, customers and orders (`crate::Seed`). A record the sandbox refuses (an
/// address in a country it does not list, say) is left out and named in the second value.
pub(crate) fn build_from(from: &crate::Seed) -> Result<(Db, Vec<String>), String> {
    let mut db = empty()?;
    let mut skipped = Vec::new();
    let files: HashMap<String, Arc<[u8]>> = from
        .media_files
        .iter()
        .map(|(file, bytes)| (file.clone(), Arc::from(bytes.clone().into_boxed_slice())))
        .collect();
    for product in &from.products {
        let Some(product) = product.as_object().cloned() else {
            continue;
        };
        if let Err(why) = save_products(&mut db, vec![product], Some(&files), "seed") {
            skipped.push(why);
        }
    }
    db.next_product_id = db.products.keys().max().map_or(1, |max| max + 1);
    for customer in &from.customers {
        let mut customer = customer.clone();
        name_regions(&db, &mut customer);
        let saved = serde_json::from_value::<CustomerFixture>(customer)
            .map_err(|e| format!("seed: a customer: {e}"))
            .and_then(|fixture| save_customers(&mut db, vec![fixture]));
        if let Err(why) = saved {
            skipped.push(why);
        }
    }
    seed_orders(&mut db, from.orders.clone(), "seed")?;
    Ok((db, skipped))
}

/// An address's region given by its name only (what another store's API shows) gets the id
/// the directory has for that name, as a client of Magento 2 would send it.
fn name_regions(db: &Db, customer: &mut Value) {
    let addresses = customer
        .pointer_mut("/customer/addresses")
        .and_then(Value::as_array_mut);
    for address in addresses.into_iter().flatten() {
        let country = address["country_id"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let Some(name) = address.pointer("/region/region").and_then(Value::as_str) else {
            continue;
        };
        let known = db.directory.country(&country).and_then(|c| {
            c.available_regions
                .iter()
                .find(|r| r.name.eq_ignore_ascii_case(name) || r.code.eq_ignore_ascii_case(name))
        });
        if let Some(region) = known {
            address["region"] = serde_json::json!({
                "region_id": region.id,
                "region_code": region.code,
                "region": region.name,
            });
        }
    }
}

fn seed_orders(db: &mut Db, orders: Vec<Value>, source: &str) -> Result<(), String> {
    for order in orders {
        let id = order
            .get("entity_id")
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("{source}: order without entity_id"))?;
        db.orders.insert(id, order);
    }
    Ok(())
}

fn empty() -> Result<Db, String> {
    let categories: Vec<Category> = parse("categories.json", CATEGORIES_JSON)?;
    Ok(Db {
        stores: parse::<Stores>("store.json", STORE_JSON)?,
        directory: parse::<Directory>("directory.json", DIRECTORY_JSON)?,
        catalog: parse::<CatalogConfig>("catalog_config.json", CATALOG_JSON)?,
        categories: categories.into_iter().map(|c| (c.id, c)).collect(),
        products: BTreeMap::new(),
        sku_index: HashMap::new(),
        next_product_id: 1,
        next_media_id: 1,
        next_option_id: 1,
        next_option_value_id: 1,
        media_files: HashMap::new(),
        customers: BTreeMap::new(),
        next_customer_id: 1,
        next_address_id: 1,
        customer_tokens: HashMap::new(),
        orders: BTreeMap::new(),
    })
}

fn seed_products(db: &mut Db) -> Result<(), String> {
    let products: Vec<Map<String, Value>> = parse("products.json", PRODUCTS_JSON)?;
    save_products(db, products, None, "products.json")
}

/// Products saved as a client's write would be, their ids and gallery pinned. The gallery's
/// files are `files`' when given (a missing one is a solid PNG), else small solid PNGs.
fn save_products(
    db: &mut Db,
    products: Vec<Map<String, Value>>,
    files: Option<&HashMap<String, Arc<[u8]>>>,
    source: &str,
) -> Result<(), String> {
    // Seed images are small solid PNGs; one per colour is enough.
    let palette: [[u8; 3]; 4] = [[196, 64, 52], [52, 120, 196], [64, 160, 90], [220, 170, 40]];
    for mut input in products {
        let sku = input
            .get("sku")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let id = input
            .get("id")
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("{source}: {sku} has no id"))?;
        let gallery = input.remove("media_gallery_entries");
        input.remove("id");
        db.next_product_id = id;
        let now = timestamp(&input, "created_at").unwrap_or_else(clock::now);
        product_save::save(db, &input, ADMIN_STORE_ID, now).map_err(|e| api(&sku, e))?;
        let product = db
            .products
            .get_mut(&id)
            .ok_or_else(|| format!("{source}: {sku} was not stored under id {id}"))?;
        product.created_at = now;
        product.updated_at = timestamp(&input, "updated_at").unwrap_or(now);
        let mut product_files = Vec::new();
        for entry in gallery
            .as_ref()
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let entry = entry
                .as_object()
                .ok_or_else(|| format!("{source}: {sku} gallery entry is not an object"))?;
            let media_id = entry
                .get("id")
                .and_then(Value::as_u64)
                .ok_or_else(|| format!("{source}: {sku} gallery entry without id"))?;
            let file = entry
                .get("file")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("{source}: {sku} gallery entry without file"))?
                .to_string();
            product.media.push(MediaEntry {
                id: media_id,
                media_type: "image".into(),
                file: file.clone(),
                defaults: MediaValues {
                    label: entry
                        .get("label")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    position: entry.get("position").and_then(Value::as_i64),
                    disabled: entry.get("disabled").and_then(Value::as_bool),
                },
                stores: BTreeMap::new(),
                video_content: None,
            });
            for role in entry
                .get("types")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                if IMAGE_ROLES.contains(&role) {
                    product.roles.insert(role.to_string(), file.clone());
                }
            }
            db.next_media_id = db.next_media_id.max(media_id + 1);
            product_files.push(file);
        }
        for (index, file) in product_files.into_iter().enumerate() {
            let bytes = match files.and_then(|f| f.get(&file)) {
                Some(bytes) => bytes.clone(),
                None => {
                    let png =
                        image::solid_png(64, 64, palette[(id as usize + index) % palette.len()]);
                    Arc::from(png.into_boxed_slice())
                }
            };
            db.media_files.insert(file, bytes);
        }
    }
    db.next_product_id = db.products.keys().max().map_or(1, |max| max + 1);
    Ok(())
}

/// Store-view values (french names, image labels) written like `PUT /rest/french/V1/...`.
fn seed_overrides(db: &mut Db) -> Result<(), String> {
    let overrides: BTreeMap<String, Vec<Map<String, Value>>> =
        parse("store_view_overrides.json", OVERRIDES_JSON)?;
    for (code, products) in overrides {
        let store_id = db
            .stores
            .by_code(&code)
            .map(|s| s.id)
            .ok_or_else(|| format!("store_view_overrides.json: unknown store {code}"))?;
        for mut input in products {
            let sku = input
                .get("sku")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let gallery = input.remove("media_gallery_entries");
            let id = db
                .product_id_by_sku(&sku)
                .ok_or_else(|| format!("store_view_overrides.json: unknown sku {sku}"))?;
            let updated_at = db.products.get(&id).map(|p| p.updated_at).unwrap_or(0);
            product_save::save(db, &input, store_id, updated_at).map_err(|e| api(&sku, e))?;
            let product = db
                .products
                .get_mut(&id)
                .ok_or_else(|| format!("store_view_overrides.json: {sku} vanished"))?;
            for entry in gallery
                .as_ref()
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let entry = entry
                    .as_object()
                    .ok_or("gallery override is not an object")?;
                let media_id = entry.get("id").and_then(Value::as_u64).unwrap_or(0);
                let index = product
                    .media
                    .iter()
                    .position(|e| e.id == media_id)
                    .ok_or_else(|| {
                        format!("store_view_overrides.json: {sku} has no image {media_id}")
                    })?;
                media::update_entry(product, index, entry, store_id).map_err(|e| api(&sku, e))?;
            }
        }
    }
    Ok(())
}

fn seed_customers(db: &mut Db) -> Result<(), String> {
    let customers: Vec<CustomerFixture> = parse("customers.json", CUSTOMERS_JSON)?;
    save_customers(db, customers)
}

fn save_customers(db: &mut Db, customers: Vec<CustomerFixture>) -> Result<(), String> {
    for fixture in customers {
        let input = &fixture.customer;
        let email = input
            .get("email")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        customer::check_password(&fixture.password, &email).map_err(|e| api(&email, e))?;
        let id = input
            .get("id")
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("customers.json: {email} has no id"))?;
        let mut customer = Customer {
            id,
            group_id: input.get("group_id").and_then(Value::as_i64).unwrap_or(1),
            ..Customer::default()
        };
        customer.apply(input).map_err(|e| api(&email, e))?;
        customer.store_id = input
            .get("store_id")
            .and_then(Value::as_u64)
            .and_then(|s| u32::try_from(s).ok())
            .unwrap_or(1);
        customer.website_id = db.stores.website_of(customer.store_id);
        customer.created_in = db.stores.name_of(customer.store_id);
        customer.created_at = timestamp(input, "created_at").unwrap_or_else(clock::now);
        customer.updated_at = timestamp(input, "updated_at").unwrap_or(customer.created_at);
        customer::validate_identity(
            &customer.email,
            &customer.firstname,
            &customer.lastname,
            false,
        )
        .map_err(|e| api(&email, e))?;
        for entry in input
            .get("addresses")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let entry = entry
                .as_object()
                .ok_or("customers.json: address is not an object")?;
            let mut address = Address::default();
            let (billing, shipping) = address
                .apply(entry, &db.directory)
                .map_err(|e| api(&email, e))?;
            customer::address_errors(address.validate(&db.directory))
                .map_err(|e| api(&email, e))?;
            address.id = input::opt_int(entry, "id")
                .ok()
                .flatten()
                .and_then(|id| u64::try_from(id).ok())
                .ok_or_else(|| format!("customers.json: {email} address without id"))?;
            address.customer_id = id;
            if billing {
                customer.default_billing = Some(address.id);
            }
            if shipping {
                customer.default_shipping = Some(address.id);
            }
            db.next_address_id = db.next_address_id.max(address.id + 1);
            customer.addresses.push(address);
        }
        customer.password = Some(fixture.password);
        db.next_customer_id = db.next_customer_id.max(id + 1);
        db.customers.insert(id, customer);
    }
    Ok(())
}

/// Cheap simple products for load tests: in stock (except every 50th), prices 10.99-99.99.
fn generate_products(db: &mut Db, count: usize) {
    let created = clock::parse_datetime(GENERATED_AT).unwrap_or(0);
    for n in 1..=count {
        let id = db.next_product_id;
        db.next_product_id += 1;
        let sku = format!("GEN-{n:06}");
        let mut product = Product::new(id, sku.clone(), 4, "simple", created);
        product.generated = true;
        product.defaults.name = Some(format!("Generated Product {n:06}"));
        product.defaults.status = Some(1);
        product.defaults.visibility = Some(4);
        product.price = Some(10.0 + (n % 90) as f64 + 0.99);
        product.weight = Some(1.0);
        product.stock.qty = if n % 50 == 0 {
            0.0
        } else {
            (n % 500 + 1) as f64
        };
        product.stock.is_in_stock = product.stock.qty > 0.0;
        db.sku_index.insert(sku.to_lowercase(), id);
        db.products.insert(id, product);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_loads_and_ids_differ() {
        let db = build(3);
        assert!(db.is_ok(), "{:?}", db.err());
        let Ok(db) = db else { return };
        assert!(
            db.product_by_sku("24-mb01").is_some(),
            "sku lookups ignore case"
        );
        assert!(db.product_by_sku("GEN-000003").is_some());
        for product in db.products.values() {
            assert_ne!(product.stock.item_id, product.id);
        }
    }
}
