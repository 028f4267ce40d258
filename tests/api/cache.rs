//! The read cache from the outside: coalescing, validators, read-your-writes.

use std::time::Duration;

use serde_json::json;
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, ResponseTemplate};

use crate::helpers::*;

async fn mount_product(gw: &Gateway, name: &str, expect: Option<u64>) {
    let mut product = fixture("products/get-simple-24-mb01")["response"]["body"].clone();
    product["name"] = json!(name);
    let mock = Mock::given(method("GET"))
        .and(path("/rest/default/V1/products/24-MB01"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(product)
                .set_delay(Duration::from_millis(50)),
        );
    match expect {
        Some(n) => mock.expect(n).mount(&gw.upstream).await,
        None => mock.mount(&gw.upstream).await,
    }
}

async fn mount_render_once(gw: &Gateway) {
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products-render-info"))
        .respond_with(recorded("products/render-info-1-2-6"))
        .expect(1)
        .mount(&gw.upstream)
        .await;
}

#[tokio::test]
async fn concurrent_cold_reads_make_one_upstream_call() {
    let gw = Gateway::start().await;
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    mount_product(&gw, "Harbor Duffle Bag", Some(1)).await;
    mount_render_once(&gw).await;
    let gw = std::sync::Arc::new(gw);
    let mut tasks = Vec::new();
    for _ in 0..64 {
        let gw = gw.clone();
        tasks.push(tokio::spawn(async move {
            gw.get_json("/products/1", &Who::Guest).await
        }));
    }
    for task in tasks {
        let r = task.await.unwrap();
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.json()["name"], "Harbor Duffle Bag");
    }
    // `expect(1)` on the product and render mocks is checked when the server drops; check now too.
    gw.upstream.verify().await;
    let skus = gw
        .upstream_calls("GET", "^/rest/default/V1/products$")
        .await;
    assert_eq!(skus.len(), 1);
}

#[tokio::test]
async fn etags_give_304_and_cache_control_follows_the_view() {
    let gw = Gateway::start().await;
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    mount_product(&gw, "Harbor Duffle Bag", None).await;
    let first = gw.get_json("/products/1", &Who::Admin).await;
    assert_eq!(first.header("x-cache"), Some("MISS"));
    let etag = first.header("etag").unwrap().to_owned();
    let second = gw.get_json("/products/1", &Who::Admin).await;
    assert_eq!(second.header("x-cache"), Some("HIT"));
    assert_eq!(second.header("etag"), Some(etag.as_str()));
    assert_eq!(second.header("cache-control"), Some("private, max-age=60"));
    assert_eq!(
        second.header("vary"),
        Some("Accept, Authorization, Accept-Encoding")
    );
    let r = gw
        .send(
            gw.request("GET", "/products/1", &Who::Admin)
                .header("Accept", "application/json")
                .header("If-None-Match", etag.as_str()),
        )
        .await;
    assert_eq!((r.status, r.body.as_str()), (304, ""));
    // XML is another representation with another tag.
    let xml = gw.get_xml("/products/1", &Who::Admin).await;
    assert_ne!(xml.header("etag"), Some(etag.as_str()));
}

#[tokio::test]
async fn reads_after_a_write_see_the_write_for_every_user_type() {
    let gw = Gateway::start().await;
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    mount_product(&gw, "Harbor Duffle Bag", None).await;
    mount_render(&gw.upstream).await;
    assert_eq!(
        gw.get_json("/products/1", &Who::Admin).await.json()["name"],
        "Harbor Duffle Bag"
    );
    assert_eq!(
        gw.get_json("/products/1", &Who::Guest).await.json()["name"],
        "Harbor Duffle Bag"
    );
    assert_eq!(
        gw.get_json("/products/1", &Who::Admin)
            .await
            .header("x-cache"),
        Some("HIT")
    );

    // The write goes through; Magento now has the new name.
    gw.upstream.reset().await;
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    mount_product(&gw, "Harbor Duffle Bag II", None).await;
    mount_render(&gw.upstream).await;
    Mock::given(method("PUT"))
        .and(path("/rest/all/V1/products/24-MB01"))
        .respond_with(recorded("products/update-price-24-mb02"))
        .mount(&gw.upstream)
        .await;
    let r = gw
        .send(
            gw.request("PUT", "/products/1", &Who::Admin)
                .json(&json!({"name": "Harbor Duffle Bag II"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    for who in [Who::Admin, Who::Guest, Who::Customer(5)] {
        assert_eq!(
            gw.get_json("/products/1", &who).await.json()["name"],
            "Harbor Duffle Bag II",
            "{who:?}"
        );
    }

    // Delete: every view answers 404 at once.
    gw.upstream.reset().await;
    mount_stores(&gw.upstream).await;
    Mock::given(method("DELETE"))
        .and(path("/rest/all/V1/products/24-MB01"))
        .respond_with(ResponseTemplate::new(200).set_body_json(true))
        .mount(&gw.upstream)
        .await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products"))
        .and(query_param("fields", "items[id,sku],total_count"))
        .respond_with(recorded("products/list-id-to-sku-unknown"))
        .mount(&gw.upstream)
        .await;
    assert_eq!(
        gw.send(gw.request("DELETE", "/products/1", &Who::Admin))
            .await
            .status,
        200
    );
    for who in [Who::Admin, Who::Guest] {
        assert_eq!(
            gw.get_json("/products/1", &who).await.status,
            404,
            "{who:?}"
        );
    }
}

#[tokio::test]
async fn upstream_faults_are_clean_errors() {
    let gw = Gateway::start_with(|c| c.upstream_timeout = Duration::from_millis(300)).await;
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products/24-MB01"))
        .respond_with(recorded("products/get-error-internal"))
        .mount(&gw.upstream)
        .await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products/24-MB02"))
        .respond_with(ResponseTemplate::new(200).set_body_string("<html>Bad gateway</html>"))
        .mount(&gw.upstream)
        .await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products/MT07"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"id": 6}))
                .set_delay(Duration::from_secs(5)),
        )
        .mount(&gw.upstream)
        .await;
    let r = gw.get_json("/products/1", &Who::Admin).await;
    assert_eq!(
        (r.status, r.messages()),
        (500, vec!["Resource internal error.".to_owned()])
    );
    let r = gw.get_json("/products/2", &Who::Admin).await;
    assert_eq!(r.status, 502, "{}", r.body);
    let started = std::time::Instant::now();
    let r = gw.get_json("/products/6", &Who::Admin).await;
    assert_eq!(r.status, 504, "{}", r.body);
    // One try and one retry at most, each within the deadline, all within the request's.
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );
}
