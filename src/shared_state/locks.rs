//! Write locks: one writer at a time for one SKU's create or one customer's
//! read-modify-write, across every instance.
//!
//! Always a local mutex first (writers of this instance queue in memory, in order, without
//! polling Redis); with Redis, then a lease in Redis: `SET key token NX PX lease`, released
//! only by its holder (the token is compared in a script). The lease outlives any request
//! that can hold it (the upstream deadline plus a margin), so an instance that dies
//! mid-write frees the key by itself.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use tokio::sync::OwnedMutexGuard;

use super::SharedError;
use super::link::Link;

const RELEASE: &str = r#"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"#;

static RELEASE_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(RELEASE));

/// Held while writing; dropping it releases the lock (the Redis lease in the background).
#[derive(Debug)]
pub struct WriteLock {
    _local: OwnedMutexGuard<()>,
    remote: Option<(Arc<Link>, String, String)>,
}

impl Drop for WriteLock {
    fn drop(&mut self) {
        let Some((link, key, token)) = self.remote.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // No runtime to release on: the lease expires by itself.
            return;
        };
        runtime.spawn(async move {
            // A failed release leaves the lease to expire; nothing else to do.
            release(&link, &key, &token).await;
        });
    }
}

/// Deletes `key` if it still holds `token`: a holder whose lease ran out never frees
/// someone else's lock or claim.
pub(super) async fn release(link: &Link, key: &str, token: &str) {
    let mut conn = link.connection();
    let mut call = RELEASE_SCRIPT.key(key);
    call.arg(token);
    let _ = link
        .run("release", call.invoke_async::<i64>(&mut conn))
        .await;
}

#[derive(Debug)]
pub struct Locks {
    local: moka::sync::Cache<String, Arc<tokio::sync::Mutex<()>>>,
}

impl Default for Locks {
    fn default() -> Self {
        Locks {
            local: moka::sync::Cache::builder()
                .max_capacity(10_000)
                .time_to_idle(Duration::from_secs(60))
                .build(),
        }
    }
}

impl Locks {
    /// Takes the lock `name`, waiting at most `wait` for the Redis lease once this
    /// instance's turn came.
    pub async fn acquire(
        &self,
        link: Option<&Arc<Link>>,
        name: &str,
        lease: Duration,
        wait: Duration,
    ) -> Result<WriteLock, SharedError> {
        let mutex = self
            .local
            .get_with(name.to_owned(), || Arc::new(tokio::sync::Mutex::new(())));
        let local = mutex.lock_owned().await;
        let Some(link) = link else {
            return Ok(WriteLock {
                _local: local,
                remote: None,
            });
        };
        let key = link.keys.lock(name);
        let token = super::random_token();
        let give_up = tokio::time::Instant::now() + wait;
        let mut pause = Duration::from_millis(5);
        loop {
            let mut conn = link.connection();
            let taken: Option<String> = link
                .run(
                    "take lock",
                    redis::cmd("SET")
                        .arg(&key)
                        .arg(&token)
                        .arg("NX")
                        .arg("PX")
                        .arg(lease.as_millis() as u64)
                        .query_async(&mut conn),
                )
                .await?;
            if taken.is_some() {
                return Ok(WriteLock {
                    _local: local,
                    remote: Some((link.clone(), key, token)),
                });
            }
            let now = tokio::time::Instant::now();
            if now >= give_up {
                return Err(SharedError::Busy);
            }
            // Another instance writes: poll with a growing pause (a write takes a few
            // upstream round trips).
            tokio::time::sleep(pause.min(give_up - now)).await;
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }
}
