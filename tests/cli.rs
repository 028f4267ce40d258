//! The binary's contract (DESIGN.md §1): configuration errors stop the start with one line
//! naming the key; with no upstream the gateway starts the sandbox and prints how to call
//! it; `storegate sandbox` runs the sandbox alone; SIGTERM shuts down gracefully.

#[allow(dead_code)]
mod common;

use common::http::sent;
use common::process::free_port;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn binary() -> Command {
    // A clean environment: only what each test sets.
    let mut command = common::process::storegate(&["STOREGATE_"]);
    // The OAuth store's folder: not the checkout's `data/` (a test that sets its own wins).
    command.env(
        "STOREGATE_DATA_DIR",
        std::env::temp_dir().join(format!("storegate-cli-tests-{}", std::process::id())),
    );
    command
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
    common::process::lines_until(reader, marker)
        .unwrap_or_else(|lines| panic!("{marker:?} never printed: {lines:?}"))
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

    storegate::backend::transport::install_crypto();
    let http = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}/api/rest");
    let list = sent(
        http.get(format!("{base}/products"))
            .header("Accept", "application/json"),
    )
    .await;
    assert_eq!(list.status(), 200);
    let body: serde_json::Value = list.json().await.unwrap();
    assert!(!body.as_object().unwrap().is_empty());
    let admin = sent(
        http.get(format!("{base}/products/1"))
            .bearer_auth(&key)
            .header("Accept", "application/json"),
    )
    .await;
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
    storegate::backend::transport::install_crypto();
    let http = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    let list = sent(
        http.get(format!(
            "{base}/rest/V1/products?searchCriteria[pageSize]=1"
        ))
        .bearer_auth("bench-token"),
    )
    .await;
    assert_eq!(list.status(), 200);
    let body: serde_json::Value = list.json().await.unwrap();
    assert!(body["total_count"].as_u64().unwrap() >= 50, "{body}");
    let refused = sent(
        http.get(format!(
            "{base}/rest/V1/products?searchCriteria[pageSize]=1"
        ))
        .bearer_auth("wrong"),
    )
    .await;
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
    storegate::backend::transport::install_crypto();
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
    storegate::backend::transport::install_crypto();
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

#[test]
fn help_lists_every_variable_with_its_default_and_version_names_the_commit() {
    let output = binary().arg("--help").output().unwrap();
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    for key in storegate::config::KEYS {
        let name = format!("STOREGATE_{}", key.name.to_ascii_uppercase());
        let line = help
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} is not in --help:\n{help}"));
        assert!(
            line.contains(&format!("[default: {}]", key.default)),
            "{line}"
        );
    }
    assert!(help.contains("Exit status"), "{help}");

    let output = binary().arg("--version").output().unwrap();
    assert!(output.status.success());
    let version = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        version.trim(),
        format!(
            "storegate {} (commit {})",
            env!("CARGO_PKG_VERSION"),
            storegate::observe::build_info::COMMIT
        )
    );
    // Built from this repository, the commit is known.
    if std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.git")).exists() {
        assert_ne!(storegate::observe::build_info::COMMIT, "unknown");
    }
}

#[test]
fn a_mistyped_variable_stops_the_start_instead_of_starting_the_sandbox() {
    let output = binary()
        .env("STOREGATE_UPSTRAEM_URL", "https://shop.example")
        .env("STOREGATE_UPSTREAM_TOKEN", "t")
        .env("STOREGATE_LISTEN", format!("127.0.0.1:{}", free_port()))
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(storegate::config::EXIT_CONFIG.into())
    );
    assert_eq!(
        String::from_utf8(output.stderr).unwrap().trim_end(),
        "storegate: unknown variable STOREGATE_UPSTRAEM_URL; did you mean STOREGATE_UPSTREAM_URL?"
    );
    assert!(output.stdout.is_empty(), "nothing started");
    // A token without its URL: the URL went missing, the sandbox is not what was meant.
    let output = binary()
        .env("STOREGATE_UPSTREAM_TOKEN", "t")
        .env("STOREGATE_LISTEN", format!("127.0.0.1:{}", free_port()))
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(storegate::config::EXIT_CONFIG.into())
    );
    assert!(
        String::from_utf8(output.stderr)
            .unwrap()
            .contains("STOREGATE_UPSTREAM_TOKEN is set but STOREGATE_UPSTREAM_URL is not"),
    );
    assert!(output.stdout.is_empty(), "nothing started");
    // A mapping file that does not load is a configuration error too: the same status.
    let output = binary()
        .env("STOREGATE_MAPPINGS", "/nonexistent/storegate-mappings")
        .env("STOREGATE_LISTEN", format!("127.0.0.1:{}", free_port()))
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(storegate::config::EXIT_CONFIG.into())
    );
}

/// Stops a child however the test ends.
struct Running(std::process::Child);
impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Lines of a child's stream, read on a thread so the pipe never fills.
fn lines_of(stream: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits (boundedly) for a line that satisfies `wanted`; returns it and what came before.
fn wait_for(
    rx: &std::sync::mpsc::Receiver<String>,
    wanted: impl Fn(&str) -> bool,
) -> (Option<String>, Vec<String>) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    while Instant::now() < deadline {
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(100)) {
            if wanted(&line) {
                return (Some(line), seen);
            }
            seen.push(line);
        }
    }
    (None, seen)
}

#[tokio::test]
async fn sandbox_mode_for_a_device_with_json_logs_and_an_access_log() {
    let port = free_port();
    let sandbox_port = free_port();
    // What a phone would use instead of 127.0.0.1 (here: another name for this machine).
    let public = format!("http://localhost:{port}");
    let mut child = Running(
        binary()
            .env("STOREGATE_LISTEN", format!("localhost:{port}"))
            .env("STOREGATE_PUBLIC_URL", &public)
            .env(
                "STOREGATE_SANDBOX_LISTEN",
                format!("127.0.0.1:{sandbox_port}"),
            )
            .env("STOREGATE_LOG_FORMAT", "json")
            .env_remove("RUST_LOG")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stdout = lines_of(child.0.stdout.take().unwrap());
    let stderr = lines_of(child.0.stderr.take().unwrap());
    let (banner, before) = wait_for(&stdout, |l| l.contains("storegate listening"));
    assert!(before.is_empty(), "stdout before the banner: {before:?}");
    let banner: serde_json::Value = serde_json::from_str(&banner.expect("started")).unwrap();
    assert_eq!(banner["base_url"], format!("{public}/api/rest"));
    assert_eq!(banner["upstream"], "sandbox");
    assert_eq!(
        banner["sandbox"],
        format!("http://127.0.0.1:{sandbox_port}")
    );
    let key = banner["admin_key"].as_str().unwrap().to_owned();

    storegate::backend::transport::install_crypto();
    let http = reqwest::Client::new();
    let product: serde_json::Value = common::http::json_of(
        http.get(format!("{public}/api/rest/products/1"))
            .header("Accept", "application/json")
            .header("X-Request-Id", "device-1"),
    )
    .await;
    let image = product["image_url"].as_str().unwrap();
    assert!(image.starts_with(&format!("{public}/media/")), "{image}");
    let file = http.get(image).send().await.unwrap();
    assert_eq!(file.status(), 200);
    assert!(
        file.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("image/")
    );
    let admin = sent(
        http.get(format!("{public}/api/rest/products/1"))
            .bearer_auth(&key)
            .header("Accept", "application/json"),
    )
    .await;
    assert_eq!(admin.status(), 200);

    // One access line per request, at info, in JSON like every other line.
    let (access, lines) = wait_for(&stderr, |l| {
        l.contains("storegate::access") && l.contains("device-1")
    });
    let access: serde_json::Value =
        serde_json::from_str(&access.unwrap_or_else(|| panic!("no access line: {lines:?}")))
            .unwrap();
    assert_eq!(access["level"], "INFO");
    assert_eq!(access["fields"]["status"], 200);
    assert_eq!(access["span"]["route"], "/api/rest/products/{id}");
    assert_eq!(access["span"]["trace_id"].as_str().map(str::len), Some(32));
    assert!(
        access["fields"]["duration_ms"].as_f64().is_some(),
        "{access}"
    );
    assert_eq!(access["fields"]["cache"], "MISS", "{access}");

    // The same read again is a hit answered before routing: its line says so, with the
    // caller's request id and trace, which the hit reads in one pass over the headers.
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let hit = sent(
        http.get(format!("{public}/api/rest/products/1"))
            .header("Accept", "application/json")
            .header("Accept-Language", "en")
            .header("traceparent", format!("00-{trace}-00f067aa0ba902b7-01"))
            .header("X-Request-Id", "device-2"),
    )
    .await;
    assert_eq!(hit.headers()["x-cache"], "HIT");
    assert_eq!(hit.headers()["x-request-id"], "device-2");
    let (access, lines) = wait_for(&stderr, |l| {
        l.contains("storegate::access") && l.contains("device-2")
    });
    let access: serde_json::Value =
        serde_json::from_str(&access.unwrap_or_else(|| panic!("no hit's line: {lines:?}")))
            .unwrap();
    assert_eq!(access["fields"]["cache"], "HIT", "{access}");
    assert_eq!(access["span"]["trace_id"], trace, "{access}");
    assert_eq!(access["span"]["route"], "/api/rest/products/{id}");
    for line in &lines {
        assert!(
            serde_json::from_str::<serde_json::Value>(line).is_ok(),
            "not JSON: {line}"
        );
        assert!(!line.contains('\u{1b}'), "colour codes: {line}");
        assert!(!line.contains(&key), "the admin key is logged: {line}");
    }
    // The log is written by a thread of its own, which drops lines rather than stall a
    // request; /metrics counts what it dropped (none here).
    // The admin authorize page in the Magento 1 docs' spelling is served by its canonical
    // route, and its access line names that route, not `unmatched`.
    let page = sent(
        http.get(format!(
            "{public}/admin/oAuth_authorize?oauth_token=unknown"
        ))
        .header("X-Request-Id", "device-3"),
    )
    .await;
    assert_eq!(page.status(), 400);
    let (access, lines) = wait_for(&stderr, |l| {
        l.contains("storegate::access") && l.contains("device-3")
    });
    let access: serde_json::Value =
        serde_json::from_str(&access.unwrap_or_else(|| panic!("no page's line: {lines:?}")))
            .unwrap();
    assert_eq!(
        access["span"]["route"], "/admin/oauth_authorize",
        "{access}"
    );
    let metrics = common::http::text_of(http.get(format!("{public}/metrics"))).await;
    assert!(
        metrics.contains("storegate_log_lines_dropped_total 0\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains(
            "storegate_http_request_duration_seconds_count{route=\"/admin/oauth_authorize\",method=\"GET\",status=\"400\""
        ),
        "{metrics}"
    );
    terminate(child.0.id());
    let _ = child.0.wait();
}

#[tokio::test]
async fn the_access_log_can_be_turned_off_and_the_health_check_finds_the_gateway() {
    let port = free_port();
    let mut child = Running(
        binary()
            .env("STOREGATE_LISTEN", format!("127.0.0.1:{port}"))
            .env("STOREGATE_ACCESS_LOG", "off")
            .env_remove("RUST_LOG")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stdout = lines_of(child.0.stdout.take().unwrap());
    let stderr = lines_of(child.0.stderr.take().unwrap());
    let (started, _) = wait_for(&stdout, |l| l.starts_with("try: curl"));
    assert!(started.is_some());
    storegate::backend::transport::install_crypto();
    let r = reqwest::get(format!("http://127.0.0.1:{port}/api/rest/products/1"))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // The container's health check: the same configuration finds the same address.
    let health = binary()
        .arg("healthcheck")
        .env("STOREGATE_LISTEN", format!("127.0.0.1:{port}"))
        .output()
        .unwrap();
    assert!(health.status.success(), "{health:?}");
    let nobody = binary()
        .args([
            "healthcheck",
            "--url",
            &format!("http://127.0.0.1:{}/healthz", free_port()),
        ])
        .output()
        .unwrap();
    assert_eq!(nobody.status.code(), Some(1), "{nobody:?}");
    // The shutdown line comes after any access line the request would have written.
    terminate(child.0.id());
    let (_, lines) = wait_for(&stderr, |l| l.contains("shutting down"));
    assert!(
        !lines.iter().any(|l| l.contains("storegate::access")),
        "{lines:?}"
    );
}

#[test]
fn in_json_mode_a_refused_start_is_json_too() {
    let output = binary()
        .env("STOREGATE_LOG_FORMAT", "json")
        .env("STOREGATE_CACHE_TTL_SECS", "soon")
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(storegate::config::EXIT_CONFIG.into())
    );
    let stderr = String::from_utf8(output.stderr).unwrap();
    let line: serde_json::Value = serde_json::from_str(stderr.trim())
        .unwrap_or_else(|e| panic!("not one JSON line ({e}): {stderr}"));
    assert_eq!(line["level"], "ERROR");
    assert!(
        line["fields"]["message"]
            .as_str()
            .unwrap()
            .starts_with("invalid STOREGATE_CACHE_TTL_SECS"),
        "{line}"
    );
}

#[test]
fn malformed_rate_limits_stop_the_start_and_say_where() {
    for (key, value, said) in [
        (
            "STOREGATE_RATE_LIMITS",
            "guest=300/60s,custmer=600/60s",
            "invalid STOREGATE_RATE_LIMITS: item 2 (\"custmer=600/60s\"): \"custmer\" is not a client or a route class",
        ),
        (
            "STOREGATE_RATE_LIMITS",
            "guest=300",
            "invalid STOREGATE_RATE_LIMITS: item 1 (\"guest=300\"): expected a rate such as 300/60s",
        ),
        (
            "STOREGATE_RATE_LIMITS",
            "guest=0/60s",
            "invalid STOREGATE_RATE_LIMITS: item 1 (\"guest=0/60s\"): the count must be 1 to",
        ),
        (
            "STOREGATE_SIGNIN_LIMIT",
            "ten",
            "invalid STOREGATE_SIGNIN_LIMIT: expected a rate such as 300/60s",
        ),
        (
            "STOREGATE_RATE_LIMIT_MODE",
            "dry-run",
            "invalid STOREGATE_RATE_LIMIT_MODE: expected enforce or shadow, got \"dry-run\"",
        ),
    ] {
        let output = binary().env(key, value).output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(storegate::config::EXIT_CONFIG.into()),
            "{key}={value}: {output:?}"
        );
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!("storegate: {said}")),
            "{key}={value}: {stderr}"
        );
    }
}

#[test]
fn a_consumers_own_rate_limit_is_kept_listed_and_checked() {
    let data = std::env::temp_dir().join(format!(
        "storegate-cli-rate-limit-{}-{}",
        std::process::id(),
        storegate::auth::oauth::store::random_hex32()
    ));
    let run = |args: &[&str]| {
        binary()
            .env("STOREGATE_DATA_DIR", &data)
            .args(["oauth", "consumer"])
            .args(args)
            .output()
            .unwrap()
    };
    let added = run(&[
        "add",
        "--name",
        "Partner app",
        "--key",
        "partner-key",
        "--rate-limit",
        "6000/60s",
    ]);
    assert!(added.status.success(), "{added:?}");
    assert!(String::from_utf8_lossy(&added.stdout).contains("rate limit: 6000/60s"));
    let listed = String::from_utf8(run(&["list"]).stdout).unwrap();
    assert!(
        listed.contains("partner-key\tPartner app") && listed.contains("6000/60s"),
        "{listed}"
    );
    // Malformed: refused by the command line, and nothing changes.
    for bad in ["6000", "0/60s", "6000/60x", "lots/60s"] {
        let refused = run(&["update", "--key", "partner-key", "--rate-limit", bad]);
        assert_eq!(refused.status.code(), Some(2), "{bad}: {refused:?}");
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(stderr.contains("--rate-limit"), "{bad}: {stderr}");
    }
    assert!(
        String::from_utf8(run(&["list"]).stdout)
            .unwrap()
            .contains("6000/60s")
    );
    let updated = run(&["update", "--key", "partner-key", "--rate-limit", "50/10s"]);
    assert!(updated.status.success(), "{updated:?}");
    assert!(
        String::from_utf8(run(&["list"]).stdout)
            .unwrap()
            .contains("50/10s")
    );
    // Another field changed: the app's own limit is kept.
    let renamed = run(&["update", "--key", "partner-key", "--name", "Partner app 2"]);
    assert!(renamed.status.success(), "{renamed:?}");
    let listed = String::from_utf8(run(&["list"]).stdout).unwrap();
    assert!(
        listed.contains("partner-key\tPartner app 2") && listed.contains("50/10s"),
        "{listed}"
    );
    let off = run(&["update", "--key", "partner-key", "--rate-limit", "off"]);
    assert!(off.status.success(), "{off:?}");
    let listed = String::from_utf8(run(&["list"]).stdout).unwrap();
    assert!(
        !listed.contains("50/10s") && listed.contains("(STOREGATE_RATE_LIMITS)"),
        "{listed}"
    );
    let unknown = run(&["update", "--key", "nobody", "--rate-limit", "1/1s"]);
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no consumer with key nobody"));
    let _ = std::fs::remove_dir_all(&data);
}
