//! `ProductRepository::save` semantics for `POST /V1/products` and `PUT /V1/products/{sku}`.
//!
//! Both upsert: an existing SKU (or body `id`) is updated, an unknown one created. Only the
//! fields sent change; arrays that are sent replace what is stored; `custom_attributes` merge
//! by code and unknown codes are dropped. A write through a store view stores store-scoped
//! values (name, status, visibility, description, url_key, ...) as that view's override,
//! which is Magento's well-known "my change does not show in the default store" trap; writes
//! through `/rest/all`, and every create, set the defaults. Validation happens on a copy, so a
//! refused save changes nothing.

use serde_json::{Map, Value, json};

use crate::model::attributes::{self, IMAGE_ROLES};
use crate::model::media;
use crate::model::product::{self, CategoryLink, Product, ScopedValues};
use crate::model::store::ADMIN_STORE_ID;
use crate::state::Db;
use crate::webapi::error::{ApiError, ApiResult, Params};
use crate::webapi::input;
use crate::webapi::messages;

const SKU_MAX_LENGTH: usize = 64;

fn scoped_mut(product: &mut Product, store_id: u32) -> &mut ScopedValues {
    if store_id == ADMIN_STORE_ID {
        &mut product.defaults
    } else {
        product.overrides.entry(store_id).or_default()
    }
}

fn attribute_empty(label: &str) -> ApiError {
    ApiError::bad_request_with(
        messages::ATTRIBUTE_VALUE_EMPTY,
        Params::List(vec![json!(label)]),
    )
}

fn unable_to_save() -> ApiError {
    ApiError::bad_request(messages::PRODUCT_UNABLE_TO_SAVE)
}

fn invalid_attribute_set() -> ApiError {
    ApiError::bad_request_with(
        messages::INVALID_PRODUCT_DATA,
        Params::List(vec![json!(messages::INVALID_ATTRIBUTE_SET)]),
    )
}

/// Saves a `product` body; answers the id of the created or updated product.
pub(crate) fn save(
    db: &mut Db,
    input: &Map<String, Value>,
    store_id: u32,
    now: i64,
) -> ApiResult<u64> {
    let sku = input::opt_string(input, "sku")?.map(|s| s.trim().to_string());
    let by_id = input::opt_int(input, "id")?
        .and_then(|id| u64::try_from(id).ok())
        .filter(|id| db.products.contains_key(id));
    let existing = by_id.or_else(|| sku.as_deref().and_then(|s| db.product_id_by_sku(s)));
    match existing {
        Some(id) => update(db, id, input, sku, store_id, now),
        None => create(db, input, sku, now),
    }
}

fn create(
    db: &mut Db,
    input: &Map<String, Value>,
    sku: Option<String>,
    now: i64,
) -> ApiResult<u64> {
    let set_id = input::opt_int(input, "attribute_set_id")?;
    if set_id.is_none_or(|id| db.catalog.attribute_set(id).is_none()) {
        return Err(invalid_attribute_set());
    }
    let type_id = product::known_type(&input::opt_string(input, "type_id")?.unwrap_or_default());
    let name = input::opt_string(input, "name")?.unwrap_or_default();
    if name.is_empty() {
        return Err(attribute_empty(&db.catalog.label("name")));
    }
    let sku = sku.unwrap_or_default();
    if sku.is_empty() {
        return Err(attribute_empty("sku"));
    }
    if sku.chars().count() > SKU_MAX_LENGTH {
        return Err(ApiError::bad_request_with(
            messages::SKU_TOO_LONG,
            Params::List(vec![json!(SKU_MAX_LENGTH)]),
        ));
    }
    if matches!(type_id, "simple" | "virtual" | "downloadable")
        && input::present(input, "price").is_none()
    {
        return Err(attribute_empty(&db.catalog.label("price")));
    }
    let id = db.next_product_id;
    let mut product = Product::new(id, sku, set_id.unwrap_or(4), type_id, now);
    product.defaults.status = Some(1);
    product.defaults.visibility = Some(4);
    // Creates write default values, whatever store view they come through.
    apply(db, &mut product, input, ADMIN_STORE_ID, now)?;
    if product.url_key(ADMIN_STORE_ID).is_none() {
        let key = attributes::format_url_key(product.name(ADMIN_STORE_ID).unwrap_or(""));
        product.defaults.custom.insert("url_key".into(), json!(key));
    }
    check_url_key(db, &product)?;
    db.next_product_id += 1;
    db.sku_index.insert(product.sku.to_lowercase(), id);
    db.products.insert(id, product);
    Ok(id)
}

fn update(
    db: &mut Db,
    id: u64,
    input: &Map<String, Value>,
    sku: Option<String>,
    store_id: u32,
    now: i64,
) -> ApiResult<u64> {
    let mut product = db
        .products
        .get(&id)
        .cloned()
        .ok_or_else(|| ApiError::not_found(messages::PRODUCT_NOT_FOUND))?;
    if let Some(set_id) = input::opt_int(input, "attribute_set_id")? {
        if db.catalog.attribute_set(set_id).is_none() {
            return Err(invalid_attribute_set());
        }
        product.attribute_set_id = set_id;
    }
    if let Some(type_id) = input::opt_string(input, "type_id")? {
        product.type_id = product::known_type(&type_id);
    }
    let old_sku = product.sku.clone();
    if let Some(sku) = sku.filter(|s| !s.is_empty()) {
        if sku.chars().count() > SKU_MAX_LENGTH {
            return Err(ApiError::bad_request_with(
                messages::SKU_TOO_LONG,
                Params::List(vec![json!(SKU_MAX_LENGTH)]),
            ));
        }
        if let Some(other) = db.product_id_by_sku(&sku)
            && other != id
        {
            return Err(unable_to_save());
        }
        product.sku = sku;
    }
    if let Some(name) = input::present(input, "name")
        && input::to_string(name)?.is_empty()
    {
        return Err(attribute_empty(&db.catalog.label("name")));
    }
    let url_key_before: Vec<Option<String>> = url_keys(&product);
    apply(db, &mut product, input, store_id, now)?;
    if url_keys(&product) != url_key_before {
        check_url_key(db, &product)?;
    }
    product.updated_at = now;
    db.sku_index.remove(&old_sku.to_lowercase());
    db.sku_index.insert(product.sku.to_lowercase(), id);
    db.products.insert(id, product);
    Ok(id)
}

fn url_keys(product: &Product) -> Vec<Option<String>> {
    let mut keys = vec![
        product
            .defaults
            .custom
            .get("url_key")
            .map(|v| v.to_string()),
    ];
    keys.extend(
        product
            .overrides
            .values()
            .map(|s| s.custom.get("url_key").map(|v| v.to_string())),
    );
    keys
}

/// `URL key for specified store already exists.` when another product uses the same key in a
/// store view this product is visible in.
fn check_url_key(db: &Db, product: &Product) -> ApiResult<()> {
    let stores: Vec<u32> = db
        .stores
        .store_views
        .iter()
        .map(|s| s.id)
        .filter(|id| *id != ADMIN_STORE_ID)
        .collect();
    for store in stores {
        let Some(key) = product.url_key(store) else {
            continue;
        };
        let clash = db
            .products
            .values()
            .any(|other| other.id != product.id && other.has_url_key(store, &key));
        if clash {
            return Err(ApiError::bad_request(messages::URL_KEY_EXISTS));
        }
    }
    Ok(())
}

/// Applies every field of the body to `product`.
fn apply(
    db: &mut Db,
    product: &mut Product,
    input: &Map<String, Value>,
    store_id: u32,
    now: i64,
) -> ApiResult<()> {
    if let Some(name) = input::opt_string(input, "name")? {
        scoped_mut(product, store_id).name = Some(name);
    }
    if let Some(status) = input::opt_int(input, "status")? {
        scoped_mut(product, store_id).status = Some(status);
    }
    if let Some(visibility) = input::opt_int(input, "visibility")? {
        scoped_mut(product, store_id).visibility = Some(visibility);
    }
    if let Some(price) = input::opt_float(input, "price")? {
        product.price = Some(price);
    }
    if let Some(weight) = input::opt_float(input, "weight")? {
        product.weight = Some(weight);
    }
    if let Some(ext) = input::opt_object(input, "extension_attributes", "extension_attributes")? {
        apply_extension(db, product, ext, now)?;
    }
    if let Some(list) = input::opt_array(input, "custom_attributes", "custom_attributes[]")? {
        apply_custom_attributes(db, product, &list, store_id)?;
    }
    if let Some(list) = input::opt_array(input, "options", "options[]")? {
        product.options = normalize_options(db, product, &list)?;
    }
    if let Some(list) = input::opt_array(input, "tier_prices", "tier_prices[]")? {
        product.tier_prices = normalize_tier_prices(&list)?;
    }
    if let Some(list) = input::opt_array(input, "product_links", "product_links[]")? {
        product.product_links = normalize_links(db, product, &list)?;
    }
    if let Some(list) = input::opt_array(input, "media_gallery_entries", "media_gallery_entries[]")?
    {
        replace_gallery(db, product, &list, store_id)?;
    }
    Ok(())
}

fn apply_extension(
    db: &mut Db,
    product: &mut Product,
    ext: &Map<String, Value>,
    now: i64,
) -> ApiResult<()> {
    if let Some(list) = input::opt_array(ext, "website_ids", "int[]")? {
        product.website_ids = list
            .into_iter()
            .map(input::to_int)
            .collect::<ApiResult<Vec<_>>>()?;
    }
    if let Some(list) = input::opt_array(ext, "category_links", "category_links[]")? {
        let mut links = Vec::new();
        for link in list {
            let Value::Object(link) = link else {
                return Err(ApiError::type_mismatch(link, "object"));
            };
            let category_id = input::opt_int(link, "category_id")?
                .ok_or_else(|| ApiError::required("category_id"))?;
            let position = input::opt_int(link, "position")?.unwrap_or(0);
            let category_id = u64::try_from(category_id).map_err(|_| unable_to_save())?;
            // An unknown category breaks the link table's foreign key; Magento reports the
            // failed save, not the category.
            if !db.categories.contains_key(&category_id) {
                return Err(unable_to_save());
            }
            links.retain(|l: &CategoryLink| l.category_id != category_id);
            links.push(CategoryLink {
                category_id,
                position,
            });
        }
        links.sort_by_key(|l| l.category_id);
        product.category_links = links;
    }
    if let Some(stock) = input::opt_object(ext, "stock_item", "stock_item")? {
        product.stock.apply(stock, now, product.type_id)?;
    }
    if let Some(list) = input::opt_array(
        ext,
        "configurable_product_options",
        "configurable_product_options[]",
    )? {
        let mut options = Vec::new();
        for (index, option) in list.into_iter().enumerate() {
            let Value::Object(option) = option else {
                return Err(ApiError::type_mismatch(option, "object"));
            };
            let mut out = Map::new();
            let id = input::opt_int(option, "id")?.unwrap_or(index as i64 + 1);
            out.insert("id".into(), json!(id));
            if let Some(attribute_id) = input::opt_string(option, "attribute_id")? {
                out.insert("attribute_id".into(), json!(attribute_id));
            }
            if let Some(label) = input::opt_string(option, "label")? {
                out.insert("label".into(), json!(label));
            }
            out.insert(
                "position".into(),
                json!(input::opt_int(option, "position")?.unwrap_or(0)),
            );
            let values: Vec<Value> = input::opt_array(option, "values", "values[]")?
                .unwrap_or_default()
                .into_iter()
                .map(|v| match v {
                    Value::Object(v) => input::opt_int(v, "value_index")
                        .map(|i| json!({"value_index": i.unwrap_or(0)})),
                    other => Err(ApiError::type_mismatch(other, "object")),
                })
                .collect::<ApiResult<_>>()?;
            out.insert("values".into(), Value::Array(values));
            out.insert("product_id".into(), json!(product.id));
            options.push(Value::Object(out));
        }
        product.configurable_options = options;
    }
    if let Some(list) = input::opt_array(ext, "configurable_product_links", "int[]")? {
        product.configurable_links = list
            .into_iter()
            .map(|v| input::to_int(v).map(|i| i.max(0) as u64))
            .collect::<ApiResult<Vec<_>>>()?;
    }
    Ok(())
}

fn apply_custom_attributes(
    db: &Db,
    product: &mut Product,
    list: &[&Value],
    store_id: u32,
) -> ApiResult<()> {
    for item in list {
        let Value::Object(item) = item else {
            return Err(ApiError::type_mismatch(item, "object"));
        };
        let Some(code) = input::opt_string(item, "attribute_code")? else {
            continue;
        };
        let value = input::field(item, "value").cloned().unwrap_or(Value::Null);
        if IMAGE_ROLES.contains(&code.as_str()) {
            let file = value.as_str().unwrap_or("").to_string();
            if file.is_empty() || file == "no_selection" {
                product.roles.remove(&code);
            } else if product.media.iter().any(|e| e.file == file) {
                product.roles.insert(code, file);
            }
            continue;
        }
        // Derived from links and options, or top-level fields of the product; the sandbox
        // reads those only where the interface puts them.
        if matches!(
            code.as_str(),
            "category_ids"
                | "has_options"
                | "required_options"
                | "quantity_and_stock_status"
                | "name"
                | "sku"
                | "price"
                | "status"
                | "visibility"
                | "weight"
        ) {
            continue;
        }
        // Magento drops codes that are not attributes of the catalog.
        let Some(meta) = db.catalog.attribute(&code) else {
            continue;
        };
        let mut stored = attributes::normalize_value(meta, &value)?;
        if code == "url_key" {
            stored = stored
                .and_then(|v| v.as_str().map(attributes::format_url_key))
                .filter(|k| !k.is_empty())
                .map(Value::String);
        }
        let target_store = if db.catalog.is_store_scoped(&code) {
            store_id
        } else {
            ADMIN_STORE_ID
        };
        let scoped = scoped_mut(product, target_store);
        match stored {
            Some(v) => {
                scoped.custom.insert(code, v);
            }
            None => {
                scoped.custom.remove(&code);
            }
        }
    }
    Ok(())
}

const SELECT_TYPES: [&str; 4] = ["drop_down", "radio", "checkbox", "multiple"];

fn normalize_options(db: &mut Db, product: &Product, list: &[&Value]) -> ApiResult<Vec<Value>> {
    let mut out = Vec::new();
    for option in list {
        let Value::Object(option) = option else {
            return Err(ApiError::type_mismatch(option, "object"));
        };
        let title = input::opt_string(option, "title")?.unwrap_or_default();
        let kind = input::opt_string(option, "type")?.unwrap_or_default();
        if title.is_empty() || kind.is_empty() {
            return Err(unable_to_save());
        }
        let option_id = match input::opt_int(option, "option_id")? {
            Some(id) if id > 0 => id,
            _ => {
                let id = db.next_option_id as i64;
                db.next_option_id += 1;
                id
            }
        };
        let mut o = Map::new();
        o.insert("product_sku".into(), json!(product.sku));
        o.insert("option_id".into(), json!(option_id));
        o.insert("title".into(), json!(title));
        o.insert("type".into(), json!(kind));
        o.insert(
            "sort_order".into(),
            json!(input::opt_int(option, "sort_order")?.unwrap_or(0)),
        );
        o.insert(
            "is_require".into(),
            json!(input::opt_bool(option, "is_require")?.unwrap_or(false)),
        );
        if SELECT_TYPES.contains(&kind.as_str()) {
            let mut values = Vec::new();
            for value in input::opt_array(option, "values", "values[]")?.unwrap_or_default() {
                let Value::Object(value) = value else {
                    return Err(ApiError::type_mismatch(value, "object"));
                };
                let value_id = match input::opt_int(value, "option_type_id")? {
                    Some(id) if id > 0 => id,
                    _ => {
                        let id = db.next_option_value_id as i64;
                        db.next_option_value_id += 1;
                        id
                    }
                };
                let mut v = Map::new();
                v.insert(
                    "title".into(),
                    json!(input::opt_string(value, "title")?.unwrap_or_default()),
                );
                v.insert(
                    "sort_order".into(),
                    json!(input::opt_int(value, "sort_order")?.unwrap_or(0)),
                );
                v.insert(
                    "price".into(),
                    input::num(input::opt_float(value, "price")?.unwrap_or(0.0)),
                );
                v.insert(
                    "price_type".into(),
                    json!(
                        input::opt_string(value, "price_type")?.unwrap_or_else(|| "fixed".into())
                    ),
                );
                if let Some(sku) = input::opt_string(value, "sku")? {
                    v.insert("sku".into(), json!(sku));
                }
                v.insert("option_type_id".into(), json!(value_id));
                values.push(Value::Object(v));
            }
            o.insert("values".into(), Value::Array(values));
        } else {
            o.insert(
                "price".into(),
                input::num(input::opt_float(option, "price")?.unwrap_or(0.0)),
            );
            o.insert(
                "price_type".into(),
                json!(input::opt_string(option, "price_type")?.unwrap_or_else(|| "fixed".into())),
            );
            if let Some(sku) = input::opt_string(option, "sku")? {
                o.insert("sku".into(), json!(sku));
            }
            o.insert(
                "max_characters".into(),
                json!(input::opt_int(option, "max_characters")?.unwrap_or(0)),
            );
        }
        o.insert(
            "image_size_x".into(),
            json!(input::opt_int(option, "image_size_x")?.unwrap_or(0)),
        );
        o.insert(
            "image_size_y".into(),
            json!(input::opt_int(option, "image_size_y")?.unwrap_or(0)),
        );
        if let Some(ext) = input::opt_string(option, "file_extension")? {
            o.insert("file_extension".into(), json!(ext));
        }
        out.push(Value::Object(o));
    }
    Ok(out)
}

fn normalize_tier_prices(list: &[&Value]) -> ApiResult<Vec<Value>> {
    let mut out = Vec::new();
    for tier in list {
        let Value::Object(tier) = tier else {
            return Err(ApiError::type_mismatch(tier, "object"));
        };
        let group = input::opt_int(tier, "customer_group_id")?.unwrap_or(32000);
        let qty = input::opt_float(tier, "qty")?.unwrap_or(1.0);
        let value = input::opt_float(tier, "value")?.unwrap_or(0.0);
        let mut ext = Map::new();
        if let Some(ext_in) =
            input::opt_object(tier, "extension_attributes", "extension_attributes")?
        {
            if let Some(percentage) = input::opt_float(ext_in, "percentage_value")? {
                ext.insert("percentage_value".into(), input::num(percentage));
            }
            ext.insert(
                "website_id".into(),
                json!(input::opt_int(ext_in, "website_id")?.unwrap_or(0)),
            );
        } else {
            ext.insert("website_id".into(), json!(0));
        }
        out.push(json!({
            "customer_group_id": group,
            "qty": input::num(qty),
            "value": input::num(value),
            "extension_attributes": ext
        }));
    }
    Ok(out)
}

fn normalize_links(db: &Db, product: &Product, list: &[&Value]) -> ApiResult<Vec<Value>> {
    let mut out = Vec::new();
    for link in list {
        let Value::Object(link) = link else {
            return Err(ApiError::type_mismatch(link, "object"));
        };
        let linked = input::opt_string(link, "linked_product_sku")?.unwrap_or_default();
        let Some(target) = db.product_by_sku(&linked) else {
            return Err(ApiError::not_found_with(
                messages::PRODUCT_SKU_NOT_FOUND,
                Params::List(vec![json!(linked)]),
            ));
        };
        out.push(json!({
            "sku": product.sku,
            "link_type": input::opt_string(link, "link_type")?.unwrap_or_else(|| "related".into()),
            "linked_product_sku": target.sku,
            "linked_product_type": target.type_id,
            "position": input::opt_int(link, "position")?.unwrap_or(0)
        }));
    }
    Ok(out)
}

/// `media_gallery_entries` sent with a product: listed ids are updated, entries with
/// `content` are added, stored entries missing from the list are removed.
fn replace_gallery(
    db: &mut Db,
    product: &mut Product,
    list: &[&Value],
    store_id: u32,
) -> ApiResult<()> {
    let supports_images = db
        .catalog
        .attribute_set(product.attribute_set_id)
        .is_some_and(|s| s.has_media_gallery);
    let mut keep = Vec::new();
    let mut additions = Vec::new();
    for entry in list {
        let Value::Object(entry) = entry else {
            return Err(ApiError::type_mismatch(entry, "object"));
        };
        let id = input::opt_int(entry, "id")?;
        match id.and_then(|id| product.media.iter().position(|e| e.id as i64 == id)) {
            Some(index) => {
                keep.push(product.media[index].id);
                media::update_entry(product, index, entry, store_id)?;
            }
            None => {
                if let Some(content) = input::opt_object(entry, "content", "content")? {
                    if !supports_images {
                        return Err(ApiError::bad_request(messages::PRODUCT_NO_IMAGES));
                    }
                    additions.push((entry, media::validate_content(Some(content))?));
                }
            }
        }
    }
    let removed: Vec<usize> = product
        .media
        .iter()
        .enumerate()
        .filter(|(_, e)| !keep.contains(&e.id))
        .map(|(i, _)| i)
        .collect();
    for index in removed.into_iter().rev() {
        media::remove_entry(product, index);
    }
    for (entry, upload) in additions {
        let file = crate::state::media_files::store_file(db, upload)?;
        media::add_entry(&mut db.next_media_id, product, entry, file, store_id)?;
    }
    Ok(())
}
