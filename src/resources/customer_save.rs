//! The customer read-modify-write, verified: no write answered 200 is lost.
//!
//! Magento 2 writes addresses only by saving the whole customer, and has no version or
//! precondition on that save: two writers that read the same customer and save it one after
//! the other keep only the second one's addresses. The customer's lock (`crate::shared_state::locks`, with
//! a Redis lease across instances) keeps storegate's own writers, on every instance, one at
//! a time; nothing can make the store's own admin panel or website take that lock. So every save is checked: after it, the
//! customer is read back, and what the write meant to change and to keep must be there. If
//! another writer raced it, it is tried again from a fresh read, up to [`ATTEMPTS`] times;
//! then the answer is a 409 with the API's error body, never a 200.
//!
//! What is compared is what Magento answered to our own save, not what we sent: Magento
//! normalises values (types, whitespace, region objects), and the save's answer shows them
//! normalised the same way a read does.

use serde_json::Value;

use crate::app::AppState;
use crate::cache::keys::tag;
use crate::http::ApiError;
use crate::rules::mapping::convert::scalar_text;
use crate::rules::privacy::{redact, reference_error};
use crate::rules::write_outcome;
use crate::shared_state::locks::LockKey;

/// Tries of one write before it gives up with a 409.
pub(super) const ATTEMPTS: usize = 3;

/// What to do, decided from a fresh read of the customer.
pub(super) enum Plan<T> {
    /// The write's effect is already there (an earlier try's save survived): answer `T`.
    Done(T),
    /// Save this customer.
    Save(Value),
}

/// What a verified write needs to know.
pub(super) trait Intent {
    type Output: Clone;
    /// From a fresh read, and what the previous try produced (if it got that far).
    fn plan(
        &mut self,
        stored: &Value,
        previous: Option<&Self::Output>,
    ) -> Result<Plan<Self::Output>, ApiError>;
    /// From Magento's answer to the save and the customer read back after it: `Ok` when
    /// the write's intent shows, else `Err` with what the save produced, if anything.
    fn verify(&mut self, saved: &Value, now: &Value) -> Result<Self::Output, Option<Self::Output>>;
}

/// Runs `intent` on customer `customer_id` under its write lock, verified.
pub(super) async fn save_verified<I: Intent + Send>(
    app: &AppState,
    customer_id: u64,
    intent: &mut I,
) -> Result<I::Output, ApiError>
where
    I::Output: Send,
{
    let _turn = app.locks.lock(LockKey::Customer(customer_id)).await?;
    let mut previous = None;
    for attempt in 0..ATTEMPTS {
        if attempt > 0 {
            app.metrics.customer_write_retried();
        }
        let stored = app.backend.customer(customer_id).await.map_err(redact)?;
        let to_save = match intent.plan(&stored, previous.as_ref())? {
            Plan::Done(output) => return Ok(output),
            Plan::Save(customer) => customer,
        };
        let saved = app.backend.save_customer(customer_id, to_save).await;
        if saved.is_err() {
            // A save Magento may still apply after this (timed out, connection lost) can
            // change the customer's group, which decides their prices and is the one
            // customer entry in the cache: held off, not just forgotten, so that a read in
            // between does not keep the group from before the landing (`write_outcome`).
            write_outcome::touched(&app.cache, &saved, &[tag::customer_group(customer_id)]);
        }
        let saved = saved.map_err(|error| write_outcome::answer(error, reference_error))?;
        let now = app.backend.customer(customer_id).await.map_err(redact)?;
        match intent.verify(&saved, &now) {
            Ok(output) => return Ok(output),
            Err(produced) => {
                if produced.is_some() {
                    previous = produced;
                }
                // No customer data in the log: the attempt number says enough.
                tracing::warn!(
                    attempt = attempt + 1,
                    "customer changed by another writer during a save; trying again"
                );
            }
        }
    }
    app.metrics.customer_write_conflicted();
    Err(conflict())
}

/// The 409 of a write that kept racing another writer.
pub(super) fn conflict() -> ApiError {
    ApiError::new(
        http::StatusCode::CONFLICT,
        "The customer was changed by another writer at the same time. Read it and try again.",
    )
    .with_cause("customer write raced another writer on every try")
}

/// The values under `keys` are the same in `a` and `b` (as text, so that `1` and `"1"`
/// agree).
pub(super) fn same_values<'k>(
    a: &Value,
    b: &Value,
    keys: impl IntoIterator<Item = &'k str>,
) -> bool {
    keys.into_iter().all(|key| match (a.get(key), b.get(key)) {
        (None, None) => true,
        (Some(x), Some(y)) if x == y => true,
        (Some(x), Some(y)) if !x.is_object() && !x.is_array() => {
            scalar_text(x).trim() == scalar_text(y).trim()
        }
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_compare_as_magento_shows_them() {
        let a = json!({"group_id": 1, "firstname": "Jane", "street": ["a", "b"]});
        let b = json!({"group_id": "1", "firstname": "Jane ", "street": ["a", "b"]});
        assert!(same_values(
            &a,
            &b,
            ["group_id", "firstname", "street", "missing"]
        ));
        let c = json!({"group_id": 2, "street": ["a"]});
        assert!(!same_values(&a, &c, ["group_id"]));
        assert!(!same_values(&a, &c, ["street"]));
        assert!(!same_values(&a, &json!({}), ["firstname"]));
    }
}
