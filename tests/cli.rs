//! The binary's contract (DESIGN.md §1): configuration errors stop the start with one line
//! naming the key; with no upstream the gateway starts the sandbox and prints how to call
//! it; `storegate sandbox` runs the sandbox alone; SIGTERM shuts down gracefully.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn binary() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_storegate"));
    command.current_dir(env!("CARGO_MANIFEST_DIR"));
    // A clean environment: only what each test sets.
    for (key, _) in std::env::vars() {
        if key.starts_with("STOREGATE_") {
            command.env_remove(key);
        }
    }
    command
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_bad_value_stops_the_start_with_one_line_naming_the_key() {
    let output = binary()
        .env("STOREGATE_UPSTREAM_TIMEOUT_MS", "soon")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(
        stderr.trim_end(),
        "storegate: invalid STOREGATE_UPSTREAM_TIMEOUT_MS: expected a number of milliseconds above 0, got \"soon\""
    );
    // A secret's value is never echoed.
    let output = binary()
        .env("STOREGATE_UPSTREAM_URL", "http://127.0.0.1:9")
        .env("STOREGATE_ADMIN_KEY_SHA256", "not-a-digest-but-secret")
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // The compatibility profile has two values.
    let output = binary()
        .env("STOREGATE_PROFILE", "magento1")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(output.stderr).unwrap().trim_end(),
        "storegate: invalid STOREGATE_PROFILE: expected spec or original, got \"magento1\""
    );
}

#[test]
fn a_bad_mapping_stops_the_start_naming_the_file() {
    let dir = std::env::temp_dir().join(format!("storegate-cli-mappings-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for entry in
        std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/mappings/magento2")).unwrap()
    {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    let product = dir.join("product.toml");
    let text = std::fs::read_to_string(&product).unwrap();
    std::fs::write(
        &product,
        text.replace("[view.guest]", "[view.guest]\nother = [\"nothing_here\"]"),
    )
    .unwrap();
    let output = binary()
        .env("STOREGATE_MAPPINGS", &dir)
        .env("STOREGATE_LISTEN", format!("127.0.0.1:{}", free_port()))
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("product.toml line ") && stderr.contains("nothing_here"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Reads stdout lines until `marker` shows (or panics after a while).
fn read_until(reader: &mut impl BufRead, marker: &str) -> Vec<String> {
    let started = Instant::now();
    let mut lines = Vec::new();
    while started.elapsed() < Duration::from_secs(60) {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            break;
        }
        let done = line.contains(marker);
        lines.push(line.trim_end().to_owned());
        if done {
            return lines;
        }
    }
    panic!("{marker:?} never printed: {lines:?}");
}

fn terminate(pid: u32) {
    let status = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[tokio::test]
async fn with_no_upstream_it_serves_the_sandbox_and_stops_on_sigterm() {
    let port = free_port();
    let mut child = binary()
        .env("STOREGATE_LISTEN", format!("127.0.0.1:{port}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let lines = read_until(&mut stdout, "try: curl");
    let text = lines.join("\n");
    assert!(
        text.contains(&format!(
            "storegate listening on http://127.0.0.1:{port}/api/rest"
        )),
        "{text}"
    );
    assert!(
        text.contains("demo customer: roni_cost@example.com / "),
        "{text}"
    );
    let key = lines
        .iter()
        .find_map(|l| l.strip_prefix("admin key (generated for this run): "))
        .expect("the admin key is printed")
        .to_owned();

    storegate::upstream::install_crypto();
    let http = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}/api/rest");
    let list = http
        .get(format!("{base}/products"))
        .header("Accept", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(list.status(), 200);
    let body: serde_json::Value = list.json().await.unwrap();
    assert!(!body.as_object().unwrap().is_empty());
    let admin = http
        .get(format!("{base}/products/1"))
        .bearer_auth(&key)
        .header("Accept", "application/json")
        .send()
        .await
        .unwrap();
    let admin: serde_json::Value = admin.json().await.unwrap();
    assert!(admin.get("stock_data").is_some(), "{admin}");

    terminate(child.id());
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{status:?}");
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no graceful exit"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn the_sandbox_runs_alone() {
    let port = free_port();
    let mut child = binary()
        .args([
            "sandbox",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--products",
            "50",
        ])
        .env("STOREGATE_UPSTREAM_TOKEN", "bench-token")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let lines = read_until(&mut stdout, "demo customer");
    assert!(
        !lines.join("\n").contains("integration token (generated"),
        "the configured token is used"
    );
    storegate::upstream::install_crypto();
    let http = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    let list = http
        .get(format!(
            "{base}/rest/V1/products?searchCriteria[pageSize]=1"
        ))
        .bearer_auth("bench-token")
        .send()
        .await
        .unwrap();
    assert_eq!(list.status(), 200);
    let body: serde_json::Value = list.json().await.unwrap();
    assert!(body["total_count"].as_u64().unwrap() >= 50, "{body}");
    let refused = http
        .get(format!(
            "{base}/rest/V1/products?searchCriteria[pageSize]=1"
        ))
        .bearer_auth("wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    terminate(child.id());
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

#[tokio::test]
async fn with_an_upstream_it_serves_that_store_and_never_the_sandbox() {
    use wiremock::matchers::{header, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let magento = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/store/storeViews"))
        .and(header("authorization", "Bearer live-integration-token"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!([
            {"id": 1, "code": "default", "name": "Default Store View", "website_id": 1, "store_group_id": 1}
        ])))
        .expect(1..)
        .mount(&magento)
        .await;
    let port = free_port();
    let mut child = binary()
        .env("STOREGATE_LISTEN", format!("127.0.0.1:{port}"))
        .env("STOREGATE_UPSTREAM_URL", magento.uri())
        .env("STOREGATE_UPSTREAM_TOKEN", "live-integration-token")
        .env("STOREGATE_ADMIN_KEY", "an-admin-key-for-this-test")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let lines = read_until(&mut stdout, "upstream:");
    let text = lines.join("\n");
    assert!(
        text.contains(&format!("upstream: {}", magento.uri())),
        "{text}"
    );
    assert!(
        !text.contains("sandbox") && !text.contains("admin key"),
        "{text}"
    );
    storegate::upstream::install_crypto();
    let ready = reqwest::get(format!("http://127.0.0.1:{port}/readyz"))
        .await
        .unwrap();
    assert_eq!(ready.status(), 200);
    terminate(child.id());
    assert!(child.wait().unwrap().success());
    magento.verify().await;
}

#[test]
fn an_address_another_process_serves_is_refused_with_address_in_use() {
    // Held without SO_REUSEPORT (any program) ...
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let output = binary()
        .env("STOREGATE_LISTEN", format!("127.0.0.1:{port}"))
        .env("STOREGATE_UPSTREAM_URL", "http://127.0.0.1:9")
        .env("STOREGATE_UPSTREAM_TOKEN", "t")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains(&format!(
            "cannot listen on 127.0.0.1:{port}: Address already in use"
        )),
        "{stderr}"
    );
    drop(held);
}

#[tokio::test]
async fn a_second_gateway_on_the_same_address_is_refused() {
    // ... and held by a gateway, whose sockets do set SO_REUSEPORT.
    let port = free_port();
    let mut first = binary()
        .env("STOREGATE_LISTEN", format!("127.0.0.1:{port}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(first.stdout.take().unwrap());
    read_until(&mut stdout, "try: curl");
    let output = binary()
        .env("STOREGATE_LISTEN", format!("127.0.0.1:{port}"))
        .output()
        .unwrap();
    terminate(first.id());
    let _ = first.wait();
    assert!(!output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("Address already in use"), "{stderr}");
}

#[tokio::test]
async fn a_second_signal_exits_at_once_while_draining() {
    let port = free_port();
    let mut child = binary()
        .env("STOREGATE_LISTEN", format!("127.0.0.1:{port}"))
        .env("STOREGATE_SANDBOX_LATENCY_MS", "4000")
        .env("STOREGATE_UPSTREAM_TIMEOUT_MS", "20000")
        .env("STOREGATE_DRAIN_TIMEOUT_SECS", "60")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    read_until(&mut stdout, "try: curl");
    storegate::upstream::install_crypto();
    // A request that waits on the slow sandbox, so draining has something to wait for.
    let pending = tokio::spawn(reqwest::get(format!(
        "http://127.0.0.1:{port}/api/rest/products/1"
    )));
    tokio::time::sleep(Duration::from_millis(500)).await;
    terminate(child.id());
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(child.try_wait().unwrap().is_none(), "draining, not gone");
    terminate(child.id());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(started.elapsed() < Duration::from_secs(2), "still running");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(130));
    pending.abort();
}
