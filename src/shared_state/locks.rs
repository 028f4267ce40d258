//! Locks that make read-modify-write cycles on one thing take turns: creates of one SKU
//! (Magento's create is an upsert, so two at once would both "succeed"), and saves of one
//! customer (an address save sends the whole customer, so two at once would lose one).
//!
//! Keys are typed, so a SKU can never contend with a customer. A lock is a mutex of this
//! instance and, when instances share Redis (`STOREGATE_REDIS_URL`), a lease in Redis taken
//! after it (`shared_state`): writers of one instance queue in memory, and only the one
//! whose turn came asks Redis. [`Locks::lock`] is the whole interface.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Mutex, OwnedMutexGuard};

use crate::shared_state::{Lease, SharedError, SharedState};

/// What a lock is taken on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LockKey {
    /// Creates of one SKU.
    Sku(String),
    /// Read-modify-write cycles on one customer (their record and addresses).
    Customer(u64),
}

impl LockKey {
    /// The key's name in Redis (after the `storegate:lock:` prefix).
    pub fn name(&self) -> String {
        match self {
            LockKey::Sku(sku) => format!("sku:{sku}"),
            LockKey::Customer(id) => format!("customer:{id}"),
        }
    }
}

/// Held while the cycle runs; dropping it lets the next one in (and releases the lease).
#[derive(Debug)]
pub struct LockGuard {
    // Dropped in this order: the lease is released (in the background) before the next
    // local writer takes its turn and asks for it.
    _lease: Option<Lease>,
    _held: OwnedMutexGuard<()>,
}

/// The locks of this instance. A lock not used for a minute is forgotten.
#[derive(Debug)]
pub struct Locks {
    held: moka::sync::Cache<LockKey, Arc<Mutex<()>>>,
    shared: Option<Arc<SharedState>>,
}

impl Default for Locks {
    /// Locks of this instance only.
    fn default() -> Self {
        Locks {
            held: moka::sync::Cache::builder()
                .max_capacity(10_000)
                .time_to_idle(Duration::from_secs(60))
                .build(),
            shared: None,
        }
    }
}

impl Locks {
    /// Locks that also take a lease in Redis when `shared` has one.
    pub fn new(shared: Arc<SharedState>) -> Locks {
        Locks {
            shared: Some(shared),
            ..Locks::default()
        }
    }

    /// Waits for `key`'s turn. With Redis: `Err` when it cannot be asked (fail closed: a
    /// write not serialised with other instances' could lose theirs) or another instance
    /// holds the key past half of what is left of the request's deadline; as an `ApiError`,
    /// a 503 with `Retry-After`.
    pub async fn lock(&self, key: LockKey) -> Result<LockGuard, SharedError> {
        let name = key.name();
        let mutex = self.held.get_with(key, || Arc::new(Mutex::new(())));
        let held = mutex.lock_owned().await;
        let lease = match &self.shared {
            Some(shared) => shared.lease(&name).await?,
            None => None,
        };
        Ok(LockGuard {
            _lease: lease,
            _held: held,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_sku_and_a_customer_never_share_a_lock() {
        let locks = Locks::default();
        let _customer = locks.lock(LockKey::Customer(5)).await.unwrap();
        // Before the keys were typed, this SKU and customer 5 were one key.
        let sku = tokio::time::timeout(
            Duration::from_secs(1),
            locks.lock(LockKey::Sku("customer:5".into())),
        )
        .await;
        assert!(matches!(sku, Ok(Ok(_))));
        let again =
            tokio::time::timeout(Duration::from_millis(50), locks.lock(LockKey::Customer(5))).await;
        assert!(again.is_err(), "a second lock on customer 5 must wait");
    }
}
