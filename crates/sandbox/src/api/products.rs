//! `/V1/products` endpoints: list with `searchCriteria`, get by SKU, upsert and delete.

use serde_json::{Value, json};

use crate::api::call::Call;
use crate::model::product::{self, Product};
use crate::model::product_save;
use crate::state::Db;
use crate::webapi::clock;
use crate::webapi::error::{ApiError, ApiResult, Params};
use crate::webapi::input;
use crate::webapi::messages;
use crate::webapi::search::{FieldValue, Scalar, SearchCriteria};

fn not_found() -> ApiError {
    ApiError::not_found(messages::PRODUCT_NOT_FOUND)
}

/// A product column for search criteria, with the store-dependent `store_id` relation.
fn lookup<'a>(
    db: &'a Db,
    product: &'a Product,
    store_id: u32,
    field: &str,
) -> Option<FieldValue<'a>> {
    if field == "store_id" {
        let stores = product
            .website_ids
            .iter()
            .flat_map(|w| {
                db.stores
                    .store_ids_of_website(u32::try_from(*w).unwrap_or(0))
            })
            .map(|s| Scalar::Num(f64::from(s)))
            .collect();
        return Some(FieldValue::Set(stores));
    }
    product.field(&db.catalog, store_id, field)
}

/// Filters, sorts and pages products; shared with `products-render-info`.
pub(crate) fn search<'a>(
    db: &'a Db,
    criteria: &SearchCriteria,
    store_id: u32,
    prefilter: impl Fn(&Product) -> bool,
) -> ApiResult<(Vec<&'a Product>, usize)> {
    for field in criteria.filter_fields() {
        if !product::is_known_field(&db.catalog, field) {
            return Err(ApiError::bad_request_with(
                messages::INVALID_ATTRIBUTE_NAME,
                Params::List(vec![json!(field)]),
            ));
        }
    }
    let mut rows: Vec<&Product> = db
        .products
        .values()
        .filter(|p| prefilter(p) && criteria.matches(|f| lookup(db, p, store_id, f)))
        .collect();
    criteria.sort(&mut rows, |p, f| lookup(db, p, store_id, f));
    Ok(criteria.page(rows))
}

/// `GET /V1/products?searchCriteria...`: items carry no `stock_item` (a real Magento limit).
pub(crate) fn list(call: &Call) -> ApiResult<Value> {
    let criteria = SearchCriteria::required(&call.query)?;
    let db = call.db();
    let (page, total) = search(&db, &criteria, call.store.id, |_| true)?;
    let items: Vec<Value> = page
        .into_iter()
        .map(|p| p.to_json(&db.catalog, call.store.id, false))
        .collect();
    Ok(json!({
        "items": items,
        "search_criteria": criteria.echo(),
        "total_count": total
    }))
}

/// `GET /V1/products/{sku}[?storeId=N]`
pub(crate) fn get(call: &Call) -> ApiResult<Value> {
    let store_id = match call.query_str("storeId") {
        Some(id) => u32::try_from(input::to_int(&json!(id))?).unwrap_or(call.store.id),
        None => call.store.id,
    };
    let db = call.db();
    let product = db.product_by_sku(call.param("sku")).ok_or_else(not_found)?;
    Ok(product.to_json(&db.catalog, store_id, true))
}

fn save(call: &Call) -> ApiResult<Value> {
    let body = input::opt_object(call.body(), "product", "product")?
        .ok_or_else(|| ApiError::required("product"))?;
    let mut db = call.db_mut();
    let id = product_save::save(&mut db, body, call.store.id, clock::now())?;
    let product = db.products.get(&id).ok_or_else(not_found)?;
    Ok(product.to_json(&db.catalog, call.store.id, true))
}

/// `POST /V1/products` (upsert).
pub(crate) fn create(call: &Call) -> ApiResult<Value> {
    save(call)
}

/// `PUT /V1/products/{sku}` (upsert too; the path SKU replaces `product.sku` when the body
/// holds nothing but `product`).
pub(crate) fn update(call: &Call) -> ApiResult<Value> {
    save(call)
}

/// `DELETE /V1/products/{sku}`: also drops its stock item, gallery and category links.
pub(crate) fn delete(call: &Call) -> ApiResult<Value> {
    let mut db = call.db_mut();
    let id = db
        .product_id_by_sku(call.param("sku"))
        .ok_or_else(not_found)?;
    if let Some(product) = db.products.remove(&id) {
        db.sku_index.remove(&product.sku.to_lowercase());
    }
    for parent in db.products.values_mut() {
        parent.configurable_links.retain(|child| *child != id);
    }
    Ok(json!(true))
}
