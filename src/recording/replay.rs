//! The replaying transport: answers upstream calls from a cassette folder.
//!
//! Modes, as VCR and Polly.js have them:
//! - `strict` (the default): a call with no recorded answer fails, naming the call and the
//!   closest recorded one; the gateway's client gets a 502.
//! - `record-missing`: such a call goes to the real store (`STOREGATE_REPLAY_UPSTREAM_URL`)
//!   and its exchange is added to the folder.
//! - `passthrough`: every call goes to the real store; the cassettes are not consulted (with
//!   `STOREGATE_RECORD_DIR` that is a full re-recording).

use std::sync::Arc;

use futures::future::BoxFuture;

use super::library::Library;
use super::matching::Ignore;
use super::recorder::{to_answer, to_request};
use super::scrub::Scrubber;
use crate::upstream::UpstreamError;
use crate::upstream::transport::{Answer, Outgoing, Transport};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Strict,
    RecordMissing,
    Passthrough,
}

impl Mode {
    pub fn parse(text: Option<&str>) -> Result<Mode, String> {
        match text.map(|t| t.trim().to_ascii_lowercase()).as_deref() {
            None | Some("") | Some("strict") => Ok(Mode::Strict),
            Some("record-missing") | Some("record_missing") => Ok(Mode::RecordMissing),
            Some("passthrough") => Ok(Mode::Passthrough),
            Some(other) => Err(format!(
                "invalid STOREGATE_REPLAY_MODE: expected strict, record-missing or passthrough, got {other:?}"
            )),
        }
    }
}

/// What a miss says; the first words are stable, for people grepping logs.
pub const MISS: &str = "replay: no recorded answer for";

#[derive(Debug)]
pub struct Replay {
    library: Arc<Library>,
    scrubber: Arc<Scrubber>,
    ignore: Ignore,
    /// `record-missing`: where unrecorded calls go (a recorder into `library`).
    missing: Option<Arc<dyn Transport>>,
}

impl Replay {
    pub fn new(
        library: Arc<Library>,
        scrubber: Arc<Scrubber>,
        ignore: Ignore,
        missing: Option<Arc<dyn Transport>>,
    ) -> Replay {
        Replay {
            library,
            scrubber,
            ignore,
            missing,
        }
    }
}

impl Transport for Replay {
    fn send(&self, outgoing: Outgoing) -> BoxFuture<'static, Result<Answer, UpstreamError>> {
        // Looked up in the form it was written in: scrubbed and masked the same way.
        let mut wanted = to_request(&outgoing);
        self.scrubber.request(&mut wanted);
        let result = match self.library.answer(&wanted, &self.ignore) {
            Ok(response) => to_answer(&response).map_err(|e| {
                UpstreamError::Protocol(format!(
                    "replay: the recorded answer to {} is unusable: {e}",
                    wanted.describe()
                ))
            }),
            Err(closest) => match &self.missing {
                Some(forward) => return forward.send(outgoing),
                None => {
                    let message = format!("{MISS} {}; {closest}", wanted.describe());
                    tracing::error!(
                        cassettes = %self.library.dir().display(),
                        "{message}"
                    );
                    Err(UpstreamError::Protocol(message))
                }
            },
        };
        Box::pin(std::future::ready(result))
    }
}
