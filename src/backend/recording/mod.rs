//! Recording real store traffic to cassettes, and replaying it: a deterministic store for
//! tests, laptops and CI, with no store and no secrets. It knows no store: each back end
//! hands it the [`Wires`] of its own.
//!
//! Everything here sits at one seam, the upstream client's [`Transport`]:
//! - `STOREGATE_RECORD_DIR=DIR` wraps the transport in a [`recorder::Recorder`] that
//!   appends every exchange, scrubbed ([`scrub`], [`mask`]), to the cassettes of DIR
//!   ([`cassette`], [`library`]; [`wire_form`] converts).
//! - `STOREGATE_UPSTREAM_URL=replay:DIR` replaces it by a [`replay::Replay`] that answers
//!   from DIR ([`matching`] says what "the same request" means), in the mode of
//!   `STOREGATE_REPLAY_MODE`.
//! - `storegate replay DIR --listen ADDR` serves the same [`replay::Replay`] over HTTP
//!   ([`server`]'s router, served by `crate::cli::replay`) as a standalone Magento 2.
//! - `storegate cassette import-har FILE DIR` turns a browser's or mitmproxy's HAR export
//!   into cassettes ([`har`]).
//! - The test bench on top of replay: delays ([`latency`]), faults with a probability
//!   ([`faults`], the store's own failures in [`failures`]), both drawn per call with a
//!   seed ([`bench`]) and changed at run time through `storegate replay`'s control API
//!   ([`control`]); answers that age ([`ageing`]). [`spec`] reads their rules.
//!
//! docs/recording.md is the user's guide.

pub mod ageing;
pub mod bench;
pub mod cassette;
pub mod control;
pub mod drift;
pub mod failures;
pub mod faults;
pub mod har;
pub mod json_path;
pub mod latency;
pub mod library;
pub mod mask;
pub mod matching;
pub mod recorder;
pub mod replay;
pub mod scrub;
pub mod server;
pub mod spec;
pub mod wire_form;
pub mod wires;

pub use wires::Wires;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::backend::transport::{HttpTransport, Transport};
use crate::config::{REPLAY_SCHEME, Recording};
use ageing::Ageing;
use bench::Bench;
use library::Library;
use matching::Ignore;
use replay::{Mode, Refresh, Replay};
use scrub::{Rules, Scrubber};

/// The fakes' key when `STOREGATE_RECORD_MASK_PII` is on without `STOREGATE_RECORD_MASK_KEY`:
/// consistent fakes, but someone who guesses an e-mail can check the guess. Set a key for
/// real customers' data.
const DEFAULT_MASK_KEY: &[u8] = b"storegate-pii-mask";

/// The scrubber of these settings for `wires`' exchanges; `secrets` (the gateway's
/// credential) are scrubbed anywhere.
pub fn scrubber(settings: &Recording, secrets: &[&str], wires: Wires) -> Result<Scrubber, String> {
    let mask_key = settings.mask_pii.then(|| {
        settings
            .mask_key
            .as_ref()
            .map_or(DEFAULT_MASK_KEY.to_vec(), |k| {
                k.expose().as_bytes().to_vec()
            })
    });
    Scrubber::new(
        &Rules {
            headers: settings.scrub_headers.clone(),
            json_paths: settings.scrub_json_paths.clone(),
            patterns: settings.scrub_patterns.clone(),
            mask_key,
        },
        secrets,
        wires,
    )
}

/// The bench's settings (`STOREGATE_REPLAY_LATENCY`, `_FAULTS`, `_MAX_AGE`, `_STALE`),
/// checked: the error names the variable and the part that is wrong. The binary calls it
/// before it starts, so a bad setting stops the start.
pub fn check(settings: &Recording) -> Result<(bench::Settings, Ageing), String> {
    let bench = bench::Settings::parse(
        settings.replay_latency.as_deref(),
        settings.replay_faults.as_deref(),
    )?;
    let ageing = Ageing::parse(
        settings.replay_max_age.as_deref(),
        settings.replay_stale.as_deref(),
    )?;
    Mode::parse(settings.replay_mode.as_deref())?;
    Ok((bench, ageing))
}

/// The player answering from the cassettes of `dir` in the configured mode, with the
/// configured latency, faults and ageing.
pub fn replay_player(
    dir: &Path,
    settings: &Recording,
    token: &str,
    timeout: Duration,
    wires: Wires,
) -> Result<Arc<Replay>, String> {
    let mode = Mode::parse(settings.replay_mode.as_deref())?;
    let (bench_settings, ageing) = check(settings)?;
    let bench = Arc::new(Bench::new(settings.replay_seed, bench_settings, wires));
    let scrubber = Arc::new(scrubber(settings, &[token], wires)?);
    let ignore = Ignore::parse(&settings.replay_ignore)?;
    let store = || -> Result<Arc<dyn Transport>, String> {
        let url = settings.replay_upstream_url.as_deref().ok_or_else(|| {
            "STOREGATE_REPLAY_MODE record-missing and passthrough need STOREGATE_REPLAY_UPSTREAM_URL, the real store"
                .to_owned()
        })?;
        if url.starts_with(REPLAY_SCHEME) || token.is_empty() {
            return Err(
                "STOREGATE_REPLAY_UPSTREAM_URL must be an http(s) URL, with STOREGATE_UPSTREAM_TOKEN for it"
                    .to_owned(),
            );
        }
        Ok(Arc::new(HttpTransport::new(url, timeout)?))
    };
    let player = match mode {
        Mode::Passthrough => Replay::passthrough(store()?, scrubber),
        Mode::Strict | Mode::RecordMissing => {
            if !dir.is_dir() && mode == Mode::Strict {
                return Err(format!(
                    "replay: {} is not a folder of cassettes",
                    dir.display()
                ));
            }
            let library = Arc::new(Library::open(dir, wires)?);
            if library.is_empty() && mode == Mode::Strict {
                tracing::warn!(cassettes = %dir.display(), "replay: the cassette folder holds no interaction; every call will fail");
            }
            let missing = match mode {
                Mode::RecordMissing => Some(Arc::new(recorder::Recorder::new(
                    store()?,
                    library.clone(),
                    scrubber.clone(),
                )) as Arc<dyn Transport>),
                _ => None,
            };
            // Re-recording stale answers needs the store; without it they replay, warned.
            let refresh = match (ageing.action(), &settings.replay_upstream_url) {
                (ageing::Stale::Record, Some(url)) if !url.starts_with(REPLAY_SCHEME) => {
                    Some(Refresh {
                        store: Arc::new(HttpTransport::new(url, timeout)?),
                        token: token.to_owned(),
                    })
                }
                (ageing::Stale::Record, _) => {
                    tracing::warn!(
                        "STOREGATE_REPLAY_STALE=record without STOREGATE_REPLAY_UPSTREAM_URL: stale answers are replayed, with a warning"
                    );
                    None
                }
                _ => None,
            };
            Replay::new(library, scrubber, ignore, missing).with_ageing(ageing, refresh)
        }
    };
    Ok(Arc::new(player.with_bench(bench)))
}

/// The transport answering from the cassettes of `dir` in the configured mode.
pub fn replay_transport(
    dir: &Path,
    settings: &Recording,
    token: &str,
    timeout: Duration,
    wires: Wires,
) -> Result<Arc<dyn Transport>, String> {
    Ok(replay_player(dir, settings, token, timeout, wires)?)
}

/// Puts recording and replay in front of an adapter's `transport`, as configured:
/// `upstream_url` of `replay:DIR` answers from DIR; `record_dir` records every exchange.
/// `wires`: how the adapter's store looks on the wire. Gives the transport the adapter is to
/// use.
pub fn wire(
    transport: Arc<dyn Transport>,
    settings: &Recording,
    upstream_url: &str,
    token: &str,
    timeout: Duration,
    wires: Wires,
) -> Result<Arc<dyn Transport>, String> {
    let replay_dir = upstream_url.strip_prefix(REPLAY_SCHEME).map(Path::new);
    if let (Some(replaying), Some(recording)) = (replay_dir, &settings.record_dir)
        && same_folder(replaying, recording)
    {
        return Err(format!(
            "STOREGATE_RECORD_DIR is the folder being replayed ({}): every replayed answer would be recorded again; \
             use STOREGATE_REPLAY_MODE=record-missing to add what is missing",
            recording.display()
        ));
    }
    let mut transport = match replay_dir {
        Some(dir) => replay_transport(dir, settings, token, timeout, wires)?,
        None => transport,
    };
    if let Some(dir) = &settings.record_dir {
        let library = Arc::new(Library::for_recording(dir, wires)?);
        let scrubber = Arc::new(scrubber(settings, &[token], wires)?);
        tracing::info!(cassettes = %dir.display(), "recording every upstream exchange");
        transport = Arc::new(recorder::Recorder::new(transport, library, scrubber));
    }
    Ok(transport)
}

fn same_folder(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}
