//! Legacy CatalogInventory stock items (`/V1/stockItems/*`, `/V1/stockStatuses/*`).
//!
//! Every product owns one stock item of the default stock. Item ids are deliberately not the
//! product ids (see [`ITEM_ID_OFFSET`]): Magento installs drift apart too, and a client that
//! assumes they match must fail here rather than in production. Saving applies Magento's
//! `StockItemRepository` rules: quantity at or below `min_qty` without backorders forces
//! "out of stock" automatically, an automatic out-of-stock returns to stock when quantity
//! comes back, and `low_stock_date` follows `notify_stock_qty`.

use serde_json::{Map, Value, json};

use crate::clock;
use crate::dispatch::Call;
use crate::error::{ApiError, ApiResult, ErrorItem, Params};
use crate::input::{self, num};
use crate::messages;
use crate::state::Db;

/// `item_id = product_id + ITEM_ID_OFFSET` for every product.
pub(crate) const ITEM_ID_OFFSET: u64 = 1000;

/// `StockConfiguration::isQty`: product types whose stock is counted.
pub(crate) fn has_own_qty(type_id: &str) -> bool {
    matches!(type_id, "simple" | "virtual" | "downloadable")
}

#[derive(Debug, Clone)]
pub(crate) struct StockItem {
    pub(crate) item_id: u64,
    pub(crate) product_id: u64,
    pub(crate) qty: f64,
    pub(crate) is_in_stock: bool,
    pub(crate) is_qty_decimal: bool,
    pub(crate) show_default_notification_message: bool,
    pub(crate) use_config_min_qty: bool,
    pub(crate) min_qty: f64,
    pub(crate) use_config_min_sale_qty: i64,
    pub(crate) min_sale_qty: f64,
    pub(crate) use_config_max_sale_qty: bool,
    pub(crate) max_sale_qty: f64,
    pub(crate) use_config_backorders: bool,
    pub(crate) backorders: i64,
    pub(crate) use_config_notify_stock_qty: bool,
    pub(crate) notify_stock_qty: f64,
    pub(crate) use_config_qty_increments: bool,
    pub(crate) qty_increments: f64,
    pub(crate) use_config_enable_qty_inc: bool,
    pub(crate) enable_qty_increments: bool,
    pub(crate) use_config_manage_stock: bool,
    pub(crate) manage_stock: bool,
    pub(crate) low_stock_date: Option<i64>,
    pub(crate) is_decimal_divided: bool,
    pub(crate) stock_status_changed_auto: i64,
}

impl StockItem {
    /// A fresh item with Magento's configuration defaults: no quantity, out of stock.
    pub(crate) fn new(product_id: u64) -> Self {
        StockItem {
            item_id: product_id + ITEM_ID_OFFSET,
            product_id,
            qty: 0.0,
            is_in_stock: false,
            is_qty_decimal: false,
            show_default_notification_message: false,
            use_config_min_qty: true,
            min_qty: 0.0,
            use_config_min_sale_qty: 1,
            min_sale_qty: 1.0,
            use_config_max_sale_qty: true,
            max_sale_qty: 10000.0,
            use_config_backorders: true,
            backorders: 0,
            use_config_notify_stock_qty: true,
            notify_stock_qty: 1.0,
            use_config_qty_increments: true,
            qty_increments: 0.0,
            use_config_enable_qty_inc: true,
            enable_qty_increments: false,
            use_config_manage_stock: true,
            manage_stock: true,
            low_stock_date: None,
            is_decimal_divided: false,
            stock_status_changed_auto: 0,
        }
    }

    pub(crate) fn to_json(&self) -> Value {
        json!({
            "item_id": self.item_id,
            "product_id": self.product_id,
            "stock_id": 1,
            "qty": num(self.qty),
            "is_in_stock": self.is_in_stock,
            "is_qty_decimal": self.is_qty_decimal,
            "show_default_notification_message": self.show_default_notification_message,
            "use_config_min_qty": self.use_config_min_qty,
            "min_qty": num(self.min_qty),
            "use_config_min_sale_qty": self.use_config_min_sale_qty,
            "min_sale_qty": num(self.min_sale_qty),
            "use_config_max_sale_qty": self.use_config_max_sale_qty,
            "max_sale_qty": num(self.max_sale_qty),
            "use_config_backorders": self.use_config_backorders,
            "backorders": self.backorders,
            "use_config_notify_stock_qty": self.use_config_notify_stock_qty,
            "notify_stock_qty": num(self.notify_stock_qty),
            "use_config_qty_increments": self.use_config_qty_increments,
            "qty_increments": num(self.qty_increments),
            "use_config_enable_qty_inc": self.use_config_enable_qty_inc,
            "enable_qty_increments": self.enable_qty_increments,
            "use_config_manage_stock": self.use_config_manage_stock,
            "manage_stock": self.manage_stock,
            "low_stock_date": self.low_stock_date.map(clock::format_datetime),
            "is_decimal_divided": self.is_decimal_divided,
            "stock_status_changed_auto": self.stock_status_changed_auto
        })
    }

    /// Applies the fields present in a `stockItem` body; absent fields keep their values.
    /// `type_id` matters: types without own quantity (configurable, bundle, grouped) keep
    /// quantity 0 and the stock status they are given.
    pub(crate) fn apply(
        &mut self,
        input: &Map<String, Value>,
        now: i64,
        type_id: &str,
    ) -> ApiResult<()> {
        macro_rules! float_field {
            ($name:ident) => {
                if let Some(v) = input::opt_float(input, stringify!($name))? {
                    self.$name = v;
                }
            };
        }
        macro_rules! bool_field {
            ($name:ident) => {
                if let Some(v) = input::opt_bool(input, stringify!($name))? {
                    self.$name = v;
                }
            };
        }
        macro_rules! int_field {
            ($name:ident) => {
                if let Some(v) = input::opt_int(input, stringify!($name))? {
                    self.$name = v;
                }
            };
        }
        float_field!(qty);
        let explicit_in_stock = input::opt_bool(input, "is_in_stock")?;
        if let Some(v) = explicit_in_stock {
            self.is_in_stock = v;
        }
        bool_field!(is_qty_decimal);
        bool_field!(show_default_notification_message);
        bool_field!(use_config_min_qty);
        float_field!(min_qty);
        int_field!(use_config_min_sale_qty);
        float_field!(min_sale_qty);
        bool_field!(use_config_max_sale_qty);
        float_field!(max_sale_qty);
        bool_field!(use_config_backorders);
        int_field!(backorders);
        bool_field!(use_config_notify_stock_qty);
        float_field!(notify_stock_qty);
        bool_field!(use_config_qty_increments);
        float_field!(qty_increments);
        bool_field!(use_config_enable_qty_inc);
        bool_field!(enable_qty_increments);
        bool_field!(use_config_manage_stock);
        bool_field!(manage_stock);
        bool_field!(is_decimal_divided);
        if has_own_qty(type_id) {
            self.settle(explicit_in_stock, now);
        } else {
            self.qty = 0.0;
        }
        Ok(())
    }

    /// The status rules `StockItemRepository::save` applies after every change.
    pub(crate) fn settle(&mut self, explicit_in_stock: Option<bool>, now: i64) {
        let sellable = !(self.backorders == 0 && self.qty <= self.min_qty);
        let mut changed_auto = false;
        if self.manage_stock && !sellable {
            self.is_in_stock = false;
            changed_auto = true;
        } else if self.manage_stock
            && explicit_in_stock.is_none()
            && !self.is_in_stock
            && self.stock_status_changed_auto == 1
        {
            // Back in stock only when it went out of stock automatically.
            self.is_in_stock = true;
        }
        self.stock_status_changed_auto = i64::from(changed_auto);
        self.low_stock_date =
            (self.manage_stock && self.qty < self.notify_stock_qty).then_some(now);
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_quantity_goes_out_of_stock_and_comes_back() {
        let mut item = StockItem::new(1);
        item.qty = 10.0;
        item.is_in_stock = true;
        let zero = json!({"qty": 0});
        item.apply(zero.as_object().unwrap_or(&Map::new()), 0, "simple")
            .ok();
        assert!(!item.is_in_stock);
        assert_eq!(item.stock_status_changed_auto, 1);
        let back = json!({"qty": 5});
        item.apply(back.as_object().unwrap_or(&Map::new()), 0, "simple")
            .ok();
        assert!(item.is_in_stock);
        let manual = json!({"is_in_stock": false});
        item.apply(manual.as_object().unwrap_or(&Map::new()), 0, "simple")
            .ok();
        assert!(!item.is_in_stock);
        let more = json!({"qty": 50});
        item.apply(more.as_object().unwrap_or(&Map::new()), 0, "simple")
            .ok();
        assert!(
            !item.is_in_stock,
            "a manual out-of-stock stays out of stock"
        );
    }
}
