//! Cassettes that say when they are stale, black-box: every recorded interaction keeps
//! when it was recorded and how long the store took; past `STOREGATE_REPLAY_MAX_AGE`,
//! `error` refuses with a line naming the cassette and its age, `record` records the answer
//! again from the store (the sandbox as the live store), `warn` replays with a warning; and
//! `storegate cassette drift` names the endpoint and field a store changed, exit 1, or
//! exits 0 when nothing moved.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use storegate_sandbox::{Sandbox, SandboxOptions};

use super::recording::{temp_dir, test_data_dir};
use super::replay_support::{ReplayServer, product, record_products, write_cassette};
use crate::common::http::sent;

const LONG_AGO: &str = "2020-01-02T03:04:05Z";

fn cassette(dir: &Path, name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap()
}

/// Every interaction of every cassette of `dir` made `LONG_AGO`.
fn make_old(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let mut c: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for i in c["interactions"].as_array_mut().unwrap() {
            i["recorded_at"] = json!(LONG_AGO);
        }
        std::fs::write(&path, serde_json::to_string_pretty(&c).unwrap()).unwrap();
    }
}

async fn start_sandbox() -> Sandbox {
    storegate::backend::transport::install_crypto();
    crate::common::gateway::start_sandbox(SandboxOptions::default()).await
}

/// The SKU product 1 was recorded under, from its cassette.
fn recorded_sku(dir: &Path) -> String {
    let c = cassette(dir, "get.products.{}.json");
    c["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|i| {
            (i["response"]["body"]["id"] == 1).then(|| {
                i["request"]["path"]
                    .as_str()
                    .unwrap()
                    .rsplit('/')
                    .next()
                    .unwrap()
                    .to_owned()
            })
        })
        .expect("product 1 is recorded")
}

/// Renames a product in the sandbox, as the store's admin would.
async fn rename(sandbox: &Sandbox, sku: &str, name: &str) {
    let r = sent(
        reqwest::Client::new()
            .put(format!("{}/rest/all/V1/products/{sku}", sandbox.base_url()))
            .bearer_auth(sandbox.token())
            .json(&json!({"product": {"sku": sku, "name": name}})),
    )
    .await;
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
}

/// A recording keeps when each exchange was made and how long the store took.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_keeps_when_and_how_long() {
    let sandbox = start_sandbox().await;
    let dir = temp_dir("ageing-timing");
    let before = std::time::SystemTime::now() - std::time::Duration::from_secs(1);
    record_products(&dir, &sandbox).await;
    let c = cassette(&dir, "get.products.{}.json");
    for i in c["interactions"].as_array().unwrap() {
        let at =
            storegate::backend::recording::ageing::parse_time(i["recorded_at"].as_str().unwrap())
                .unwrap();
        assert!(at >= before && at <= std::time::SystemTime::now(), "{i}");
        assert!(i["response"]["elapsed_ms"].is_u64(), "{i}");
    }
    sandbox.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// `error`: an answer older than the maximum age is refused, with a line naming the
/// cassette and its age (in the answer and the log); a fresh one is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_past_its_age_is_refused_with_error() {
    let dir = temp_dir("ageing-error");
    let fresh = storegate::backend::recording::ageing::now_text();
    write_cassette(
        &dir,
        "get.products.{}.json",
        vec![
            product("OLD", 3, Some(LONG_AGO)),
            product("NEW", 3, Some(&fresh)),
            product("UNDATED", 3, None),
        ],
    );
    let server = ReplayServer::start(
        &dir,
        &[
            ("STOREGATE_REPLAY_MAX_AGE", "30d"),
            ("STOREGATE_REPLAY_STALE", "error"),
        ],
        &[],
    );
    let r = reqwest::get(format!("{}/rest/default/V1/products/OLD", server.url))
        .await
        .unwrap();
    assert_eq!(r.status(), 502);
    let message = r.json::<Value>().await.unwrap()["message"]
        .as_str()
        .unwrap()
        .to_owned();
    let file = dir.join("get.products.{}.json");
    assert!(
        message.starts_with("replay: stale answer refused:")
            && message.contains(&file.display().to_string())
            && message.contains("interaction 0")
            && message.contains(" old, older than STOREGATE_REPLAY_MAX_AGE=30d")
            // Its age in days: more than two thousand of them since 2020.
            && message.split(", is ").nth(1).is_some_and(|age| age.split('d').next().unwrap().parse::<u32>().unwrap() > 2000),
        "{message}"
    );
    let log = server.log_with(&message);
    assert!(log.contains(&message), "{log}");

    let r = reqwest::get(format!("{}/rest/default/V1/products/NEW", server.url))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // No recorded_at: nothing says it is fresh.
    let r = reqwest::get(format!("{}/rest/default/V1/products/UNDATED", server.url))
        .await
        .unwrap();
    assert_eq!(r.status(), 502);
    assert!(r.text().await.unwrap().contains("no recorded_at"));
    let counts: Value = crate::common::http::get_json(server.control("/counts")).await;
    assert_eq!(counts["counts"]["GET /V1/products/{}"]["stale"], 2);

    // `warn`: replayed, one warning per answer however often it is asked.
    let warn = ReplayServer::start(&dir, &[("STOREGATE_REPLAY_MAX_AGE", "30d")], &[]);
    for _ in 0..3 {
        let r = reqwest::get(format!("{}/rest/default/V1/products/OLD", warn.url))
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    warn.log_with("stale answer replayed");
    // Time for any second warning to reach the log too: there must be none.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let log = warn.log();
    assert_eq!(log.matches("stale answer replayed").count(), 1, "{log}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `record`: a stale answer is recorded again from the store (the sandbox, where the
/// product was renamed since) and the cassette rewritten with the new answer and time; with
/// the store gone, the old answer is replayed with a warning.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_answer_is_recorded_again_from_the_store() {
    let sandbox = start_sandbox().await;
    let dir = temp_dir("ageing-record");
    record_products(&dir, &sandbox).await;
    make_old(&dir);
    let sku = recorded_sku(&dir);
    rename(&sandbox, &sku, "Renamed Since Recording").await;
    let path = format!("/rest/default/V1/products/{sku}");

    let server = ReplayServer::start(
        &dir,
        &[
            ("STOREGATE_REPLAY_MAX_AGE", "30d"),
            ("STOREGATE_REPLAY_STALE", "record"),
            ("STOREGATE_REPLAY_UPSTREAM_URL", &sandbox.base_url()),
            ("STOREGATE_UPSTREAM_TOKEN", sandbox.token()),
        ],
        &[],
    );
    let r = sent(
        reqwest::Client::new()
            .get(format!("{}{path}", server.url))
            .header("Authorization", "Bearer whatever-the-gateway-sends"),
    )
    .await;
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["name"], "Renamed Since Recording", "{body}");
    let c = cassette(&dir, "get.products.{}.json");
    let rewritten = c["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["request"]["path"] == path.as_str())
        .unwrap();
    assert_eq!(
        rewritten["response"]["body"]["name"],
        "Renamed Since Recording"
    );
    assert_ne!(rewritten["recorded_at"], LONG_AGO);
    assert!(
        !std::fs::read_to_string(dir.join("get.products.{}.json"))
            .unwrap()
            .contains(sandbox.token())
    );
    let asked: Value = crate::common::http::get_json(server.control("/requests")).await;
    assert_eq!(asked["requests"][0]["outcome"], "re-recorded");
    drop(server);

    // The store gone: the old answer, and a warning.
    make_old(&dir);
    let gone = sandbox.base_url();
    sandbox.shutdown().await;
    let server = ReplayServer::start(
        &dir,
        &[
            ("STOREGATE_REPLAY_MAX_AGE", "30d"),
            ("STOREGATE_REPLAY_STALE", "record"),
            ("STOREGATE_REPLAY_UPSTREAM_URL", &gone),
            ("STOREGATE_UPSTREAM_TOKEN", "t"),
        ],
        &[],
    );
    let r = reqwest::get(format!("{}{path}", server.url)).await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.json::<Value>().await.unwrap()["name"],
        "Renamed Since Recording"
    );
    let log = server.log_with("stale answer replayed, the store did not answer");
    assert!(
        log.contains("stale answer replayed, the store did not answer"),
        "{log}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn drift(dir: &Path, sandbox: &Sandbox) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_storegate"))
        .env("STOREGATE_DATA_DIR", test_data_dir())
        .env_remove("STOREGATE_UPSTREAM_URL")
        .env("STOREGATE_REPLAY_UPSTREAM_URL", sandbox.base_url())
        .env("STOREGATE_UPSTREAM_TOKEN", sandbox.token())
        .args(["cassette", "drift", dir.to_str().unwrap()])
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `storegate cassette drift`: unchanged, exit 0; a product renamed in the store after
/// recording, exit 1 with the endpoint and the field named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drift_names_the_endpoint_and_field_that_changed() {
    let sandbox = start_sandbox().await;
    let dir = temp_dir("drift");
    record_products(&dir, &sandbox).await;
    // A write in the folder is listed, never sent to the live store.
    write_cassette(
        &dir,
        "delete.products.{}.json",
        vec![
            json!({"request": {"method": "DELETE", "path": "/rest/all/V1/products/X"},
                    "response": {"status": 200, "body": true}}),
        ],
    );

    let (status, stdout, stderr) = drift(&dir, &sandbox);
    assert_eq!(status, Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("drift: 0 of") && stdout.contains("1 not asked again"),
        "{stdout}"
    );

    let sku = recorded_sku(&dir);
    rename(&sandbox, &sku, "A Name The Cassette Never Saw").await;
    let (status, stdout, stderr) = drift(&dir, &sandbox);
    assert_eq!(status, Some(1), "{stdout}\n{stderr}");
    let endpoint = stdout
        .lines()
        .find(|l| l.starts_with("GET /V1/products/{}:"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(endpoint.contains("1 recorded request"), "{stdout}");
    let field = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("name (value)"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(field.contains("A Name The Cassette Never Saw"), "{field}");
    assert!(stderr.contains("differently"), "{stderr}");
    sandbox.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}
