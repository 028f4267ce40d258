//! Which of a product's tier prices a shopper may see, and in which shape.
//!
//! Magento 2 keeps every customer group's tier prices on the product (`tier_prices`, each
//! with a `customer_group_id` and a website). A shopper must only see the tiers of their own
//! group: a Guest those of the NOT LOGGED IN group, a Customer those of their group, both
//! also the tiers for ALL GROUPS. Showing the others would hand out prices negotiated with
//! other groups (wholesale, say). Everything here is pure data in, data out, so the rule is
//! tested on its own; `resources::customer_group` finds a caller's group.

use serde_json::{Map, Value, json};

use crate::rules::mapping::convert::{as_f64, as_i64, number};

/// Magento's customer group of anonymous shoppers (NOT LOGGED IN).
pub const NOT_LOGGED_IN: u64 = 0;
/// Magento's `customer_group_id` of a tier that applies to every group.
pub const ALL_GROUPS: u64 = 32000;

/// The tiers of `tiers` (Magento's `tier_prices`) that apply to `group` in `website`:
/// the group's own and the all-groups ones, on every website (0) or this one.
pub fn for_group(tiers: &Value, group: u64, website: u64) -> Vec<Value> {
    let Some(list) = tiers.as_array() else {
        return Vec::new();
    };
    list.iter()
        .filter(|tier| {
            // A tier without a group is not assumed to be anyone's.
            let Some(tier_group) = tier.get("customer_group_id").and_then(as_i64) else {
                return false;
            };
            let tier_website = tier
                .pointer("/extension_attributes/website_id")
                .and_then(as_i64)
                .unwrap_or(0);
            (tier_group as u64 == group || tier_group as u64 == ALL_GROUPS)
                && (tier_website == 0 || tier_website as u64 == website)
        })
        .cloned()
        .collect()
}

/// The original's shopper tier prices: `{qty, price_with_tax, price_without_tax}` for each
/// quantity tier (above 1; Magento's quantity-1 tiers are the original's group prices, which
/// shoppers see as their final price), ordered by quantity.
///
/// Magento 2's REST API has no tax per tier, so the tax-inclusive price applies the ratio
/// Magento reports for the product's final price (`render`, its products-render-info
/// entry), rounded to cents like Magento's own prices; without a rendering, both are the
/// same.
pub fn shopper_shape(tiers: &[Value], render: &Value) -> Value {
    let ratio = tax_ratio(render);
    let mut entries: Vec<(f64, f64)> = tiers
        .iter()
        .filter_map(|tier| {
            let qty = tier.get("qty").and_then(as_f64).unwrap_or(1.0);
            let price = tier.get("value").and_then(as_f64)?;
            (qty > 1.0).then_some((qty, price))
        })
        .collect();
    entries.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    Value::Array(
        entries
            .into_iter()
            .map(|(qty, price)| {
                json!({
                    "qty": number(qty),
                    "price_with_tax": number(round_cents(price * ratio)),
                    "price_without_tax": number(price),
                })
            })
            .collect(),
    )
}

fn tax_ratio(render: &Value) -> f64 {
    let info = &render["price_info"];
    let without = info.get("final_price").and_then(as_f64);
    let with = info
        .pointer("/extension_attributes/tax_adjustments/final_price")
        .and_then(as_f64);
    match (with, without) {
        (Some(with), Some(without)) if without > 0.0 && with > 0.0 => with / without,
        _ => 1.0,
    }
}

fn round_cents(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

/// Prepares a shopper's source record for the product mapping: `product.tier_prices` keeps
/// only the tiers of `group` (so no field of any view can show another group's), and
/// `pricing.tier_price` holds them in the original's shopper shape.
pub fn prepare_shopper_source(source: &mut Value, group: u64, website: u64) {
    let visible = for_group(&source["product"]["tier_prices"], group, website);
    let shaped = shopper_shape(&visible, &source["render"]);
    if let Some(product) = source.get_mut("product").and_then(Value::as_object_mut)
        && product.contains_key("tier_prices")
    {
        product.insert("tier_prices".into(), Value::Array(visible));
    }
    if let Some(root) = source.as_object_mut() {
        let mut pricing = Map::new();
        pricing.insert("tier_price".into(), shaped);
        root.insert("pricing".into(), Value::Object(pricing));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiers() -> Value {
        json!([
            {"customer_group_id": 32000, "qty": 1, "value": 32, "extension_attributes": {"website_id": 0}},
            {"customer_group_id": 1, "qty": 5, "value": 29.5, "extension_attributes": {"website_id": 0}},
            {"customer_group_id": 2, "qty": 2, "value": 20, "extension_attributes": {"website_id": 0}},
            {"customer_group_id": 0, "qty": 3, "value": 31, "extension_attributes": {"website_id": 1}},
            {"customer_group_id": 0, "qty": 4, "value": 30, "extension_attributes": {"website_id": 2}},
            {"customer_group_id": 32000, "qty": 10, "value": 30, "extension_attributes": {"website_id": 0}},
            {"qty": 6, "value": 1}
        ])
    }

    fn qtys(list: &[Value]) -> Vec<i64> {
        list.iter().map(|t| t["qty"].as_i64().unwrap()).collect()
    }

    #[test]
    fn each_group_sees_its_own_and_the_all_groups_tiers() {
        assert_eq!(qtys(&for_group(&tiers(), NOT_LOGGED_IN, 1)), [1, 3, 10]);
        assert_eq!(qtys(&for_group(&tiers(), 1, 1)), [1, 5, 10]);
        assert_eq!(qtys(&for_group(&tiers(), 2, 1)), [1, 2, 10]);
        // Another website's tiers are not this store's.
        assert_eq!(qtys(&for_group(&tiers(), NOT_LOGGED_IN, 2)), [1, 4, 10]);
        assert!(for_group(&Value::Null, 1, 1).is_empty());
    }

    #[test]
    fn shopper_shape_has_quantity_tiers_with_and_without_tax() {
        let render = json!({"price_info": {"final_price": 34,
            "extension_attributes": {"tax_adjustments": {"final_price": 36.85}}}});
        let visible = for_group(&tiers(), 1, 1);
        assert_eq!(
            shopper_shape(&visible, &render),
            json!([
                {"qty": 5, "price_with_tax": 31.97, "price_without_tax": 29.5},
                {"qty": 10, "price_with_tax": 32.51, "price_without_tax": 30}
            ])
        );
        assert_eq!(
            shopper_shape(&visible, &Value::Null),
            json!([
                {"qty": 5, "price_with_tax": 29.5, "price_without_tax": 29.5},
                {"qty": 10, "price_with_tax": 30, "price_without_tax": 30}
            ])
        );
    }

    #[test]
    fn the_prepared_source_holds_no_other_groups_tier() {
        let mut source = json!({"product": {"tier_prices": tiers()}, "render": null});
        prepare_shopper_source(&mut source, NOT_LOGGED_IN, 1);
        assert_eq!(
            qtys(source["product"]["tier_prices"].as_array().unwrap()),
            [1, 3, 10]
        );
        assert_eq!(
            qtys(source["pricing"]["tier_price"].as_array().unwrap()),
            [3, 10]
        );
        let text = source.to_string();
        assert!(
            !text.contains("29.5") && !text.contains("\"value\":20"),
            "{text}"
        );
    }
}
