//! The walk's comparisons, and every difference between the gateway and the original that
//! is deliberate, each with its reason (docs/openmage-mappings.md, docs/profile.md,
//! docs/decisions/legacy-clients.md say more).

use serde_json::Value;

use super::steps::Step;
use super::{Answer, shape};
use crate::Known;
use crate::compare;

/// A deliberate difference of one request.
#[derive(Debug, Clone, Copy)]
pub struct Deliberate {
    /// The gateway's status and the original's, where they differ.
    pub status: Option<(u16, u16)>,
    /// The gateway's message, where it is not the original's.
    pub message: Option<&'static str>,
    /// Fields (values over OpenMage, shapes over Magento 2).
    pub fields: Known,
    /// Fields whose values are not compared, only their presence: what differs on every
    /// call (a form key) or with the moment of the walk's own writes (their dates).
    pub volatile: &'static [&'static str],
}

impl Deliberate {
    pub const NONE: Deliberate = Deliberate {
        status: None,
        message: None,
        fields: Known::NONE,
        volatile: &[],
    };
}

/// Both sides' values at `path` (`*` for every item of a list) set to one value.
fn blank(value: &mut Value, path: &[&str]) {
    let Some((first, rest)) = path.split_first() else {
        if !value.is_null() {
            *value = Value::String("(volatile)".into());
        }
        return;
    };
    match (value, *first) {
        (Value::Array(items), "*") => items.iter_mut().for_each(|v| blank(v, rest)),
        (Value::Object(map), "*") => map.values_mut().for_each(|v| blank(v, rest)),
        (Value::Object(map), key) => {
            if let Some(v) = map.get_mut(key) {
                blank(v, rest);
            }
        }
        _ => {}
    }
}

/// Which comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Over {
    OpenMage,
    Magento2,
}

/// SPEC 2.2: an Admin's `stock_data` also carries `use_config_enable_qty_increments` (the
/// store's `use_config_enable_qty_inc`), which the original's does not.
const STOCK_DATA_EXTRA: Known = Known {
    gateway_only: &["stock_data.use_config_enable_qty_increments"],
    ..Known::NONE
};

/// SPEC 2.5: street lines past the second are joined into the second (`"Building B; Floor
/// 3"`); the original sent every line. In both profiles (docs/openmage-mappings.md).
const STREET_FOLDED: Known = Known {
    store_only: &["street.[2]"],
    differ: &["street.*"],
    ..Known::NONE
};
const STREETS_FOLDED: Known = Known {
    store_only: &["*.street.[2]"],
    differ: &["*.street.*"],
    ..Known::NONE
};

/// Over Magento 2: SPEC 2.2's Admin list fields that the original left out of an item where
/// they had no value, and the sandbox's products have one.
const SPEC_ADMIN_LIST_FIELDS: Known = Known {
    gateway_only: &[
        "*.gift_message_available",
        "*.msrp_display_actual_price_type",
        "*.news_from_date",
        "*.news_to_date",
        "*.special_to_date",
    ],
    ..Known::NONE
};

/// Over Magento 2: SPEC 2.2's single Admin product, likewise, and `stock_data`'s extra.
const SPEC_ADMIN_SINGLE_FIELDS: Known = Known {
    gateway_only: &[
        "gift_message_available",
        "msrp_display_actual_price_type",
        "stock_data.use_config_enable_qty_increments",
    ],
    ..Known::NONE
};

/// Over Magento 2, the store's product 2 has a group price and the sandbox's product 5 none
/// (an empty list: its items are not compared, `shape`); both have tier prices, whose types
/// are compared.
fn deliberate(over: Over, step: &Step) -> Deliberate {
    use crate::Who::{Admin, Customer, Guest};
    let xml = step.accept.ends_with("xml");
    let path = step.path.as_str();
    let single_product = matches!(
        path,
        "/products/{P}" | "/products/{P2}" | "/products/{P}/store/{S}"
    );
    let admin_list = matches!(
        path,
        "/products"
            | "/products?limit=2&page=1&order=entity_id&dir=asc"
            | "/products/store/{S}"
            | "/products/category/{C}"
            | "/products/category/{C}/store/{S}"
            | "/products/store/{S}/category/{C}"
    );
    match (over, step.who, step.method, path) {
        // Read again after the walk's store-view update: its date is the moment of each pass.
        (Over::OpenMage, Admin, "GET", "/products/{P}/store/{S}") => Deliberate {
            fields: STOCK_DATA_EXTRA,
            volatile: &["updated_at"],
            ..Deliberate::NONE
        },
        (Over::OpenMage, Admin, "GET", _) if single_product => Deliberate {
            fields: STOCK_DATA_EXTRA,
            ..Deliberate::NONE
        },
        (Over::Magento2, Admin, "GET", _) if single_product => Deliberate {
            fields: SPEC_ADMIN_SINGLE_FIELDS,
            ..Deliberate::NONE
        },
        (Over::Magento2, Admin, "GET", _) if admin_list => Deliberate {
            fields: SPEC_ADMIN_LIST_FIELDS,
            ..Deliberate::NONE
        },
        (Over::Magento2, Admin, "GET", "/products/{new_product}") => Deliberate {
            fields: STOCK_DATA_EXTRA,
            ..Deliberate::NONE
        },
        (Over::Magento2, Admin, "GET", "/products/{new_product}/websites") => Deliberate::NONE,
        // A created product: its dates are the walk's own; created products are published
        // on the default store's website (docs/decisions/products-and-protocol.md), so a
        // shopper finds it, where the original's REST create left it on no website.
        (Over::OpenMage, Admin, "GET", "/products/{new_product}") => Deliberate {
            fields: STOCK_DATA_EXTRA,
            volatile: &["created_at", "updated_at"],
            ..Deliberate::NONE
        },
        (_, Guest, "GET", "/products/{new_product}") => Deliberate {
            status: Some((200, 404)),
            ..Deliberate::NONE
        },
        (_, Admin, "GET", "/products/{new_product}/websites") => Deliberate {
            fields: Known {
                gateway_only: &["[0]"],
                ..Known::NONE
            },
            ..Deliberate::NONE
        },
        // A shopper's `buy_now_url` carries the form key of the session of the call (the
        // store's differs on every call) and encodes the URL the store was called at.
        (Over::OpenMage, Customer | Guest, "GET", _) if single_product => Deliberate {
            volatile: &["buy_now_url"],
            ..Deliberate::NONE
        },
        (Over::OpenMage, Admin | Customer, "GET", "/customers/{me}/addresses") => Deliberate {
            fields: STREETS_FOLDED,
            ..Deliberate::NONE
        },
        (Over::OpenMage, Admin | Customer, "GET", "/customers/addresses/{my_addr}") => Deliberate {
            fields: STREET_FOLDED,
            ..Deliberate::NONE
        },
        // A created customer: the original showed the Admin its e-mail confirmation key, a
        // credential that confirms the account (the gateway never shows one).
        (_, Admin, "GET", "/customers/{new_customer}") => Deliberate {
            fields: Known {
                store_only: &["confirmation"],
                ..Known::NONE
            },
            volatile: &["created_at", "updated_at"],
            ..Deliberate::NONE
        },
        // What the walk changed or made: its dates are the moment of each pass.
        (Over::OpenMage, Customer, "GET", "/customers/{me}") if !xml => Deliberate {
            volatile: &["updated_at"],
            ..Deliberate::NONE
        },
        (Over::OpenMage, Customer, "GET", "/customers/addresses/{new_address}") => Deliberate {
            volatile: &["created_at", "updated_at"],
            ..Deliberate::NONE
        },
        (Over::OpenMage, Admin, "GET", "/orders/comments/{new_comment}") => Deliberate {
            volatile: &["created_at"],
            ..Deliberate::NONE
        },
        (Over::OpenMage, Customer, "GET", "/orders/{my_order}/comments") => Deliberate {
            volatile: &["*.created_at"],
            ..Deliberate::NONE
        },
        _ => Deliberate::NONE,
    }
}

fn compare(over: Over, original: &[(Step, Answer)], gateway: &[(Step, Answer)]) -> Vec<String> {
    assert_eq!(original.len(), gateway.len());
    let mut blocks = Vec::new();
    for ((step, theirs), (_, ours)) in original.iter().zip(gateway) {
        let expected = deliberate(over, step);
        let mut found = Vec::new();
        let status = (ours.status, theirs.status);
        let statuses_ok = match expected.status {
            Some(allowed) => status == allowed,
            None => status.0 == status.1,
        };
        if !statuses_ok {
            found.push(format!(
                "  status: gateway {} ({}), original {} ({})",
                ours.status,
                short(&ours.raw),
                theirs.status,
                short(&theirs.raw)
            ));
        } else if expected.status.is_some() {
            // A deliberate difference of status: the answers are not alike to compare.
        } else if ours.status < 300 {
            let location = |a: &Answer| a.location.clone().unwrap_or_default();
            let route = |l: String| -> String {
                l.split('/')
                    .map(|s| {
                        if s.bytes().all(|b| b.is_ascii_digit()) && !s.is_empty() {
                            "{id}"
                        } else {
                            s
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("/")
            };
            let (a, b) = match over {
                Over::OpenMage => (location(ours), location(theirs)),
                Over::Magento2 => (route(location(ours)), route(location(theirs))),
            };
            if a != b {
                found.push(format!("  Location: gateway {a:?}, original {b:?}"));
            }
            let volatile = |body: &Option<Value>| {
                body.clone().map(|mut v| {
                    for path in expected.volatile {
                        blank(&mut v, &path.split('.').collect::<Vec<_>>());
                    }
                    v
                })
            };
            match (&volatile(&ours.body), &volatile(&theirs.body)) {
                (Some(g), Some(s)) => found.extend(match over {
                    Over::OpenMage => compare::differences_with(g, s, &expected.fields, true),
                    Over::Magento2 => shape::differences(g, s, &expected.fields),
                }),
                (None, None) => {}
                _ => found.push(format!(
                    "  body: gateway {}, original {}",
                    short(&ours.raw),
                    short(&theirs.raw)
                )),
            }
        } else {
            let wanted = expected.message.or(theirs.message.as_deref());
            if ours.message.as_deref() != wanted {
                found.push(format!(
                    "  message: gateway {:?}, original {:?}",
                    ours.message, theirs.message
                ));
            }
        }
        if !found.is_empty() {
            blocks.push(format!("{}\n{}", step.label(), found.join("\n")));
        }
    }
    blocks
}

fn short(text: &str) -> String {
    let cut: String = text.chars().take(300).collect();
    if cut.len() < text.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

pub fn compare_openmage(original: &[(Step, Answer)], gateway: &[(Step, Answer)]) -> Vec<String> {
    compare(Over::OpenMage, original, gateway)
}

pub fn compare_magento2(original: &[(Step, Answer)], gateway: &[(Step, Answer)]) -> Vec<String> {
    compare(Over::Magento2, original, gateway)
}
