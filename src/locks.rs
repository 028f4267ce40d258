//! Locks that make read-modify-write cycles on one thing take turns: creates of one SKU
//! (Magento's create is an upsert, so two at once would both "succeed"), and saves of one
//! customer (an address save sends the whole customer, so two at once would lose one).
//!
//! Keys are typed, so a SKU can never contend with a customer. The locks hold within this
//! instance; [`Locks::lock`] is the whole interface, so a store shared by every instance
//! (Redis, say) can back it without the resources noticing.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Mutex, OwnedMutexGuard};

/// What a lock is taken on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LockKey {
    /// Creates of one SKU.
    Sku(String),
    /// Read-modify-write cycles on one customer (their record and addresses).
    Customer(u64),
}

/// Held while the cycle runs; dropping it lets the next one in.
#[derive(Debug)]
pub struct LockGuard {
    _held: OwnedMutexGuard<()>,
}

/// The locks of this instance. A lock not used for a minute is forgotten.
#[derive(Debug)]
pub struct Locks {
    held: moka::sync::Cache<LockKey, Arc<Mutex<()>>>,
}

impl Default for Locks {
    fn default() -> Self {
        Locks {
            held: moka::sync::Cache::builder()
                .max_capacity(10_000)
                .time_to_idle(Duration::from_secs(60))
                .build(),
        }
    }
}

impl Locks {
    /// Waits for `key`'s turn.
    pub async fn lock(&self, key: LockKey) -> LockGuard {
        let mutex = self.held.get_with(key, || Arc::new(Mutex::new(())));
        LockGuard {
            _held: mutex.lock_owned().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_sku_and_a_customer_never_share_a_lock() {
        let locks = Locks::default();
        let _customer = locks.lock(LockKey::Customer(5)).await;
        // Before the keys were typed, this SKU and customer 5 were one key.
        let sku = tokio::time::timeout(
            Duration::from_secs(1),
            locks.lock(LockKey::Sku("customer:5".into())),
        )
        .await;
        assert!(sku.is_ok());
        let again =
            tokio::time::timeout(Duration::from_millis(50), locks.lock(LockKey::Customer(5))).await;
        assert!(again.is_err(), "a second lock on customer 5 must wait");
    }
}
