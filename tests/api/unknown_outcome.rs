//! A write whose outcome is unknown (issue 23, item 6): Magento does not answer in time, the
//! write lands a moment later, and reads in between must not keep the old record cached.

use std::time::Duration;

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use storegate::auth::Principal;

use crate::helpers::*;

fn product_named(name: &str) -> Value {
    let mut product = fixture("products/get-simple-24-mb01")["response"]["body"].clone();
    product["name"] = json!(name);
    product
}

/// Product 1 as `name`, for Admin and Guest reads (the Guest view adds rendering).
async fn mount_product(server: &MockServer, name: &str) {
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products/24-MB01"))
        .respond_with(ResponseTemplate::new(200).set_body_json(product_named(name)))
        .mount(server)
        .await;
}

async fn name(gw: &Gateway, who: &Who) -> (String, Reply) {
    let r = gw.get_json("/products/1", who).await;
    assert_eq!(r.status, 200, "{}", r.body);
    (r.json()["name"].as_str().unwrap_or_default().to_owned(), r)
}

#[tokio::test]
async fn a_write_that_times_out_and_lands_later_is_read_back_fresh() {
    let gw = Gateway::start_with(|c| {
        c.upstream_timeout = Duration::from_millis(300);
        // The breaker has its own tests; one timeout must not open it here.
        c.circuit_failure_threshold = 0;
    })
    .await;
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    mount_render(&gw.upstream).await;
    mount_product(&gw.upstream, "Harbor Duffle Bag").await;
    for who in [Who::Admin, Who::Guest] {
        assert_eq!(name(&gw, &who).await.0, "Harbor Duffle Bag");
        let (_, r) = name(&gw, &who).await;
        assert_eq!(r.header("x-cache"), Some("HIT"));
    }

    // Magento takes longer than the deadline: the gateway gives up, Magento goes on.
    Mock::given(method("PUT"))
        .and(path("/rest/all/V1/products/24-MB01"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(product_named("Harbor Duffle Bag II"))
                .set_delay(Duration::from_secs(2)),
        )
        .mount(&gw.upstream)
        .await;
    let sent = json!({"name": "Harbor Duffle Bag II"});
    let r = gw.send_json("PUT", "/products/1", &Who::Admin, &sent).await;
    assert_eq!(r.status, 504, "{}", r.body);
    assert_eq!(
        r.messages(),
        [
            "The store back end did not answer in time.",
            "The change may or may not have been made: read the record again before sending it again."
        ]
    );
    assert_eq!(r.header("x-write-outcome"), Some("unknown"));

    // Before it lands, reads show the old record, fetched each time, never cached.
    let gets = || gw.upstream_calls("GET", "^/rest/default/V1/products/24-MB01$");
    let before = gets().await.len();
    for who in [Who::Admin, Who::Guest, Who::Admin, Who::Guest] {
        let (name, r) = name(&gw, &who).await;
        assert_eq!(name, "Harbor Duffle Bag");
        assert_eq!(r.header("x-cache"), Some("MISS"), "{who:?}");
        assert_eq!(
            r.header("cache-status"),
            Some("storegate; fwd=bypass; detail=write-outcome-unknown"),
            "{who:?}"
        );
    }
    assert_eq!(gets().await.len(), before + 4, "every read went to Magento");

    // It lands: the very next read, by either user type, shows it.
    gw.upstream.reset().await;
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    mount_render(&gw.upstream).await;
    mount_product(&gw.upstream, "Harbor Duffle Bag II").await;
    for who in [Who::Admin, Who::Guest] {
        assert_eq!(name(&gw, &who).await.0, "Harbor Duffle Bag II", "{who:?}");
    }
}

#[tokio::test]
async fn a_write_magento_answered_only_invalidates() {
    let gw = Gateway::start().await;
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    mount_product(&gw.upstream, "Harbor Duffle Bag").await;
    Mock::given(method("PUT"))
        .and(path("/rest/all/V1/products/24-MB01"))
        .respond_with(recorded("products/update-price-24-mb02"))
        .mount(&gw.upstream)
        .await;
    name(&gw, &Who::Admin).await;
    let sent = json!({"name": "Harbor Duffle Bag II"});
    let r = gw.send_json("PUT", "/products/1", &Who::Admin, &sent).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("x-write-outcome"), None);
    // Read again once (a miss), then cached as usual.
    let (_, first) = name(&gw, &Who::Admin).await;
    assert_eq!(
        first.header("cache-status"),
        Some("storegate; fwd=miss; stored; ttl=60")
    );
    let (_, second) = name(&gw, &Who::Admin).await;
    assert_eq!(second.header("x-cache"), Some("HIT"));
}

#[tokio::test]
async fn during_an_outage_each_failure_is_logged_once_per_interval_not_per_request() {
    let logs = Captured::default();
    let sink = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_writer(move || sink.clone())
        .finish();
    // The test runtime is single-threaded: the gateway's tasks log on this thread.
    let _guard = tracing::subscriber::set_default(subscriber);
    let gw = Gateway::start_with(|c| {
        c.circuit_failure_threshold = 1;
        c.circuit_open = Duration::from_secs(30);
    })
    .await;
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    mount_product_as(&gw.upstream, "24-MB01", "products/get-error-internal").await;
    // A 500 opens the breaker (a store-configuration read finishing after it may close it
    // once more: another 500); then fast 503s.
    let mut statuses = std::collections::BTreeMap::new();
    for _ in 0..51 {
        let r = gw.get_json("/products/1", &Who::Admin).await;
        *statuses.entry(r.status).or_insert(0) += 1;
    }
    assert!(statuses.get(&503).is_some_and(|n| *n >= 45), "{statuses:?}");
    assert!(
        statuses.keys().all(|s| [500, 503].contains(s)),
        "{statuses:?}"
    );
    let text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    let lines = |needle: &str| {
        text.lines()
            .filter(|l| l.contains("request failed") && l.contains(needle))
            .count()
    };
    assert_eq!(lines("status=500"), 1, "{text}");
    assert_eq!(lines("status=503"), 1, "{text}");
    // Each line is in its request's span and says how many of its kind were left out.
    assert!(
        text.lines().any(|l| l.contains("status=503")
            && l.contains("suppressed=0")
            && l.contains("request_id")),
        "{text}"
    );
}

#[tokio::test]
async fn a_customer_save_that_times_out_holds_the_customer_group_off() {
    // The customer's group, the one customer entry the cache keeps (it decides the prices the
    // customer sees), must not be cached from before a save that may still land.
    let gw = Gateway::start_with(|c| {
        c.upstream_timeout = Duration::from_millis(300);
        c.circuit_failure_threshold = 0;
    })
    .await;
    mount(&gw.upstream, "customers/get-5").await;
    let app = &gw.running.app;
    let group = || async {
        storegate::records::lookups::customer_group::of(app, Principal::Customer(5))
            .await
            .map(|prices| prices.group)
    };
    let reads = || gw.upstream_calls("GET", "/V1/customers/5$");
    assert_eq!(group().await.unwrap(), 1);
    let before = reads().await.len();
    assert_eq!(group().await.unwrap(), 1);
    assert_eq!(reads().await.len(), before, "the group is cached");

    Mock::given(method("PUT"))
        .and(wiremock::matchers::path_regex("/V1/customers/5$"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(fixture("customers/get-5")["response"]["body"].clone())
                .set_delay(Duration::from_secs(2)),
        )
        .mount(&gw.upstream)
        .await;
    let r = gw
        .send_json("PUT", "/customers/5", &Who::Admin, &json!({"group_id": 2}))
        .await;
    assert_eq!(r.status, 504, "{}", r.body);
    assert_eq!(r.header("x-write-outcome"), Some("unknown"));
    assert_eq!(
        r.messages().last().map(String::as_str),
        Some(
            "The change may or may not have been made: read the record again before sending it again."
        )
    );

    // Until the window ends, every read of the group asks Magento.
    let before = reads().await.len();
    for _ in 0..3 {
        assert_eq!(group().await.unwrap(), 1);
    }
    assert_eq!(
        reads().await.len(),
        before + 3,
        "the group was cached while held off"
    );
}

#[tokio::test]
async fn a_customer_write_magento_answered_is_not_marked() {
    let gw = Gateway::answering("customers/get-5").await;
    Mock::given(method("PUT"))
        .and(wiremock::matchers::path_regex("/V1/customers/5$"))
        .respond_with(
            ResponseTemplate::new(500).set_body_json(json!({"message": "Internal error"})),
        )
        .mount(&gw.upstream)
        .await;
    let sent = json!({"lastname": "Doe-Smith"});
    let r = gw
        .send_json("PUT", "/customers/5", &Who::Admin, &sent)
        .await;
    assert!(r.status >= 400, "{}", r.body);
    assert_eq!(r.header("x-write-outcome"), None, "{}", r.body);
}
