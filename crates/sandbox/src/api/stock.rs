//! `/V1/stockItems/*` and `/V1/stockStatuses/*`: read, update, and the low-stock report.

use crate::api::call::Call;
use crate::model::stock::StockItem;
use crate::state::Db;
use crate::webapi::clock;
use crate::webapi::error::{ApiError, ApiResult, ErrorItem, Params};
use crate::webapi::input::{self, num};
use crate::webapi::messages;
use serde_json::{Value, json};

fn product_sku_not_found(sku: &str) -> ApiError {
    ApiError::not_found_with(
        messages::PRODUCT_SKU_NOT_FOUND,
        Params::List(vec![json!(sku)]),
    )
}

/// `GET /V1/stockItems/{productSku}`
pub(crate) fn get(call: &Call) -> ApiResult<Value> {
    let db = call.db();
    let sku = call.param("productSku");
    let product = db
        .product_by_sku(sku)
        .ok_or_else(|| product_sku_not_found(sku))?;
    Ok(product.stock.to_json())
}

/// `PUT /V1/products/{productSku}/stockItems/{itemId}`: the item is found by SKU; the id in
/// the path is not used to find it (as in Magento). Answers the item id.
pub(crate) fn update(call: &Call) -> ApiResult<Value> {
    let input = input::opt_object(call.body(), "stock_item", "stockItem")?
        .ok_or_else(|| ApiError::required("stockItem"))?;
    let sku = call.param("productSku");
    let mut db = call.db_mut();
    let id = db
        .product_id_by_sku(sku)
        .ok_or_else(|| product_sku_not_found(sku))?;
    let now = clock::now();
    let product = db
        .products
        .get_mut(&id)
        .ok_or_else(|| product_sku_not_found(sku))?;
    product.stock.apply(input, now, product.type_id)?;
    product.updated_at = now;
    Ok(json!(product.stock.item_id))
}

/// `GET /V1/stockItems/lowStock?scopeId=&qty=&currentPage=&pageSize=`: items whose quantity is
/// at or below `qty` (Magento filters with `<=`), configurable parents (qty 0) included.
pub(crate) fn low_stock(call: &Call) -> ApiResult<Value> {
    let mut missing = Vec::new();
    if call.query_str("scopeId").is_none() {
        missing.push(ErrorItem::required("scopeId"));
    }
    if call.query_str("qty").is_none() {
        missing.push(ErrorItem::required("qty"));
    }
    if !missing.is_empty() {
        return Err(ApiError::aggregate(missing));
    }
    let scope_id = input::to_int(&json!(call.query_str("scopeId").unwrap_or("0")))?;
    let threshold = input::to_float(&json!(call.query_str("qty").unwrap_or("0")))?;
    let current_page = call
        .query_str("currentPage")
        .map(|p| input::to_int(&json!(p)))
        .transpose()?
        .unwrap_or(1)
        .max(1) as usize;
    let page_size = call
        .query_str("pageSize")
        .map(|p| input::to_int(&json!(p)))
        .transpose()?
        .unwrap_or(0)
        .max(0) as usize;
    let db: std::sync::RwLockReadGuard<'_, Db> = call.db();
    let matching: Vec<&StockItem> = db
        .products
        .values()
        .map(|p| &p.stock)
        .filter(|s| s.qty <= threshold)
        .collect();
    let total = matching.len();
    let page: Vec<Value> = if page_size == 0 {
        matching.iter().map(|s| s.to_json()).collect()
    } else {
        let last = if total == 0 {
            1
        } else {
            total.div_ceil(page_size)
        };
        let page = current_page.min(last);
        matching
            .iter()
            .skip((page - 1) * page_size)
            .take(page_size)
            .map(|s| s.to_json())
            .collect()
    };
    Ok(json!({
        "items": page,
        "search_criteria": {
            "mapper_interface_name": "Magento\\CatalogInventory\\Model\\ResourceModel\\Stock\\Item\\StockItemCriteriaMapper",
            "criteria_list": [],
            "filters": [format!("scope_id={scope_id}"), format!("qty<={}", num(threshold))],
            "orders": [],
            "limit": [current_page.to_string(), page_size.to_string()]
        },
        "total_count": total
    }))
}

/// `GET /V1/stockStatuses/{productSku}` (anonymous).
pub(crate) fn status(call: &Call) -> ApiResult<Value> {
    let db = call.db();
    let sku = call.param("productSku");
    let product = db
        .product_by_sku(sku)
        .ok_or_else(|| product_sku_not_found(sku))?;
    let stock = &product.stock;
    Ok(json!({
        "product_id": product.id,
        "stock_id": 1,
        "qty": stock.qty.round() as i64,
        "stock_status": i64::from(stock.is_in_stock),
        "stock_item": stock.to_json()
    }))
}
