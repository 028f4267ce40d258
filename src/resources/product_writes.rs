//! Product writes, Admin only (SPEC 2.2): create (simple products; an existing SKU is
//! refused, since Magento's create also updates), partial update and delete. Each drops
//! what it touched from the cache before answering, or holds it off while the store may
//! still apply a write whose outcome is unknown (`rules::write_outcome`).

use axum::response::Response;
use serde_json::{Map, Value, json};

use super::call::ApiCall;
use crate::app::AppState;
use crate::auth::UserType;
use crate::backend::port::{ProductDraft, Scope, SentPrices, TierPrice};
use crate::cache::keys::tag;
use crate::context::profile::{Message, Profile};
use crate::http::{ApiError, Format, created, empty_ok};
use crate::records::catalog::product_index::sku_of;
use crate::records::lookups::stores;
use crate::resources::parse_id;
use crate::rules::backend_errors;
use crate::rules::mapping::convert::{as_f64, as_i64, is_empty};
use crate::rules::mapping::{ResourceMapping, View};
use crate::rules::write_outcome;
use crate::shared_state::locks::LockKey;

use super::products::product_id;

/// Types Magento knows; only `simple` may be created here (SPEC 2.2).
const PRODUCT_TYPES: &[&str] = &[
    "simple",
    "virtual",
    "configurable",
    "bundle",
    "grouped",
    "downloadable",
];

/// The group and tier prices a write mapped (`prices.tiers`, the gateway's own form), taken
/// out of the mapped record: the back end writes them in its store's shape.
fn take_prices(root: &mut Value) -> Option<Vec<TierPrice>> {
    let prices = root.as_object_mut().and_then(|r| r.remove("prices"))?;
    let list = prices.get("tiers").and_then(Value::as_array)?;
    Some(list.iter().filter_map(TierPrice::from_value).collect())
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.trim().to_owned(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Checks of values that the mapping's type conversion does not cover, with the
/// original's messages.
fn check_values(input: &Map<String, Value>, errors: &mut Vec<String>) {
    if let Some(sku) = input.get("sku")
        && text_of(sku).chars().count() > 64
    {
        errors.push("SKU length should be 64 characters maximum.".into());
    }
    for (field, allowed) in [("status", &[1, 2][..]), ("visibility", &[1, 2, 3, 4][..])] {
        if let Some(value) = input.get(field).filter(|v| !is_empty(v))
            && !as_i64(value).is_some_and(|v| allowed.contains(&v))
        {
            errors.push(format!(
                "Invalid value \"{}\" for attribute \"{field}\".",
                text_of(value)
            ));
        }
    }
    for field in ["price", "special_price", "weight", "msrp"] {
        if let Some(value) = input.get(field).filter(|v| !is_empty(v))
            && as_f64(value).is_some_and(|v| v < 0.0)
        {
            errors.push(format!(
                "Please enter a number 0 or greater in the \"{field}\" field."
            ));
        }
    }
}

pub(super) async fn create(mut call: ApiCall) -> Result<Response, ApiError> {
    let input = call.record(Format::Json, ApiError::not_implemented).await?;
    let app = call.app;
    let mapping = app.mappings.get("product");

    // The original stops at the first of these.
    let type_id = match input.get("type_id") {
        None => {
            return Err(ApiError::validation(vec![
                "Missing \"type_id\" in request.".into(),
            ]));
        }
        Some(v) => text_of(v),
    };
    if !PRODUCT_TYPES.contains(&type_id.as_str()) {
        return Err(ApiError::validation(vec!["Invalid product type.".into()]));
    }
    if type_id != "simple" {
        return Err(ApiError::new(
            http::StatusCode::METHOD_NOT_ALLOWED,
            format!("Creation of products with type '{type_id}' is not implemented"),
        ));
    }
    match input.get("attribute_set_id") {
        None => {
            return Err(ApiError::validation(vec![
                "Missing \"attribute_set_id\" in request.".into(),
            ]));
        }
        Some(v) if as_i64(v).is_none_or(|id| id <= 0) => {
            return Err(ApiError::validation(vec!["Invalid attribute set.".into()]));
        }
        Some(_) => {}
    }

    let mut errors = Vec::new();
    for field in mapping.view(UserType::Admin, View::Required).iter() {
        match input.get(&field.name) {
            None => errors.push(format!("Missing \"{}\" in request.", field.name)),
            Some(v) if is_empty(v) => {
                errors.push(format!("Empty value for \"{}\" in request.", field.name))
            }
            Some(_) => {}
        }
    }
    check_values(&input, &mut errors);
    let mut root = json!({ "product": {} });
    let write_fields = mapping.view(UserType::Admin, View::Write);
    if let Err(mut conversion) = ResourceMapping::write(&write_fields, &input, &mut root) {
        errors.append(&mut conversion);
    }
    if !errors.is_empty() {
        errors.dedup();
        return Err(ApiError::validation(errors));
    }
    let sku = text_of(&input["sku"]);

    // Magento's POST updates an existing SKU. Refuse instead of overwriting, and make
    // concurrent creates of one SKU take turns (across instances when they share Redis).
    let _turn = app.locks.lock(LockKey::Sku(sku.clone())).await?;
    match app.backend.product(Scope::Default, &sku).await {
        Ok(_) => {
            return Err(ApiError::validation(vec![
                Profile::current()
                    .message(Message::DuplicateSku)
                    .unwrap_or("The value of attribute \"sku\" must be unique.")
                    .into(),
            ]));
        }
        Err(e) if e.is_not_found() => {}
        Err(e) => return Err(backend_errors::to_api(e)),
    }

    let website = stores::default_website(&app).await?;
    let product = &mut root["product"];
    product["sku"] = Value::String(sku.clone());
    product["type_id"] = Value::String(type_id);
    let draft = ProductDraft {
        tiers: take_prices(&mut root),
        record: root["product"].take(),
        website: Some(website),
        ..ProductDraft::default()
    };
    let saved = app.backend.create_product(draft).await;
    if saved.is_err() {
        // A create whose outcome is unknown may have made the product: its SKU and the
        // lists are held off the cache (`write_outcome`).
        write_outcome::touched(
            &app.cache,
            &saved,
            &[
                tag::LISTS.to_owned(),
                tag::sku(&sku),
                tag::STOCK_INDEX.to_owned(),
            ],
        );
    }
    let saved = saved.map_err(|e| write_outcome::answer(e, backend_errors::to_api))?;
    let id = product_id(&saved)
        .ok_or_else(|| ApiError::bad_gateway().with_cause("created product has no id"))?;
    app.cache.invalidate(&[
        tag::LISTS.to_owned(),
        tag::product(id),
        tag::sku(&sku),
        // A new product has a new stock item.
        tag::STOCK_INDEX.to_owned(),
    ]);
    // Its first read need not ask for its SKU (read after the invalidation above, which
    // would otherwise drop the pair).
    app.cache
        .index_skus(app.cache.clock_reading(), [(id, sku.as_str())]);
    Ok(created(&format!("/api/rest/products/{id}")))
}

/// An update of the fields sent, in `scope` (the admin values, or a store view's).
pub(super) async fn update(
    mut call: ApiCall,
    id: &str,
    scope: Scope<'_>,
) -> Result<Response, ApiError> {
    let id = parse_id(id)?;
    let mut input = call
        .record(Format::Json, ApiError::request_data_invalid)
        .await?;
    let app = call.app;
    let sku = sku_of(&app, id).await?;
    // The original ignores these on update; the type and set of a product stay.
    input.remove("type_id");
    input.remove("attribute_set_id");
    if let Some(new_sku) = input.get("sku") {
        if text_of(new_sku) != *sku {
            return Err(ApiError::validation(vec![
                "Changing the SKU of a product is not supported; create a new product instead."
                    .into(),
            ]));
        }
        input.remove("sku");
    }
    let mapping = app.mappings.get("product");
    let mut errors = Vec::new();
    for field in mapping.view(UserType::Admin, View::Required).iter() {
        if input.get(&field.name).is_some_and(is_empty) {
            errors.push(format!("Empty value for \"{}\" in request.", field.name));
        }
    }
    check_values(&input, &mut errors);
    let mut root = json!({ "product": {} });
    let fields = mapping.view(UserType::Admin, View::Write);
    let written = super::written_update(&fields, &input, &mut root, errors)?;

    let prices = SentPrices {
        group: written.iter().any(|w| w == "group_price"),
        tier: written.iter().any(|w| w == "tier_price"),
    };
    root["product"]["sku"] = Value::String(sku.to_string());
    let draft = ProductDraft {
        tiers: take_prices(&mut root),
        record: root["product"].take(),
        sent: prices,
        website: None,
    };
    let result = app.backend.update_product(scope, &sku, draft).await;
    // Whatever happened, what we had cached about this product is suspect now; held off
    // for a while if Magento may still apply the change (`write_outcome`).
    write_outcome::touched(
        &app.cache,
        &result,
        &[tag::LISTS.to_owned(), tag::product(id), tag::sku(&sku)],
    );
    result.map_err(|e| write_outcome::answer(e, backend_errors::to_api))?;
    Ok(empty_ok())
}

pub(super) async fn delete(app: AppState, id: &str) -> Result<Response, ApiError> {
    let id = parse_id(id)?;
    let sku = sku_of(&app, id).await?;
    let result = app.backend.delete_product(&sku).await;
    write_outcome::touched(
        &app.cache,
        &result,
        &[
            tag::LISTS.to_owned(),
            tag::product(id),
            tag::sku(&sku),
            tag::images(id),
            // Its stock item goes with it.
            tag::STOCK_INDEX.to_owned(),
            tag::stock_index_of(id),
        ],
    );
    result.map_err(|e| write_outcome::answer(e, backend_errors::to_api))?;
    Ok(empty_ok())
}
