//! Where the start's warm-up stands, for `/readyz` and the log: the lookups every request
//! reads loaded (`records::lookups::keeper`), the previous hot answers refilled
//! (`front::warm_start`). Until it is done the instance says it is warming, not ready;
//! it is done within the warm start's bound, however far it got, and says how far.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;

/// How far the warm-up got.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// Lookups loaded, and those the store failed to give (fetched on demand).
    pub lookups: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lookups_failed: Vec<String>,
    /// Product ids whose SKU is known.
    pub product_ids: usize,
    /// Answers the record named (those this instance can refill), refilled, failed.
    pub hot_keys: usize,
    pub warmed: usize,
    pub failed: usize,
    /// Why there was nothing to refill (no record, another version's, cut short...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cold: Option<String>,
    /// Why the refill stopped before the end (time ran out, the store failing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// How long it took.
    pub millis: u64,
}

/// The warm-up's state, shared by the task doing it and `/readyz`, with what its own
/// requests need: the store it is for, and the Admin credential they carry.
#[derive(Default)]
pub struct WarmUp {
    done: AtomicBool,
    report: Mutex<Report>,
    finished: tokio::sync::Notify,
    /// Which store the hot keys are of (a digest of the back end's kind and URL): a record
    /// of another store's is not refilled.
    pub store: String,
    /// An Admin key made for this process alone (its digest is among the admin keys), for
    /// the refill of Admin answers; never written anywhere. None: no refill.
    credential: Option<crate::config::Secret>,
}

impl std::fmt::Debug for WarmUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WarmUp")
            .field("done", &self.is_done())
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl WarmUp {
    pub fn new(store: String, credential: Option<crate::config::Secret>) -> WarmUp {
        WarmUp {
            store,
            credential,
            ..WarmUp::default()
        }
    }

    /// The Admin key of the refill's own requests.
    pub fn credential(&self) -> Option<&crate::config::Secret> {
        self.credential.as_ref()
    }

    pub fn update(&self, change: impl FnOnce(&mut Report)) {
        if let Ok(mut report) = self.report.lock() {
            change(&mut report);
        }
    }

    pub fn report(&self) -> Report {
        self.report.lock().map(|r| r.clone()).unwrap_or_default()
    }

    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::SeqCst)
    }

    /// Done: the instance is ready (whatever the report says).
    pub fn finish(&self) {
        self.done.store(true, Ordering::SeqCst);
        self.finished.notify_waiters();
    }

    /// Until [`WarmUp::finish`].
    pub async fn wait(&self) {
        loop {
            let notified = self.finished.notified();
            if self.is_done() {
                return;
            }
            notified.await;
        }
    }
}
