//! A fleet (issue 21): two gateways with separate data folders sharing one MariaDB OAuth
//! store (a real `mariadbd` on a free loopback port) and, where the test says so, one
//! `redis-server`, in front of one sandbox. Black-box through HTTP, with the CLI binary
//! registering the app and Python's requests-oauthlib doing the dance, as an operator and
//! an app would:
//!
//! - a consumer registered once works on both; a dance started on one finishes on the
//!   other; its token works on both, signed in the header or the query string;
//! - a revocation through one is refused by the other within a second (Redis pub/sub, or
//!   the one-second freshness without Redis); a nonce used on one is refused on the other
//!   (Redis, or the database without it);
//! - the database failing: tokens verified before keep working, new sign-ins get a 503
//!   naming the OAuth store, `/readyz` and the metrics say so, and it comes back by itself.

mod faults;
mod mariadb;
// Shared with tests/shared, which uses all of it (pausing Redis, for one).
#[allow(dead_code)]
#[path = "../common/mod.rs"]
mod common;
#[allow(dead_code)]
#[path = "../shared/redis_server.rs"]
mod redis_server;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use storegate::Running;
use storegate_sandbox::{Sandbox, SandboxOptions};

use common::files::temp_dir;
use common::http::sent;
use mariadb::MariaDb;
use redis_server::RedisServer;

const ADMIN_KEY: &str = "fleet-admin-key-0123456789";
const EMAIL: &str = storegate_sandbox::DEMO_CUSTOMER_EMAIL;
const PASSWORD: &str = storegate_sandbox::DEMO_CUSTOMER_PASSWORD;

struct Fleet {
    a: Running,
    b: Running,
    dirs: std::sync::Mutex<Vec<PathBuf>>,
    database: MariaDb,
    redis: Option<RedisServer>,
    sandbox: Sandbox,
    fresh: Option<Duration>,
    http: reqwest::Client,
}

impl Drop for Fleet {
    fn drop(&mut self) {
        for dir in self.dirs.lock().unwrap().iter() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// One gateway of the fleet: a data folder of its own, the fleet's database, Redis (when
/// there is one), sandbox and secrets.
async fn gateway(
    name: &str,
    database: &MariaDb,
    redis: Option<&RedisServer>,
    sandbox: &Sandbox,
    fresh: Option<Duration>,
) -> (Running, PathBuf) {
    let dir = temp_dir(name);
    let config = storegate::Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        data_dir: dir.clone(),
        database_url: Some(storegate::config::Secret::new(database.url())),
        redis_url: redis.map(|r| storegate::config::Secret::new(r.url())),
        oauth_cache_fresh: fresh,
        ..storegate::Config::default()
    };
    // The token secret is shared, as instances behind one load balancer must.
    let running =
        common::gateway::start_on_sandbox(config, sandbox, ADMIN_KEY, b"fleet-token-secret").await;
    (running, dir)
}

/// Whether requests-oauthlib is there; fails under CI when it is not.
fn python_client() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import requests_oauthlib"])
        .output()
        .is_ok_and(|o| o.status.success());
    let install = "python3 -m pip install requests-oauthlib";
    common::process::required(ok, "python3 requests-oauthlib", install, "the fleet test")
}

impl Fleet {
    /// None when MariaDB, redis-server (if asked for) or the Python client is missing
    /// outside CI.
    async fn start(with_redis: bool, fresh: Option<Duration>) -> Option<Fleet> {
        if !python_client() {
            return None;
        }
        let database = MariaDb::start().await?;
        let redis = match with_redis {
            true => Some(RedisServer::start().await?),
            false => None,
        };
        storegate::backend::transport::install_crypto();
        let sandbox = crate::common::gateway::start_sandbox(SandboxOptions::default()).await;
        let (a, dir_a) = gateway("a", &database, redis.as_ref(), &sandbox, fresh).await;
        let (b, dir_b) = gateway("b", &database, redis.as_ref(), &sandbox, fresh).await;
        let fleet = Fleet {
            a,
            b,
            dirs: std::sync::Mutex::new(vec![dir_a, dir_b]),
            database,
            redis,
            sandbox,
            fresh,
            http: reqwest::Client::new(),
        };
        if fleet.redis.is_some() {
            // Both subscribed before the test begins.
            for gw in [&fleet.a, &fleet.b] {
                let begun = Instant::now();
                while !fleet.ready(gw).await.1["redis"].eq("up") {
                    assert!(begun.elapsed() < Duration::from_secs(10), "Redis never up");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
        Some(fleet)
    }

    /// Another instance, started now (after what the test did to the stores).
    async fn another(&self, name: &str) -> Running {
        let (running, dir) = gateway(
            name,
            &self.database,
            self.redis.as_ref(),
            &self.sandbox,
            self.fresh,
        )
        .await;
        self.dirs.lock().unwrap().push(dir);
        running
    }

    fn origin(gw: &Running) -> String {
        format!("http://{}", gw.addr)
    }

    async fn ready(&self, gw: &Running) -> (u16, Value) {
        let response = sent(self.http.get(format!("{}/readyz", Fleet::origin(gw)))).await;
        (response.status().as_u16(), response.json().await.unwrap())
    }

    /// `storegate oauth consumer add` on the fleet's database, from a third data folder
    /// (the operator's machine): the key and secret it printed.
    fn register_consumer(&self, name: &str) -> (String, String) {
        let dir = temp_dir("cli");
        let output = Command::new(env!("CARGO_BIN_EXE_storegate"))
            .args(["oauth", "consumer", "add", "--name", name])
            .env("STOREGATE_DATABASE_URL", self.database.url())
            .env("STOREGATE_DATA_DIR", &dir)
            .output()
            .unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let stdout = common::process::stdout_of(&output, "oauth consumer add");
        assert!(
            stdout.contains("registered in mysql://127.0.0.1:") && !stdout.contains("storegate-pw"),
            "{stdout}"
        );
        let field = |label: &str| {
            stdout
                .lines()
                .find_map(|l| l.strip_prefix(label))
                .unwrap_or_else(|| panic!("no {label} in {stdout}"))
                .trim()
                .to_owned()
        };
        (field("key:"), field("secret:"))
    }

    /// An app registered as `name`, and the demo customer's access token for it (its
    /// dance, [`Fleet::dance`]).
    async fn app_signed_in(&self, name: &str) -> ((String, String), (String, String)) {
        let consumer = self.register_consumer(name);
        let token = self.dance(&consumer).await;
        (consumer, token)
    }

    /// requests-oauthlib's dance as the demo customer: initiated on A, authorized on B's
    /// pages, exchanged on B. The access token and its secret.
    async fn dance(&self, consumer: &(String, String)) -> (String, String) {
        let mut args = as_the_customer("dance", &self.a, consumer);
        args.extend(["--other".into(), Fleet::origin(&self.b)]);
        args.extend(["--password".into(), PASSWORD.into()]);
        let output = python(args).await;
        let value: Value = serde_json::from_str(output.trim()).unwrap();
        (
            value["token"].as_str().unwrap().to_owned(),
            value["secret"].as_str().unwrap().to_owned(),
        )
    }

    /// The signed customer's own record, a signed `GET /customers/1` on `gw` (header), with
    /// `nonce`: status and body.
    async fn own_record(
        &self,
        gw: &Running,
        consumer: &(String, String),
        token: &(String, String),
        nonce: &str,
    ) -> (u16, String) {
        let url = format!("{}/api/rest/customers/1", Fleet::origin(gw));
        let header = oauth_header("GET", &url, consumer, Some(token), &[], nonce);
        signed_get(self.http.clone(), url, header).await
    }

    /// `POST /oauth/initiate` on `gw`, signed by the consumer alone.
    async fn initiate(&self, gw: &Running, consumer: &(String, String)) -> (u16, String) {
        let url = format!("{}/oauth/initiate", Fleet::origin(gw));
        let nonce = storegate::auth::oauth::store::random_hex32();
        let callback = [("oauth_callback", "oob")];
        let header = oauth_header("POST", &url, consumer, None, &callback, &nonce);
        let response = sent(self.http.post(url).header("Authorization", header)).await;
        (response.status().as_u16(), response.text().await.unwrap())
    }

    /// Revokes every access token of customer 1 through `gw`'s Admin endpoint.
    async fn revoke_customer_tokens(&self, gw: &Running) {
        let list: Value = common::http::json_of(
            self.http
                .get(format!(
                    "{}/api/rest/oauth/tokens?customer_id=1",
                    Fleet::origin(gw)
                ))
                .bearer_auth(ADMIN_KEY)
                .header("Accept", "application/json"),
        )
        .await;
        let entries = list.as_array().unwrap();
        assert!(!entries.is_empty(), "{list}");
        for entry in entries {
            let response = sent(
                self.http
                    .delete(format!(
                        "{}/api/rest/oauth/tokens/{}",
                        Fleet::origin(gw),
                        entry["id"]
                    ))
                    .bearer_auth(ADMIN_KEY),
            )
            .await;
            assert_eq!(response.status(), 200);
        }
    }
}

/// `GET url` with the `Authorization` header `header`, asking for JSON: status and body.
async fn signed_get(http: reqwest::Client, url: String, header: String) -> (u16, String) {
    let response = sent(
        http.get(url)
            .header("Authorization", header)
            .header("Accept", "application/json"),
    )
    .await;
    (response.status().as_u16(), response.text().await.unwrap())
}

/// `OAuth ...` for `verb url`, HMAC-SHA1, with `extra` protocol parameters.
fn oauth_header(
    verb: &str,
    url: &str,
    consumer: &(String, String),
    token: Option<&(String, String)>,
    extra: &[(&str, &str)],
    nonce: &str,
) -> String {
    let consumer = (consumer.0.as_str(), consumer.1.as_str());
    let token = token.map(|(token, secret)| (token.as_str(), secret.as_str()));
    common::oauth_sign::oauth_header_with_nonce(verb, url, consumer, token, nonce, extra)
}

/// client.py's `command` against `gw` by `consumer`, as the demo customer.
fn as_the_customer(command: &str, gw: &Running, consumer: &(String, String)) -> Vec<String> {
    [
        command,
        "--base",
        &Fleet::origin(gw),
        "--key",
        &consumer.0,
        "--secret",
        &consumer.1,
        "--user",
        "customer",
        "--email",
        EMAIL,
    ]
    .map(str::to_owned)
    .to_vec()
}

/// Runs tests/oauth/client.py off the runtime's threads; its stdout.
async fn python(args: Vec<String>) -> String {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/oauth/client.py");
    let mut all = vec![script.to_str().unwrap().to_owned()];
    all.extend(args);
    common::process::run_blocking("python3", all).await
}

fn message(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v["messages"]["error"][0]["message"]
                .as_str()
                .map(str::to_owned)
        })
        .unwrap_or_else(|| body.to_owned())
}

/// Polls `gw` with fresh signed calls until it refuses the token; how long that took.
async fn until_refused(
    fleet: &Fleet,
    gw: &Running,
    consumer: &(String, String),
    token: &(String, String),
) -> Duration {
    let begun = Instant::now();
    loop {
        let nonce = storegate::auth::oauth::store::random_hex32();
        let (status, body) = fleet.own_record(gw, consumer, token, &nonce).await;
        if status == 401 {
            assert_eq!(message(&body), "oauth_problem=token_rejected");
            return begun.elapsed();
        }
        assert_eq!(status, 200, "{body}");
        assert!(begun.elapsed() < Duration::from_secs(5), "never refused");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn shared_store_scenario(fleet: &Fleet) {
    // Registered once, from the operator's machine: both instances know it.
    let consumer = fleet.register_consumer("fleet app");
    for gw in [&fleet.a, &fleet.b] {
        let (status, body) = fleet.initiate(gw, &consumer).await;
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("oauth_callback_confirmed=true"), "{body}");
    }

    // Started on A, authorized and exchanged on B.
    let token = fleet.dance(&consumer).await;
    // Its calls on either instance, signed in the header and in the query (client.py's
    // `calls`: reads, a write, refusals).
    for gw in [&fleet.a, &fleet.b] {
        let mut args = as_the_customer("calls", gw, &consumer);
        args.extend(["--customer-id".into(), "1".into()]);
        args.extend(["--token".into(), token.0.clone()]);
        args.extend(["--token-secret".into(), token.1.clone()]);
        python(args).await;
    }

    // A nonce used on one is refused on the other.
    let nonce = storegate::auth::oauth::store::random_hex32();
    let first = fleet.own_record(&fleet.a, &consumer, &token, &nonce).await;
    assert_eq!(first.0, 200, "{}", first.1);
    let replay = fleet.own_record(&fleet.b, &consumer, &token, &nonce).await;
    assert_eq!(
        (replay.0, message(&replay.1).as_str()),
        (401, "oauth_problem=nonce_used")
    );

    // Revoked through A (B verified the token a moment ago): B refuses it within a second.
    let warm = fleet
        .own_record(
            &fleet.b,
            &consumer,
            &token,
            &storegate::auth::oauth::store::random_hex32(),
        )
        .await;
    assert_eq!(warm.0, 200);
    fleet.revoke_customer_tokens(&fleet.a).await;
    let took = until_refused(fleet, &fleet.b, &consumer, &token).await;
    assert!(took < Duration::from_secs(1), "B refused it after {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_with_redis_share_one_oauth_database() {
    let Some(fleet) = Fleet::start(true, None).await else {
        return;
    };
    shared_store_scenario(&fleet).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_redis_the_database_carries_nonces_and_revocations() {
    let Some(fleet) = Fleet::start(false, None).await else {
        return;
    };
    shared_store_scenario(&fleet).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_redis_a_database_outage_keeps_verified_tokens_and_still_refuses_replays() {
    let Some(mut fleet) = Fleet::start(false, Some(Duration::from_millis(200))).await else {
        return;
    };
    let (consumer, token) = fleet.app_signed_in("outage app without redis").await;
    let url = format!("http://{}/api/rest/customers/1", fleet.a.addr);
    let signed = |nonce: &str| oauth_header("GET", &url, &consumer, Some(&token), &[], nonce);
    let send = |header: String| signed_get(fleet.http.clone(), url.clone(), header);
    let before = signed(&storegate::auth::oauth::store::random_hex32());
    assert_eq!(send(before.clone()).await.0, 200);

    fleet.database.kill();
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The nonces live in the database, which is down: this instance claims them itself, so
    // the calls of a token it verified go on...
    let during = signed(&storegate::auth::oauth::store::random_hex32());
    let (status, body) = send(during.clone()).await;
    assert_eq!(status, 200, "{body}");
    // ...and what it has seen, before the outage or during it, is still refused once used.
    for replay in [during, before] {
        let (status, body) = send(replay).await;
        assert_eq!(status, 401, "{body}");
        assert!(body.contains("nonce_used"), "{body}");
    }
    fleet.database.restart().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_database_failing_keeps_verified_tokens_and_refuses_new_sign_ins() {
    // Fresh for a moment only, so that the calls below are past it and go to the store.
    let Some(mut fleet) = Fleet::start(true, Some(Duration::from_millis(200))).await else {
        return;
    };
    let (consumer, token) = fleet.app_signed_in("outage app").await;
    let call = |fleet: &Fleet| {
        let (consumer, token) = (consumer.clone(), token.clone());
        let a = fleet.a.addr;
        let http = fleet.http.clone();
        async move {
            let url = format!("http://{a}/api/rest/customers/1");
            let nonce = storegate::auth::oauth::store::random_hex32();
            let header = oauth_header("GET", &url, &consumer, Some(&token), &[], &nonce);
            signed_get(http, url, header).await
        }
    };
    assert_eq!(call(&fleet).await.0, 200);

    fleet.database.kill();
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Verified before: still served (nonces are Redis's).
    for _ in 0..3 {
        let (status, body) = call(&fleet).await;
        assert_eq!(status, 200, "{body}");
    }
    // A new sign-in cannot be vouched for: a clear 503 naming the OAuth store.
    let (status, body) = fleet.initiate(&fleet.a, &consumer).await;
    assert_eq!(status, 503, "{body}");
    let (status, ready) = fleet.ready(&fleet.a).await;
    assert_eq!(status, 200, "the catalog still serves: {ready}");
    assert_eq!(ready["oauth_store"], "down", "{ready}");
    assert!(
        ready["oauth_store_error"].as_str().is_some_and(|e| e
            .starts_with("OAuth store: mysql://127.0.0.1:")
            && !e.contains("storegate-pw")),
        "{ready}"
    );
    let metrics =
        common::http::text_of(fleet.http.get(format!("http://{}/metrics", fleet.a.addr))).await;
    assert!(metrics.contains("storegate_oauth_store_up 0"), "{metrics}");
    let fallbacks: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("storegate_oauth_store_fallbacks_total "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    assert!(fallbacks >= 3, "{metrics}");

    // Back: sign-ins work again without a restart of the gateway.
    fleet.database.restart().await;
    let begun = Instant::now();
    loop {
        let (status, body) = fleet.initiate(&fleet.a, &consumer).await;
        if status == 200 {
            break;
        }
        assert!(
            begun.elapsed() < Duration::from_secs(15),
            "no reconnection: {status} {body}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (_, ready) = fleet.ready(&fleet.a).await;
    assert_eq!(ready["oauth_store"], "up", "{ready}");
}

/// Runs `storegate oauth ...` with `env`; its stdout (it must succeed).
fn cli(args: &[&str], env: &[(&str, String)]) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_storegate"));
    command.arg("oauth").args(args);
    for (key, _) in std::env::vars() {
        if key.starts_with("STOREGATE_") {
            command.env_remove(key);
        }
    }
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    common::process::stdout_of(&output, &format!("oauth {args:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_machines_store_migrates_into_the_fleets_and_the_cli_revokes_there() {
    let Some(fleet) = Fleet::start(true, None).await else {
        return;
    };
    // A machine that ran alone: its SQLite store holds an app and a customer's token.
    let alone = temp_dir("alone");
    let store = storegate::auth::oauth::sqlite::SqliteStore::open(&alone).unwrap();
    let consumer = (
        storegate::auth::oauth::store::random_hex32(),
        storegate::auth::oauth::store::random_hex32(),
    );
    let registered = store
        .upsert_consumer(&storegate::auth::oauth::store::NewConsumer {
            name: "old app".into(),
            key: consumer.0.clone(),
            secret: consumer.1.clone(),
            callback_url: None,
            rejected_callback_url: None,
            profile: None,
        })
        .unwrap();
    let token = (
        storegate::auth::oauth::store::random_hex32(),
        storegate::auth::oauth::store::random_hex32(),
    );
    store
        .import_access_token(&storegate::auth::oauth::store::ImportedToken {
            consumer_id: registered.id,
            token: token.0.clone(),
            secret: token.1.clone(),
            owner: storegate::auth::oauth::store::Owner::Customer(1),
        })
        .unwrap();
    drop(store);
    let (status, _) = fleet
        .own_record(&fleet.a, &consumer, &token, "n-before")
        .await;
    assert_eq!(status, 401, "the fleet does not know the old app yet");

    let alone_env = [("STOREGATE_DATA_DIR", alone.display().to_string())];
    let out = cli(&["migrate", "--to", &fleet.database.url()], &alone_env);
    assert!(
        out.contains("copied 1 consumer(s) and 1 access token(s)") && !out.contains("storegate-pw"),
        "{out}"
    );
    // Rerunnable: nothing twice.
    let out = cli(&["migrate", "--to", &fleet.database.url()], &alone_env);
    assert!(out.contains("1 token(s) were there already"), "{out}");

    // The app and its customer keep their token, on every instance.
    for (gw, nonce) in [(&fleet.a, "n-a"), (&fleet.b, "n-b")] {
        let (status, body) = fleet.own_record(gw, &consumer, &token, nonce).await;
        assert_eq!(status, 200, "{body}");
    }

    // The operator revokes it with the CLI on the fleet's store; with Redis the gateways
    // drop it at once.
    let fleet_env = [
        ("STOREGATE_DATABASE_URL", fleet.database.url()),
        ("STOREGATE_REDIS_URL", fleet.redis.as_ref().unwrap().url()),
        ("STOREGATE_DATA_DIR", alone.display().to_string()),
    ];
    let listed = cli(&["token", "list", "--customer-id", "1"], &fleet_env);
    let id = listed
        .lines()
        .find(|line| line.contains(&consumer.0))
        .and_then(|line| line.split('\t').next())
        .unwrap_or_else(|| panic!("{listed}"))
        .to_owned();
    let out = cli(&["token", "revoke", &id], &fleet_env);
    assert!(
        out.contains("announced to the gateways through Redis"),
        "{out}"
    );
    let took = until_refused(&fleet, &fleet.b, &consumer, &token).await;
    assert!(took < Duration::from_secs(1), "refused after {took:?}");
    let _ = std::fs::remove_dir_all(&alone);
}

/// Customers' sessions with the store (an OpenMage back end asks the store as the customer
/// with them) live in the fleet's database, one per customer: every instance finds the one
/// the latest sign-in kept, and deleting a customer forgets it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn customers_store_sessions_are_the_fleets() {
    use storegate::auth::oauth::store::TokenStore;
    let Some(fleet) = Fleet::start(false, None).await else {
        return;
    };
    let store = |place: &str| {
        storegate::auth::oauth::mysql::MySqlStore::connect(&fleet.database.url(), place.into())
            .unwrap()
    };
    let (one, other) = (store("instance a"), store("instance b"));
    assert_eq!(one.store_session(41).await.unwrap(), None);
    one.put_store_session(41, r#"{"customer_id":41,"token":"t1"}"#)
        .await
        .unwrap();
    one.put_store_session(41, r#"{"customer_id":41,"token":"t2"}"#)
        .await
        .unwrap();
    assert_eq!(
        other.store_session(41).await.unwrap().as_deref(),
        Some(r#"{"customer_id":41,"token":"t2"}"#),
        "the latest session, on every instance"
    );
    other.revoke_customer(41, 1_000).await.unwrap();
    assert_eq!(one.store_session(41).await.unwrap(), None);
}
