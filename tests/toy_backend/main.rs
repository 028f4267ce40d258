//! A third back end, as a newcomer would add one: a folder (`store.rs`, a toy store answering
//! from memory) and one line in a registry. The gateway in front of it serves the API's
//! reads for Guest, Admin and a signed-in customer, and says plainly what the store cannot
//! do (501), with nothing else of the gateway changed.

mod store;

use std::time::Duration;

use serde_json::Value;
use storegate::backend::registry::{self, Kind, Registry};
use storegate::config::{BackendKind, Config};
use storegate::rules::mapping::Mappings;

const ADMIN_KEY: &str = "toy-admin-key-0123456789";

/// The gateway over the toy store.
async fn gateway() -> (storegate::Running, reqwest::Client) {
    storegate::backend::transport::install_crypto();
    // The one line a new kind takes.
    let registry = Registry::standard().with(Kind {
        name: "toy",
        build: store::build,
        mappings: registry::builtin_mappings("magento2"),
    });
    let config = Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        backend: BackendKind::named("toy"),
        upstream_timeout: Duration::from_millis(1500),
        data_dir: std::env::temp_dir().join(format!("storegate-toy-{}", std::process::id())),
        ..Config::default()
    };
    let parts = storegate::Parts {
        upstream_url: "toy:memory".into(),
        upstream_token: String::new(),
        admin_digests: vec![storegate::auth::admin_key_digest(ADMIN_KEY)],
        token_secret: b"toy-token-secret".to_vec(),
        mappings: Mappings::builtin(registry::builtin_mappings("magento2")),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let running = storegate::start_with(config, parts, listener, None, &registry)
        .await
        .unwrap();
    (running, reqwest::Client::new())
}

async fn get(http: &reqwest::Client, url: String, bearer: Option<&str>) -> (u16, Value) {
    let mut request = http.get(url).header("Accept", "application/json");
    if let Some(token) = bearer {
        request = request.bearer_auth(token);
    }
    let answer = request.send().await.unwrap();
    let status = answer.status().as_u16();
    let text = answer.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}")),
    )
}

#[tokio::test]
async fn a_toy_store_in_one_folder_serves_the_api() {
    let (gateway, http) = gateway().await;
    let base = gateway.base_url();

    // A guest's product, rendered from the toy's records through Magento 2's mappings.
    let (status, product) = get(&http, format!("{base}/products/1"), None).await;
    assert_eq!(status, 200, "{product}");
    assert_eq!(product["sku"], "24-MB01");
    assert_eq!(product["name"], "Harbor Duffle Bag");

    // The admin's list.
    let (status, list) = get(&http, format!("{base}/products"), Some(ADMIN_KEY)).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list.as_object().map(|m| m.len()), Some(2), "{list}");

    // A customer signs in with the toy's password and reads their own record.
    let signed = http
        .post(format!("{base}/auth/token"))
        .header("Accept", "application/json")
        .json(&serde_json::json!({"username": store::CUSTOMER.0, "password": store::CUSTOMER.1}))
        .send()
        .await
        .unwrap();
    assert_eq!(signed.status().as_u16(), 200);
    let signed: Value = signed.json().await.unwrap();
    let token = signed["access_token"].as_str().unwrap().to_owned();
    assert_eq!(signed["customer_id"], 5);
    let (status, me) = get(&http, format!("{base}/customers/5"), Some(&token)).await;
    assert_eq!(status, 200, "{me}");
    assert_eq!(me["email"], store::CUSTOMER.0);

    // A wrong password is the API's 401.
    let refused = http
        .post(format!("{base}/auth/token"))
        .json(&serde_json::json!({"username": store::CUSTOMER.0, "password": "wrong-one-1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status().as_u16(), 401);

    // What the toy cannot do (it is read-only): said as it is, in the API's error tree.
    let write = http
        .delete(format!("{base}/products/1"))
        .header("Accept", "application/json")
        .bearer_auth(ADMIN_KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(write.status().as_u16(), 501);
    let body: Value = write.json().await.unwrap();
    assert_eq!(
        body["messages"]["error"][0]["message"],
        "deleting a product is not available with this back end"
    );
    gateway.stop().await;
}
