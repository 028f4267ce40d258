//! The customer group a caller's prices are for: the NOT LOGGED IN group for a Guest, the
//! customer's `group_id` for a Customer (read from the store and kept in the cache, keyed by
//! the customer, never served to anyone), and, for a store that renders for each customer
//! and a customer the back end holds a store session for, where their tax is computed for.
//! A sign-in (which may bring a session) forgets the entry.
//!
//! The group decides which tier prices a shopper sees (`crate::rules::pricing`), so a product body
//! that shows tier prices is cached per group (`Caller::price_group`), never shared between
//! groups. Changing a customer through the gateway forgets their group at once; a change
//! made in the store's admin reaches the gateway within `STOREGATE_CACHE_TTL_SECS`.

use crate::app::AppState;
use crate::auth::Principal;
use crate::cache::keys::{key, tag};
use crate::cache::{self, Fetched};
use crate::http::ApiError;
use crate::rules::mapping::convert::as_i64;
use serde_json::Value;

use crate::backend::port::Backend;
use crate::rules::pricing::{self, PriceGroup};
use crate::rules::privacy::redact;

/// The customer group of `principal`, and (for a store that renders for each customer) their
/// tax destination ([`PriceGroup`]). Admin has no group of its own and sees every group's
/// prices in its own shape; it is given the anonymous shoppers' here.
pub async fn of(app: &AppState, principal: Principal) -> Result<PriceGroup, ApiError> {
    let Principal::Customer(id) = principal else {
        return Ok(PriceGroup::ANONYMOUS);
    };
    let backend = app.backend.clone();
    let (entry, _) = app
        .cache
        .get_or_fetch(&key::customer_group(id), move || async move {
            let prices = match backend.customer(id).await {
                Ok(customer) => {
                    let group = customer
                        .get("group_id")
                        .and_then(as_i64)
                        .filter(|&g| g >= 0)
                        .map(|g| g as u64)
                        .ok_or_else(|| {
                            ApiError::bad_gateway().with_cause("customer record has no group_id")
                        })?;
                    // The store's answers to this customer are theirs (keyed by their tax
                    // destination) only when the back end can ask the store as them; without
                    // a session their prices are worked out for the group alone, and keyed
                    // so (never mixed with the store's own).
                    let destination = backend
                        .has_session(id)
                        .await
                        .then(|| destination(&*backend, &customer));
                    PriceGroup { group, destination }
                }
                // A valid token of a customer Magento no longer has: anonymous prices,
                // which are nobody's secret.
                Err(e) if e.is_not_found() => PriceGroup::ANONYMOUS,
                Err(e) => return Err(redact(e)),
            };
            Ok::<_, ApiError>(Fetched::new(
                cache::Value::Text(prices.to_text().into()),
                vec![tag::customer_group(id)],
            ))
        })
        .await?;
    parse(&entry.value)
        .ok_or_else(|| ApiError::internal().with_cause("customer group entry holds no group"))
}

/// Keeps the group the store named at a customer's sign-in (`SignedIn::group`), as [`of`]
/// would have found it (a store that prices from the group keeps no session of theirs, so
/// there is no tax destination to work out); an entry already there stays.
pub async fn remember(app: &AppState, customer_id: u64, group: u64) {
    if app.backend.has_session(customer_id).await {
        return;
    }
    let prices = PriceGroup {
        group,
        destination: None,
    };
    let _ = app
        .cache
        .get_or_fetch(&key::customer_group(customer_id), move || async move {
            Ok::<_, ApiError>(Fetched::new(
                cache::Value::Text(prices.to_text().into()),
                vec![tag::customer_group(customer_id)],
            ))
        })
        .await;
}

/// Where the store computes `customer`'s tax: their default billing and shipping addresses.
fn destination(backend: &dyn Backend, customer: &Value) -> u64 {
    let addresses = backend.addresses_of(customer);
    let default = |flag: &str| {
        addresses
            .iter()
            .find(|a| a.get(flag).and_then(Value::as_bool) == Some(true))
    };
    pricing::tax_destination(default("default_billing"), default("default_shipping"))
}

/// The entry's text ([`PriceGroup::to_text`]); `fast_path` reads it too.
pub fn parse(value: &cache::Value) -> Option<PriceGroup> {
    match value {
        cache::Value::Text(text) => PriceGroup::from_text(text),
        _ => None,
    }
}
