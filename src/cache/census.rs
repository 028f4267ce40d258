//! What the cache holds, listed: the keys of the answers it keeps for the fast path, for
//! the warm-start record (`front::warm_start`, issue 33). Which entries, never their bodies.

use std::sync::atomic::Ordering;

use super::Cache;

impl Cache {
    /// Up to `max` fast-path keys (`f|<audience>|<format>|<path?query>`, `keys::key::fast`)
    /// of answers held now and still valid, the most recently filled first (the cache's own
    /// eviction policy keeps the popular ones; what it holds is what was hot). A walk over
    /// every entry: for a writer in the background, not for a request.
    pub fn fast_keys(&self, max: usize) -> Vec<String> {
        let Some(store) = &self.store else {
            return Vec::new();
        };
        let mut found: Vec<(u64, String)> = store
            .iter()
            .filter(|(key, entry)| {
                key.starts_with("f|")
                    && self.usable(entry)
                    && !entry.refresh_failed.load(Ordering::Relaxed)
            })
            .map(|(key, entry)| (entry.generation, key.to_string()))
            .collect();
        found.sort_unstable_by_key(|entry| std::cmp::Reverse(entry.0));
        found.truncate(max);
        found.into_iter().map(|(_, key)| key).collect()
    }
}
