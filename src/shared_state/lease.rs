//! Lock leases in Redis: the cross-instance half of `crate::shared_state::locks` (the local mutex is the
//! other half, taken first).
//!
//! `SET lock:<name> <random token> NX PX <lease>`, released only by its holder (the token is
//! compared in a script). The lease outlives any request that can hold it (the upstream
//! deadline plus a margin), so an instance that dies mid-write frees the key by itself.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use super::SharedError;
use super::link::Link;

const RELEASE: &str = r#"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"#;

static RELEASE_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(RELEASE));

/// A lease held in Redis; dropping it releases it (in the background).
#[derive(Debug)]
pub struct Lease {
    link: Option<Arc<Link>>,
    key: String,
    token: String,
}

impl Drop for Lease {
    fn drop(&mut self) {
        let Some(link) = self.link.take() else {
            return;
        };
        let (key, token) = (
            std::mem::take(&mut self.key),
            std::mem::take(&mut self.token),
        );
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

/// Takes the lease `name`, polling while another instance holds it, for at most `wait`.
pub async fn acquire(
    link: &Arc<Link>,
    name: &str,
    lease: Duration,
    wait: Duration,
) -> Result<Lease, SharedError> {
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
            return Ok(Lease {
                link: Some(link.clone()),
                key,
                token,
            });
        }
        let now = tokio::time::Instant::now();
        if now >= give_up {
            return Err(SharedError::Busy);
        }
        // Another instance writes: poll with a growing pause (a write takes a few upstream
        // round trips).
        tokio::time::sleep(pause.min(give_up - now)).await;
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}
