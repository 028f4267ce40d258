//! The client against a scripted transport: what it sends (signed, or not), what it makes of
//! the store's answers.

use std::collections::VecDeque;
use std::sync::Mutex;

use futures_util::future::BoxFuture;
use serde_json::json;

use super::*;
use crate::auth::oauth::{params, signature};
use crate::backend::openmage::signing::{Keys, as_the_store_reads, authorization, signing_base};
use crate::backend::transport::Answer;
use crate::backend::transport::Transport;
use http::HeaderMap;

/// The seeded store's credentials (docs/openmage): `k`, `s` x32; the admin token and
/// secret padded with `a` to 32 characters.
fn seeded() -> Credentials {
    Credentials {
        consumer_key: Secret::new("k".repeat(32)),
        consumer_secret: Secret::new("s".repeat(32)),
        token: Secret::new(format!("{:a<32}", "admintoken")),
        token_secret: Secret::new(format!("{:a<32}", "adminsecret")),
    }
}

fn admin_keys(credentials: &Credentials) -> Keys<'_> {
    Keys {
        consumer_key: credentials.consumer_key.expose(),
        consumer_secret: credentials.consumer_secret.expose(),
        token: credentials.token.expose(),
        token_secret: credentials.token_secret.expose(),
    }
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// The `oauth_signature` of a header, decoded.
fn signature_of(header: &str) -> String {
    params::parse_header(header)
        .into_iter()
        .find(|(name, _)| name == "oauth_signature")
        .map(|(_, value)| value)
        .expect("a signature")
}

/// Answers from a script, in order; remembers what was sent.
#[derive(Debug, Default)]
struct Script {
    answers: Mutex<VecDeque<Answer>>,
    sent: Mutex<Vec<Outgoing>>,
}

impl Script {
    fn new(answers: Vec<Answer>) -> Arc<Script> {
        Arc::new(Script {
            answers: Mutex::new(answers.into()),
            sent: Mutex::default(),
        })
    }

    fn sent(&self) -> Vec<Outgoing> {
        self.sent.lock().unwrap().clone()
    }
}

impl Transport for Script {
    fn send(&self, request: Outgoing) -> BoxFuture<'static, Result<Answer, BackendError>> {
        self.sent.lock().unwrap().push(request);
        let answer = self
            .answers
            .lock()
            .unwrap()
            .pop_front()
            .expect("an answer scripted for every call");
        Box::pin(async move { Ok(answer) })
    }
}

/// An empty answer with a `Location` (a create's, or a redirect).
fn redirect(status: u16, location: &str) -> Answer {
    answer(status, &[("location", location)], "")
}

fn answer(status: u16, headers: &[(&str, &str)], body: &str) -> Answer {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        map.insert(
            http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
    }
    Answer {
        status: StatusCode::from_u16(status).unwrap(),
        headers: map,
        body: Bytes::from(body.to_owned()),
    }
}

fn client(base: &str, script: &Arc<Script>) -> OpenMage {
    OpenMage::new(base, seeded(), Duration::from_secs(5), "default")
        .unwrap()
        .with_transport(script.clone())
}

// Expected signatures computed independently with Python's oauthlib 3.x/4.x:
//   Client(ck, client_secret=cs, resource_owner_key=token, resource_owner_secret=secret,
//          signature_method=SIGNATURE_HMAC_SHA1, nonce=N, timestamp=T).sign(URI, http_method=M)

#[test]
fn signatures_match_oauthlib() {
    let credentials = seeded();
    let keys = admin_keys(&credentials);
    // A list query: brackets, several parameters (URI given to oauthlib as the transport
    // sends it: http://shop.example/api/rest/products?filter%5B0%5D%5Battribute%5D=sku&...).
    let query = pairs(&[
        ("filter[0][attribute]", "sku"),
        ("filter[0][in][0]", "TP-1"),
        ("limit", "2"),
        ("page", "1"),
    ]);
    let header = authorization(
        &Method::GET,
        "http://shop.example/api/rest/products",
        &query,
        &keys,
        "0123456789abcdef0123456789abcdef",
        1_700_000_000,
    );
    assert_eq!(signature_of(&header), "1hbT6kToxvXuDiBKtqyICF01lcE=");
    let (scheme, parameters) = header.split_once(' ').unwrap();
    assert_eq!(scheme, "OAuth");
    assert!(
        parameters.starts_with("oauth_consumer_key=\"kkkk"),
        "{header}"
    );
    assert!(header.contains("oauth_signature=\"1hbT6kToxvXuDiBKtqyICF01lcE%3D\""));
    assert!(header.contains("oauth_signature_method=\"HMAC-SHA1\""));
    assert!(header.contains("oauth_version=\"1.0\""));

    // A write, no query; the base URL's path is part of the URI.
    let header = authorization(
        &Method::POST,
        "http://shop.example/magento/api/rest/products",
        &[],
        &keys,
        "00112233445566778899aabbccddeeff",
        1_700_000_002,
    );
    assert_eq!(signature_of(&header), "UzkWe2Zh0RWcel5eujO4h2EOH4M=");

    // A customer's token of the same consumer.
    let customer = Keys {
        token: &format!("{:c<32}", "custtoken"),
        token_secret: &format!("{:c<32}", "custsecret"),
        ..admin_keys(&credentials)
    };
    let header = authorization(
        &Method::GET,
        "http://127.0.0.1/api/rest/customers/1",
        &[],
        &customer,
        "0123456789abcdef0123456789abcdef",
        1_700_000_003,
    );
    assert_eq!(signature_of(&header), "gkCfaTkpJfB/81xyAVluvSB8KK4=");
}

#[test]
fn a_space_is_signed_as_the_store_reads_it() {
    // The transport sends `name=a+b`; the store's rawurldecode leaves the `+`, so it signs
    // the value `a+b`: oauthlib's signature of `?name=a%2Bb`.
    let credentials = seeded();
    let header = authorization(
        &Method::GET,
        "http://shop.example/api/rest/products",
        &pairs(&[("name", "a b")]),
        &admin_keys(&credentials),
        "fedcba9876543210fedcba9876543210",
        1_700_000_001,
    );
    assert_eq!(signature_of(&header), "nSpfEdBfeDZdgVwznGB06HfC9Hw=");
    // One value per name, the last; protocol-looking names left out, as the store does.
    assert_eq!(
        as_the_store_reads(&pairs(&[
            ("a", "1"),
            ("a", "2"),
            ("xoauth_token", "t"),
            ("oauth_", "kept"),
            ("b", "x+y z"),
        ])),
        pairs(&[("a", "2"), ("b", "x+y+z"), ("oauth_", "kept")])
    );
}

#[test]
fn the_signature_base_uri_has_no_port_and_keeps_the_base_path() {
    assert_eq!(
        signing_base("http://Shop.Example:8081/magento/"),
        "http://shop.example/magento"
    );
    assert_eq!(
        signing_base("https://shop.example:443"),
        "https://shop.example"
    );
    assert_eq!(signing_base("http://127.0.0.1"), "http://127.0.0.1");
    assert_eq!(signing_base("replay:cassettes"), "replay:cassettes");
    let script = Script::new(vec![]);
    let store = client("http://Shop.Example:8081/magento", &script);
    assert_eq!(
        store.signature_base_uri("/products/1"),
        "http://shop.example/magento/api/rest/products/1"
    );
}

#[tokio::test]
async fn reads_are_signed_and_the_gateways_own_check_accepts_them() {
    let script = Script::new(vec![answer(200, &[], r#"{"entity_id":"1","sku":"TP-1"}"#)]);
    let store = client("http://shop.example:8081", &script);
    let query = pairs(&[("filter[0][attribute]", "sku"), ("limit", "2")]);
    let body = store.get("/products/1", &query).await.unwrap();
    assert_eq!(&body[..], br#"{"entity_id":"1","sku":"TP-1"}"#);
    let sent = script.sent();
    let call = &sent[0];
    assert_eq!(call.method, Method::GET);
    assert_eq!(call.path, "/api/rest/products/1");
    assert_eq!(call.headers[http::header::ACCEPT], "application/json");
    let authorization = &call.headers[http::header::AUTHORIZATION];
    assert!(authorization.is_sensitive());
    let header = authorization.to_str().unwrap();
    // The gateway's own OAuth provider code, reading the call as it went on the wire.
    let wire = call.path_and_query();
    let (_, query_string) = wire.split_once('?').unwrap();
    let collected = params::collect(Some(header), Some(query_string), None);
    assert_eq!(collected.get("oauth_token"), Some(seeded().token.expose()));
    assert_eq!(collected.get("oauth_nonce").map(str::len), Some(32));
    let timestamp: u64 = collected.get("oauth_timestamp").unwrap().parse().unwrap();
    assert!(timestamp.abs_diff(super::timestamp()) < 60);
    let base = signature::base_string(
        "GET",
        // The store checks the URL without the port.
        &signature::base_uri("http", "shop.example", None, "/api/rest/products/1"),
        &collected.signed,
    );
    let presented = collected.get("oauth_signature").unwrap();
    assert!(signature::verify(
        signature::Method::HmacSha1,
        std::slice::from_ref(&base),
        &"s".repeat(32),
        &format!("{:a<32}", "adminsecret"),
        presented,
    ));
    assert!(!signature::verify(
        signature::Method::HmacSha1,
        &[base],
        &"s".repeat(32),
        "another secret",
        presented,
    ));
    // Parsed when asked.
    let script = Script::new(vec![answer(200, &[], r#"{"sku":"TP-1"}"#)]);
    let value: Value = client("http://shop.example", &script)
        .get_json("/products/1", &[])
        .await
        .unwrap();
    assert_eq!(value["sku"], "TP-1");
}

#[tokio::test]
async fn guests_are_unsigned_and_customers_signed_with_their_token() {
    let script = Script::new(vec![answer(200, &[], "{}"), answer(200, &[], "{}")]);
    let store = client("http://shop.example", &script);
    store.get_as_guest("/products/1", &[]).await.unwrap();
    let (token, secret) = (
        format!("{:c<32}", "custtoken"),
        format!("{:c<32}", "custsecret"),
    );
    store
        .get_signed_as("/customers/1", &[], &token, &secret)
        .await
        .unwrap();
    let sent = script.sent();
    assert!(!sent[0].headers.contains_key(http::header::AUTHORIZATION));
    assert_eq!(sent[0].headers[http::header::ACCEPT], "application/json");
    let header = sent[1].headers[http::header::AUTHORIZATION]
        .to_str()
        .unwrap();
    let collected = params::collect(Some(header), None, None);
    assert_eq!(collected.get("oauth_token"), Some(token.as_str()));
    assert_eq!(
        collected.get("oauth_consumer_key"),
        Some("k".repeat(32).as_str())
    );
    let base = signature::base_string(
        "GET",
        "http://shop.example/api/rest/customers/1",
        &collected.signed,
    );
    assert!(signature::verify(
        signature::Method::HmacSha1,
        &[base],
        &"s".repeat(32),
        &secret,
        collected.get("oauth_signature").unwrap(),
    ));
}

#[test]
fn location_gives_the_created_id() {
    for (location, id) in [
        ("/api/rest/products/6", "6"),
        ("http://127.0.0.1/api/rest/products/6", "6"),
        (
            "https://shop.example:8443/m/api/rest/customers/addresses/12/",
            "12",
        ),
        ("/api/rest/products/1/images/abc%20d?x=1#f", "abc d"),
    ] {
        assert_eq!(id_of_location(location).as_deref(), Some(id), "{location}");
    }
    assert_eq!(id_of_location("http://127.0.0.1"), None);
    assert_eq!(id_of_location(""), None);
}

#[tokio::test]
async fn creates_answered_200_or_302_with_a_location_are_created() {
    let script = Script::new(vec![
        // mod_php: 200 and the Location.
        redirect(200, "http://127.0.0.1/api/rest/products/6"),
        // nginx + php-fpm: 302 and the Location.
        answer(
            302,
            &[
                ("location", "/api/rest/products/7"),
                ("content-type", "text/html"),
            ],
            "",
        ),
    ]);
    let store = client("http://127.0.0.1", &script);
    let product = json!({"type_id": "simple", "sku": "n-1"});
    assert_eq!(store.create("/products", &product).await.unwrap(), "6");
    let written = store.post("/products", &product).await.unwrap();
    assert_eq!(written.status, 302);
    assert_eq!(written.location.as_deref(), Some("/api/rest/products/7"));
    assert_eq!(written.created_id().as_deref(), Some("7"));
    let sent = script.sent();
    assert_eq!(sent.len(), 2, "a redirect is never followed");
    assert_eq!(sent[0].method, Method::POST);
    assert_eq!(
        sent[0].headers[http::header::CONTENT_TYPE],
        "application/json"
    );
    assert_eq!(
        serde_json::from_slice::<Value>(sent[0].body.as_ref().unwrap()).unwrap(),
        product
    );
    assert!(sent[0].headers.contains_key(http::header::AUTHORIZATION));
}

#[tokio::test]
async fn updates_deletes_and_multi_status_answers() {
    let multi = r#"{"messages":{"success":[{"code":200,"message":"Resource updated successful.","item_id":1}]}}"#;
    let script = Script::new(vec![
        answer(200, &[], ""),
        answer(207, &[], multi),
        answer(200, &[], ""),
        answer(200, &[], ""),
    ]);
    let store = client("http://127.0.0.1", &script);
    let written = store
        .put("/products/1", &json!({"name": "n"}))
        .await
        .unwrap();
    assert_eq!((written.status, written.location.clone()), (200, None));
    assert_eq!(written.created_id(), None);
    let written = store
        .put("/stockitems", &json!([{"item_id": 1, "qty": 5}]))
        .await
        .unwrap();
    assert_eq!(written.status, 207);
    assert_eq!(&written.body[..], multi.as_bytes());
    store.delete("/products/5", None).await.unwrap();
    store
        .delete("/stockitems", Some(&json!([{"item_id": 1}])))
        .await
        .unwrap();
    let sent = script.sent();
    assert_eq!((&sent[2].method, &sent[2].body), (&Method::DELETE, &None));
    assert!(!sent[2].headers.contains_key(http::header::CONTENT_TYPE));
    assert_eq!(sent[3].body.as_deref(), Some(&br#"[{"item_id":1}]"#[..]));
    // No Location: a create that says nothing of what it made is not a create.
    let script = Script::new(vec![answer(200, &[], "")]);
    let error = client("http://127.0.0.1", &script)
        .create("/products", &json!({"sku": "x"}))
        .await
        .unwrap_err();
    assert!(matches!(error, BackendError::Protocol(_)), "{error:?}");
}

#[tokio::test]
async fn a_redirected_read_or_a_redirect_without_location_is_a_protocol_error() {
    let script = Script::new(vec![
        redirect(301, "https://shop.example/api/rest/products/1"),
        answer(302, &[], ""),
    ]);
    let store = client("http://shop.example", &script);
    let error = store.get("/products/1", &[]).await.unwrap_err();
    assert!(
        matches!(&error, BackendError::Protocol(m) if m.contains("read with a redirect (301)")),
        "{error:?}"
    );
    let error = store.post("/products", &json!({})).await.unwrap_err();
    assert!(
        matches!(&error, BackendError::Protocol(m) if m.contains("write with a redirect (302)")),
        "{error:?}"
    );
}

#[tokio::test]
async fn error_bodies_become_store_messages() {
    let script = Script::new(vec![
        answer(
            404,
            &[("content-type", "application/json; charset=utf-8")],
            r#"{"messages":{"error":[{"code":404,"message":"Resource not found."}]}}"#,
        ),
        answer(
            400,
            &[],
            r#"{"messages":{"error":[{"code":400,"message":"Missing \"type_id\" in request."},{"code":400,"message":"Resource data pre-validation error."}]}}"#,
        ),
        answer(
            401,
            &[],
            r#"{"messages":{"error":[{"code":401,"message":"oauth_problem=signature_invalid"}]}}"#,
        ),
        answer(500, &[], "<html>Fatal error</html>"),
    ]);
    let store = client("http://shop.example", &script);
    let error = store.get("/products/999999", &[]).await.unwrap_err();
    assert!(error.is_not_found());
    let BackendError::Status { status, error } = error else {
        panic!("a status")
    };
    assert_eq!(
        (status, error.text()),
        (404, "Resource not found.".to_owned())
    );
    assert!(error.errors.is_empty());
    let error = store.post("/products", &json!({})).await.unwrap_err();
    let BackendError::Status { status: 400, error } = error else {
        panic!("a 400: {error:?}")
    };
    assert_eq!(error.text(), "Missing \"type_id\" in request.");
    let all: Vec<String> = error.errors.iter().map(StoreMessage::text).collect();
    assert_eq!(
        all,
        [
            "Missing \"type_id\" in request.",
            "Resource data pre-validation error."
        ]
    );
    let error = store.get("/products/1", &[]).await.unwrap_err();
    assert_eq!(error.status(), Some(401));
    assert!(
        error
            .to_string()
            .contains("oauth_problem=signature_invalid")
    );
    let error = store.get("/products/1", &[]).await.unwrap_err();
    let BackendError::Status { status: 500, error } = error else {
        panic!("a 500: {error:?}")
    };
    assert_eq!(error, StoreMessage::default());
    // The shapes that are not the store's error body.
    for body in ["", "[]", r#"{"messages":{}}"#, r#"{"message":"x"}"#] {
        assert_eq!(
            store_message(body.as_bytes()),
            StoreMessage::default(),
            "{body}"
        );
    }
}

#[tokio::test]
async fn reads_are_retried_once_freshly_signed_and_writes_never() {
    let script = Script::new(vec![
        answer(503, &[], ""),
        answer(200, &[], "{}"),
        answer(503, &[], ""),
    ]);
    let store = client("http://shop.example", &script);
    store.get("/products/1", &[]).await.unwrap();
    let error = store
        .post("/products", &json!({"sku": "x"}))
        .await
        .unwrap_err();
    assert_eq!(error.status(), Some(503));
    let sent = script.sent();
    assert_eq!(sent.len(), 3, "the read twice, the write once");
    let nonce = |call: &Outgoing| {
        let header = call.headers[http::header::AUTHORIZATION].to_str().unwrap();
        params::collect(Some(header), None, None)
            .get("oauth_nonce")
            .unwrap()
            .to_owned()
    };
    assert_ne!(
        nonce(&sent[0]),
        nonce(&sent[1]),
        "the store refuses a nonce twice"
    );
}

#[test]
fn secrets_stay_out_of_debug_output() {
    let script = Script::new(vec![]);
    let store = client("http://shop.example", &script);
    let shown = format!("{store:?} {:?}", seeded());
    for secret in [
        "k".repeat(32),
        "s".repeat(32),
        format!("{:a<32}", "admintoken"),
        format!("{:a<32}", "adminsecret"),
    ] {
        assert!(!shown.contains(&secret), "{shown}");
    }
    assert!(shown.contains("Secret([redacted])"));
}

#[test]
fn credentials_come_from_the_configuration() {
    let upstream = Upstream {
        url: "http://127.0.0.1".into(),
        token: Secret::new("t"),
        oauth: Some(crate::config::UpstreamOAuth {
            consumer_key: Secret::new("ck"),
            consumer_secret: Secret::new("cs"),
            token_secret: Secret::new("ts"),
        }),
    };
    let credentials = Credentials::from_backend(&upstream).unwrap();
    assert_eq!(
        [
            credentials.consumer_key.expose(),
            credentials.consumer_secret.expose(),
            credentials.token.expose(),
            credentials.token_secret.expose()
        ],
        ["ck", "cs", "t", "ts"]
    );
    let magento2 = Upstream {
        oauth: None,
        ..upstream
    };
    assert!(Credentials::from_backend(&magento2).is_none());
}
