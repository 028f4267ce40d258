//! Entries renewed before they expire: how the lookups every request reads (store views,
//! their configuration, the directory) stay fresh without a request ever waiting for them
//! (`records::lookups::keeper` calls these in the background, issue 33).

use std::future::Future;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::{Cache, FetchError, Fetched};

impl Cache {
    /// Fetches `key` now and replaces its entry, however fresh it is (coalesced with anyone
    /// fetching it at that moment). Nothing without a cache.
    pub async fn renew<F, Fut, E>(&self, key: &str, fetch: F) -> Result<(), E>
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = Result<Fetched, E>> + Send + 'static,
        E: FetchError + Send + Sync + 'static,
    {
        if self.store.is_none() {
            return Ok(());
        }
        let fetch = move || Box::pin(fetch());
        self.refresh(key.into(), fetch, true).await.map(|_| ())
    }

    /// How much longer the entry under `key` stays fresh, when there is a valid one whose
    /// last refresh did not fail: read without counting a hit in the cache's statistics.
    pub async fn freshness_left(&self, key: &str) -> Option<Duration> {
        let entry = self.store.as_ref()?.get(key).await?;
        if !self.usable(&entry) || entry.refresh_failed.load(Ordering::Relaxed) {
            return None;
        }
        Some(self.remaining(&entry))
    }
}
