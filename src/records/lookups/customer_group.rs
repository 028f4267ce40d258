//! The customer group a caller's prices are for: the NOT LOGGED IN group for a Guest, the
//! customer's `group_id` for a Customer (read from Magento and kept in the cache, keyed by
//! the customer, never served to anyone).
//!
//! The group decides which tier prices a shopper sees (`crate::rules::pricing`), so a product body
//! that shows tier prices is cached per group (`Caller::price_group`), never shared between
//! groups. Changing a customer through the gateway forgets their group at once; a change
//! made in Magento's admin reaches the gateway within `STOREGATE_CACHE_TTL_SECS`.

use crate::app::AppState;
use crate::auth::Principal;
use crate::cache::keys::{key, tag};
use crate::cache::{self, Fetched};
use crate::http::ApiError;
use crate::rules::mapping::convert::as_i64;
use crate::rules::pricing::NOT_LOGGED_IN;
use crate::rules::privacy::redact;

/// The customer group of `principal`. Admin has no group of its own and sees every group's
/// prices in its own shape; it is given the NOT LOGGED IN group here.
pub async fn of(app: &AppState, principal: Principal) -> Result<u64, ApiError> {
    let Principal::Customer(id) = principal else {
        return Ok(NOT_LOGGED_IN);
    };
    let backend = app.backend.clone();
    let (entry, _) = app
        .cache
        .get_or_fetch(&key::customer_group(id), move || async move {
            let group = match backend.customer(id).await {
                Ok(customer) => customer
                    .get("group_id")
                    .and_then(as_i64)
                    .filter(|&g| g >= 0)
                    .map(|g| g as u64)
                    .ok_or_else(|| {
                        ApiError::bad_gateway().with_cause("customer record has no group_id")
                    })?,
                // A valid token of a customer Magento no longer has: anonymous prices,
                // which are nobody's secret.
                Err(e) if e.is_not_found() => NOT_LOGGED_IN,
                Err(e) => return Err(redact(e)),
            };
            Ok::<_, ApiError>(Fetched::new(
                cache::Value::Text(group.to_string().into()),
                vec![tag::customer_group(id)],
            ))
        })
        .await?;
    parse(&entry.value)
        .ok_or_else(|| ApiError::internal().with_cause("customer group entry holds no group"))
}

/// The entry's text is the group's number; `fast_path` reads it too.
fn parse(value: &cache::Value) -> Option<u64> {
    match value {
        cache::Value::Text(text) => text.parse().ok(),
        _ => None,
    }
}
