//! What the replay bench's tests share: `storegate replay` as a child process, refused
//! starts, hand-written cassettes, a gateway whose cache expires at once, recordings made
//! from the sandbox.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use storegate::Running;
use storegate::config::{Config, Recording};
use storegate_sandbox::{Sandbox, SandboxOptions};

use super::recording::{temp_dir, test_data_dir};
use crate::common::http::sent;

const ADMIN_KEY: &str = "bench-admin-key-0123456789";

/// `storegate replay DIR` as a child process, killed when dropped.
pub struct ReplayServer {
    child: Child,
    pub url: String,
    stderr: PathBuf,
}

impl ReplayServer {
    pub fn start(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> ReplayServer {
        storegate::backend::transport::install_crypto();
        let stderr = temp_dir("replay-stderr");
        let stderr_file = stderr.with_extension("log");
        let mut command = Command::new(env!("CARGO_BIN_EXE_storegate"));
        command
            .env("STOREGATE_DATA_DIR", test_data_dir())
            .env_remove("STOREGATE_UPSTREAM_URL")
            .env_remove("STOREGATE_REPLAY_MODE")
            .args(["replay", dir.to_str().unwrap(), "--listen", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr_file).unwrap());
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command.spawn().expect("the storegate binary runs");
        let line = crate::common::process::first_line(&mut child);
        let url = crate::common::process::url_in(&line).unwrap_or_else(|| {
            panic!(
                "no address in {line:?}; stderr: {}",
                std::fs::read_to_string(&stderr_file).unwrap_or_default()
            )
        });
        ReplayServer {
            child,
            url,
            stderr: stderr_file,
        }
    }

    /// What it logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// What it logged, once `needle` is in it (the log is written by a thread of its own,
    /// shortly after the line): at most five seconds.
    pub fn log_with(&self, needle: &str) -> String {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            let log = self.log();
            if log.contains(needle) || std::time::Instant::now() > deadline {
                return log;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn control(&self, path: &str) -> String {
        format!("{}/__storegate{path}", self.url)
    }
}

impl Drop for ReplayServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.stderr);
    }
}

/// The binary with these settings, expected to refuse to start: its exit status and stderr.
pub fn refused(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    storegate::backend::transport::install_crypto();
    let mut command = Command::new(env!("CARGO_BIN_EXE_storegate"));
    command
        .env("STOREGATE_DATA_DIR", test_data_dir())
        .env_remove("STOREGATE_UPSTREAM_URL")
        .args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A cassette file of `interactions` (request, response pairs as JSON).
pub fn write_cassette(dir: &Path, name: &str, interactions: Vec<Value>) {
    std::fs::create_dir_all(dir).unwrap();
    let text = serde_json::to_string_pretty(&json!({
        "storegate_cassette": 1,
        "interactions": interactions,
    }))
    .unwrap();
    std::fs::write(dir.join(name), text).unwrap();
}

/// A recorded `GET /rest/default/V1/products/{sku}` that took `elapsed_ms`.
pub fn product(sku: &str, elapsed_ms: u64, recorded_at: Option<&str>) -> Value {
    let mut interaction = json!({
        "request": {"method": "GET", "path": format!("/rest/default/V1/products/{sku}")},
        "response": {"status": 200, "body": {"sku": sku, "name": format!("Product {sku}")},
                     "elapsed_ms": elapsed_ms}
    });
    if let Some(at) = recorded_at {
        interaction["recorded_at"] = json!(at);
    }
    interaction
}

/// A gateway on port 0 whose cache expires after a second and then serves stale data while
/// the store fails, in front of `upstream_url`.
pub async fn gateway_with_short_cache(upstream_url: &str, recording: Recording) -> Running {
    storegate::backend::transport::install_crypto();
    let config = Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        recording,
        data_dir: test_data_dir(),
        cache_ttl: Duration::from_secs(1),
        stale_while_revalidate: Duration::ZERO,
        stale_if_error: Duration::from_secs(600),
        circuit_failure_threshold: 0,
        ..Config::default()
    };
    crate::common::gateway::start_gateway(
        config,
        crate::common::gateway::Setup {
            upstream_url,
            upstream_token: "any-token",
            admin_key: ADMIN_KEY,
            token_secret: b"bench-token-secret",
        },
    )
    .await
}

/// Reads of two products recorded from the sandbox through the gateway.
pub async fn record_two_products(dir: &Path) {
    let sandbox = crate::common::gateway::start_sandbox(SandboxOptions::default()).await;
    record_products(dir, &sandbox).await;
    sandbox.shutdown().await;
}

/// Reads of products 1 and 2 by a guest, recorded from `sandbox` through the gateway.
pub async fn record_products(dir: &Path, sandbox: &Sandbox) {
    let recording = Recording {
        record_dir: Some(dir.to_path_buf()),
        ..Recording::default()
    };
    let recorder = super::recording::gateway(&sandbox.base_url(), sandbox.token(), recording).await;
    for id in [1, 2] {
        let r = sent(
            reqwest::Client::new()
                .get(format!("{}/products/{id}", recorder.base_url()))
                .header("Accept", "application/json"),
        )
        .await;
        assert_eq!(r.status(), 200);
    }
    recorder.stop().await;
}
