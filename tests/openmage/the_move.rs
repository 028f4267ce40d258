//! The move (docs/openmage.md, "The move to Magento 2"): one app, signing with the consumer
//! and the tokens imported from the OpenMage store's own tables, reads through the gateway in
//! front of OpenMage; then the back end is switched to Magento 2 (the sandbox), the gateway's
//! OAuth store left as it is, and the same app, with the same credentials, reads again.
//!
//! Every read answers as before (same status, same fields: the API does not change with the
//! back end), and a product moved to the new store (written through the gateway with what the
//! old store held, as a migration would) reads back with the same values.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use storegate_sandbox::SandboxOptions;

use super::{Stack, Who, signed};
use crate::common::http::sent;

/// What the app reads, as whom.
const READS: &[(Who, &str)] = &[
    (Who::Admin, "/products/1"),
    (Who::Admin, "/products?limit=2"),
    (Who::Admin, "/stockitems?limit=2"),
    (Who::Admin, "/customers/1"),
    (Who::Admin, "/customers/1/addresses"),
    (Who::Customer, "/customers/1"),
    (Who::Customer, "/customers/1/addresses"),
    (Who::Customer, "/products/1"),
    (Who::Guest, "/products/1"),
    (Who::Guest, "/products?limit=2"),
];

/// The fields of an answer: its keys, and for a list keyed by id, its entries' keys.
fn shape(answer: &Value) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    let mut add = |prefix: &str, value: &Value| {
        if let Some(object) = value.as_object() {
            for (key, inner) in object {
                keys.insert(format!("{prefix}{key}"));
                if let Some(nested) = inner.as_object() {
                    for k in nested.keys() {
                        keys.insert(format!("{prefix}{key}.{k}"));
                    }
                }
            }
        }
    };
    match answer {
        // A list keyed by id: the entries' fields (ids differ between stores).
        Value::Object(map) if map.keys().all(|k| k.parse::<u64>().is_ok()) && !map.is_empty() => {
            for entry in map.values() {
                add("*.", entry);
            }
        }
        Value::Array(list) => {
            for entry in list {
                add("*.", entry);
            }
        }
        other => add("", other),
    }
    keys
}

/// `GET {base}/api/rest{path}` as `who`, signed as the app signs.
async fn read(http: &reqwest::Client, base: &str, who: Who, path: &str) -> (u16, Value) {
    let url = format!("{base}{path}");
    let request = signed(http, who, "GET", &url, "application/json");
    let response = request.send().await.expect("the gateway answers");
    let status = response.status().as_u16();
    let body = response.json::<Value>().await.unwrap_or(Value::Null);
    (status, body)
}

#[tokio::test]
async fn one_app_keeps_its_tokens_and_its_answers_when_the_store_moves() {
    // Before: in front of the OpenMage store (its cassettes in CI).
    let before = Stack::start("the-move").await;
    let http = before.http.clone();
    let base = before.gateway.base_url();
    let mut answers = Vec::new();
    for (who, path) in READS {
        answers.push(read(&http, &base, *who, path).await);
    }
    let (status, old_product) = read(&http, &base, Who::Admin, "/products/2").await;
    assert_eq!(status, 200, "{old_product}");
    let data_dir = before.data_dir.clone();
    before.gateway.stop().await;

    // The switch: the same OAuth store, the back end now Magento 2.
    let sandbox = crate::common::gateway::start_sandbox(SandboxOptions::default()).await;
    let vars = [
        ("STOREGATE_LISTEN", "127.0.0.1:0".to_owned()),
        ("STOREGATE_DATA_DIR", data_dir.display().to_string()),
        ("STOREGATE_PROFILE", "original".to_owned()),
        ("STOREGATE_UPSTREAM_URL", sandbox.base_url()),
        ("STOREGATE_UPSTREAM_TOKEN", sandbox.token().to_owned()),
    ];
    let lookup = |name: &str| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.clone())
    };
    let config = storegate::Config::from_sources(None, &lookup).expect("a valid configuration");
    let parts = storegate::Parts {
        upstream_url: sandbox.base_url(),
        upstream_token: sandbox.token().to_owned(),
        admin_digests: Vec::new(),
        token_secret: b"openmage-test-token-secret".to_vec(),
        mappings: storegate::load_mappings(&config).expect("mappings load"),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let after = storegate::start(config, parts, listener, None)
        .await
        .unwrap();
    let base = after.base_url();

    // The same app, the same credentials: every read answers as before, field for field.
    for ((who, path), (status, old)) in READS.iter().zip(&answers) {
        let (now_status, now) = read(&http, &base, *who, path).await;
        assert_eq!(
            (now_status, *status),
            (200, 200),
            "GET {path} as {who:?}: before {status} {old}, after {now_status} {now}"
        );
        assert_eq!(
            shape(&now),
            shape(old),
            "GET {path} as {who:?}: the fields changed with the back end\nbefore: {old}\nafter: {now}"
        );
    }

    // A product moved as a migration would move it (here through the gateway, with what
    // the old store held): it reads back through the new store with the same values.
    let moved = [
        "sku",
        "name",
        "price",
        "weight",
        "status",
        "visibility",
        "description",
        "short_description",
    ];
    let mut product = json!({"type_id": "simple", "attribute_set_id": "4", "tax_class_id": "2"});
    for field in moved {
        product[field] = old_product[field].clone();
    }
    let url = format!("{base}/products");
    let created =
        sent(signed(&http, Who::Admin, "POST", &url, "application/json").json(&product)).await;
    let location = created
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_else(|| panic!("a created product: {}", created.status()))
        .to_owned();
    let path = location.trim_start_matches("/api/rest");
    let (status, new_product) = read(&http, &base, Who::Admin, path).await;
    assert_eq!(status, 200, "{new_product}");
    for field in moved {
        assert_eq!(
            new_product[field], old_product[field],
            "{field}: OpenMage {} / Magento 2 {}",
            old_product[field], new_product[field]
        );
    }
    after.stop().await;
    let _ = std::fs::remove_dir_all(&data_dir);
}
