//! The gateway's own machinery in front of OpenMage: a repeated read is a cache hit,
//! `/readyz` asks the store (its store views, its stock) and answers ready, and the binary
//! started outside a checkout serves with the OpenMage mappings built into it.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::*;

#[tokio::test]
async fn a_second_read_is_a_cache_hit_and_readyz_is_ready() {
    let stack = Stack::start("cache").await;
    for who in [Who::Guest, Who::Admin] {
        let first = stack.get(who, "/products/1").await;
        assert_eq!(first.status, 200, "{who:?}: {}", first.body);
        assert_eq!(first.header("x-cache"), Some("MISS"), "{who:?}");
        let second = stack.get(who, "/products/1").await;
        assert_eq!(second.status, 200, "{who:?}: {}", second.body);
        assert_eq!(second.header("x-cache"), Some("HIT"), "{who:?}");
        let status = second.header("cache-status").unwrap_or_default();
        assert!(
            status.starts_with("storegate; hit"),
            "{who:?}: Cache-Status {status:?}"
        );
        assert_eq!(second.body, first.body, "{who:?}");
        assert_eq!(second.json()["name"], "Test Product One");
    }
    let ready = stack.ops("/readyz").await;
    assert_eq!(ready.status, 200, "{}", ready.body);
    assert_eq!(ready.json()["status"], "ready", "{}", ready.body);
    assert_eq!(ready.json()["upstream"], "up", "{}", ready.body);
    stack.stop().await;
}

/// The binary in a folder without `mappings/`: the OpenMage files built into it answer.
#[tokio::test]
async fn the_binary_outside_a_checkout_uses_the_built_in_mappings() {
    let scenario = "binary";
    if matches!(mode(), Mode::Record { .. }) {
        let _ = std::fs::remove_dir_all(gateway_cassettes(scenario));
    }
    let elsewhere = temp_dir("cwd");
    let data_dir = elsewhere.join("data");
    import_oauth_tables(&data_dir);
    let mut command = Command::new(env!("CARGO_BIN_EXE_storegate"));
    command
        .current_dir(&elsewhere)
        .env_remove("STOREGATE_MAPPINGS")
        .env("STOREGATE_WORKERS", "1")
        .env("STOREGATE_ADMIN_KEY", "openmage-test-admin-key-0123456789")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in gateway_variables(scenario, &data_dir) {
        command.env(name, value);
    }
    let mut child = command.spawn().expect("the storegate binary runs");
    // Read on a thread to the end: a closed pipe would end the binary at its next line.
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let base = rx
        .recv_timeout(Duration::from_secs(30))
        .ok()
        .and_then(|line| {
            line.split_whitespace()
                .find(|w| w.starts_with("http://"))
                .map(str::to_owned)
        });
    let (status, body) = match &base {
        Some(base) => match reqwest::Client::new()
            .get(format!("{base}/products/1"))
            .header("Accept", "application/json")
            .send()
            .await
        {
            Ok(reply) => (
                reply.status().as_u16(),
                reply.text().await.unwrap_or_default(),
            ),
            Err(e) => (0, e.to_string()),
        },
        None => (0, String::new()),
    };
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let output = child.wait_with_output().unwrap();
    let _ = std::fs::remove_dir_all(&elsewhere);
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(base.is_some(), "no address printed: {log}");
    assert_eq!(status, 200, "{body}\n{log}");
    let product: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(product["entity_id"], "1", "{product}");
    assert_eq!(product["name"], "Test Product One", "{product}");
    assert_eq!(product["final_price_with_tax"], 19.99, "{product}");
}
