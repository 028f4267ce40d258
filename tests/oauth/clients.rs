//! Real client libraries, as apps of the original API use them: Python requests-oauthlib
//! (`client.py`) and PHP's pecl oauth extension (`client.php`), each through the dance as
//! Customer and as Admin, signed reads and writes, and the refusals (forged signature,
//! replayed nonce, expired timestamp, revoked token). The scripts exit non-zero on any
//! unexpected answer, so this test fails if one of those is accepted.
//!
//! `.ci/run` installs both (`php-cli php-oauth`, `requests-oauthlib`). Without them the test
//! fails when `CI` is set, and skips with a loud message otherwise.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use super::*;
use crate::common::http::sent;
use crate::common::process::{required, run_blocking as run};

fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/oauth")
        .join(name)
}

/// Whether a tool is there; a missing one fails under CI.
fn available(program: &str, probe: &[&str]) -> bool {
    let ok = Command::new(program)
        .args(probe)
        .output()
        .is_ok_and(|o| o.status.success());
    let what = format!("`{program} {}`", probe.join(" "));
    required(ok, &what, "see .ci/run", "the real-client OAuth test")
}

/// Whether php and its pecl oauth extension are there; a missing one fails under CI.
fn pecl_oauth() -> bool {
    available("php", &["-r", "exit(class_exists('OAuth') ? 0 : 1);"])
}

/// A gateway and an app registered on it as `name`, for the PHP client; None without php's
/// pecl oauth (the test skips, or fails under CI).
async fn php_app(name: &str) -> Option<(Stack, Consumer)> {
    if !pecl_oauth() {
        return None;
    }
    let stack = Stack::start().await;
    let consumer = stack.consumer(name);
    Some((stack, consumer))
}

/// `client.php <mode> <gateway> <key> <secret>`: how every call of the PHP client starts.
fn php_client(stack: &Stack, consumer: &Consumer, mode: &str) -> Vec<String> {
    vec![
        script("client.php").display().to_string(),
        mode.to_owned(),
        stack.origin(),
        consumer.key.clone(),
        consumer.secret.clone(),
    ]
}

/// The PHP client's dance as the Admin: the access token and its secret.
async fn php_admin_dance(stack: &Stack, consumer: &Consumer) -> (String, String) {
    let mut args = php_client(stack, consumer, "dance");
    args.extend(["admin", ADMIN_KEY].map(String::from));
    tokens(&run("php", args).await)
}

fn tokens(output: &str) -> (String, String) {
    let value: Value = serde_json::from_str(output.trim()).unwrap_or_else(|_| panic!("{output}"));
    (
        value["token"].as_str().unwrap().to_owned(),
        value["secret"].as_str().unwrap().to_owned(),
    )
}

/// Revokes every access token of customer 1 through the Admin endpoint (Bearer).
async fn revoke_customer_tokens(stack: &Stack) {
    let list: Value = crate::common::http::json_of(
        stack
            .http
            .get(format!(
                "{}/api/rest/oauth/tokens?customer_id=1",
                stack.origin()
            ))
            .bearer_auth(ADMIN_KEY)
            .header("Accept", "application/json"),
    )
    .await;
    let entries = list.as_array().unwrap();
    assert!(!entries.is_empty());
    for entry in entries {
        let response = sent(
            stack
                .http
                .delete(format!(
                    "{}/api/rest/oauth/tokens/{}",
                    stack.origin(),
                    entry["id"]
                ))
                .bearer_auth(ADMIN_KEY),
        )
        .await;
        assert_eq!(response.status(), 200);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_requests_oauthlib() {
    if !available("python3", &["-c", "import requests_oauthlib"]) {
        return;
    }
    let stack = Stack::start().await;
    let consumer = stack.consumer("python app");
    let base = stack.origin();
    let common = |mode: &str| {
        vec![
            script("client.py").display().to_string(),
            mode.to_owned(),
            "--base".into(),
            base.clone(),
            "--key".into(),
            consumer.key.clone(),
            "--secret".into(),
            consumer.secret.clone(),
        ]
    };

    let mut args = common("dance");
    args.extend(
        [
            "--user",
            "customer",
            "--email",
            EMAIL,
            "--password",
            PASSWORD,
        ]
        .map(String::from),
    );
    let (token, secret) = tokens(&run("python3", args).await);
    let mut args = common("calls");
    args.extend(["--user", "customer", "--email", EMAIL, "--customer-id", "1"].map(String::from));
    args.extend([
        "--token".into(),
        token.clone(),
        "--token-secret".into(),
        secret.clone(),
    ]);
    run("python3", args).await;

    let mut args = common("dance");
    args.extend(["--user", "admin", "--admin-key", ADMIN_KEY].map(String::from));
    let (admin_token, admin_secret) = tokens(&run("python3", args).await);
    let mut args = common("calls");
    args.extend([
        "--user".into(),
        "admin".into(),
        "--token".into(),
        admin_token,
        "--token-secret".into(),
        admin_secret,
    ]);
    run("python3", args).await;

    revoke_customer_tokens(&stack).await;
    let mut args = common("rejected");
    args.extend(["--token".into(), token, "--token-secret".into(), secret]);
    run("python3", args).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn php_pecl_oauth() {
    let Some((stack, consumer)) = php_app("php app").await else {
        return;
    };
    let common = |mode: &str| php_client(&stack, &consumer, mode);

    let mut args = common("dance");
    args.extend(["customer", EMAIL, PASSWORD].map(String::from));
    let (token, secret) = tokens(&run("php", args).await);
    let mut args = common("calls");
    args.extend(["customer".into(), token.clone(), secret.clone(), "1".into()]);
    run("php", args).await;

    let (admin_token, admin_secret) = php_admin_dance(&stack, &consumer).await;
    let mut args = common("calls");
    args.extend(["admin".into(), admin_token, admin_secret]);
    run("php", args).await;

    revoke_customer_tokens(&stack).await;
    let mut args = common("rejected");
    args.extend([token, secret]);
    run("php", args).await;
}

/// An app built for Magento 1.9 signs with Zend Framework 1's order (names sorted with
/// `strnatcmp`): a ZF1-style signer in `client.php` lists products with `filter[2]` and
/// `filter[10]` (whose encoded names sort differently in the two orders, which the script
/// checks) and is served as the Admin who signed; its replay, a forged copy and a stale one
/// are refused; pecl oauth's byte-ordered signature of the same URL is served too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_magento_19_app_signs_in_natural_order() {
    let Some((stack, consumer)) = php_app("magento 1.9 app").await else {
        return;
    };
    let (token, secret) = php_admin_dance(&stack, &consumer).await;
    let mut args = php_client(&stack, &consumer, "natural");
    args.extend([token, secret]);
    assert_eq!(run("php", args).await.trim(), "ok");
}

/// The official Magento 1 REST examples' calls (pecl oauth: the customer example sends no
/// `Accept`, which is `*/*` over libcurl and none over PHP streams; the admin example names
/// `*/*`), through a gateway in its default profile: an app registered with the original's
/// profile gets JSON it can `json_decode` and prints its data; the admin's dance works with
/// the docs' `/admin/oAuth_authorize`; an app in the gateway's profile gets XML (what the
/// examples could not read), and Bearer and guest calls keep the gateway's formats.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_php_examples_print_their_data() {
    use storegate::context::profile::Profile;
    if !pecl_oauth() {
        return;
    }
    let stack = Stack::start().await;
    let base = stack.origin();
    // A run of the PHP client: its output.
    let php = |consumer: &Consumer, mode: &str, rest: &[&str]| {
        let mut args = php_client(&stack, consumer, mode);
        args.extend(rest.iter().map(|s| (*s).to_owned()));
        run("php", args)
    };
    let legacy = stack.consumer_in("legacy app", Some(Profile::Original));

    let (token, secret) = tokens(&php(&legacy, "dance", &["customer", EMAIL, PASSWORD]).await);
    let printed = php(&legacy, "official", &[&token, &secret, "products"]).await;
    assert!(
        printed.contains("content-type: application/json"),
        "{printed}"
    );
    assert!(printed.contains("[sku] => 24-MB01"), "{printed}");
    assert!(printed.contains("Joust Duffle Bag"), "{printed}");

    let (admin_token, admin_secret) = tokens(
        &php(
            &legacy,
            "dance",
            &["admin", ADMIN_KEY, "/admin/oAuth_authorize"],
        )
        .await,
    );
    let printed = php(
        &legacy,
        "official",
        &[&admin_token, &admin_secret, "products", "*/*"],
    )
    .await;
    assert!(
        printed.contains("content-type: application/json"),
        "{printed}"
    );
    assert!(printed.contains("[sku] => 24-MB01"), "{printed}");

    // The same example signed by an app that follows the gateway's profile: XML.
    let plain = stack.consumer("new app");
    let (token, secret) = tokens(&php(&plain, "dance", &["customer", EMAIL, PASSWORD]).await);
    let printed = php(&plain, "official", &[&token, &secret, "products"]).await;
    assert!(
        printed.contains("content-type: application/xml"),
        "{printed}"
    );
    assert!(!printed.contains("[sku]"), "{printed}");

    // Guests (and Bearer callers) keep the gateway's profile: `*/*` is XML, `service_api`.
    let guest = stack
        .send(
            "GET",
            &format!("{base}/api/rest/products/1"),
            &[("Accept", "*/*")],
            None,
        )
        .await;
    assert!(
        guest.content_type().starts_with("application/xml"),
        "{}",
        guest.content_type()
    );
    guest.assert_contains("<service_api>");
}
