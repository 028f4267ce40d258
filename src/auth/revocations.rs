//! Customer revocations kept durably: in the OAuth store (SQL), beside the OAuth tokens,
//! with Redis as the fast path between running instances.
//!
//! Why: a customer token (`sg1...`) is signed, never stored, so the only thing that refuses
//! a deleted customer's token is a "revoked at" mark. Those marks lived in each instance's
//! memory and in Redis; a Redis restarted empty forgot them, and an instance started after
//! it accepted the deleted customer's token. Now:
//!
//! - [`Revocations::revoke_customer`] applies the mark here at once (and hands it to Redis
//!   through the token issuer's listener), forgets the customer's verified OAuth tokens on
//!   every instance, and writes the mark with the OAuth tokens' revocation in one store
//!   transaction. When the store fails at that moment the write is **kept and retried**
//!   every second until it lands ([`Durability::Pending`]): the revocation has happened on
//!   every running instance, and is never lost to a restart of Redis.
//! - [`Revocations::spawn_sync`] loads the marks of the last token lifetime at start
//!   (retrying while the store is down) and again every [`SYNC_EVERY`], which also carries
//!   another instance's revocation here when there is no Redis, and prunes marks that can no
//!   longer refuse anything.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use super::TokenIssuer;
use super::oauth::OAuth;
use super::token::now_ms;

/// How often the marks are read again from the store.
pub const SYNC_EVERY: Duration = Duration::from_secs(5);
/// How often a revocation the store could not take is tried again.
const RETRY_EVERY: Duration = Duration::from_secs(1);
/// How often marks past every token's lifetime are dropped from the store.
const PRUNE_EVERY: Duration = Duration::from_secs(3600);
/// How long a start waits for the first load before it serves anyway (the store down at
/// start: the load goes on in the background, and Redis's copy of the marks still applies).
pub const START_WAIT: Duration = Duration::from_secs(5);

/// Whether a revocation is in the store yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Written with the OAuth tokens' revocation.
    Written,
    /// Applied on every running instance; the store failed, and the write is retried
    /// until it lands.
    Pending,
    /// No OAuth store (a gateway built without it): this instance and Redis only.
    NotKept,
}

#[derive(Debug)]
pub struct Revocations {
    tokens: Arc<TokenIssuer>,
    oauth: Option<Arc<OAuth>>,
    /// (customer, at ms) the store has not taken yet.
    pending: Mutex<Vec<(u64, u64)>>,
    retrying: AtomicBool,
    /// True once the store's marks were loaded (or there is no store).
    loaded: tokio::sync::watch::Sender<bool>,
}

impl Revocations {
    pub fn new(tokens: Arc<TokenIssuer>, oauth: Option<Arc<OAuth>>) -> Arc<Revocations> {
        Arc::new(Revocations {
            loaded: tokio::sync::watch::Sender::new(oauth.is_none()),
            tokens,
            oauth,
            pending: Mutex::new(Vec::new()),
            retrying: AtomicBool::new(false),
        })
    }

    /// Waits, at most `bound`, for the store's marks to be loaded: a start does not serve
    /// before it knows which customer tokens are revoked. False when the bound passed.
    pub async fn loaded_within(&self, bound: Duration) -> bool {
        let mut loaded = self.loaded.subscribe();
        let done = tokio::time::timeout(bound, loaded.wait_for(|done| *done))
            .await
            .is_ok_and(|seen| seen.is_ok());
        if !done {
            tracing::warn!(
                "serving before the customer revocations kept in the OAuth store were loaded \
                 (the store does not answer); they are loaded as soon as it does"
            );
        }
        done
    }

    /// Refuses every credential of a customer issued so far, Bearer and OAuth, on every
    /// instance, and keeps it ([module docs](self)).
    pub async fn revoke_customer(self: &Arc<Self>, customer_id: u64) -> Durability {
        let at = self.tokens.revoke_customer(customer_id);
        let Some(oauth) = &self.oauth else {
            return Durability::NotKept;
        };
        match oauth.revoke_customer(customer_id, at).await {
            Ok(_) => Durability::Written,
            Err(error) => {
                crate::observe::log_limit::warn(
                    "revocation_pending",
                    format_args!(
                        "a customer's revocation is applied but not kept yet ({error}): \
                         retried every second until the OAuth store takes it"
                    ),
                );
                self.lock().push((customer_id, at));
                self.retry_pending();
                Durability::Pending
            }
        }
    }

    /// Revocations the store has not taken yet.
    pub fn pending(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u64, u64)>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn retry_pending(self: &Arc<Self>) {
        if self.retrying.swap(true, Ordering::AcqRel) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            self.retrying.store(false, Ordering::Release);
            return;
        };
        let weak = Arc::downgrade(self);
        runtime.spawn(async move {
            loop {
                tokio::time::sleep(RETRY_EVERY).await;
                let Some(this) = weak.upgrade() else { return };
                let Some(oauth) = &this.oauth else { return };
                let waiting = std::mem::take(&mut *this.lock());
                for (customer, at) in waiting {
                    if oauth.revoke_customer(customer, at).await.is_err() {
                        this.lock().push((customer, at));
                    }
                }
                if this.lock().is_empty() {
                    this.retrying.store(false, Ordering::Release);
                    // One pushed in between, whose caller saw this loop still running.
                    if this.lock().is_empty() || this.retrying.swap(true, Ordering::AcqRel) {
                        return;
                    }
                }
            }
        });
    }

    /// Reads the store's marks now: those of the last token lifetime applied here.
    pub async fn load(&self) -> Result<usize, String> {
        let Some(oauth) = &self.oauth else {
            return Ok(0);
        };
        let horizon = now_ms().saturating_sub(self.tokens.ttl().as_millis() as u64);
        let marks = oauth
            .store()
            .customer_revocations(horizon)
            .await
            .map_err(|e| e.to_string())?;
        for (customer, at) in &marks {
            self.tokens.apply_revocation(*customer, *at);
        }
        Ok(marks.len())
    }

    /// At start: the marks loaded (retried every second while the store fails), then read
    /// again every [`SYNC_EVERY`]; old marks pruned now and then. Ends with the gateway.
    pub fn spawn_sync(self: &Arc<Self>) {
        if self.oauth.is_none() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let weak: Weak<Revocations> = Arc::downgrade(self);
        runtime.spawn(async move {
            let mut loaded = false;
            let mut pruned_at: Option<tokio::time::Instant> = None;
            loop {
                let pause = {
                    let Some(this) = weak.upgrade() else { return };
                    match this.load().await {
                        Ok(count) => {
                            if !loaded {
                                tracing::info!(
                                    marks = count,
                                    "customer revocations loaded from the OAuth store"
                                );
                                this.loaded.send_replace(true);
                            }
                            loaded = true;
                            if pruned_at.is_none_or(|at| at.elapsed() >= PRUNE_EVERY) {
                                this.prune().await;
                                pruned_at = Some(tokio::time::Instant::now());
                            }
                            SYNC_EVERY
                        }
                        Err(error) if !loaded => {
                            crate::observe::log_limit::warn(
                                "revocations_not_loaded",
                                format_args!(
                                    "customer revocations not loaded from the OAuth store \
                                     yet ({error}); tried again every second"
                                ),
                            );
                            RETRY_EVERY
                        }
                        Err(_) => SYNC_EVERY,
                    }
                };
                tokio::time::sleep(pause).await;
            }
        });
    }

    async fn prune(&self) {
        if let Some(oauth) = &self.oauth {
            // A mark older than a token's lifetime matches no token still valid.
            let before = now_ms().saturating_sub(self.tokens.ttl().as_millis() as u64 + 60_000);
            let _ = oauth.store().prune_revocations(before).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::oauth::fake_store::Fake;
    use crate::auth::oauth::store::TokenStore;

    fn built(store: &Arc<Fake>) -> (Arc<Revocations>, Arc<TokenIssuer>) {
        let tokens = Arc::new(TokenIssuer::new(b"k".to_vec(), Duration::from_secs(3600)));
        let store: Arc<dyn TokenStore> = store.clone();
        let oauth = Arc::new(OAuth::new(
            store,
            &crate::config::Config::default(),
            b"secret",
        ));
        (Revocations::new(tokens.clone(), Some(oauth)), tokens)
    }

    #[tokio::test]
    async fn a_revocation_the_store_could_not_take_applies_at_once_and_lands_later() {
        let store = Arc::new(Fake::default());
        let (revocations, tokens) = built(&store);
        let token = tokens.issue(7).token;
        tokio::time::sleep(Duration::from_millis(5)).await;
        store.down.store(true, Ordering::SeqCst);
        assert_eq!(revocations.revoke_customer(7).await, Durability::Pending);
        assert!(tokens.verify(&token).is_err(), "refused at once");
        assert_eq!(revocations.pending(), 1);
        store.down.store(false, Ordering::SeqCst);
        let began = std::time::Instant::now();
        while revocations.pending() > 0 {
            assert!(began.elapsed() < Duration::from_secs(3), "never written");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(revocations.revoke_customer(8).await, Durability::Written);
    }

    #[tokio::test]
    async fn the_start_waits_for_the_marks_but_not_for_ever() {
        let store = Arc::new(Fake::default());
        let (revocations, _) = built(&store);
        revocations.spawn_sync();
        assert!(revocations.loaded_within(Duration::from_secs(2)).await);

        let store = Arc::new(Fake::default());
        store.hung.store(true, Ordering::SeqCst);
        let (revocations, _) = built(&store);
        revocations.spawn_sync();
        assert!(!revocations.loaded_within(Duration::from_millis(300)).await);
    }
}
