//! Which of a product's tier prices a shopper may see, and in which shape.
//!
//! A store keeps every customer group's tier prices on the product, each with a group and a
//! website. A shopper must only see the tiers of their own group: a Guest those of the NOT
//! LOGGED IN group, a Customer those of their group, both also the tiers for ALL GROUPS.
//! Showing the others would hand out prices negotiated with other groups (wholesale, say).
//! The back end reads its records' tiers ([`TierPrice`]) and removes the others from them;
//! the rule itself is pure data in, data out, so it is tested on its own;
//! `records::lookups::customer_group` finds a caller's group.

use serde_json::{Map, Value, json};

use crate::backend::port::{Backend, TierPrice};
use crate::rules::mapping::convert::number;

/// The customer group of anonymous shoppers (NOT LOGGED IN).
pub const NOT_LOGGED_IN: u64 = 0;
/// The group of a tier that applies to every group.
pub const ALL_GROUPS: u64 = 32000;

/// Does `tier` apply to `group` in `website`: the group's own and the all-groups ones, on
/// every website (0) or this one. A tier without a group is not assumed to be anyone's.
pub fn applies(tier: &TierPrice, group: u64, website: u64) -> bool {
    tier.group.is_some_and(|g| g == group || g == ALL_GROUPS)
        && (tier.website_id == 0 || tier.website_id == website)
}

/// The original's shopper tier prices: `{qty, price_with_tax, price_without_tax}` for each
/// quantity tier (above 1; quantity-1 tiers are the original's group prices, which shoppers
/// see as their final price), ordered by quantity.
///
/// Stores report no tax per tier, so the tax-inclusive price applies the ratio of the
/// product's final price with and without tax (`final_prices`, from its storefront
/// rendering), rounded to cents like the stores' own prices; without one, both are the same.
pub fn shopper_shape(tiers: &[TierPrice], final_prices: (Option<f64>, Option<f64>)) -> Value {
    let ratio = match final_prices {
        (Some(without), Some(with)) if without > 0.0 && with > 0.0 => with / without,
        _ => 1.0,
    };
    let mut entries: Vec<(f64, f64)> = tiers
        .iter()
        .filter(|tier| tier.qty > 1.0)
        .map(|tier| (tier.qty, tier.value))
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

fn round_cents(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

/// Prepares a shopper's source record for the product mapping: the product record keeps
/// only the tiers of `group` (so no field of any view can show another group's), and
/// `pricing.tier_price` holds them in the original's shopper shape.
pub fn prepare_shopper_source(backend: &dyn Backend, source: &mut Value, group: u64, website: u64) {
    let visible: Vec<TierPrice> = backend
        .read_tier_prices(&source["product"])
        .into_iter()
        .filter(|tier| applies(tier, group, website))
        .collect();
    backend.keep_tier_prices(&mut source["product"], &|tier| {
        applies(tier, group, website)
    });
    let shaped = shopper_shape(&visible, backend.read_final_prices(&source["render"]));
    if let Some(root) = source.as_object_mut() {
        let mut pricing = Map::new();
        pricing.insert("tier_price".into(), shaped);
        root.insert("pricing".into(), Value::Object(pricing));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tier(group: Option<u64>, website_id: u64, qty: f64, value: f64) -> TierPrice {
        TierPrice {
            group,
            website_id,
            qty,
            value,
            percent: false,
        }
    }

    fn tiers() -> Vec<TierPrice> {
        vec![
            tier(Some(32000), 0, 1.0, 32.0),
            tier(Some(1), 0, 5.0, 29.5),
            tier(Some(2), 0, 2.0, 20.0),
            tier(Some(0), 1, 3.0, 31.0),
            tier(Some(0), 2, 4.0, 30.0),
            tier(Some(32000), 0, 10.0, 30.0),
            tier(None, 0, 6.0, 1.0),
        ]
    }

    fn qtys(group: u64, website: u64) -> Vec<f64> {
        tiers()
            .iter()
            .filter(|t| applies(t, group, website))
            .map(|t| t.qty)
            .collect()
    }

    #[test]
    fn each_group_sees_its_own_and_the_all_groups_tiers() {
        assert_eq!(qtys(NOT_LOGGED_IN, 1), [1.0, 3.0, 10.0]);
        assert_eq!(qtys(1, 1), [1.0, 5.0, 10.0]);
        assert_eq!(qtys(2, 1), [1.0, 2.0, 10.0]);
        // Another website's tiers are not this store's.
        assert_eq!(qtys(NOT_LOGGED_IN, 2), [1.0, 4.0, 10.0]);
    }

    #[test]
    fn shopper_shape_has_quantity_tiers_with_and_without_tax() {
        let visible: Vec<TierPrice> = tiers().into_iter().filter(|t| applies(t, 1, 1)).collect();
        assert_eq!(
            shopper_shape(&visible, (Some(34.0), Some(36.85))),
            json!([
                {"qty": 5, "price_with_tax": 31.97, "price_without_tax": 29.5},
                {"qty": 10, "price_with_tax": 32.51, "price_without_tax": 30}
            ])
        );
        assert_eq!(
            shopper_shape(&visible, (None, None)),
            json!([
                {"qty": 5, "price_with_tax": 29.5, "price_without_tax": 29.5},
                {"qty": 10, "price_with_tax": 30, "price_without_tax": 30}
            ])
        );
    }
}
