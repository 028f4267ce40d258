//! Legacy CatalogInventory stock items (served by `api::stock`).
//!
//! Every product owns one stock item of the default stock. Item ids are deliberately not the
//! product ids (see [`ITEM_ID_OFFSET`]): Magento installs drift apart too, and a client that
//! assumes they match must fail here rather than in production. Saving applies Magento's
//! `StockItemRepository` rules: quantity at or below `min_qty` without backorders forces
//! "out of stock" automatically, an automatic out-of-stock returns to stock when quantity
//! comes back, and `low_stock_date` follows `notify_stock_qty`.

use serde_json::{Map, Value, json};

use crate::webapi::clock;
use crate::webapi::error::ApiResult;
use crate::webapi::input::{self, num};

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
