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
    let sent = json!({"name": "Harbor Duffle Bag II"});
    let r = gw.send_json("PUT", "/products/1", &Who::Admin, &sent).await;
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
    mount_product_as(&gw.upstream, "24-MB01", "products/get-error-internal").await;
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
    r.assert_error(500, "Resource internal error.");
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

/// The headers of an answer, in the order they came, but those that differ from one answer
/// to the next (the request id, the date).
fn stable_headers(reply: &Reply) -> Vec<(String, String)> {
    reply
        .headers
        .iter()
        .filter(|(name, _)| !matches!(name.as_str(), "x-request-id" | "date"))
        .map(|(name, value)| (name.to_string(), value.to_str().unwrap().to_owned()))
        .collect()
}

#[tokio::test]
async fn a_hit_answered_before_routing_is_the_hit_routing_answers() {
    // `/products/1` is answered before routing (`front::Early`); `/products/1/` is trimmed by
    // routing and answered by the front after it, from the same entry. Both must be the
    // same answer, byte for byte but for the request id and the date, in every variant.
    let gw = Gateway::start().await;
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    mount_product(&gw, "Harbor Duffle Bag", None).await;
    mount_render(&gw.upstream).await;
    let filled = gw.get_json("/products/1", &Who::Guest).await;
    assert_eq!(filled.header("x-cache"), Some("MISS"), "{}", filled.body);
    let etag = filled.header("etag").unwrap().to_owned();
    let variants: [&[(&str, &str)]; 4] = [
        &[],
        &[("Accept-Encoding", "gzip, br")],
        &[("If-None-Match", etag.as_str())],
        &[("Accept", "application/xml")],
    ];
    for headers in variants {
        let get = |path: &'static str| {
            let mut builder = gw.request("GET", path, &Who::Guest);
            for (name, value) in headers {
                builder = builder.header(*name, *value);
            }
            gw.send(builder)
        };
        // Filled first (the XML view), then both read within the same second.
        get("/products/1").await;
        let (early, routed) = tokio::join!(get("/products/1"), get("/products/1/"));
        assert_eq!(early.header("x-cache"), Some("HIT"), "{headers:?}");
        assert_eq!(routed.header("x-cache"), Some("HIT"), "{headers:?}");
        assert_eq!(early.status, routed.status, "{headers:?}");
        assert_eq!(early.body, routed.body, "{headers:?}");
        let (early_headers, routed_headers) = (stable_headers(&early), stable_headers(&routed));
        // `Cache-Control`'s max-age and `Cache-Status`'s ttl count down by the second.
        let names = |headers: &[(String, String)]| -> Vec<String> {
            headers.iter().map(|(name, _)| name.clone()).collect()
        };
        assert_eq!(names(&early_headers), names(&routed_headers), "{headers:?}");
        for ((name, a), (_, b)) in early_headers.iter().zip(&routed_headers) {
            if !matches!(name.as_str(), "cache-control" | "cache-status") {
                assert_eq!(a, b, "{name} ({headers:?})");
            }
        }
        assert!(early.header("x-request-id").is_some());
        assert!(early.header("content-length").is_some() || early.status == 304);
    }
    // Both are counted under the route's template, as routing names it.
    let metrics = gw.metrics().await;
    let count = |status: &str| -> u64 {
        let series = format!(
            "storegate_http_request_duration_seconds_count{{route=\"/api/rest/products/{{id}}\",method=\"GET\",status=\"{status}\",user_type=\"guest\"}} "
        );
        metrics
            .lines()
            .find_map(|line| line.strip_prefix(series.as_str()))
            .map_or(0, |n| n.parse().unwrap())
    };
    assert_eq!(count("200") + count("304"), 13, "{metrics}");
}
