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

pub use crate::auth::price_group::PriceGroup;
use crate::backend::port::{Backend, RenderedTier, TierPrice};
use crate::rules::mapping::convert::number;

/// The customer group of anonymous shoppers (NOT LOGGED IN).
pub const NOT_LOGGED_IN: u64 = 0;
/// The group of a tier that applies to every group.
pub const ALL_GROUPS: u64 = 32000;

/// The digest of a customer's tax destination: the country, region and postcode of their
/// default billing and shipping addresses (either may be missing). Stable across processes
/// and builds (instances share cache keys through Redis): the first 8 bytes of a SHA-256.
pub fn tax_destination(billing: Option<&Value>, shipping: Option<&Value>) -> u64 {
    use sha2::Digest;
    let place = |address: Option<&Value>| -> String {
        let Some(address) = address else {
            return "-".to_owned();
        };
        let text = |v: Option<&Value>| match v {
            Some(Value::String(s)) => s.trim().to_ascii_uppercase(),
            Some(Value::Number(n)) => n.to_string(),
            _ => String::new(),
        };
        // A region is an id, a name, or (Magento 2) an object holding both.
        let region = match address.get("region") {
            Some(Value::Object(o)) => {
                text(o.get("region_id")).to_string() + "/" + &text(o.get("region"))
            }
            other => text(address.get("region_id")) + "/" + &text(other),
        };
        format!(
            "{}|{}|{}",
            text(address.get("country_id")),
            region,
            text(address.get("postcode"))
        )
    };
    let digest = sha2::Sha256::digest(format!("{}\n{}", place(billing), place(shipping)));
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
}

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

/// The store's own shopper tiers in the same shape as [`shopper_shape`]'s, ordered by
/// quantity.
pub fn rendered_shape(tiers: &[RenderedTier]) -> Value {
    let mut tiers = tiers.to_vec();
    tiers.sort_by(|a, b| a.qty.total_cmp(&b.qty));
    Value::Array(
        tiers
            .into_iter()
            .map(|tier| {
                json!({
                    "qty": number(tier.qty),
                    "price_with_tax": number(tier.price_with_tax),
                    "price_without_tax": number(tier.price_without_tax),
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
///
/// When the rendering was made for the caller's own group (`render_is_theirs`: a Guest's,
/// or a customer's by a store that renders for them) and holds tiers, those are the store's
/// own, taxed as the store taxes them, and shown instead of the gateway's.
pub fn prepare_shopper_source(
    backend: &dyn Backend,
    source: &mut Value,
    group: u64,
    website: u64,
    render_is_theirs: bool,
) {
    let visible: Vec<TierPrice> = backend
        .tier_prices(&source["product"])
        .into_iter()
        .filter(|tier| applies(tier, group, website))
        .collect();
    backend.keep_tier_prices(&mut source["product"], &|tier| {
        applies(tier, group, website)
    });
    let rendered = render_is_theirs
        .then(|| backend.rendered_tiers(&source["render"]))
        .flatten();
    let shaped = match rendered {
        Some(tiers) => rendered_shape(&tiers),
        None => shopper_shape(&visible, backend.final_prices(&source["render"])),
    };
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
    fn price_groups_keep_their_destination_through_the_cache() {
        for prices in [
            PriceGroup::ANONYMOUS,
            PriceGroup {
                group: 2,
                destination: Some(u64::MAX),
            },
            PriceGroup {
                group: 1,
                destination: Some(0),
            },
        ] {
            assert_eq!(PriceGroup::from_text(&prices.to_text()), Some(prices));
        }
        assert_eq!(PriceGroup::from_text("1;zz"), None);
        assert_eq!(PriceGroup::from_text(""), None);
    }

    #[test]
    fn a_tax_destination_is_the_place_not_the_person() {
        let home = json!({"firstname": "John", "street": ["1 Main St"], "country_id": "US",
            "region_id": "12", "region": "California", "postcode": "90001"});
        let neighbour = json!({"firstname": "Jane", "street": ["2 Main St"], "country_id": "us",
            "region_id": 12, "region": "California", "postcode": " 90001"});
        let abroad = json!({"country_id": "DE", "region": "Berlin", "postcode": "10115"});
        let here = tax_destination(Some(&home), Some(&home));
        assert_eq!(here, tax_destination(Some(&neighbour), Some(&neighbour)));
        assert_ne!(here, tax_destination(Some(&home), Some(&abroad)));
        assert_ne!(here, tax_destination(Some(&home), None));
        assert_ne!(
            tax_destination(None, Some(&home)),
            tax_destination(Some(&home), None)
        );
        // Magento 2's region is an object.
        let m2 = json!({"country_id": "US", "region": {"region_id": 12, "region": "California"},
            "postcode": "90001"});
        assert_eq!(here, tax_destination(Some(&m2), Some(&m2)));
    }

    #[test]
    fn the_stores_own_tiers_are_shown_in_the_gateways_shape() {
        let tiers = [
            RenderedTier {
                qty: 10.0,
                price_with_tax: 44.0,
                price_without_tax: 40.0,
            },
            RenderedTier {
                qty: 5.0,
                price_with_tax: 49.5,
                price_without_tax: 45.0,
            },
        ];
        assert_eq!(
            rendered_shape(&tiers),
            json!([
                {"qty": 5, "price_with_tax": 49.5, "price_without_tax": 45},
                {"qty": 10, "price_with_tax": 44, "price_without_tax": 40}
            ])
        );
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
