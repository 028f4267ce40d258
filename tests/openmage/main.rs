//! The OpenMage back end (`STOREGATE_BACKEND=openmage`) through HTTP, as Admin, customer 1
//! and Guest, signed with real OAuth 1.0a: every read of SPEC.md the adapter serves, in JSON
//! and XML, its errors, the cache, and each answer compared with the store's own.
//!
//! Three modes, one set of checks (docs/testing.md, "OpenMage"):
//! - **replay** (the default, CI): the gateway answers from the cassettes of
//!   `tests/cassettes/openmage/<scenario>/` (`STOREGATE_UPSTREAM_URL=replay:...`); the store's
//!   own answers it is compared with come from `tests/cassettes/openmage-store/<scenario>/
//!   <user type>/`. No store, no network, no secret.
//! - **live**: `STOREGATE_TEST_OPENMAGE_URL=http://127.0.0.1` runs the same checks against the
//!   seeded store (`../shared/openmage/`, reset first), the gateway signing with the store's
//!   admin token and the store's answers read live.
//! - **record**: live, plus `STOREGATE_TEST_OPENMAGE_RECORD=1`: each scenario's cassette
//!   folders are emptied and written again, by the gateway's own recorder (the gateway's calls)
//!   and by the same recorder around the store client (the store's own answers).
//!
//! Each test is a scenario with its own gateway and cassette folder, so the scenarios run in
//! parallel in every mode. The OAuth tables the gateway imports are the seeded store's
//! (`tests/fixtures/openmage/oauth_*.tsv`): the store's consumer and access tokens work on
//! the gateway as they do on the store.

mod cache;
mod cassettes;
#[allow(dead_code)]
#[path = "../common/mod.rs"]
mod common;
mod compare;
mod customers;
mod images;
mod orders;
mod outage;
mod prices;
mod products;
// Shared with tests/shared, which uses all of it (pausing Redis, for one).
#[allow(dead_code)]
#[path = "../shared/redis_server.rs"]
mod redis_server;
mod round_trips;
mod shared;
mod signer;
mod stock_items;
mod the_move;
mod walk;
mod writes;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use storegate::backend::openmage::{Credentials, OpenMage};
use storegate::backend::port::BackendError;
use storegate::backend::recording::library::Library;
use storegate::backend::recording::recorder::Recorder;
use storegate::backend::transport::{HttpTransport, Transport};
use storegate::config::{Recording, Secret};

pub use common::files::temp_dir;
pub use common::http::Reply;
pub use compare::Known;
use signer::Signer;

/// `admintoken` padded with `a` to 32 characters, as the seed names its tokens.
pub fn padded(prefix: &str, fill: char) -> String {
    let mut text = prefix.to_owned();
    while text.len() < 32 {
        text.push(fill);
    }
    text
}

pub fn consumer_key() -> String {
    "k".repeat(32)
}

pub fn consumer_secret() -> String {
    "s".repeat(32)
}

/// Who calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    /// The store's admin access token (`admintoken...`).
    Admin,
    /// Customer 1 (john@example.com), with the store's token for them (`custtoken...`).
    Customer,
    /// Unsigned.
    Guest,
}

impl Who {
    pub fn name(self) -> &'static str {
        match self {
            Who::Admin => "admin",
            Who::Customer => "customer",
            Who::Guest => "guest",
        }
    }

    /// The access token and its secret (None for a guest).
    pub fn token(self) -> Option<(String, String)> {
        match self {
            Who::Admin => Some((padded("admintoken", 'a'), padded("adminsecret", 'a'))),
            Who::Customer => Some((padded("custtoken", 'c'), padded("custsecret", 'c'))),
            Who::Guest => None,
        }
    }
}

/// Where the answers come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    Replay,
    Live { url: String },
    Record { url: String },
}

/// The mode the variables ask for.
pub fn mode() -> Mode {
    let url = std::env::var("STOREGATE_TEST_OPENMAGE_URL")
        .ok()
        .map(|u| u.trim().trim_end_matches('/').to_owned())
        .filter(|u| !u.is_empty());
    let record = std::env::var("STOREGATE_TEST_OPENMAGE_RECORD").is_ok_and(|v| v == "1");
    match (url, record) {
        (Some(url), true) => Mode::Record { url },
        (Some(url), false) => Mode::Live { url },
        (None, true) => panic!(
            "STOREGATE_TEST_OPENMAGE_RECORD=1 records from a live store: set STOREGATE_TEST_OPENMAGE_URL too"
        ),
        (None, false) => Mode::Replay,
    }
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The gateway's cassettes of a scenario.
pub fn gateway_cassettes(scenario: &str) -> PathBuf {
    root().join("tests/cassettes/openmage").join(scenario)
}

/// The store's own answers of a scenario, per user type.
pub fn store_cassettes(scenario: &str) -> PathBuf {
    root().join("tests/cassettes/openmage-store").join(scenario)
}

/// Every secret of the seeded store's OAuth tables: none may reach a cassette.
pub fn secrets() -> Vec<String> {
    let mut out = vec![consumer_secret()];
    for who in [Who::Admin, Who::Customer] {
        let (token, secret) = who.token().unwrap();
        out.push(token);
        out.push(secret);
    }
    out.push(padded("cust2token", 'd'));
    out.push(padded("cust2secret", 'd'));
    out
}

/// The store's OAuth tables imported into `data_dir`, with the binary as an operator runs it.
pub fn import_oauth_tables(data_dir: &Path) {
    let fixtures = root().join("tests/fixtures/openmage");
    let output = Command::new(env!("CARGO_BIN_EXE_storegate"))
        .args(["oauth", "import", "--consumers"])
        .arg(fixtures.join("oauth_consumer.tsv"))
        .arg("--tokens")
        .arg(fixtures.join("oauth_token.tsv"))
        .env("STOREGATE_DATA_DIR", data_dir)
        .output()
        .expect("the storegate binary runs");
    let out = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && out.contains("1 consumer(s) and 3 access token(s)"),
        "{out}{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The gateway's variables for a scenario in the current mode: the back end, its URL and
/// credentials (live), the cassettes (replay, record).
pub fn gateway_variables(scenario: &str, data_dir: &Path) -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = vec![
        ("STOREGATE_BACKEND".into(), "openmage".into()),
        (
            "STOREGATE_OPENMAGE_STORE_VIEWS".into(),
            "default=1,de=2".into(),
        ),
        ("STOREGATE_LISTEN".into(), "127.0.0.1:0".into()),
        ("STOREGATE_DATA_DIR".into(), data_dir.display().to_string()),
        // The original is slow, more so on a busy machine.
        ("STOREGATE_UPSTREAM_TIMEOUT_MS".into(), "30000".into()),
        // A trace id differs on every call: `[scrubbed]`, a re-recording diffs only where the
        // store changed. (Headers are not matched on replay.)
        ("STOREGATE_SCRUB_HEADERS".into(), "traceparent".into()),
    ];
    let cassettes = gateway_cassettes(scenario);
    match mode() {
        Mode::Replay => {
            vars.push((
                "STOREGATE_UPSTREAM_URL".into(),
                format!("replay:{}", cassettes.display()),
            ));
            // A miss is a failure of its own request, not the circuit's for the next ones.
            vars.push(("STOREGATE_CIRCUIT_FAILURE_THRESHOLD".into(), "0".into()));
        }
        Mode::Live { url } | Mode::Record { url } => {
            let (token, secret) = Who::Admin.token().unwrap();
            vars.extend([
                ("STOREGATE_UPSTREAM_URL".into(), url),
                ("STOREGATE_UPSTREAM_TOKEN".into(), token),
                ("STOREGATE_UPSTREAM_TOKEN_SECRET".into(), secret),
                ("STOREGATE_UPSTREAM_CONSUMER_KEY".into(), consumer_key()),
                (
                    "STOREGATE_UPSTREAM_CONSUMER_SECRET".into(),
                    consumer_secret(),
                ),
            ]);
            if matches!(mode(), Mode::Record { .. }) {
                vars.push((
                    "STOREGATE_RECORD_DIR".into(),
                    cassettes.display().to_string(),
                ));
            }
        }
    }
    vars
}

/// The store's own answer: its status, and its body when it was a success.
#[derive(Debug)]
pub struct StoreAnswer {
    pub status: u16,
    pub body: Option<Value>,
    pub message: String,
}

/// The store, read directly as each user type: recorded, replayed or live.
pub struct Store {
    scenario: String,
    /// None: nothing recorded for this user type in this scenario.
    admin: Option<OpenMage>,
    customer: Option<OpenMage>,
    guest: Option<OpenMage>,
}

impl Store {
    fn open(scenario: &str) -> Store {
        let timeout = Duration::from_secs(30);
        let folder = store_cassettes(scenario);
        let client = |who: Who| -> Option<OpenMage> {
            let credentials = match who.token() {
                Some((token, secret)) => Credentials {
                    consumer_key: Secret::new(consumer_key()),
                    consumer_secret: Secret::new(consumer_secret()),
                    token: Secret::new(token),
                    token_secret: Secret::new(secret),
                },
                None => Credentials::none(),
            };
            let dir = folder.join(who.name());
            Some(match mode() {
                Mode::Replay if !dir.is_dir() => return None,
                Mode::Replay => {
                    let transport = storegate::backend::recording::replay_transport(
                        &dir,
                        &Recording::default(),
                        "",
                        timeout,
                        storegate::backend::registry::WIRES,
                    )
                    .unwrap_or_else(|e| panic!("{e}"));
                    OpenMage::new("http://127.0.0.1", Credentials::none(), timeout, "default")
                        .unwrap()
                        .with_transport(transport)
                }
                Mode::Live { url } => OpenMage::new(&url, credentials, timeout, "default").unwrap(),
                Mode::Record { url } => {
                    let secrets = secrets();
                    let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
                    let scrubber = storegate::backend::recording::scrubber(
                        &Recording::default(),
                        &secrets,
                        storegate::backend::registry::WIRES,
                    )
                    .unwrap();
                    let inner: Arc<dyn Transport> =
                        Arc::new(HttpTransport::without_redirects(&url, timeout).unwrap());
                    let recorder = Recorder::new(
                        inner,
                        Arc::new(
                            Library::for_recording(&dir, storegate::backend::registry::WIRES)
                                .unwrap(),
                        ),
                        Arc::new(scrubber),
                    );
                    OpenMage::new(&url, credentials, timeout, "default")
                        .unwrap()
                        .with_transport(Arc::new(recorder))
                }
            })
        };
        Store {
            scenario: scenario.to_owned(),
            admin: client(Who::Admin),
            customer: client(Who::Customer),
            guest: client(Who::Guest),
        }
    }

    /// `PUT /api/rest{path}` as the store's Admin, straight to the store (a scenario's
    /// setup, which the gateway is not told about).
    pub async fn admin_put(&self, path: &str, body: &Value) {
        let admin = self.admin.as_ref().unwrap_or_else(|| {
            panic!(
                "no answer of the store as Admin recorded in {}: record the scenario (docs/testing.md)",
                store_cassettes(&self.scenario).display()
            )
        });
        admin
            .put(path, body)
            .await
            .unwrap_or_else(|e| panic!("the store refused PUT {path}: {e:?}"));
    }

    /// `GET /api/rest{path}` as `who`; `path` may carry a query.
    pub async fn get(&self, who: Who, path: &str) -> StoreAnswer {
        let (path, query) = split_query(path);
        let client = match who {
            Who::Admin => &self.admin,
            Who::Customer => &self.customer,
            Who::Guest => &self.guest,
        };
        let Some(client) = client else {
            panic!(
                "no answer of the store as {who:?} recorded in {}: record the scenario (docs/testing.md)",
                store_cassettes(&self.scenario).display()
            )
        };
        let result = match who {
            Who::Guest => client.get_as_guest(&path, &query).await,
            _ => client.get(&path, &query).await,
        };
        match result {
            Ok(body) => {
                StoreAnswer {
                    status: 200,
                    body: Some(serde_json::from_slice(&body).unwrap_or_else(|e| {
                        panic!("the store's answer to {path} is not JSON ({e})")
                    })),
                    message: String::new(),
                }
            }
            Err(BackendError::Status { status, error }) => StoreAnswer {
                status,
                body: None,
                message: error.text().to_owned(),
            },
            Err(other) => panic!("the store did not answer GET {path} as {who:?}: {other:?}"),
        }
    }
}

fn split_query(path: &str) -> (String, Vec<(String, String)>) {
    match path.split_once('?') {
        Some((path, query)) => (
            path.to_owned(),
            form_urlencoded::parse(query.as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        ),
        None => (path.to_owned(), Vec::new()),
    }
}

/// One scenario: a gateway on port 0 in front of the store (or its cassettes), with the
/// store's OAuth tables imported, and the store itself beside it.
pub struct Stack {
    pub gateway: storegate::Running,
    pub store: Store,
    pub http: reqwest::Client,
    pub data_dir: PathBuf,
    /// Held for the scenario's life ([`Stack::start_alone`]).
    _store_use: StoreUse,
}

/// The scenarios share the one store; one that changes it holds it alone.
static STORE: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

/// The store alone, without a gateway of a scenario (the legacy walk asks it directly).
pub async fn hold_store_alone() -> tokio::sync::RwLockWriteGuard<'static, ()> {
    STORE.write().await
}

enum StoreUse {
    Shared(#[allow(dead_code)] tokio::sync::RwLockReadGuard<'static, ()>),
    Alone(#[allow(dead_code)] tokio::sync::RwLockWriteGuard<'static, ()>),
    Beside,
}

impl Stack {
    pub async fn start(scenario: &str) -> Stack {
        Stack::start_with(scenario, &[]).await
    }

    /// A scenario that changes what the others compare (a customer's group, a product's
    /// group prices) and puts it back: alone, so that live runs of scenarios side by side
    /// never see its changes.
    pub async fn start_alone(scenario: &str) -> Stack {
        Stack::start_alone_with(scenario, &[]).await
    }

    pub async fn start_alone_with(scenario: &str, extra: &[(&str, &str)]) -> Stack {
        let guard = StoreUse::Alone(STORE.write().await);
        Stack::open(scenario, extra, guard).await
    }

    /// A second gateway of a scenario that holds the store alone (its fleet's other
    /// instance): it takes no hold of its own.
    pub async fn start_beside(scenario: &str, extra: &[(&str, &str)]) -> Stack {
        Stack::open(scenario, extra, StoreUse::Beside).await
    }

    /// A gateway with more variables (`STOREGATE_PROFILE=spec`, ...). By default the whole
    /// gateway answers in the original's profile (`STOREGATE_PROFILE=original`), guests too,
    /// as the store itself does: what the answers are compared with. (The store's consumer,
    /// imported, has that profile anyway.)
    pub async fn start_with(scenario: &str, extra: &[(&str, &str)]) -> Stack {
        let guard = StoreUse::Shared(STORE.read().await);
        Stack::open(scenario, extra, guard).await
    }

    async fn open(scenario: &str, extra: &[(&str, &str)], guard: StoreUse) -> Stack {
        storegate::backend::transport::install_crypto();
        if matches!(mode(), Mode::Record { .. }) {
            for dir in [gateway_cassettes(scenario), store_cassettes(scenario)] {
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
        let data_dir = temp_dir("data");
        import_oauth_tables(&data_dir);
        let mut vars = gateway_variables(scenario, &data_dir);
        vars.push(("STOREGATE_PROFILE".into(), "original".into()));
        vars.extend(
            extra
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        let lookup = |name: &str| {
            vars.iter()
                .rev()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        let config = storegate::Config::from_sources(None, &lookup).expect("a valid configuration");
        let upstream = config.upstream.clone().expect("an upstream");
        let setup = common::gateway::Setup {
            upstream_url: &upstream.url,
            upstream_token: upstream.token.expose(),
            admin_key: "openmage-test-admin-key-0123456789",
            token_secret: b"openmage-test-token-secret",
        };
        let gateway = common::gateway::start_gateway(config, setup).await;
        Stack {
            gateway,
            store: Store::open(scenario),
            http: common::http::client_without_redirects(),
            data_dir,
            _store_use: guard,
        }
    }

    /// `http://127.0.0.1:PORT/api/rest{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.gateway.base_url())
    }

    /// `GET /api/rest{path}` as `who`, signed as an app of the original signs, asking for
    /// `accept`.
    pub async fn get_as(&self, who: Who, path: &str, accept: &str) -> Reply {
        self.request(who, &self.url(path), accept).await
    }

    /// `GET` of any URL of the gateway (`/readyz`).
    pub async fn request(&self, who: Who, url: &str, accept: &str) -> Reply {
        let request = signed(&self.http, who, "GET", url, accept);
        Reply::read(request.send().await.expect("the gateway answers")).await
    }

    /// `verb /api/rest{path}` as `who` with a JSON body, asking for JSON.
    pub async fn send(&self, who: Who, verb: &str, path: &str, body: Option<Value>) -> Reply {
        let mut request = signed(&self.http, who, verb, &self.url(path), "application/json");
        if let Some(body) = body {
            request = request.json(&body);
        }
        Reply::read(request.send().await.expect("the gateway answers")).await
    }

    /// `GET` of one of the gateway's own endpoints (`/readyz`, `/metrics`), as a Guest.
    pub async fn ops(&self, path: &str) -> Reply {
        let url = format!("http://{}{path}", self.gateway.addr);
        self.request(Who::Guest, &url, "application/json").await
    }

    pub async fn get(&self, who: Who, path: &str) -> Reply {
        self.get_as(who, path, "application/json").await
    }

    pub async fn get_xml(&self, who: Who, path: &str) -> Reply {
        self.get_as(who, path, "application/xml").await
    }

    /// The gateway's JSON answer to `path` as `who`, checked against the store's own answer
    /// to the same path as the same user: the same status, and the same keys and values but
    /// for the `known` differences (each of which must still be there). Gives the gateway's
    /// body.
    pub async fn same_as_store(&self, who: Who, path: &str, known: &Known) -> Value {
        let gateway = self.get(who, path).await;
        let store = self.store.get(who, path).await;
        assert_eq!(
            gateway.status, store.status,
            "GET {path} as {who:?}: the gateway answered {} ({}), the store {} ({})",
            gateway.status, gateway.body, store.status, store.message
        );
        let body = gateway.json();
        match &store.body {
            Some(expected) => {
                compare::check(&format!("GET {path} as {who:?}"), &body, expected, known)
            }
            None => assert_eq!(
                gateway.message(),
                known.message.unwrap_or(&store.message),
                "GET {path} as {who:?}: the error message (the store's: {:?})",
                store.message
            ),
        }
        body
    }

    /// A read where the gateway is known to answer other than the store (a `// known gap:`
    /// at the call says how): both are asked, so the cassettes hold the call, and the
    /// difference is printed, not asserted.
    pub async fn gap(&self, who: Who, path: &str) {
        let gateway = self.get(who, path).await;
        let store = self.store.get(who, path).await;
        let same = gateway.status == store.status
            && store.body.as_ref().is_none_or(|body| {
                serde_json::from_str::<Value>(&gateway.body).ok().as_ref() == Some(body)
            });
        if !same {
            eprintln!(
                "known gap: GET {path} as {who:?}: the gateway answered {} {}; the store {} {}",
                gateway.status,
                gateway.body,
                store.status,
                store.body.map_or(store.message, |b| b.to_string())
            );
        }
    }

    pub async fn stop(self) {
        self.gateway.stop().await;
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }
}

/// `verb url` as `who`, signed as an app of the original signs, asking for `accept`: the
/// one place the tests sign a call to the gateway.
pub fn signed(
    http: &reqwest::Client,
    who: Who,
    verb: &str,
    url: &str,
    accept: &str,
) -> reqwest::RequestBuilder {
    let method = reqwest::Method::from_bytes(verb.as_bytes()).unwrap();
    let mut request = http.request(method, url).header("Accept", accept);
    if let Some((token, secret)) = who.token() {
        let signer = Signer::new(&consumer_key(), &consumer_secret()).token(&token, &secret);
        request = request.header("Authorization", signer.header(verb, url));
    }
    request
}

/// The text of an element of an XML answer: `<name>text</name>`, the first one.
pub fn xml_text<'a>(xml: &'a str, name: &str) -> Option<&'a str> {
    let open = format!("<{name}>");
    let start = xml.find(&open)? + open.len();
    let end = xml[start..].find(&format!("</{name}>"))? + start;
    Some(&xml[start..end])
}
