//! The replaying transport: answers upstream calls from a cassette folder, as slowly and
//! as badly as the bench says ([`super::bench`]).
//!
//! Modes, as VCR and Polly.js have them:
//! - `strict` (the default): a call with no recorded answer fails, naming the call and the
//!   closest recorded one; the gateway's client gets a 502.
//! - `record-missing`: such a call goes to the real store (`STOREGATE_REPLAY_UPSTREAM_URL`)
//!   and its exchange is added to the folder.
//! - `passthrough`: every call goes to the real store; the cassettes are not consulted (with
//!   `STOREGATE_RECORD_DIR` that is a full re-recording). Latency and faults still apply.
//!
//! [`Replay::play`] decides what a call gets (a fault, the recorded answer, a re-recorded
//! one, a miss) and how long before its first byte; the gateway's transport
//! ([`Transport::send`]) and `storegate replay`'s server (`super::server`) each carry that out
//! in their own terms: an error of the upstream client, or what goes on the wire.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{HeaderMap, HeaderValue, StatusCode};
use tokio::time::Instant;

use super::ageing::{self, Ageing, Stale, Verdict};
use super::bench::{Asked, Bench};
use super::cassette;
use super::failures::{self, Named};
use super::faults::Fault;
use super::library::{Found, Library};
use super::matching::Ignore;
use super::scrub::Scrubber;
use super::wire_form::{to_answer, to_request};
use crate::backend::port::BackendError;
use crate::backend::port::LiveCredentials;
use crate::backend::transport::{Answer, Outgoing, Transport};

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

/// What a stale answer refused says; stable too.
pub const STALE: &str = "replay: stale answer refused:";

/// The real store behind `STOREGATE_REPLAY_STALE=record`.
#[derive(Debug, Clone)]
pub struct Refresh {
    pub store: Arc<dyn Transport>,
    /// The integration token sent in place of the caller's (Magento 2 paths), if any.
    pub token: String,
}

#[derive(Debug)]
pub struct Replay {
    /// `None` in passthrough: nothing is looked up.
    library: Option<Arc<Library>>,
    scrubber: Arc<Scrubber>,
    ignore: Ignore,
    /// `record-missing`: where unrecorded calls go (a recorder into `library`);
    /// passthrough: where every call goes.
    missing: Option<Arc<dyn Transport>>,
    bench: Arc<Bench>,
    ageing: Ageing,
    refresh: Option<Refresh>,
}

/// What a call gets, before it is carried out.
#[derive(Debug)]
pub struct Played {
    /// How long before the first byte.
    pub delay: Duration,
    pub outcome: Outcome,
}

#[derive(Debug)]
pub enum Outcome {
    Answer(Answer),
    Failed(BackendError),
    /// Connection faults.
    Reset,
    Hang,
    Empty,
    Truncate(Answer),
    Dribble(Answer, Duration),
}

impl Replay {
    pub fn new(
        library: Arc<Library>,
        scrubber: Arc<Scrubber>,
        ignore: Ignore,
        missing: Option<Arc<dyn Transport>>,
    ) -> Replay {
        let wires = scrubber.wires();
        Replay {
            library: Some(library),
            scrubber,
            ignore,
            missing,
            bench: Arc::new(Bench::new(None, Default::default(), wires)),
            ageing: Ageing::default(),
            refresh: None,
        }
    }

    /// Every call forwarded to `store` (passthrough), with the bench's latency and faults.
    pub fn passthrough(store: Arc<dyn Transport>, scrubber: Arc<Scrubber>) -> Replay {
        let wires = scrubber.wires();
        Replay {
            library: None,
            scrubber,
            ignore: Ignore::default(),
            missing: Some(store),
            bench: Arc::new(Bench::new(None, Default::default(), wires)),
            ageing: Ageing::default(),
            refresh: None,
        }
    }

    pub fn with_bench(mut self, bench: Arc<Bench>) -> Replay {
        self.bench = bench;
        self
    }

    pub fn with_ageing(mut self, ageing: Ageing, refresh: Option<Refresh>) -> Replay {
        self.ageing = ageing;
        self.refresh = refresh;
        self
    }

    pub fn bench(&self) -> &Arc<Bench> {
        &self.bench
    }

    /// The stores it replays.
    pub fn wires(&self) -> super::wires::Wires {
        self.scrubber.wires()
    }

    pub fn library(&self) -> Option<&Arc<Library>> {
        self.library.as_ref()
    }

    /// What `outgoing` gets, and after how long.
    pub fn play(&self, outgoing: Outgoing) -> BoxFuture<'static, Played> {
        // Looked up in the form it was written in: scrubbed and masked the same way.
        let mut wanted = to_request(&outgoing);
        self.scrubber.request(&mut wanted);
        let wires = self.scrubber.wires();
        let endpoint = wires.endpoint(&wanted.method, &wanted.path);
        let bench = self.bench.clone();
        let mut rng = bench.rng_for(&wanted);
        let fault = bench.fault(&endpoint, &mut rng);
        let mut asked = Asked {
            seq: 0,
            endpoint: endpoint.clone(),
            request: wanted.describe(),
            outcome: "answered",
            fault: fault.as_ref().map(Fault::name),
            cassette: None,
            status: None,
            delay_ms: 0.0,
        };

        // A fault that replaces the answer: the store never got to it.
        if let Some(fault) = fault.as_ref().filter(|f| !f.keeps_the_answer()) {
            let delay = bench.latency(&endpoint, &mut rng, 0);
            let header = |name: http::header::HeaderName| {
                outgoing
                    .headers
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned()
            };
            let host = Some(header(http::header::HOST))
                .filter(|h| !h.is_empty())
                .unwrap_or_else(|| "localhost".to_owned());
            let outcome = match fault {
                Fault::Reset => Outcome::Reset,
                Fault::Hang => Outcome::Hang,
                Fault::Empty => Outcome::Empty,
                Fault::Http { status, body } => Outcome::Answer(http_answer(*status, body)),
                Fault::Store(failure) => {
                    let path = outgoing.path.clone();
                    let canned = failures::answer(
                        failure,
                        wires,
                        &path,
                        &host,
                        &header(http::header::ACCEPT),
                        &mut rng,
                    )
                    .expect("a failure that keeps no answer has one of its own");
                    let mut headers = HeaderMap::new();
                    headers.insert(
                        http::header::CONTENT_TYPE,
                        HeaderValue::from_static(canned.content_type),
                    );
                    Outcome::Answer(Answer {
                        status: StatusCode::from_u16(canned.status)
                            .unwrap_or(StatusCode::SERVICE_UNAVAILABLE),
                        headers,
                        body: Bytes::from(canned.body),
                    })
                }
                // Kept-answer faults do not come here.
                Fault::Truncate | Fault::Dribble(_) => Outcome::Empty,
            };
            asked.outcome = "fault";
            asked.delay_ms = delay.as_secs_f64() * 1000.0;
            if let Outcome::Answer(answer) = &outcome {
                asked.status = Some(answer.status.as_u16());
            }
            bench.log(asked, false);
            return Box::pin(std::future::ready(Played { delay, outcome }));
        }

        let found = self
            .library
            .as_ref()
            .map(|library| library.find(&wanted, &self.ignore));
        let missing = self.missing.clone();
        let library = self.library.clone();
        let (ageing, refresh, scrubber) =
            (self.ageing, self.refresh.clone(), self.scrubber.clone());
        Box::pin(async move {
            let mut stale = false;
            let (result, recorded_ms) = match found {
                // Passthrough: the store answers; its own time is the latency.
                None => {
                    asked.outcome = "forwarded";
                    let forward = missing.expect("passthrough has a store");
                    (forward.send(outgoing).await, 0)
                }
                Some(Ok(found)) => {
                    asked.cassette = Some(format!("{}#{}", found.file.display(), found.index));
                    let recorded_ms = found.interaction.response.elapsed_ms;
                    match ageing
                        .verdict(found.interaction.recorded_at.as_deref(), SystemTime::now())
                    {
                        Verdict::Fresh => (recorded(&found, &wanted), recorded_ms),
                        Verdict::Stale(age) => {
                            stale = true;
                            let place = describe_place(&library, &found, age, &ageing);
                            match ageing.action() {
                                Stale::Warn => {
                                    if bench.first_warning(&place) {
                                        tracing::warn!("replay: stale answer replayed: {place}");
                                    }
                                    (recorded(&found, &wanted), recorded_ms)
                                }
                                Stale::Error => {
                                    let message = format!(
                                        "{STALE} {place} (STOREGATE_REPLAY_STALE=error; record it again)"
                                    );
                                    tracing::error!("{message}");
                                    asked.outcome = "refused-stale";
                                    (Err(BackendError::Protocol(message)), 0)
                                }
                                Stale::Record => {
                                    match record_again(
                                        &library, &found, &wanted, outgoing, &refresh, &scrubber,
                                    )
                                    .await
                                    {
                                        Ok((answer, elapsed_ms)) => {
                                            asked.outcome = "re-recorded";
                                            tracing::info!(
                                                "replay: re-recorded from the store: {place}"
                                            );
                                            (Ok(answer), elapsed_ms)
                                        }
                                        Err(why) => {
                                            tracing::warn!(
                                                "replay: stale answer replayed, the store did not answer ({why}): {place}"
                                            );
                                            (recorded(&found, &wanted), recorded_ms)
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                Some(Err(closest)) => match missing {
                    Some(forward) => {
                        asked.outcome = "forwarded";
                        (forward.send(outgoing).await, 0)
                    }
                    None => {
                        let message = format!("{MISS} {}; {closest}", wanted.describe());
                        // A warning: the gateway logs the failed request itself, at error.
                        if let Some(library) = &library {
                            tracing::warn!(cassettes = %library.dir().display(), "{message}");
                        }
                        asked.outcome = "missed";
                        (Err(BackendError::Protocol(message)), 0)
                    }
                },
            };
            let mut delay = bench.latency(&asked.endpoint, &mut rng, recorded_ms);
            let outcome = match (result, fault) {
                (Err(error), _) => Outcome::Failed(error),
                (Ok(answer), None) => Outcome::Answer(answer),
                (Ok(answer), Some(fault)) => {
                    asked.outcome = "fault";
                    match fault {
                        Fault::Truncate => Outcome::Truncate(answer),
                        Fault::Dribble(over) => Outcome::Dribble(answer, over),
                        Fault::Store(failure) => {
                            delay += failure.first_byte_delay();
                            Outcome::Answer(answer)
                        }
                        _ => Outcome::Answer(answer),
                    }
                }
            };
            if let Outcome::Answer(a) | Outcome::Truncate(a) | Outcome::Dribble(a, _) = &outcome {
                asked.status = Some(a.status.as_u16());
            }
            asked.delay_ms = delay.as_secs_f64() * 1000.0;
            bench.log(asked, stale);
            Played { delay, outcome }
        })
    }
}

fn http_answer(status: u16, body: &Option<String>) -> Answer {
    let body = body.clone().unwrap_or_default();
    let mut headers = HeaderMap::new();
    let json = serde_json::from_str::<serde_json::Value>(&body).is_ok();
    headers.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static(if json {
            "application/json; charset=utf-8"
        } else {
            "text/html; charset=UTF-8"
        }),
    );
    Answer {
        status: StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        headers,
        body: Bytes::from(body),
    }
}

fn recorded(found: &Found, wanted: &cassette::Request) -> Result<Answer, BackendError> {
    to_answer(&found.interaction.response).map_err(|e| {
        BackendError::Protocol(format!(
            "replay: the recorded answer to {} is unusable: {e}",
            wanted.describe()
        ))
    })
}

/// `cassettes/get.products.{}.json, interaction 0 (GET /rest/...), is 45d 3h old, older
/// than STOREGATE_REPLAY_MAX_AGE 30d`.
fn describe_place(
    library: &Option<Arc<Library>>,
    found: &Found,
    age: Option<Duration>,
    ageing: &Ageing,
) -> String {
    let file = match library {
        Some(library) => library.dir().join(&found.file),
        None => found.file.clone(),
    };
    let age = match age {
        Some(age) => format!("is {} old", ageing::describe(age)),
        None => "has no recorded_at, so its age is unknown".to_owned(),
    };
    format!(
        "{}, interaction {} ({}), {age}, older than {}={}",
        file.display(),
        found.index,
        found.interaction.request.describe(),
        ageing::MAX_AGE_KEY,
        ageing.max_age.map(ageing::describe).unwrap_or_default()
    )
}

/// Asks the store again and puts its answer, scrubbed, in place of the stale one. `Err`
/// says why not (no store, no answer, a 5xx).
async fn record_again(
    library: &Option<Arc<Library>>,
    found: &Found,
    wanted: &cassette::Request,
    mut outgoing: Outgoing,
    refresh: &Option<Refresh>,
    scrubber: &Arc<Scrubber>,
) -> Result<(Answer, u64), String> {
    let (Some(library), Some(refresh)) = (library, refresh) else {
        return Err("STOREGATE_REPLAY_UPSTREAM_URL is not set".into());
    };
    // Signed anew as the store signs, where it can be with a token alone.
    let credentials = LiveCredentials {
        url: "",
        token: &refresh.token,
        oauth: None,
    };
    if let Some(Ok(Some(value))) = scrubber.wires().owner(&outgoing.path).map(|store| {
        store.authorize(
            &outgoing.method,
            &outgoing.path,
            &outgoing.query,
            &credentials,
        )
    }) && let Ok(value) = HeaderValue::from_str(&value)
    {
        outgoing.headers.insert(http::header::AUTHORIZATION, value);
    }
    let started = Instant::now();
    let answer = refresh
        .store
        .send(outgoing)
        .await
        .map_err(|e| e.to_string())?;
    if answer.status.is_server_error() {
        return Err(format!("it answered {}", answer.status));
    }
    let elapsed_ms = started.elapsed().as_millis() as u64;
    let interaction = super::recorder::recorded(
        wanted.clone(),
        &answer,
        elapsed_ms,
        ageing::now_text(),
        scrubber,
    );
    let (library, file, index) = (library.clone(), found.file.clone(), found.index);
    match tokio::task::spawn_blocking(move || library.replace(&file, index, interaction)).await {
        Ok(Ok(())) => {}
        Ok(Err(error)) => tracing::error!(%error, "cannot write the re-recorded answer"),
        Err(error) => tracing::error!(%error, "cannot write the re-recorded answer"),
    }
    Ok((answer, elapsed_ms))
}

/// Waits `delay` within what is left of the caller's deadline; past it, the caller's
/// timeout.
async fn within(delay: Duration, left: &mut Duration) -> Result<(), BackendError> {
    if delay >= *left {
        tokio::time::sleep(*left).await;
        *left = Duration::ZERO;
        return Err(BackendError::Timeout);
    }
    tokio::time::sleep(delay).await;
    *left -= delay;
    Ok(())
}

impl Transport for Replay {
    /// The gateway's side: each outcome as the network client would have reported it.
    fn send(&self, outgoing: Outgoing) -> BoxFuture<'static, Result<Answer, BackendError>> {
        let mut left = outgoing.timeout;
        let played = self.play(outgoing);
        Box::pin(async move {
            let Played { delay, outcome } = played.await;
            if !delay.is_zero() {
                within(delay, &mut left).await?;
            }
            match outcome {
                Outcome::Answer(answer) => Ok(answer),
                Outcome::Failed(error) => Err(error),
                Outcome::Reset => Err(BackendError::Connect(
                    "connection reset by peer (replay fault: reset)".into(),
                )),
                Outcome::Empty => Err(BackendError::Connect(
                    "connection closed before message completed (replay fault: empty)".into(),
                )),
                Outcome::Hang => {
                    within(left, &mut left).await?;
                    Err(BackendError::Timeout)
                }
                Outcome::Truncate(_) => Err(BackendError::Protocol(
                    "error reading a response body: the connection closed before the body was complete (replay fault: truncate)".into(),
                )),
                Outcome::Dribble(answer, over) => {
                    within(over, &mut left).await?;
                    Ok(answer)
                }
            }
        })
    }
}

#[cfg(test)]
#[path = "replay_tests.rs"]
mod tests;
