//! A production start cannot go wrong silently (issue 21, item 6): a production setting
//! without an upstream URL refuses to start instead of serving the demo sandbox; the
//! sandbox still starts with no configuration, or on purpose with `STOREGATE_SANDBOX=1`;
//! and `/readyz` reports a back end refusing the gateway's credentials as not ready.

#[allow(dead_code)]
mod common;

use common::process::free_port;
use std::io::BufReader;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn binary() -> Command {
    let mut command = common::process::storegate(&["STOREGATE_", "STOREGTE_"]);
    command.env(
        "STOREGATE_DATA_DIR",
        std::env::temp_dir().join(format!("storegate-start-tests-{}", std::process::id())),
    );
    command
}

/// Runs the binary to its end (it must stop by itself): exit code and stderr.
fn refused(command: &mut Command) -> (Option<i32>, String) {
    let mut child = command
        .env("STOREGATE_LISTEN", format!("127.0.0.1:{}", free_port()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
            return (status.code(), stderr);
        }
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("the gateway started instead of refusing");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn production_settings_without_an_upstream_refuse_to_start() {
    let digest = "ab".repeat(32);
    for (name, value) in [
        ("STOREGATE_ADMIN_KEY_SHA256", digest.as_str()),
        ("STOREGATE_REDIS_URL", "redis://127.0.0.1:9/0"),
        ("STOREGATE_TOKEN_SECRET", "a-shared-secret"),
        (
            "STOREGATE_DATABASE_URL",
            "mysql://storegate:pw@127.0.0.1:9/storegate",
        ),
    ] {
        let (code, stderr) = refused(binary().env(name, value));
        assert_eq!(code, Some(2), "{name}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("storegate: STOREGATE_UPSTREAM_URL is not set")
                && stderr.contains(name)
                && stderr.contains("STOREGATE_SANDBOX=1"),
            "{stderr}"
        );
        assert!(!stderr.contains("pw@"), "a secret in the message: {stderr}");
    }

    // The operator's typo in the prefix, which the STOREGATE_* name check cannot see.
    let (code, stderr) = refused(
        binary()
            .env("STOREGATE_ADMIN_KEY_SHA256", &digest)
            .env("STOREGATE_TOKEN_SECRET", "a-shared-secret")
            .env("STOREGTE_UPSTREAM_URL", "https://shop.example"),
    );
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("STOREGTE_UPSTREAM_URL is set: a misspelling of STOREGATE_UPSTREAM_URL?"),
        "{stderr}"
    );

    // Never the sandbox, said explicitly.
    let (code, stderr) = refused(binary().env("STOREGATE_SANDBOX", "0"));
    assert_eq!(code, Some(2), "{stderr}");
    // Both the sandbox and a store: which one was meant cannot be told.
    let (code, stderr) = refused(
        binary()
            .env("STOREGATE_SANDBOX", "1")
            .env("STOREGATE_UPSTREAM_URL", "http://127.0.0.1:9")
            .env("STOREGATE_UPSTREAM_TOKEN", "t"),
    );
    assert_eq!(code, Some(2), "{stderr}");
    let (code, stderr) = refused(binary().env("STOREGATE_SANDBOX", "maybe"));
    assert_eq!(
        (code, stderr.trim_end()),
        (
            Some(2),
            "storegate: invalid STOREGATE_SANDBOX: expected 1 or 0, got \"maybe\""
        )
    );
}

/// Starts the binary and waits for its banner; the banner's lines.
fn started(command: &mut Command) -> (std::process::Child, Vec<String>) {
    started_until(command, "try: curl")
}

/// Starts the binary and waits for the banner line holding `last`; the banner's lines.
fn started_until(command: &mut Command, last: &str) -> (std::process::Child, Vec<String>) {
    let mut child = command
        .env("STOREGATE_LISTEN", format!("127.0.0.1:{}", free_port()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let lines = match common::process::lines_until(&mut stdout, last) {
        Ok(lines) => return (child, lines),
        Err(lines) => lines,
    };
    let _ = child.kill();
    let _ = child.wait();
    panic!("no banner: {lines:?}");
}

#[test]
fn the_sandbox_starts_with_nothing_set_or_when_asked_for() {
    for production in [false, true] {
        let mut command = binary();
        if production {
            command
                .env("STOREGATE_SANDBOX", "1")
                .env("STOREGATE_TOKEN_SECRET", "a-shared-secret");
        }
        let (mut child, lines) = started(&mut command);
        let text = lines.join("\n");
        assert!(
            text.contains("upstream: embedded Magento 2 sandbox"),
            "{text}"
        );
        child.kill().unwrap();
        child.wait().unwrap();
    }
}

#[tokio::test]
async fn a_back_end_refusing_the_token_is_not_ready_with_the_reason() {
    storegate::backend::transport::install_crypto();
    let sandbox_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let sandbox = storegate_sandbox::Sandbox::start(
        sandbox_listener,
        storegate_sandbox::SandboxOptions::default(),
    )
    .await
    .unwrap();
    let data_dir = std::env::temp_dir().join(format!(
        "storegate-start-readyz-{}-{}",
        std::process::id(),
        storegate::auth::oauth::store::random_hex32()
    ));
    let mut gateways = Vec::new();
    for token in ["not-the-integration-token", sandbox.token()] {
        let config = storegate::Config {
            listen: "127.0.0.1:0".parse().unwrap(),
            data_dir: data_dir.clone(),
            ..storegate::Config::default()
        };
        let parts = storegate::Parts {
            upstream_url: sandbox.base_url(),
            upstream_token: token.to_owned(),
            admin_digests: vec![storegate::auth::admin_key_digest("k")],
            token_secret: b"secret".to_vec(),
            mappings: storegate::rules::mapping::Mappings::embedded(),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        gateways.push(
            storegate::start(config, parts, listener, None)
                .await
                .unwrap(),
        );
    }
    let ready = |addr: std::net::SocketAddr| async move {
        let response = reqwest::get(format!("http://{addr}/readyz")).await.unwrap();
        let status = response.status().as_u16();
        let body: serde_json::Value = response.json().await.unwrap();
        (status, body)
    };
    let (status, body) = ready(gateways[0].addr).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["status"], "not_ready");
    assert_eq!(body["upstream"], "refused");
    let reason = body["reason"].as_str().unwrap();
    assert!(
        reason.contains("refuses the gateway's credentials (401")
            && reason.contains("STOREGATE_UPSTREAM_TOKEN"),
        "{reason}"
    );
    assert!(!reason.contains("not-the-integration-token"), "{reason}");

    let (status, body) = ready(gateways[1].addr).await;
    assert_eq!(
        (status, &body["upstream"], body.get("reason")),
        (200, &serde_json::json!("up"), None)
    );
    let _ = std::fs::remove_dir_all(&data_dir);
}

#[test]
fn openmage_starts_with_its_four_credentials_and_never_shows_them() {
    let openmage = |command: &mut Command| {
        command
            .env("STOREGATE_BACKEND", "openmage")
            .env("STOREGATE_UPSTREAM_URL", "http://127.0.0.1:9")
            .env("STOREGATE_UPSTREAM_TOKEN", "token-not-to-show-0123456789")
            .env(
                "STOREGATE_UPSTREAM_CONSUMER_KEY",
                "key-not-to-show-0123456789",
            )
            .env(
                "STOREGATE_UPSTREAM_CONSUMER_SECRET",
                "secret-not-to-show-0123456789",
            );
    };
    // One of the four missing: refused, naming it, showing none of the others.
    let mut incomplete = binary();
    openmage(&mut incomplete);
    let (code, stderr) = refused(&mut incomplete);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("STOREGATE_UPSTREAM_TOKEN_SECRET"),
        "{stderr}"
    );
    assert!(!stderr.contains("not-to-show"), "{stderr}");
    // All four: it serves (the store behind it unreachable here), and says nothing of them.
    let mut complete = binary();
    openmage(&mut complete);
    complete.env(
        "STOREGATE_UPSTREAM_TOKEN_SECRET",
        "tsecret-not-to-show-0123456789",
    );
    let (mut child, banner) = started_until(&mut complete, "upstream: ");
    let _ = child.kill();
    let _ = child.wait();
    let text = banner.join("\n");
    assert!(text.contains("upstream: http://127.0.0.1:9"), "{text}");
    assert!(!text.contains("not-to-show"), "{text}");
    // A wrong back end name is one line naming the key and the values it takes.
    let (code, stderr) = refused(binary().env("STOREGATE_BACKEND", "magento1"));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("invalid STOREGATE_BACKEND: expected magento2 or openmage"),
        "{stderr}"
    );
}
