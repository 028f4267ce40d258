//! Sign-in that cannot be brute-forced (`STOREGATE_SIGNIN_LIMIT`, on by default at
//! 10/300s): wrong passwords past the count get 429 without a store call, on
//! `POST /api/rest/auth/token` and on the authorize pages, in front of a fake Magento 2
//! and a fake OpenMage whose sign-in calls are counted (`expect`); per username and per
//! address; a success resets the username's count; `off` turns it off.

use std::collections::HashMap;

use serde_json::json;
use wiremock::matchers::{body_string_contains, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::http::{keep_cookies, with_cookies};
use crate::common::oauth_sign::{oauth_header, register_app};
use crate::helpers::*;

const EMAIL: &str = "jane.doe@example.com";
const PASSWORD: &str = "Tr4il-Head!2024";

/// Magento 2's token call: the right password gives a token (and `customers/me` the
/// customer), any other is refused; `wrong` is how many wrong ones may reach it.
async fn mount_magento_signin(server: &MockServer, wrong: u64) {
    let token =
        || Mock::given(method("POST")).and(path("/rest/default/V1/integration/customer/token"));
    token()
        .and(body_string_contains(PASSWORD))
        .respond_with(recorded("auth/customer-token"))
        .mount(server)
        .await;
    token()
        .respond_with(recorded("auth/customer-token-error-wrong-credentials"))
        .expect(wrong)
        .mount(server)
        .await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/customers/me"))
        .respond_with(recorded("auth/customers-me"))
        .mount(server)
        .await;
}

async fn token_call(gw: &Gateway, username: &str, password: &str) -> Reply {
    gw.send(
        gw.request("POST", "/auth/token", &Who::Guest)
            .header("Accept", "application/json")
            .json(&json!({"username": username, "password": password})),
    )
    .await
}

fn data_dir_config(c: &mut storegate::Config) {
    c.data_dir = temp_dir("signin-limits");
}

/// A gateway (its own data folder, then `tweak`) in front of a Magento 2 whose sign-in
/// `wrong` wrong passwords may reach ([`mount_magento_signin`]).
async fn magento_gateway(wrong: u64, tweak: impl FnOnce(&mut storegate::Config)) -> Gateway {
    let upstream = MockServer::start().await;
    mount_magento_signin(&upstream, wrong).await;
    Gateway::start_on(upstream, |c| {
        data_dir_config(c);
        tweak(c);
    })
    .await
}

#[tokio::test]
async fn twelve_wrong_passwords_ten_reach_the_store() {
    let gw = magento_gateway(10, |_| {}).await;
    let mut statuses = Vec::new();
    for _ in 0..12 {
        statuses.push(token_call(&gw, EMAIL, "wrong-password").await);
    }
    assert_eq!(
        statuses.iter().map(|r| r.status).collect::<Vec<_>>(),
        [401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 429, 429]
    );
    let refused = &statuses[11];
    assert_eq!(refused.json()["messages"]["error"][0]["code"], 429);
    assert!(
        refused.messages()[0].starts_with("Too many failed sign-ins. Try again in "),
        "{:?}",
        refused.messages()
    );
    let retry: u64 = refused.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=330).contains(&retry), "{retry}");
    assert!(refused.header("x-request-id").is_some());
    // Even the right password waits: the store is not asked.
    assert_eq!(token_call(&gw, EMAIL, PASSWORD).await.status, 429);
    // Another customer from another address is not held back.
    assert_eq!(
        token_call_from(&gw, "127.0.0.3", "someone.else@example.com", PASSWORD).await,
        200
    );
    let metrics = gw.metrics().await;
    assert!(
        metrics.contains("storegate_signin_limited_total{by=\"username\"} 3"),
        "{metrics}"
    );
    // Dropping the mock server checks the wrong passwords it got: ten.
    gw.upstream.verify().await;
}

/// [`token_call`] from another loopback address.
async fn token_call_from(gw: &Gateway, address: &str, username: &str, password: &str) -> u16 {
    reqwest::Client::builder()
        .local_address(address.parse::<std::net::IpAddr>().ok())
        .build()
        .unwrap()
        .post(gw.url("/auth/token"))
        .header("Accept", "application/json")
        .json(&json!({"username": username, "password": password}))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn a_success_resets_the_usernames_count() {
    // 8 before the success, 9 after it.
    let gw = magento_gateway(17, |c| {
        c.signin_limit = Some(storegate::config::Rate::parse("9/300s").unwrap());
    })
    .await;
    for _ in 0..8 {
        assert_eq!(token_call(&gw, EMAIL, "wrong").await.status, 401);
    }
    assert_eq!(token_call(&gw, EMAIL, PASSWORD).await.status, 200);
    // From another address (the first one's count is not what this is about): the
    // username starts again from zero, nine more failures reach the store, then the guard.
    let mut seen = Vec::new();
    for _ in 0..10 {
        seen.push(token_call_from(&gw, "127.0.0.4", EMAIL, "wrong").await);
    }
    assert_eq!(seen, [401, 401, 401, 401, 401, 401, 401, 401, 401, 429]);
    gw.upstream.verify().await;
}

#[tokio::test]
async fn one_address_trying_many_usernames_is_held_too() {
    let gw = magento_gateway(10, |_| {}).await;
    let mut seen = Vec::new();
    for i in 0..12 {
        seen.push(
            token_call(&gw, &format!("victim{i}@example.com"), "guess")
                .await
                .status,
        );
    }
    assert_eq!(&seen[..10], [401; 10]);
    assert_eq!(&seen[10..], [429, 429]);
    gw.upstream.verify().await;
}

#[tokio::test]
async fn off_is_off() {
    let gw = magento_gateway(12, |c| {
        c.signin_limit = None;
    })
    .await;
    for _ in 0..12 {
        assert_eq!(token_call(&gw, EMAIL, "wrong").await.status, 401);
    }
    gw.upstream.verify().await;
}

#[tokio::test]
async fn the_openmage_store_is_guarded_the_same() {
    let upstream = MockServer::start().await;
    // The store's own sign-in, played as a browser: a request token, the login page, the
    // login post that sends a wrong password back to the login page.
    let page = |verb: &str, at: &str, body: &str| {
        Mock::given(method(verb))
            .and(path(at))
            .respond_with(ResponseTemplate::new(200).set_body_string(body))
    };
    page(
        "POST",
        "/oauth/initiate",
        "oauth_token=rt&oauth_token_secret=rs&oauth_callback_confirmed=true",
    )
    .mount(&upstream)
    .await;
    page(
        "GET",
        "/oauth/authorize",
        "<form><input name=\"form_key\" type=\"hidden\" value=\"fk\"></form>",
    )
    .mount(&upstream)
    .await;
    Mock::given(method("POST"))
        .and(path("/customer/account/loginPost/"))
        .respond_with(ResponseTemplate::new(302).insert_header(
            "Location",
            format!("{}/oauth/authorize?oauth_token=rt", upstream.uri()),
        ))
        .expect(10)
        .mount(&upstream)
        .await;
    let url = upstream.uri();
    let gw = Gateway::start_on(upstream, |c| {
        data_dir_config(c);
        c.backend = storegate::config::BackendKind::OpenMage;
        c.upstream = Some(storegate::config::Upstream {
            url,
            token: storegate::config::Secret::new("admin-token"),
            oauth: Some(storegate::config::UpstreamOAuth {
                consumer_key: storegate::config::Secret::new("ck"),
                consumer_secret: storegate::config::Secret::new("cs"),
                token_secret: storegate::config::Secret::new("ts"),
            }),
        });
    })
    .await;
    let mut seen = Vec::new();
    for _ in 0..12 {
        seen.push(token_call(&gw, EMAIL, "wrong").await.status);
    }
    assert_eq!(&seen[..10], [401; 10], "{seen:?}");
    assert_eq!(&seen[10..], [429, 429]);
    gw.upstream.verify().await;
}

/// A browser on the authorize pages: its cookies, and the request token of a new dance.
struct Browser {
    cookies: HashMap<String, String>,
    token: String,
}

impl Browser {
    /// Registers an app and starts its dance (`oob`).
    async fn start(gw: &Gateway) -> Browser {
        // An app (its access token is not needed here).
        let ((key, secret), _) = register_app(
            &gw.running.app.config.data_dir,
            storegate::auth::oauth::store::Owner::Admin,
            None,
        );
        let url = format!("http://{}/oauth/initiate", gw.running.addr);
        let header = oauth_header(
            "POST",
            &url,
            (&key, &secret),
            None,
            &[("oauth_callback", "oob")],
        );
        let body = gw
            .http
            .post(url)
            .header("Authorization", header)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let token = form_urlencoded::parse(body.as_bytes())
            .find(|(k, _)| k == "oauth_token")
            .unwrap_or_else(|| panic!("no request token: {body}"))
            .1
            .into_owned();
        Browser {
            cookies: HashMap::new(),
            token,
        }
    }

    async fn send(&mut self, gw: &Gateway, verb: &str, page: &str, form: &[(&str, &str)]) -> Reply {
        let url = format!(
            "http://{}{page}?oauth_token={}",
            gw.running.addr, self.token
        );
        let mut request = with_cookies(
            gw.http
                .request(reqwest::Method::from_bytes(verb.as_bytes()).unwrap(), url),
            &self.cookies,
        );
        if !form.is_empty() {
            let body = form_urlencoded::Serializer::new(String::new())
                .extend_pairs(form.iter().copied())
                .finish();
            request = request
                .header("Content-Type", "application/x-www-form-urlencoded")
                .body(body);
        }
        let reply = gw.send_raw(request).await;
        keep_cookies(&mut self.cookies, &reply.headers);
        reply
    }

    /// The sign-in form's key.
    async fn form_key(&mut self, gw: &Gateway, page: &str) -> String {
        let reply = self.send(gw, "GET", page, &[]).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.form_key()
    }
}

#[tokio::test]
async fn the_customer_authorize_page_is_guarded_and_says_when_to_come_back() {
    let gw = magento_gateway(10, |_| {}).await;
    let mut browser = Browser::start(&gw).await;
    let key = browser.form_key(&gw, "/oauth/authorize").await;
    let mut seen = Vec::new();
    let mut last = None;
    for _ in 0..12 {
        let reply = browser
            .send(
                &gw,
                "POST",
                "/oauth/authorize",
                &[
                    ("form_key", &key),
                    ("login[username]", EMAIL),
                    ("login[password]", "wrong"),
                ],
            )
            .await;
        seen.push(reply.status);
        last = Some(reply);
    }
    assert_eq!(&seen[..10], [401; 10]);
    assert_eq!(&seen[10..], [429, 429]);
    let page = last.unwrap();
    assert!(
        page.header("content-type")
            .unwrap()
            .starts_with("text/html")
    );
    assert!(
        page.body
            .contains("Too many failed sign-ins. Try again in "),
        "{}",
        page.body
    );
    assert!(page.header("retry-after").is_some());
    // The token endpoint shares the count: the same customer is held there too.
    assert_eq!(token_call(&gw, EMAIL, "wrong").await.status, 429);
    gw.upstream.verify().await;
}

#[tokio::test]
async fn the_admin_authorize_page_is_guarded_against_guessed_keys() {
    let gw = Gateway::start_with(data_dir_config).await;
    let mut browser = Browser::start(&gw).await;
    let key = browser.form_key(&gw, "/admin/oauth_authorize").await;
    let mut seen = Vec::new();
    for i in 0..11 {
        let guess = format!("guess-{i}");
        let reply = browser
            .send(
                &gw,
                "POST",
                "/admin/oauth_authorize",
                &[("form_key", &key), ("login[password]", &guess)],
            )
            .await;
        seen.push(reply.status);
    }
    assert_eq!(&seen[..10], [401; 10]);
    assert_eq!(seen[10], 429);
    // Past the count, even the right key waits.
    let reply = browser
        .send(
            &gw,
            "POST",
            "/admin/oauth_authorize",
            &[("form_key", &key), ("login[password]", ADMIN_KEY)],
        )
        .await;
    assert_eq!(reply.status, 429);
    assert!(reply.body.contains("Try again in"));
}
