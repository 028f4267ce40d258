//! A legacy client's walk over the original's whole route list ([`steps`]), as Admin,
//! customer and Guest in the original profile, and the gateway's answers over both back ends
//! against the original's own answers to the same requests:
//!
//! - **over OpenMage**: the gateway in front of the seeded store, answer for answer: the
//!   same status, `Location`, error message, and the same fields with the same values, but
//!   for the differences [`known`] lists with their reasons;
//! - **over Magento 2**: the gateway in front of the sandbox, whose data are not the
//!   store's: the same status, `Location` route and error message, and answers of the same
//!   shape ([`shape`]: the same fields, each of the same JSON type where both have a value),
//!   but for the differences [`known`] lists.
//!
//! The original's answers are asked of the store itself, signed with its own tokens as
//! the app would: recorded (`tests/cassettes/openmage-store/legacy-walk-original/<user>/`),
//! or live with `STOREGATE_TEST_OPENMAGE_URL`. The walk writes (creates, changes, deletes),
//! so live it holds `/tmp/openmage.lock` and restores the seeded snapshot before each pass
//! and at the end, with the command in `STOREGATE_TEST_OPENMAGE_RESET`
//! (docs/testing.md); without that command a live run walks nothing.

mod known;
mod sandbox;
mod shape;
mod steps;
mod xml;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use storegate::backend::recording::library::Library;
use storegate::backend::recording::recorder::Recorder;
use storegate::backend::transport::{HttpTransport, Outgoing, Transport};
use storegate::config::Recording;

use crate::signer::Signer;
use crate::{Mode, Stack, Who, consumer_key, consumer_secret, mode, store_cassettes};
use steps::{Created, Ids, Step};

/// What one request got, made comparable: a create's `302` (the store behind FastCGI) is
/// its `200`, a `Location` is its path from `/api/rest` on, a body is JSON (an XML answer
/// turned into the same tree), an error is its first message.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub location: Option<String>,
    pub body: Option<Value>,
    pub message: Option<String>,
    pub raw: String,
}

impl Answer {
    fn of(status: u16, location: Option<&str>, content_type: &str, raw: String) -> Answer {
        let location = location.map(|l| match l.find("/api/rest") {
            Some(at) => l[at..].to_owned(),
            None => l.to_owned(),
        });
        let status = if status == 302 && location.is_some() {
            200
        } else {
            status
        };
        let body: Option<Value> = if raw.trim().is_empty() {
            None
        } else if content_type.contains("xml") || raw.trim_start().starts_with('<') {
            xml::tree(&raw)
        } else {
            serde_json::from_str(&raw).ok()
        };
        let message = body.as_ref().and_then(|b| {
            let errors = &b["messages"]["error"];
            errors[0]["message"]
                .as_str()
                .or_else(|| errors["data_item"]["message"].as_str())
                .or_else(|| errors["data_item"][0]["message"].as_str())
                .map(str::to_owned)
        });
        let body = if message.is_some() { None } else { body };
        Answer {
            status,
            location,
            body,
            message,
            raw,
        }
    }
}

/// Where the walk's requests go.
pub enum Target<'a> {
    /// The gateway, over HTTP, signed as the store's own apps sign.
    Gateway {
        base_url: String,
        http: &'a reqwest::Client,
    },
    /// The store itself, per user type (replayed, live or recorded).
    Store(&'a Original),
}

/// The store's transports, one per user type (the same request answers differently).
pub struct Original {
    base: String,
    admin: Arc<dyn Transport>,
    customer: Arc<dyn Transport>,
    guest: Arc<dyn Transport>,
}

fn original_cassettes() -> PathBuf {
    store_cassettes("legacy-walk-original")
}

impl Original {
    /// `record`: in record mode, write the answers anew (one test records them; the other
    /// asks the store live meanwhile).
    pub fn open(record: bool) -> Original {
        let timeout = Duration::from_secs(30);
        let folder = original_cassettes();
        let mode = match mode() {
            Mode::Record { url } if !record => Mode::Live { url },
            other => other,
        };
        if matches!(mode, Mode::Record { .. }) {
            let _ = std::fs::remove_dir_all(&folder);
        }
        let transport = |who: Who| -> Arc<dyn Transport> {
            let dir = folder.join(who.name());
            match mode.clone() {
                Mode::Replay => storegate::backend::recording::replay_transport(
                    &dir,
                    &Recording::default(),
                    "",
                    timeout,
                    storegate::backend::registry::WIRES,
                )
                .unwrap_or_else(|e| panic!("the original's answers in {}: {e}", dir.display())),
                Mode::Live { url } => {
                    Arc::new(HttpTransport::without_redirects(&url, timeout).unwrap())
                }
                Mode::Record { url } => {
                    let secrets = crate::secrets();
                    let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
                    let wires = storegate::backend::registry::WIRES;
                    let scrubber = storegate::backend::recording::scrubber(
                        &Recording::default(),
                        &secrets,
                        wires,
                    )
                    .unwrap();
                    Arc::new(Recorder::new(
                        Arc::new(HttpTransport::without_redirects(&url, timeout).unwrap()),
                        Arc::new(Library::for_recording(&dir, wires).unwrap()),
                        Arc::new(scrubber),
                    ))
                }
            }
        };
        let base = match mode.clone() {
            Mode::Replay => "http://127.0.0.1".to_owned(),
            Mode::Live { url } | Mode::Record { url } => url,
        };
        Original {
            base,
            admin: transport(Who::Admin),
            customer: transport(Who::Customer),
            guest: transport(Who::Guest),
        }
    }
}

/// `Authorization: OAuth ...` as the store's apps sign `verb url`, for a signed-in user.
fn authorization(who: Who, verb: &str, url: &str) -> Option<String> {
    let (token, secret) = who.token()?;
    Some(
        Signer::new(&consumer_key(), &consumer_secret())
            .token(&token, &secret)
            .header(verb, url),
    )
}

async fn send(target: &Target<'_>, step: &Step, path: &str, body: Option<&Value>) -> Answer {
    match target {
        Target::Gateway { base_url, http } => {
            let url = format!("{base_url}{path}");
            let method = reqwest::Method::from_bytes(step.method.as_bytes()).unwrap();
            let mut request = http.request(method, &url).header("Accept", step.accept);
            if let Some(header) = authorization(step.who, step.method, &url) {
                request = request.header("Authorization", header);
            }
            if let Some(body) = body {
                request = request.json(body);
            }
            let response = request
                .send()
                .await
                .unwrap_or_else(|e| panic!("{}: the gateway did not answer: {e}", step.label()));
            let status = response.status().as_u16();
            let header = |name| {
                response
                    .headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
            };
            let (location, content_type) = (header("location"), header("content-type"));
            let raw = response.text().await.unwrap_or_default();
            Answer::of(
                status,
                location.as_deref(),
                content_type.as_deref().unwrap_or(""),
                raw,
            )
        }
        Target::Store(original) => {
            let (only_path, query) = match path.split_once('?') {
                Some((p, q)) => (p, q),
                None => (path, ""),
            };
            let url = format!("{}/api/rest{path}", original.base);
            let mut headers = http::HeaderMap::new();
            headers.insert(http::header::ACCEPT, step.accept.parse().unwrap());
            if let Some(header) = authorization(step.who, step.method, &url) {
                headers.insert(http::header::AUTHORIZATION, header.parse().unwrap());
            }
            if body.is_some() {
                headers.insert(
                    http::header::CONTENT_TYPE,
                    "application/json".parse().unwrap(),
                );
            }
            let outgoing = Outgoing {
                method: http::Method::from_bytes(step.method.as_bytes()).unwrap(),
                path: format!("/api/rest{only_path}"),
                query: form_urlencoded::parse(query.as_bytes())
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect(),
                headers,
                body: body.map(|b| bytes::Bytes::from(b.to_string())),
                timeout: Duration::from_secs(30),
                exact_path: false,
            };
            let transport = match step.who {
                Who::Admin => &original.admin,
                Who::Customer => &original.customer,
                Who::Guest => &original.guest,
            };
            let answer = transport.send(outgoing).await.unwrap_or_else(|e| {
                panic!(
                    "{}: no answer of the store ({e:?}); record the walk again (docs/testing.md)",
                    step.label()
                )
            });
            let header = |name| {
                answer
                    .headers
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
            };
            let (location, content_type) = (header("location"), header("content-type"));
            Answer::of(
                answer.status.as_u16(),
                location.as_deref(),
                content_type.as_deref().unwrap_or(""),
                String::from_utf8_lossy(&answer.body).into_owned(),
            )
        }
    }
}

/// Every step against one target, in order, its creates' ids carried to the steps after.
pub async fn walk(target: &Target<'_>, ids: &Ids) -> Vec<(Step, Answer)> {
    let mut created = Created::default();
    let mut out = Vec::new();
    for step in steps::walk() {
        let path = step.resolve(ids, &created);
        let body = step.resolved_body(ids, &created);
        let answer = send(target, &step, &path, body.as_ref()).await;
        if let Some(location) = &answer.location {
            created.note(&step, location);
        }
        out.push((step, answer));
    }
    out
}

/// The live store's seeded snapshot restored (`STOREGATE_TEST_OPENMAGE_RESET`, a shell
/// command); false when replaying or when no command is configured.
fn reset_store() -> bool {
    if matches!(mode(), Mode::Replay) {
        return false;
    }
    let Ok(command) = std::env::var("STOREGATE_TEST_OPENMAGE_RESET") else {
        return false;
    };
    let status = std::process::Command::new("sh")
        .args(["-c", &command])
        .status()
        .expect("the reset command runs");
    assert!(status.success(), "the reset command failed: {command}");
    true
}

/// `/tmp/openmage.lock`, held while a live walk writes to the shared store.
struct StoreLock(#[allow(dead_code)] std::fs::File);

impl StoreLock {
    fn take() -> StoreLock {
        use std::os::fd::AsRawFd as _;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open("/tmp/openmage.lock")
            .expect("/tmp/openmage.lock opens");
        // SAFETY: flock(2) on a descriptor this value owns; released when it is closed.
        let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
        assert_eq!(locked, 0, "flock /tmp/openmage.lock");
        StoreLock(file)
    }
}

/// The original's answers: asked of the store (live, with the snapshot restored first and
/// the lock held by the caller) or replayed.
async fn original_answers(ids: &Ids, record: bool) -> Vec<(Step, Answer)> {
    let original = Original::open(record);
    walk(&Target::Store(&original), ids).await
}

/// Live without a reset command: the walk would leave the shared store changed.
fn live_without_reset() -> bool {
    let live = !matches!(mode(), Mode::Replay);
    if live && std::env::var_os("STOREGATE_TEST_OPENMAGE_RESET").is_none() {
        eprintln!(
            "\n*** SKIPPED: the legacy walk writes to the store; set STOREGATE_TEST_OPENMAGE_RESET to the command that restores its snapshot (docs/testing.md) ***\n"
        );
        return true;
    }
    false
}

/// The report of a comparison: one block per request with a difference not listed (or a
/// listed one not seen).
fn report(what: &str, total: usize, problems: &[String]) {
    assert!(
        problems.is_empty(),
        "{what}: {} of {total} requests answered as the original (but for the listed differences); not these {}:\n{}",
        total - problems.len(),
        problems.len(),
        problems.join("\n")
    );
    eprintln!("{what}: {total} of {total} requests answered as the original");
}

#[tokio::test]
async fn the_legacy_client_over_openmage() {
    if live_without_reset() {
        return;
    }
    // Cached records live through the walk: the calls the gateway makes then depend on
    // the requests alone, not on how long a pass takes, so its recording replays in order.
    let stack =
        Stack::start_alone_with("legacy-walk", &[("STOREGATE_CACHE_TTL_SECS", "3600")]).await;
    let _lock = (!matches!(mode(), Mode::Replay)).then(StoreLock::take);
    reset_store();
    let original = original_answers(&steps::OPENMAGE, true).await;
    reset_store();
    let target = Target::Gateway {
        base_url: stack.gateway.base_url(),
        http: &stack.http,
    };
    let gateway = walk(&target, &steps::OPENMAGE).await;
    reset_store();
    let problems = known::compare_openmage(&original, &gateway);
    stack.stop().await;
    report("over OpenMage", original.len(), &problems);
}

#[tokio::test]
async fn the_legacy_client_over_magento2() {
    if live_without_reset() {
        return;
    }
    // The original's answers need the store alone while they are asked live: the
    // scenarios' hold first, then the machine's lock, in the order the OpenMage walk takes
    // them (its `Stack::start_alone`, then the lock).
    let guard = crate::hold_store_alone().await;
    let lock = (!matches!(mode(), Mode::Replay)).then(StoreLock::take);
    reset_store();
    let original = original_answers(&steps::OPENMAGE, false).await;
    reset_store();
    drop(lock);
    drop(guard);
    let sandbox = sandbox::OnSandbox::start().await;
    let target = Target::Gateway {
        base_url: sandbox.gateway.base_url(),
        http: &sandbox.http,
    };
    let gateway = walk(&target, &steps::SANDBOX).await;
    let problems = known::compare_magento2(&original, &gateway);
    sandbox.stop().await;
    report("over Magento 2", original.len(), &problems);
}
