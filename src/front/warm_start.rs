//! Warm restarts (issue 33, `STOREGATE_WARM_START`): an instance keeps a record of the
//! answers that are hot in its cache, and a restarted one refills them before `/readyz`
//! says ready, so that a deploy or a crash does not send every shopper down the cold path
//! at the store's busiest moment.
//!
//! - **The record.** Which answers, never their bodies: the fast-path keys of the answers
//!   the cache holds (`f|<audience>|<format>|<path?query>`, the most recently filled first,
//!   at most `max_keys`), in `hot-keys-<port>.json` in the data folder, with the record's
//!   version and a digest of the store it is of. Written every [`WRITE_EVERY`] in the
//!   background and once more when the instance drains (SIGTERM); to a temporary file
//!   renamed over the last, so a crash never leaves half a record. Named by the port so
//!   that instances sharing a data folder on one machine keep a record each.
//! - **The refill.** At start, after the lookups every request reads are loaded
//!   (`records::lookups::keeper`), each recorded answer is asked for again, as a client
//!   would (through the gateway's own service, in process), four at a time: Guest
//!   answers as a Guest, Admin answers with a key made for this process alone. A
//!   customer's answers are not refilled (that needs their identity, which the record does
//!   not keep), nor the original profile's unless it is the configured one (those come
//!   from OAuth consumers' signed calls). A miss fills the cache as any miss does; with
//!   Redis's second level configured, it is asked before the store.
//! - **Bounds.** Ready after `max_time` at the latest, however far the refill got; at most
//!   `max_keys` answers, four store reads' worth at a time; and the refill stops when
//!   [`FAILING`] answers in a row fail (the store is down: the rest would fail too).
//!   `/readyz` says `warming` until then, and afterwards how far it got; so does the log.
//! - **Bad records.** Missing (a first start), unreadable (cut short), of another version
//!   or of another store: one log line, and the instance starts cold.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::time::Instant;

use crate::app::AppState;
use crate::app::warm_up::WarmUp;
use crate::config::{Config, Secret};
use crate::context::profile::Profile;
use crate::records::lookups::keeper;
use crate::server::Serve;

use super::Service;

/// The record's format: a record of another is ignored.
const VERSION: u32 = 1;
/// What the record says it is.
const KIND: &str = "storegate hot keys";
/// How often the record is written while the instance serves.
pub const WRITE_EVERY: Duration = Duration::from_secs(60);
/// Answers refilled at once.
const AT_ONCE: usize = 4;
/// Failed answers in a row that stop the refill.
const FAILING: usize = 20;

#[derive(Debug, Serialize, Deserialize)]
struct Record {
    record: String,
    version: u32,
    store: String,
    /// Seconds since the epoch.
    written: u64,
    keys: Vec<String>,
}

/// The warm-up of a gateway being built: its state, with the store it is for and, when the
/// warm start is on, an Admin key of this process alone, whose digest joins `admin_digests`.
pub fn prepare(config: &Config, upstream_url: &str, admin_digests: &mut Vec<[u8; 32]>) -> WarmUp {
    let store = {
        let digest = Sha256::digest(
            format!(
                "{}\n{}\n{}",
                config.backend.as_str(),
                upstream_url.trim_end_matches('/'),
                config.default_store
            )
            .as_bytes(),
        );
        digest[..8].iter().map(|b| format!("{b:02x}")).collect()
    };
    let credential = (config.warm_start.enabled && !config.cache_ttl.is_zero()).then(|| {
        let mut bytes = [0u8; 24];
        getrandom::fill(&mut bytes).expect("the operating system's random generator");
        let key: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        admin_digests.push(crate::auth::admin_key_digest(&key));
        Secret::new(key)
    });
    WarmUp::new(store, credential)
}

/// Where an instance listening on `port` keeps its record.
pub fn record_path(config: &Config, port: u16) -> PathBuf {
    config.data_dir.join(format!("hot-keys-{port}.json"))
}

/// The warm-up of an instance listening on `port`, until it is done: the lookups loaded,
/// the previous hot answers refilled, within the bound; then the lookups kept fresh and
/// the record written in the background for as long as the gateway lives.
pub async fn run(app: &AppState, service: &Service, port: u16) {
    let started = Instant::now();
    let warm = app.config.warm_start;
    let until = started + warm.max_time;
    let loaded = keeper::load(app, until).await;
    app.warm_up.update(|report| {
        report.lookups = loaded.loaded.iter().map(|n| (*n).to_owned()).collect();
        report.lookups_failed = loaded
            .failed
            .iter()
            .map(|(name, why)| format!("{name}: {why}"))
            .collect();
        report.product_ids = loaded.product_ids;
    });
    if !loaded.failed.is_empty() || loaded.index_short.is_some() {
        tracing::warn!(
            failed = ?loaded.failed,
            product_index = loaded.index_short.as_deref().unwrap_or("whole"),
            "lookups not all loaded at start; requests fetch what is missing when they need it"
        );
    }
    let path = record_path(&app.config, port);
    if warm.enabled && app.cache.enabled() {
        refill(app, service, &path, until).await;
    }
    app.warm_up.update(|report| {
        report.millis = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
    });
    app.warm_up.finish();
    let report = app.warm_up.report();
    tracing::info!(
        lookups = report.lookups.len(),
        product_ids = report.product_ids,
        hot_keys = report.hot_keys,
        warmed = report.warmed,
        failed = report.failed,
        stopped = report.stopped.as_deref().unwrap_or("no"),
        millis = report.millis,
        "warm-up done: ready"
    );
    keeper::keep_fresh(app);
    if warm.enabled && app.cache.enabled() {
        keep_writing(app, port);
    }
}

/// Refills the answers the record names, within `until`.
async fn refill(app: &AppState, service: &Service, path: &Path, until: Instant) {
    let keys = match read(path, &app.warm_up.store) {
        Ok(keys) => keys,
        Err(why) => {
            tracing::info!(record = %path.display(), "warm start: {why}; starting cold");
            app.warm_up.update(|report| report.cold = Some(why));
            return;
        }
    };
    let credential = app.warm_up.credential().cloned();
    let profile = app.config.profile;
    let requests: Vec<Replay> = keys
        .iter()
        .filter_map(|key| Replay::of(key, profile))
        .take(app.config.warm_start.max_keys)
        .collect();
    app.warm_up
        .update(|report| report.hot_keys = requests.len());
    let mut answers = futures_util::stream::iter(requests)
        .map(|replay| {
            let service = service.clone();
            let credential = credential.clone();
            async move { replay.send(&service, credential.as_ref()).await }
        })
        .buffer_unordered(AT_ONCE);
    let mut failing = 0;
    loop {
        let next = match tokio::time::timeout_at(until, answers.next()).await {
            Ok(Some(status)) => status,
            Ok(None) => break,
            Err(_) => {
                app.warm_up
                    .update(|report| report.stopped = Some("time ran out".into()));
                break;
            }
        };
        match next {
            Some(status) if status.is_success() => {
                failing = 0;
                app.warm_up.update(|report| report.warmed += 1);
            }
            status => {
                // A 404 (the product is gone) is an answer; a 5xx or no answer is the store.
                let store_failed = status.is_none_or(|s| s.is_server_error());
                failing = if store_failed { failing + 1 } else { 0 };
                app.warm_up.update(|report| report.failed += 1);
                if failing >= FAILING {
                    app.warm_up.update(|report| {
                        report.stopped =
                            Some(format!("the store failed {FAILING} answers in a row"))
                    });
                    break;
                }
            }
        }
    }
}

/// One recorded answer asked for again.
struct Replay {
    path: String,
    accept: &'static str,
    admin: bool,
}

impl Replay {
    /// The request behind a fast-path key, if this instance can make it: a Guest or Admin
    /// read of the API in a format it answers, in the configured profile.
    fn of(key: &str, profile: Profile) -> Option<Replay> {
        let mut parts = key.splitn(4, '|');
        let (Some("f"), Some(audience), Some(format), Some(path)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        let (user, original) = match audience.strip_suffix("~o") {
            Some(user) => (user, true),
            None => (audience, false),
        };
        if original != (profile == Profile::Original) || !path.starts_with("/api/rest/") {
            return None;
        }
        let admin = match user {
            "guest" => false,
            "admin" => true,
            _ => return None,
        };
        let accept = match format {
            "json" => "application/json",
            "xml" => "application/xml",
            _ => return None,
        };
        Some(Replay {
            path: path.to_owned(),
            accept,
            admin,
        })
    }

    /// Its status, or None when the request could not be made.
    async fn send(
        &self,
        service: &Service,
        credential: Option<&Secret>,
    ) -> Option<http::StatusCode> {
        let mut request = http::Request::get(self.path.as_str())
            .header(http::header::ACCEPT, self.accept)
            .header(http::header::USER_AGENT, "storegate-warm-start");
        if self.admin {
            let key = credential?;
            request = request.header(
                http::header::AUTHORIZATION,
                format!("Bearer {}", key.expose()),
            );
        }
        let request = request.body(Body::empty()).ok()?;
        Some(service.serve(request).await.status())
    }
}

/// The keys of the record at `path`, when it is there, whole, of this version and of this
/// store; else why not.
fn read(path: &Path, store: &str) -> Result<Vec<String>, String> {
    let text = match std::fs::read(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err("no record of hot keys (a first start)".into());
        }
        Err(e) => return Err(format!("the record of hot keys cannot be read ({e})")),
    };
    let record: Record = serde_json::from_slice(&text)
        .map_err(|e| format!("the record of hot keys is not whole ({e})"))?;
    if record.record != KIND || record.version != VERSION {
        return Err(format!(
            "the record of hot keys is of another version ({})",
            record.version
        ));
    }
    if record.store != store {
        return Err("the record of hot keys is of another store".into());
    }
    Ok(record.keys)
}

/// Writes the record of the answers the cache holds now (the drain's last word, and the
/// background writer's). Failures are logged: a cold next start is all they cost.
pub async fn save(app: &AppState, port: u16) {
    if !app.config.warm_start.enabled || !app.cache.enabled() {
        return;
    }
    let path = record_path(&app.config, port);
    let record = Record {
        record: KIND.into(),
        version: VERSION,
        store: app.warm_up.store.clone(),
        written: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        keys: app.cache.fast_keys(app.config.warm_start.max_keys),
    };
    let written = tokio::task::spawn_blocking(move || write(&path, &record)).await;
    if let Ok(Err(error)) | Err(error) = written.map_err(|e| e.to_string()) {
        crate::observe::log_limit::warn(
            "hot keys not written",
            format_args!(
                "could not write the record of hot keys (the next start is cold): {error}"
            ),
        );
    }
}

fn write(path: &Path, record: &Record) -> Result<(), String> {
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder).map_err(|e| e.to_string())?;
    }
    let text = serde_json::to_vec(record).map_err(|e| e.to_string())?;
    let temporary = path.with_extension("json.tmp");
    std::fs::write(&temporary, text).map_err(|e| e.to_string())?;
    std::fs::rename(&temporary, path).map_err(|e| e.to_string())
}

/// Writes the record every [`WRITE_EVERY`] while the gateway lives and does not drain.
fn keep_writing(app: &AppState, port: u16) {
    let weak = Arc::downgrade(app);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(WRITE_EVERY).await;
            let Some(app) = weak.upgrade() else { return };
            if app.connections.draining() {
                return;
            }
            save(&app, port).await;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_guest_and_admin_reads_in_the_configured_profile_are_replayed() {
        let spec = Profile::Spec;
        let guest = Replay::of("f|guest|json|/api/rest/products/1?limit=5", spec).unwrap();
        assert_eq!(
            (guest.path.as_str(), guest.accept, guest.admin),
            ("/api/rest/products/1?limit=5", "application/json", false)
        );
        let admin = Replay::of("f|admin|xml|/api/rest/products/2", spec).unwrap();
        assert!(admin.admin && admin.accept == "application/xml");
        assert!(Replay::of("f|customer.g1|json|/api/rest/products/1", spec).is_none());
        assert!(Replay::of("f|guest~o|json|/api/rest/products/1", spec).is_none());
        assert!(Replay::of("f|guest~o|json|/api/rest/products/1", Profile::Original).is_some());
        assert!(Replay::of("b|guest|json|p/1", spec).is_none());
        assert!(Replay::of("f|guest|json|/metrics", spec).is_none());
    }

    #[test]
    fn a_record_missing_cut_short_or_of_another_version_or_store_is_refused() {
        let folder =
            std::env::temp_dir().join(format!("storegate-hot-keys-{}", std::process::id()));
        let path = folder.join("hot-keys-1.json");
        let _ = std::fs::remove_file(&path);
        assert!(read(&path, "s").unwrap_err().contains("no record"));
        let record = Record {
            record: KIND.into(),
            version: VERSION,
            store: "s".into(),
            written: 1,
            keys: vec!["f|guest|json|/api/rest/products/1".into()],
        };
        write(&path, &record).unwrap();
        assert_eq!(read(&path, "s").unwrap().len(), 1);
        assert!(read(&path, "t").unwrap_err().contains("another store"));
        let text = std::fs::read(&path).unwrap();
        std::fs::write(&path, &text[..text.len() / 2]).unwrap();
        assert!(read(&path, "s").unwrap_err().contains("not whole"));
        let other = String::from_utf8(text)
            .unwrap()
            .replace("\"version\":1", "\"version\":9");
        std::fs::write(&path, other).unwrap();
        assert!(read(&path, "s").unwrap_err().contains("another version"));
        let _ = std::fs::remove_dir_all(&folder);
    }
}
