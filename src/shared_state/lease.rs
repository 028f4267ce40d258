//! Lock leases in Redis: the cross-instance half of `crate::shared_state::locks` (the local mutex is the
//! other half, taken first).
//!
//! `SET lock:<name> <random token> NX PX <lease>`, released only by its holder (the token is
//! compared in a script). The lease outlives any request that can hold it (the upstream
//! deadline plus a margin), so an instance that dies mid-write frees the key by itself.
//!
//! A take that failed (Redis hung past the deadline, the connection lost) may still run
//! when Redis resumes: the command was sent. Such a lease would then be held by nobody until
//! it expires, and every write of that record refused meanwhile (after a 15 s hang, for the
//! lease's 7 s). So a failed take is **abandoned**: released at once (queued behind the take
//! on the same connection, and sent whole, so that it runs even in a Redis that lost its
//! scripts) and again once Redis answers after the outage (`Link::abandon`). A release that
//! failed is remembered the same way.

use std::sync::Arc;
use std::time::Duration;

use super::SharedError;
use super::link::Link;

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
            release(&link, &key, &token).await;
        });
    }
}

/// Deletes `key` if it still holds `token`: a holder whose lease ran out never frees
/// someone else's lock or claim.
pub(super) async fn release(link: &Link, key: &str, token: &str) {
    if link.release_if_held(key, token).await.is_err() {
        // Queued, perhaps, and run when Redis resumes; if not, let go once it answers
        // rather than held until it expires.
        link.remember_abandoned(key, token);
    }
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
        let taken: Option<String> = match link
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
            .await
        {
            Ok(taken) => taken,
            Err(error) => {
                // Sent, perhaps, and run when Redis resumes: never to be held by nobody.
                link.abandon(&key, &token);
                return Err(error);
            }
        };
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
