//! `storegate sandbox --seed-from URL`: a store copied into a sandbox through the gateway, and
//! the two compared by the dual run.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use storegate::config::{Secret, Upstream};
use storegate_sandbox::{Sandbox, SandboxOptions};

use crate::common::http::sent;
use crate::harness::{self, compared_at_least, count, difference, entry};

async fn start(options: SandboxOptions) -> Sandbox {
    storegate::backend::transport::install_crypto();
    crate::common::gateway::start_sandbox(options).await
}

async fn m2(store: &Sandbox, path: &str) -> Value {
    crate::common::http::json_of(
        reqwest::Client::new()
            .get(format!("{}/rest/V1{path}", store.base_url()))
            .bearer_auth(store.token()),
    )
    .await
}

#[tokio::test]
async fn a_store_copied_into_a_sandbox_through_the_gateway() {
    let source = start(SandboxOptions::default()).await;
    let mut config = harness::config();
    config.upstream = Some(Upstream {
        url: source.base_url(),
        token: Secret::new(source.token()),
        oauth: None,
    });
    let seed = storegate::cli::seed::read(&config, &source.base_url())
        .await
        .unwrap();
    assert_eq!(seed.products.len(), 13);
    assert_eq!(seed.customers.len(), 3);
    assert_eq!(seed.orders.len(), 4);
    assert!(seed.media_files.len() >= 10, "{}", seed.media_files.len());
    let copy = start(SandboxOptions {
        seed: Some(Arc::new(seed)),
        ..SandboxOptions::default()
    })
    .await;
    // The catalog, stock and prices.
    for sku in ["24-MB01", "24-MB04", "24-MB06", "VIRT-WARRANTY"] {
        let (a, b) = (
            m2(&source, &format!("/products/{sku}")).await,
            m2(&copy, &format!("/products/{sku}")).await,
        );
        for field in ["id", "name", "price", "status", "visibility", "type_id"] {
            assert_eq!(a[field], b[field], "{sku} {field}");
        }
        assert_eq!(
            a["extension_attributes"]["stock_item"]["qty"],
            b["extension_attributes"]["stock_item"]["qty"],
            "{sku}"
        );
        assert_eq!(
            a["tier_prices"].as_array().map(Vec::len),
            b["tier_prices"].as_array().map(Vec::len)
        );
    }
    // The images, files and all.
    let file = "/media/catalog/product/m/b/mb01-blue-0.png";
    let bytes = |store: &Sandbox| {
        let url = format!("{}{file}", store.base_url());
        async move { reqwest::get(url).await.unwrap().bytes().await.unwrap() }
    };
    assert_eq!(bytes(&source).await, bytes(&copy).await);
    // Customers, their addresses, orders.
    let (a, b) = (
        m2(&source, "/customers/1").await,
        m2(&copy, "/customers/1").await,
    );
    assert_eq!(a["email"], b["email"]);
    assert_eq!(
        a["addresses"].as_array().map(Vec::len),
        b["addresses"].as_array().map(Vec::len)
    );
    let (a, b) = (m2(&source, "/orders/1").await, m2(&copy, "/orders/1").await);
    assert_eq!(a["grand_total"].as_f64(), b["grand_total"].as_f64());
    // Passwords are not copied.
    let sign_in = |store: &Sandbox| {
        let url = format!("{}/rest/V1/integration/customer/token", store.base_url());
        async move {
            reqwest::Client::new()
                .post(url)
                .json(&json!({"username": "roni_cost@example.com", "password": "Roni-Cost-2024"}))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    assert_eq!(sign_in(&source).await, 200);
    assert_eq!(sign_in(&copy).await, 401);

    // The dual run on the two: the copied fields match.
    let mut shadowed = harness::config();
    shadowed.shadow = Some(harness::shadow_of(&copy.base_url(), copy.token()));
    let gateway = harness::gateway(&source, shadowed).await;
    let http = reqwest::Client::new();
    for path in ["/products/1", "/customers/1", "/orders/1"] {
        let r = sent(
            http.get(format!("{}{path}", gateway.base_url()))
                .bearer_auth(harness::ADMIN_KEY)
                .header("Accept", "application/json"),
        )
        .await;
        assert_eq!(r.status(), 200);
    }
    let start = std::time::Instant::now();
    let report = loop {
        let report: Value = crate::common::http::json_of(
            http.get(format!("{}/shadow/report", gateway.base_url()))
                .bearer_auth(harness::ADMIN_KEY)
                .header("Accept", "application/json"),
        )
        .await;
        if ["GET /products/:id", "GET /customers/:id", "GET /orders/:id"]
            .iter()
            .all(|route| compared_at_least(&report, route, "admin", 1))
        {
            break report;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "{report:#}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let product = entry(&report, "GET /products/:id", "admin");
    for path in ["name", "price", "sku", "status", "visibility", "weight"] {
        assert!(difference(product, path, "value").is_none(), "{product:#}");
    }
    assert_eq!(
        count(entry(&report, "GET /orders/:id", "admin"), "compared"),
        1
    );
}
