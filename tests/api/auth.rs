//! Authentication: admin keys (plain and digest), customer tokens, 401s.

use serde_json::{Value, json};
use wiremock::Mock;
use wiremock::matchers::{body_json, header, method, path};

use crate::helpers::*;

async fn mount_login(gw: &Gateway) {
    Mock::given(method("POST"))
        .and(path("/rest/default/V1/integration/customer/token"))
        .and(body_json(
            json!({"username": "jane.doe@example.com", "password": "Tr4il-Head!2024"}),
        ))
        .respond_with(recorded("auth/customer-token"))
        .mount(&gw.upstream)
        .await;
    Mock::given(method("POST"))
        .and(path("/rest/default/V1/integration/customer/token"))
        .respond_with(recorded("auth/customer-token-error-wrong-credentials"))
        .mount(&gw.upstream)
        .await;
    let token = fixture("auth/customer-token")["response"]["body"]
        .as_str()
        .unwrap()
        .to_owned();
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/customers/me"))
        .and(header("authorization", format!("Bearer {token}").as_str()))
        .respond_with(recorded("auth/customers-me"))
        .mount(&gw.upstream)
        .await;
}

/// `POST /auth/token` with `body` in JSON, as a guest.
async fn sign_in(gw: &Gateway, body: Value) -> Reply {
    gw.send_json("POST", "/auth/token", &Who::Guest, &body)
        .await
}

#[tokio::test]
async fn a_customer_logs_in_and_uses_the_token() {
    let gw = Gateway::start().await;
    mount_login(&gw).await;
    let r = sign_in(
        &gw,
        json!({"username": "jane.doe@example.com", "password": "Tr4il-Head!2024"}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("cache-control"), Some("no-store"));
    let body = r.json();
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["customer_id"], json!(5));
    assert_eq!(body["expires_in"], json!(3600));
    let token = body["access_token"].as_str().unwrap();
    // The password went to Magento, never into the answer.
    assert!(!r.body.contains("Tr4il-Head"));
    let principal = gw.running.app.auth.authenticate(&{
        let mut h = http::HeaderMap::new();
        h.insert("authorization", format!("Bearer {token}").parse().unwrap());
        h
    });
    assert_eq!(principal.unwrap(), storegate::auth::Principal::Customer(5));
}

#[tokio::test]
async fn login_in_xml() {
    let gw = Gateway::start().await;
    mount_login(&gw).await;
    let r = gw
        .send_raw(
            gw.request("POST", "/auth/token", &Who::Guest)
                .header("Content-Type", "application/xml")
                .body("<service_api><username>jane.doe@example.com</username><password>Tr4il-Head!2024</password></service_api>"),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.assert_contains(
        "<token_type>Bearer</token_type><expires_in>3600</expires_in><customer_id>5</customer_id>",
    );
}

#[tokio::test]
async fn wrong_credentials_are_401_and_missing_ones_400() {
    let gw = Gateway::start().await;
    mount_login(&gw).await;
    let r = sign_in(
        &gw,
        json!({"username": "jane.doe@example.com", "password": "nope"}),
    )
    .await;
    r.assert_error(401, "Invalid login or password.");
    let r = sign_in(&gw, json!({"username": "x"})).await;
    r.assert_error(400, "Missing \"password\" in request.");
    let r = gw.get_json("/auth/token", &Who::Guest).await;
    assert_eq!(r.status, 405);
}

#[tokio::test]
async fn admin_keys_by_digest() {
    let digest: String = storegate::auth::admin_key_digest("production-key")
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let config = storegate::config::Config::from_sources(None, &|name| {
        (name == "STOREGATE_ADMIN_KEY_SHA256").then(|| format!("{},{digest}", "00".repeat(32)))
    })
    .unwrap();
    let auth = storegate::auth::Authenticator::new(
        config.admin_key_sha256,
        std::sync::Arc::new(storegate::auth::TokenIssuer::new(
            b"k".to_vec(),
            std::time::Duration::from_secs(60),
        )),
        None,
    );
    let mut headers = http::HeaderMap::new();
    headers.insert("authorization", "Bearer production-key".parse().unwrap());
    assert_eq!(
        auth.authenticate(&headers).unwrap(),
        storegate::auth::Principal::Admin
    );
}

#[tokio::test]
async fn bad_credentials_are_401_never_guest() {
    let gw = Gateway::start().await;
    mount_product_1(&gw.upstream).await;
    mount_render(&gw.upstream).await;
    let other_issuer = storegate::auth::TokenIssuer::new(
        b"another-secret".to_vec(),
        std::time::Duration::from_secs(60),
    );
    let forged = other_issuer.issue(5).token;
    for value in [
        "Bearer wrong-key".to_owned(),
        "Bearer ".to_owned(),
        "Basic dXNlcjpwYXNz".to_owned(),
        format!("Bearer {forged}"),
        format!("Bearer {UPSTREAM_TOKEN}"),
    ] {
        let r = gw
            .get_json("/products/1", &Who::Bearer(value.clone()))
            .await;
        assert_eq!(r.status, 401, "{value}");
        assert_eq!(
            r.header("www-authenticate"),
            Some("Bearer error=\"invalid_token\"")
        );
        // Nothing of what was sent is echoed.
        assert!(
            !r.body.contains("wrong-key") && !r.body.contains(UPSTREAM_TOKEN),
            "{}",
            r.body
        );
    }
    let r = gw.get_json("/products/1", &Who::Guest).await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn expired_tokens_are_401() {
    let gw = Gateway::start_with(|c| c.token_ttl = std::time::Duration::from_secs(1)).await;
    let token = gw.token_for(5);
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let r = gw
        .send(
            gw.request(
                "GET",
                "/products/1",
                &Who::Bearer(format!("Bearer {token}")),
            )
            .header("Accept", "application/json"),
        )
        .await;
    r.assert_error(401, "The access token has expired.");
}

/// Magento 2 revokes customer tokens per customer, not per token: revoking the one taken at
/// sign-in would sign the customer out of the store's website and every other app. So the
/// gateway leaves it to expire on Magento's side, and calls nothing but the two sign-in
/// calls (issue 12).
#[tokio::test]
async fn sign_in_leaves_the_magento_customer_token_alone() {
    let gw = Gateway::start().await;
    mount_login(&gw).await;
    Mock::given(wiremock::matchers::path_regex("(?i)revoke|/tokens?$"))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(true))
        .expect(0)
        .mount(&gw.upstream)
        .await;
    let sent = json!({"username": "jane.doe@example.com", "password": "Tr4il-Head!2024"});
    let r = gw
        .send_json("POST", "/auth/token", &Who::Guest, &sent)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    // And using the gateway's token afterwards never touches Magento's.
    let token = r.json()["access_token"].as_str().unwrap().to_owned();
    let _ = gw
        .get_json("/customers", &Who::Bearer(format!("Bearer {token}")))
        .await;
    let calls: Vec<String> = gw
        .upstream
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.method.as_str() != "GET" || r.url.path().contains("integration"))
        .map(|r| format!("{} {}", r.method, r.url.path()))
        .collect();
    assert_eq!(calls, ["POST /rest/default/V1/integration/customer/token"]);
    gw.upstream.verify().await;
}
