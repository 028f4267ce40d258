//! Warm restarts (issue 33, `STOREGATE_WARM_START`), black-box through the binary: the
//! sandbox alone as the store (`storegate sandbox`), a gateway on a fixed port and data
//! folder in front of it, stopped with SIGTERM and started again.
//!
//! - A restarted instance (no Redis) answers at least 95% of the first 1,000 reads of its
//!   previous hot set from its cache (`X-Cache: HIT`), and asks the store nothing for them.
//! - A record cut short, or of another version, is ignored with one log line: the
//!   instance starts cold.
//! - A store that fails during the warm-up: the instance is ready within the bound all the
//!   same, and `/readyz` and the log say how much was warmed.

#[allow(dead_code)]
mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::binary::{Process, binary};
use common::files::temp_dir;
use common::process::free_port;
use serde_json::Value;

const TOKEN: &str = "warm-start-integration-token";
const ADMIN_KEY: &str = "warm-start-admin-key-0123456789";
/// The hot set: this many distinct products, read before the restart.
const HOT: u64 = 1_000;

/// The sandbox alone, with `products` generated products and `latency` on every answer.
fn sandbox(port: u16, products: usize, latency_ms: u64) -> Process {
    let mut command = binary();
    command
        .args(["sandbox", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--products", &products.to_string()])
        .args(["--latency-ms", &latency_ms.to_string()])
        .env("STOREGATE_UPSTREAM_TOKEN", TOKEN);
    Process::start(command)
}

/// A gateway on `port` with data folder `data`, in front of the store on `store_port`.
fn gateway(port: u16, store_port: u16, data: &Path, extra: &[(&str, &str)]) -> Process {
    let mut command: Command = binary();
    command
        .env("STOREGATE_LISTEN", format!("127.0.0.1:{port}"))
        .env(
            "STOREGATE_UPSTREAM_URL",
            format!("http://127.0.0.1:{store_port}"),
        )
        .env("STOREGATE_UPSTREAM_TOKEN", TOKEN)
        .env("STOREGATE_ADMIN_KEY", ADMIN_KEY)
        .env("STOREGATE_TOKEN_SECRET", "warm-start-token-secret")
        .env("STOREGATE_DATA_DIR", data)
        .env("STOREGATE_ACCESS_LOG", "off")
        .env("STOREGATE_WORKERS", "2");
    for (key, value) in extra {
        command.env(key, value);
    }
    Process::start(command)
}

/// reqwest is built without a bundled crypto provider: the gateway's is installed first.
fn client() -> reqwest::Client {
    storegate::backend::transport::install_crypto();
    reqwest::Client::new()
}

async fn get(client: &reqwest::Client, url: &str) -> Option<reqwest::Response> {
    client
        .get(url)
        .header("Accept", "application/json")
        .send()
        .await
        .ok()
}

/// Until `/readyz` answers 200, at most `within`; its body.
async fn ready(client: &reqwest::Client, port: u16, within: Duration) -> Value {
    let started = Instant::now();
    let url = format!("http://127.0.0.1:{port}/readyz");
    while started.elapsed() < within {
        if let Some(answer) = get(client, &url).await
            && answer.status() == 200
        {
            return answer.json().await.unwrap();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{url} was not ready within {within:?}");
}

/// The sandbox's calls so far, by `METHOD path`.
async fn store_calls(client: &reqwest::Client, store_port: u16) -> u64 {
    let stats: Value = get(
        client,
        &format!("http://127.0.0.1:{store_port}/__sandbox/stats"),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    stats
        .as_object()
        .unwrap()
        .values()
        .filter_map(Value::as_u64)
        .sum()
}

/// The ids of the generated products (after the seed's).
async fn first_generated(client: &reqwest::Client, store_port: u16) -> u64 {
    let product: Value = client
        .get(format!(
            "http://127.0.0.1:{store_port}/rest/default/V1/products/GEN-000001"
        ))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    product["id"].as_u64().unwrap()
}

/// Reads products `ids` as a Guest; how many answers were cache hits.
async fn read_all(client: &reqwest::Client, port: u16, ids: impl Iterator<Item = u64>) -> usize {
    let mut hits = 0;
    for id in ids {
        let answer = get(
            client,
            &format!("http://127.0.0.1:{port}/api/rest/products/{id}"),
        )
        .await
        .unwrap();
        assert_eq!(answer.status(), 200, "product {id}");
        if answer
            .headers()
            .get("x-cache")
            .and_then(|v| v.to_str().ok())
            == Some("HIT")
        {
            hits += 1;
        }
    }
    hits
}

#[tokio::test]
async fn a_restarted_instance_answers_its_previous_hot_set_from_its_cache() {
    let client = client();
    let (store_port, port) = (free_port(), free_port());
    let data = temp_dir("warm-start-restart");
    let _store = sandbox(store_port, HOT as usize + 50, 0);
    let mut first = gateway(port, store_port, &data, &[]);
    let report = ready(&client, port, Duration::from_secs(60)).await;
    assert_eq!(
        report["warm_start"]["cold"], "no record of hot keys (a first start)",
        "{report}"
    );
    let start = first_generated(&client, store_port).await;
    let hot = start..start + HOT;
    assert_eq!(
        read_all(&client, port, hot.clone()).await,
        0,
        "cold at first"
    );
    // SIGTERM: the drain writes the record of hot keys.
    first.terminate();
    let record: Value =
        serde_json::from_slice(&std::fs::read(data.join(format!("hot-keys-{port}.json"))).unwrap())
            .unwrap();
    assert!(
        record["keys"].as_array().unwrap().len() >= HOT as usize,
        "the record holds the hot set"
    );
    assert!(
        !record.to_string().contains("Generated Product"),
        "keys, not bodies"
    );

    let _second = gateway(port, store_port, &data, &[]);
    let report = ready(&client, port, Duration::from_secs(60)).await;
    let warm = &report["warm_start"];
    assert!(
        warm["warmed"].as_u64().unwrap() >= HOT * 95 / 100,
        "{report}"
    );
    let before = store_calls(&client, store_port).await;
    let hits = read_all(&client, port, hot).await;
    assert!(
        hits * 100 >= HOT as usize * 95,
        "{hits} of the first {HOT} reads of the hot set were hits"
    );
    let asked = store_calls(&client, store_port).await - before;
    assert!(
        asked <= HOT / 20 * 2,
        "the store was asked {asked} times for the hot set"
    );
}

#[tokio::test]
async fn a_record_cut_short_or_of_another_version_starts_cold_with_one_line() {
    let client = client();
    let (store_port, port) = (free_port(), free_port());
    let data = temp_dir("warm-start-bad-record");
    let _store = sandbox(store_port, 0, 0);
    let path = data.join(format!("hot-keys-{port}.json"));
    let whole = serde_json::json!({"record": "storegate hot keys", "version": 1,
        "store": "0", "written": 1, "keys": ["f|guest|json|/api/rest/products/1"]})
    .to_string();
    for (text, why) in [
        (whole[..whole.len() / 2].to_owned(), "not whole"),
        (
            whole.replace("\"version\":1", "\"version\":7"),
            "another version",
        ),
        (whole.clone(), "another store"),
    ] {
        std::fs::write(&path, &text).unwrap();
        let gateway = gateway(port, store_port, &data, &[]);
        let report = ready(&client, port, Duration::from_secs(60)).await;
        let cold = report["warm_start"]["cold"].as_str().unwrap_or_default();
        assert!(cold.contains(why), "{why}: {report}");
        assert_eq!(report["warm_start"]["warmed"], 0);
        tokio::time::sleep(Duration::from_millis(200)).await;
        let lines = gateway.lines_with("record of hot keys");
        assert_eq!(lines.len(), 1, "one log line: {lines:?}");
        assert!(lines[0].contains("starting cold"), "{lines:?}");
        drop(gateway);
    }
}

#[tokio::test]
async fn a_store_failing_during_the_warm_up_leaves_it_ready_within_the_bound() {
    let client = client();
    let (store_port, port) = (free_port(), free_port());
    let data = temp_dir("warm-start-failing-store");
    // A record of 1,000 hot answers, from a first run.
    let mut store = sandbox(store_port, HOT as usize, 0);
    let mut first = gateway(port, store_port, &data, &[]);
    ready(&client, port, Duration::from_secs(60)).await;
    let start = first_generated(&client, store_port).await;
    read_all(&client, port, start..start + HOT).await;
    first.terminate();

    // The store is down: every answer of the refill fails, and it stops early.
    store.terminate();
    let down = gateway(
        port,
        store_port,
        &data,
        &[("STOREGATE_WARM_START", "secs=10")],
    );
    let started = Instant::now();
    let report = ready(&client, port, Duration::from_secs(20)).await;
    assert!(started.elapsed() < Duration::from_secs(12), "{report}");
    let warm = &report["warm_start"];
    assert_eq!(warm["warmed"], 0, "{report}");
    assert!(warm["failed"].as_u64().unwrap() > 0, "{report}");
    assert!(
        warm["stopped"].as_str().unwrap().contains("failed"),
        "{report}"
    );
    assert!(
        !warm["lookups_failed"].as_array().unwrap().is_empty(),
        "{report}"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    let said = down.lines_with("warm-up done");
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains("warmed=0") && said[0].contains("stopped="),
        "{said:?}"
    );
    drop(down);

    // A store that answers, slowly: ready when the bound runs out, saying how far it got.
    let _slow = sandbox(store_port, HOT as usize, 700);
    let slow = gateway(
        port,
        store_port,
        &data,
        &[("STOREGATE_WARM_START", "secs=3")],
    );
    let started = Instant::now();
    let url = format!("http://127.0.0.1:{port}/readyz");
    let mut warming = false;
    while started.elapsed() < Duration::from_secs(2) {
        if let Some(answer) = get(&client, &url).await {
            let body: Value = answer.json().await.unwrap_or_default();
            if body["status"] == "warming" {
                warming = true;
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(warming, "/readyz says warming while it warms");
    let report = ready(&client, port, Duration::from_secs(20)).await;
    assert!(started.elapsed() < Duration::from_secs(8), "{report}");
    let warm = &report["warm_start"];
    assert_eq!(warm["stopped"], "time ran out", "{report}");
    assert!(warm["warmed"].as_u64().unwrap() < HOT, "{report}");
    drop(slow);
}
