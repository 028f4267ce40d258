//! The gateway when Magento fails: stale data, deadlines, retries, the circuit breaker,
//! load shedding, garbage answers; and what an operator sees (request ids, metrics).
//! Clocks are short (hundreds of milliseconds) rather than paused: the faults go through
//! real sockets.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wiremock::matchers::{any, method, path, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::http::sent;
use crate::helpers::*;

/// Magento's product 24-MB01 (id 1) under another name, so a test tells versions apart.
fn product_named(name: &str) -> Value {
    let mut product = fixture("products/get-simple-24-mb01")["response"]["body"].clone();
    product["name"] = json!(name);
    product
}

/// Stores, id-to-SKU lookups and product 1 as `name`.
async fn mount_catalog(server: &MockServer, name: &str) {
    mount_stores(server).await;
    mount_skus(server).await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products/24-MB01"))
        .respond_with(ResponseTemplate::new(200).set_body_json(product_named(name)))
        .mount(server)
        .await;
}

/// Every call answers Magento's recorded internal error.
async fn break_upstream(server: &MockServer) {
    server.reset().await;
    Mock::given(any())
        .respond_with(recorded("products/get-error-internal"))
        .mount(server)
        .await;
}

async fn metrics(gw: &Gateway) -> String {
    let url = format!("http://{}/metrics", gw.running.addr);
    let response = gw.http.get(url).send().await.unwrap();
    assert_eq!(
        response.headers()["content-type"],
        "application/openmetrics-text; version=1.0.0; charset=utf-8"
    );
    response.text().await.unwrap()
}

/// The value of one sample line of the exposition, by its full name and labels.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[tokio::test]
async fn stale_if_error_serves_a_cached_product_while_the_upstream_answers_500() {
    let gw = Gateway::start_with(|c| {
        c.cache_ttl = Duration::from_secs(1);
        c.stale_while_revalidate = Duration::ZERO;
        c.stale_if_error = Duration::from_secs(60);
        // The breaker has its own tests; here every failure reaches Magento.
        c.circuit_failure_threshold = 0;
    })
    .await;
    mount_catalog(&gw.upstream, "Harbor Duffle Bag").await;
    let first = gw.get_json("/products/1", &Who::Admin).await;
    assert_eq!((first.status, first.header("x-cache")), (200, Some("MISS")));

    break_upstream(&gw.upstream).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    for round in 1..=2 {
        let r = gw.get_json("/products/1", &Who::Admin).await;
        assert_eq!(r.status, 200, "{round}: {}", r.body);
        assert_eq!(r.body, first.body, "{round}");
        assert_eq!(r.header("x-cache"), Some("STALE"), "{round}");
        // RFC 9211: forwarded, stale, and why (the back end failed); a negative ttl.
        let status = r.header("cache-status").unwrap();
        assert!(
            status.starts_with("storegate; fwd=stale; ttl=-")
                && status.ends_with("; detail=backend-failing"),
            "{round}: {status}"
        );
        assert_eq!(
            r.header("warning"),
            Some("111 - \"Revalidation Failed\""),
            "{round}"
        );
        // Nobody downstream should keep it: it is already past its freshness.
        assert_eq!(
            r.header("cache-control"),
            Some("private, max-age=0"),
            "{round}"
        );
    }
    // Magento was asked, and failed.
    assert!(
        !gw.upstream_calls("GET", "^/rest/default/V1/products/24-MB01$")
            .await
            .is_empty()
    );
    let text = metrics(&gw).await;
    assert!(sample(&text, "storegate_cache_stale_if_error_total").unwrap() >= 2.0);

    // Back up: the next read has the new data at once, not a TTL later.
    gw.upstream.reset().await;
    mount_catalog(&gw.upstream, "Harbor Duffle Bag II").await;
    let r = gw.get_json("/products/1", &Who::Admin).await;
    assert_eq!((r.status, r.header("x-cache")), (200, Some("MISS")));
    assert_eq!(r.json()["name"], "Harbor Duffle Bag II");
}

#[tokio::test]
async fn no_stale_data_for_a_product_magento_says_is_gone() {
    let gw = Gateway::start_with(|c| {
        c.cache_ttl = Duration::from_secs(1);
        c.stale_while_revalidate = Duration::ZERO;
        c.stale_if_error = Duration::from_secs(60);
    })
    .await;
    mount_catalog(&gw.upstream, "Harbor Duffle Bag").await;
    assert_eq!(gw.get_json("/products/1", &Who::Admin).await.status, 200);
    gw.upstream.reset().await;
    mount_stores(&gw.upstream).await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products"))
        .respond_with(recorded("products/list-id-to-sku-unknown"))
        .mount(&gw.upstream)
        .await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let r = gw.get_json("/products/1", &Who::Admin).await;
    r.assert_error(404, "Resource not found.");
}

#[tokio::test]
async fn stale_while_revalidate_answers_at_once_and_refreshes_behind() {
    let gw = Gateway::start_with(|c| {
        c.cache_ttl = Duration::from_secs(1);
        c.stale_while_revalidate = Duration::from_secs(60);
    })
    .await;
    mount_catalog(&gw.upstream, "Harbor Duffle Bag").await;
    assert_eq!(gw.get_json("/products/1", &Who::Admin).await.status, 200);
    // The new version is slow to come: the stale one is served without waiting for it.
    gw.upstream.reset().await;
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products/24-MB01"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(product_named("Harbor Duffle Bag II"))
                .set_delay(Duration::from_millis(300)),
        )
        .mount(&gw.upstream)
        .await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let started = Instant::now();
    let r = gw.get_json("/products/1", &Who::Admin).await;
    assert!(started.elapsed() < Duration::from_millis(250));
    assert_eq!(r.json()["name"], "Harbor Duffle Bag");
    assert_eq!(r.header("x-cache"), Some("STALE"));
    assert_eq!(r.header("warning"), Some("110 - \"Response is Stale\""));
    let status = r.header("cache-status").unwrap();
    assert!(
        status.starts_with("storegate; fwd=stale; ttl=-")
            && status.ends_with("; detail=revalidating"),
        "{status}"
    );
    // Once the refresh is in, the new version is served from the cache. Records and body
    // each refresh in the background, so this may take two rounds.
    let mut name = Value::Null;
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let r = gw.get_json("/products/1", &Who::Admin).await;
        name = r.json()["name"].clone();
        if name == "Harbor Duffle Bag II" && r.header("x-cache") == Some("HIT") {
            break;
        }
    }
    assert_eq!(name, "Harbor Duffle Bag II");
}

#[tokio::test]
async fn an_upstream_that_hangs_yields_a_504_within_the_deadline() {
    let gw = Gateway::start_with(|c| c.upstream_timeout = Duration::from_millis(300)).await;
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products/24-MB01"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(product_named("late"))
                .set_delay(Duration::from_secs(10)),
        )
        .mount(&gw.upstream)
        .await;
    let started = Instant::now();
    let r = gw.get_json("/products/1", &Who::Admin).await;
    assert_eq!(
        (r.status, r.messages()),
        (
            504,
            vec!["The store back end did not answer in time.".to_owned()]
        )
    );
    assert!(
        started.elapsed() < Duration::from_millis(800),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn calls_of_one_request_share_its_deadline() {
    // Each call alone is within the 400 ms timeout; the three together are not.
    let gw = Gateway::start_with(|c| c.upstream_timeout = Duration::from_millis(400)).await;
    let slow = |body: Value| {
        ResponseTemplate::new(200)
            .set_body_json(body)
            .set_delay(Duration::from_millis(250))
    };
    mount_stores(&gw.upstream).await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products"))
        .respond_with(slow(
            json!({"items": [{"id": 1, "sku": "24-MB01"}], "total_count": 1}),
        ))
        .mount(&gw.upstream)
        .await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products/24-MB01"))
        .respond_with(slow(product_named("slow")))
        .mount(&gw.upstream)
        .await;
    let started = Instant::now();
    let r = gw.get_json("/products/1", &Who::Admin).await;
    assert_eq!(r.status, 504, "{}", r.body);
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(380) && elapsed < Duration::from_millis(900),
        "{elapsed:?}"
    );
}

#[tokio::test]
async fn the_circuit_opens_fails_fast_and_recovers() {
    let gw = Gateway::start_with(|c| {
        c.circuit_failure_threshold = 3;
        c.circuit_open = Duration::from_millis(400);
    })
    .await;
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    mount_product_as(&gw.upstream, "24-MB01", "products/get-error-internal").await;
    // A product read fetches the store's configuration alongside the product; a success
    // finishing after a failure resets the count, so have it cached before counting.
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products"))
        .and(wiremock::matchers::query_param_is_missing("fields"))
        .respond_with(recorded("products/list-page-1"))
        .mount(&gw.upstream)
        .await;
    assert_eq!(gw.get_json("/products", &Who::Admin).await.status, 200);
    for _ in 0..3 {
        let r = gw.get_json("/products/1", &Who::Admin).await;
        assert_eq!(r.status, 500, "{}", r.body);
    }
    // Open: answered at once with the spec's error body; Magento is not called.
    let started = Instant::now();
    for who in [Who::Admin, Who::Guest] {
        let r = gw.get_json("/products/1", &who).await;
        assert_eq!(
            (r.status, r.messages()),
            (
                503,
                vec!["The store back end is unavailable. Try again later.".to_owned()]
            )
        );
    }
    let r = gw.get_xml("/products/1", &Who::Admin).await;
    assert_eq!(r.status, 503);
    r.assert_contains("<code>503</code>");
    assert!(started.elapsed() < Duration::from_millis(200));
    let product_calls = || gw.upstream_calls("GET", "^/rest/default/V1/products/24-MB01$");
    assert_eq!(product_calls().await.len(), 3);
    let text = metrics(&gw).await;
    assert_eq!(sample(&text, "storegate_upstream_circuit_state"), Some(1.0));
    assert_eq!(
        sample(&text, "storegate_upstream_circuit_opened_total"),
        Some(1.0)
    );
    assert_eq!(
        sample(
            &text,
            "storegate_upstream_call_duration_seconds_count{endpoint=\"/V1/products/{}\",method=\"GET\",outcome=\"circuit_open\"}"
        ),
        Some(3.0)
    );

    // After the open period one probe goes through; Magento is well again, so it closes.
    gw.upstream.reset().await;
    mount_catalog(&gw.upstream, "Harbor Duffle Bag").await;
    tokio::time::sleep(Duration::from_millis(450)).await;
    let r = gw.get_json("/products/1", &Who::Admin).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        sample(&metrics(&gw).await, "storegate_upstream_circuit_state"),
        Some(0.0)
    );
}

#[tokio::test]
async fn an_open_circuit_serves_stale_data_where_the_cache_has_it() {
    let gw = Gateway::start_with(|c| {
        c.cache_ttl = Duration::from_secs(1);
        c.stale_while_revalidate = Duration::ZERO;
        c.circuit_failure_threshold = 1;
        c.circuit_open = Duration::from_secs(30);
    })
    .await;
    mount_catalog(&gw.upstream, "Harbor Duffle Bag").await;
    let fresh = gw.get_json("/products/1", &Who::Admin).await;
    assert_eq!(fresh.status, 200);
    break_upstream(&gw.upstream).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    // The first read opens the circuit (its calls run side by side, so each may have
    // left before it opened); later ones do not reach Magento at all.
    let mut reached = None;
    for _ in 0..3 {
        let r = gw.get_json("/products/1", &Who::Admin).await;
        assert_eq!((r.status, r.header("x-cache")), (200, Some("STALE")));
        assert_eq!(r.body, fresh.body);
        let calls = gw.upstream_count("GET", ".").await;
        assert!((1..=2).contains(&calls), "{calls} calls");
        assert_eq!(
            *reached.get_or_insert(calls),
            calls,
            "a read reached Magento with the circuit open"
        );
    }
    // Nothing cached for product 2: a plain 503.
    let r = gw.get_json("/products/2", &Who::Admin).await;
    assert_eq!(r.status, 503, "{}", r.body);
}

#[tokio::test]
async fn idempotent_reads_are_retried_once_on_503() {
    let gw = Gateway::start().await;
    mount_catalog(&gw.upstream, "Harbor Duffle Bag").await;
    // The first call fails, the retry succeeds.
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products/24-MB01"))
        .respond_with(ResponseTemplate::new(503).set_body_string("<html>busy</html>"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&gw.upstream)
        .await;
    let r = gw.get_json("/products/1", &Who::Admin).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let calls = gw
        .upstream_calls("GET", "^/rest/default/V1/products/24-MB01$")
        .await;
    assert_eq!(calls.len(), 2);

    // A read that keeps failing is tried twice in all, then answered with 503.
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products/24-MB02"))
        .respond_with(ResponseTemplate::new(502))
        .mount(&gw.upstream)
        .await;
    let r = gw.get_json("/products/2", &Who::Admin).await;
    assert_eq!(r.status, 503, "{}", r.body);
    assert_eq!(
        gw.upstream_count("GET", "^/rest/default/V1/products/24-MB02$")
            .await,
        2
    );
    let text = metrics(&gw).await;
    assert_eq!(
        sample(
            &text,
            "storegate_upstream_retries_total{decision=\"retried\"}"
        ),
        Some(2.0)
    );
}

#[tokio::test]
async fn the_retry_budget_stops_retries_during_an_outage() {
    let gw = Gateway::start_with(|c| {
        c.cache_ttl = Duration::ZERO;
        c.circuit_failure_threshold = 0;
    })
    .await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(503))
        .mount(&gw.upstream)
        .await;
    for _ in 0..30 {
        assert_eq!(gw.get_json("/products/1", &Who::Admin).await.status, 503);
    }
    // Every read tries each of its calls once; of the retries those failures ask for, the
    // budget allows its reserve of 10 plus a fifth of the calls, then refuses.
    let calls = gw.upstream_count("GET", ".").await as f64;
    let text = metrics(&gw).await;
    let retried = sample(
        &text,
        "storegate_upstream_retries_total{decision=\"retried\"}",
    )
    .unwrap();
    let first_tries = calls - retried;
    assert!(first_tries >= 30.0, "{calls} calls, {retried} retried");
    assert!(
        retried <= 10.0 + 0.2 * calls + 1.0,
        "{calls} calls, {retried} retried"
    );
    assert!(retried < first_tries, "{calls} calls, {retried} retried");
    assert!(
        sample(
            &text,
            "storegate_upstream_retries_total{decision=\"budget_exhausted\"}"
        )
        .unwrap()
            >= 10.0
    );
}

#[tokio::test]
async fn writes_are_never_retried() {
    let gw = Gateway::start().await;
    mount_catalog(&gw.upstream, "Harbor Duffle Bag").await;
    Mock::given(method("POST"))
        .and(path("/rest/all/V1/products"))
        .respond_with(ResponseTemplate::new(503))
        .expect(1)
        .mount(&gw.upstream)
        .await;
    Mock::given(method("PUT"))
        .and(path("/rest/all/V1/products/24-MB01"))
        .respond_with(ResponseTemplate::new(502))
        .expect(1)
        .mount(&gw.upstream)
        .await;
    Mock::given(method("DELETE"))
        .and(path("/rest/all/V1/products/24-MB01"))
        .respond_with(ResponseTemplate::new(504))
        .expect(1)
        .mount(&gw.upstream)
        .await;
    mount_product_as(&gw.upstream, "SG-TOTE-01", "products/get-error-not-found").await;
    let create = json!({
        "type_id": "simple", "attribute_set_id": "4", "sku": "SG-TOTE-01", "name": "Market Canvas Tote",
        "price": "18.50", "weight": "0.6", "status": "1", "visibility": "4", "tax_class_id": "2",
        "description": "A canvas tote", "short_description": "Tote", "url_key": "market-canvas-tote",
        "stock_data": {"qty": "40", "is_in_stock": "1", "manage_stock": "1"}
    });
    let r = gw
        .send(gw.request("POST", "/products", &Who::Admin).json(&create))
        .await;
    assert_eq!(r.status, 503, "{}", r.body);
    let r = gw
        .send_json(
            "PUT",
            "/products/1",
            &Who::Admin,
            &json!({"name": "Renamed"}),
        )
        .await;
    assert_eq!(r.status, 503, "{}", r.body);
    let r = gw
        .send(gw.request("DELETE", "/products/1", &Who::Admin))
        .await;
    assert_eq!(r.status, 503, "{}", r.body);
    gw.upstream.verify().await;
}

#[tokio::test]
async fn garbage_from_magento_is_a_clean_error() {
    let gw = Gateway::start().await;
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    let answers = [
        (
            "24-MB01",
            ResponseTemplate::new(500)
                .set_body_raw("<html><body>Fatal error</body></html>", "text/html"),
            500,
        ),
        (
            "24-MB02",
            ResponseTemplate::new(200).set_body_raw("<html>Maintenance</html>", "text/html"),
            502,
        ),
        (
            "24-UG05",
            ResponseTemplate::new(200).set_body_raw(
                r#"{"id": 3, "sku": "24-UG05", "name": "Quest Lu"#,
                "application/json",
            ),
            502,
        ),
        (
            "MT07-M-Gray",
            ResponseTemplate::new(200)
                .set_body_raw(vec![0xff, 0xfe, 0x00, 0x7b], "application/json"),
            502,
        ),
        (
            "MT07-L-Gray",
            ResponseTemplate::new(200).set_body_raw("", "application/json"),
            502,
        ),
    ];
    for (sku, answer, _) in &answers {
        Mock::given(method("GET"))
            .and(path(format!("/rest/default/V1/products/{sku}")))
            .respond_with(answer.clone())
            .mount(&gw.upstream)
            .await;
    }
    for (id, (sku, _, status)) in answers.iter().enumerate() {
        for who in [Who::Admin, Who::Guest] {
            let r = gw.get_json(&format!("/products/{}", id + 1), &who).await;
            assert_eq!(r.status, *status, "{sku} {who:?}: {}", r.body);
            assert_eq!(r.messages().len(), 1, "{sku}");
            let xml = gw.get_xml(&format!("/products/{}", id + 1), &who).await;
            assert!(
                xml.body.contains("<messages><error>"),
                "{sku}: {}",
                xml.body
            );
        }
    }
    // The id-to-SKU lookup itself answering garbage.
    gw.upstream.reset().await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products"))
        .respond_with(ResponseTemplate::new(200).set_body_raw("[1,2", "application/json"))
        .mount(&gw.upstream)
        .await;
    let r = gw.get_json("/products/7", &Who::Admin).await;
    assert_eq!(r.status, 502, "{}", r.body);
}

/// A fake Magento that promises a body and hangs up half-way through it.
async fn cut_connection_server() -> (String, tokio::task::JoinHandle<()>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        // Bounded: the test makes a handful of calls.
        for _ in 0..16 {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut buffer = vec![0u8; 8192];
                let _ = socket.read(&mut buffer).await;
                let _ = socket
                    .write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n{\"items\": [{\"id\": 1,",
                    )
                    .await;
                let _ = socket.shutdown().await;
            });
        }
    });
    (url, task)
}

#[tokio::test]
async fn a_connection_cut_mid_body_is_a_clean_error() {
    let (url, server) = cut_connection_server().await;
    let running = crate::common::gateway::start_gateway(
        test_config(),
        crate::common::gateway::Setup {
            upstream_url: &url,
            upstream_token: UPSTREAM_TOKEN,
            admin_key: ADMIN_KEY,
            token_secret: b"test-token-secret",
        },
    )
    .await;
    let r = sent(
        reqwest::Client::new()
            .get(format!("{}/products/1", running.base_url()))
            .header("Accept", "application/json")
            .bearer_auth(ADMIN_KEY),
    )
    .await;
    let status = r.status().as_u16();
    let body: Value = r.json().await.unwrap();
    assert_eq!(status, 502, "{body}");
    assert_eq!(body["messages"]["error"][0]["code"], 502);
    running.stop().await;
    server.abort();
}

#[tokio::test]
async fn upstream_calls_past_the_bound_are_shed_at_once() {
    let gw = Gateway::start_with(|c| c.upstream_max_in_flight = 2).await;
    mount_stores(&gw.upstream).await;
    Mock::given(method("GET"))
        .and(path_regex("^/rest/default/V1/products/.+$"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(product_named("slow"))
                .set_delay(Duration::from_millis(600)),
        )
        .mount(&gw.upstream)
        .await;
    mount_skus(&gw.upstream).await;
    let gw = Arc::new(gw);
    let mut tasks = Vec::new();
    for id in 1..=6 {
        let gw = gw.clone();
        tasks.push(tokio::spawn(async move {
            let started = Instant::now();
            let r = gw.get_json(&format!("/products/{id}"), &Who::Admin).await;
            (r.status, started.elapsed())
        }));
    }
    let mut shed = 0;
    for task in tasks {
        let (status, elapsed) = task.await.unwrap();
        if status == 503 {
            shed += 1;
            assert!(elapsed < Duration::from_millis(400), "{elapsed:?}");
        } else {
            assert_eq!(status, 200);
        }
    }
    assert!((1..=5).contains(&shed), "{shed} shed");
    let text = metrics(&gw).await;
    let shed_calls: f64 = text
        .lines()
        .filter(|l| {
            l.starts_with("storegate_upstream_call_duration_seconds_count{")
                && l.contains("outcome=\"shed\"")
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    assert!(shed_calls >= shed as f64, "{text}");
}

#[tokio::test]
async fn requests_past_the_in_flight_limit_get_a_503_at_once() {
    let gw = Gateway::start_with(|c| c.max_in_flight = 2).await;
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products/24-MB01"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(product_named("slow"))
                .set_delay(Duration::from_millis(600)),
        )
        .mount(&gw.upstream)
        .await;
    let gw = Arc::new(gw);
    let mut slow = Vec::new();
    for _ in 0..2 {
        let gw = gw.clone();
        slow.push(tokio::spawn(async move {
            gw.get_json("/products/1", &Who::Admin).await.status
        }));
    }
    tokio::time::sleep(Duration::from_millis(150)).await;
    let started = Instant::now();
    let r = gw.get_xml("/products/1", &Who::Guest).await;
    assert!(started.elapsed() < Duration::from_millis(300));
    assert_eq!(r.status, 503, "{}", r.body);
    assert_eq!(r.header("retry-after"), Some("1"));
    r.assert_contains("<message>The service is overloaded. Try again later.</message>");
    // Operations stay reachable.
    let health = sent(gw.http.get(format!("http://{}/healthz", gw.running.addr))).await;
    assert_eq!(health.status(), 200);
    let text = metrics(&gw).await;
    assert_eq!(
        sample(&text, "storegate_http_requests_in_flight"),
        Some(2.0)
    );
    assert_eq!(
        sample(&text, "storegate_http_requests_shed_total"),
        Some(1.0)
    );
    for task in slow {
        assert_eq!(task.await.unwrap(), 200);
    }
}

#[tokio::test]
async fn request_ids_are_kept_or_made_and_passed_to_magento() {
    let gw = Gateway::start_with(|c| c.cache_ttl = Duration::ZERO).await;
    mount_catalog(&gw.upstream, "Harbor Duffle Bag").await;
    let r = gw
        .send_header(
            "GET",
            "/products/1",
            &Who::Admin,
            "X-Request-Id",
            "app-7f3a.42",
        )
        .await;
    assert_eq!(r.header("x-request-id"), Some("app-7f3a.42"));
    let calls = gw.upstream_calls("GET", ".").await;
    assert!(!calls.is_empty());
    for call in &calls {
        assert_eq!(call.headers["x-request-id"], "app-7f3a.42", "{}", call.url);
    }

    // None, or one that could forge a log line: a new one, sent on too.
    for sent in [None, Some("two words"), Some(&*"x".repeat(200))] {
        gw.upstream.reset().await;
        mount_catalog(&gw.upstream, "Harbor Duffle Bag").await;
        let mut request = gw.request("GET", "/products/1", &Who::Admin);
        if let Some(id) = sent {
            request = request.header("X-Request-Id", id);
        }
        let r = gw.send(request).await;
        let id = r.header("x-request-id").unwrap().to_owned();
        assert!(Some(id.as_str()) != sent && id.len() >= 16, "{id}");
        for call in gw.upstream_calls("GET", ".").await {
            assert_eq!(call.headers["x-request-id"], id.as_str());
        }
    }
    // Errors and unknown routes carry one too.
    let r = gw.get_json("/nowhere", &Who::Guest).await;
    assert!(r.header("x-request-id").is_some());
}

#[tokio::test]
async fn metrics_count_requests_upstream_calls_and_the_cache_by_template() {
    let gw = Gateway::start().await;
    mount_catalog(&gw.upstream, "Harbor Duffle Bag").await;
    mount_render(&gw.upstream).await;
    for _ in 0..2 {
        assert_eq!(gw.get_json("/products/1", &Who::Admin).await.status, 200);
    }
    assert_eq!(gw.get_xml("/products/1", &Who::Guest).await.status, 200);
    assert_eq!(
        gw.get_json("/products/99999", &Who::Customer(5))
            .await
            .status,
        404
    );
    assert_eq!(
        gw.get_json("/products/1", &Who::Bearer("Bearer nope".into()))
            .await
            .status,
        401
    );
    assert_eq!(gw.get_json("/no/such/route", &Who::Guest).await.status, 404);
    let text = metrics(&gw).await;
    let requests = |labels: &str| {
        sample(
            &text,
            &format!("storegate_http_request_duration_seconds_count{{{labels}}}"),
        )
    };
    assert_eq!(
        requests(
            "route=\"/api/rest/products/{id}\",method=\"GET\",status=\"200\",user_type=\"admin\""
        ),
        Some(2.0),
        "{text}"
    );
    assert_eq!(
        requests(
            "route=\"/api/rest/products/{id}\",method=\"GET\",status=\"200\",user_type=\"guest\""
        ),
        Some(1.0)
    );
    assert_eq!(
        requests(
            "route=\"/api/rest/products/{id}\",method=\"GET\",status=\"404\",user_type=\"customer\""
        ),
        Some(1.0)
    );
    assert_eq!(
        requests(
            "route=\"/api/rest/products/{id}\",method=\"GET\",status=\"401\",user_type=\"none\""
        ),
        Some(1.0)
    );
    assert!(
        text.contains("route=\"unmatched\",method=\"GET\",status=\"404\""),
        "{text}"
    );
    assert!(text.lines().any(|l| {
        l.starts_with("storegate_http_request_duration_seconds_bucket{")
            && l.contains("route=\"/api/rest/products/{id}\"")
            && l.contains("le=\"0.001\"")
    }));
    assert_eq!(
        sample(
            &text,
            "storegate_upstream_call_duration_seconds_count{endpoint=\"/V1/products/{}\",method=\"GET\",outcome=\"ok\"}"
        ),
        Some(1.0)
    );
    assert!(sample(&text, "storegate_cache_hits_total").unwrap() >= 1.0);
    assert!(sample(&text, "storegate_cache_misses_total").unwrap() >= 3.0);
    assert!(sample(&text, "storegate_cache_weight_bytes").unwrap() > 0.0);
    assert_eq!(sample(&text, "storegate_upstream_circuit_state"), Some(0.0));
    // Labels are templates: no SKU, id or token leaks into the series.
    for secret in ["24-MB01", "/99999", ADMIN_KEY, UPSTREAM_TOKEN] {
        assert!(!text.contains(secret), "{secret} in metrics");
    }
}

#[tokio::test]
async fn the_binary_logs_failures_as_json_with_the_request_id() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    let upstream = MockServer::start().await;
    Mock::given(any())
        .respond_with(recorded("products/get-error-internal"))
        .mount(&upstream)
        .await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut command = Command::new(env!("CARGO_BIN_EXE_storegate"));
    command.env("STOREGATE_DATA_DIR", test_data_dir());
    for (key, _) in std::env::vars() {
        if key.starts_with("STOREGATE_") || key == "RUST_LOG" {
            command.env_remove(key);
        }
    }
    /// Stops the binary however the test ends.
    struct Child(std::process::Child);
    impl Drop for Child {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = Child(
        command
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("STOREGATE_LISTEN", format!("127.0.0.1:{port}"))
            .env("STOREGATE_UPSTREAM_URL", upstream.uri())
            .env("STOREGATE_UPSTREAM_TOKEN", UPSTREAM_TOKEN)
            .env("STOREGATE_ADMIN_KEY", ADMIN_KEY)
            .env("STOREGATE_TOKEN_SECRET", "log-test-secret")
            .env("STOREGATE_LOG_FORMAT", "json")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // Lines of both streams, read on their own threads so neither pipe fills up.
    let (tx, rx) = std::sync::mpsc::channel::<(bool, String)>();
    for (is_err, stream) in [
        (
            false,
            Box::new(child.0.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
        ),
        (true, Box::new(child.0.stderr.take().unwrap())),
    ] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                let _ = tx.send((is_err, line));
            }
        });
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut listening = false;
    while !listening && Instant::now() < deadline {
        if let Ok((false, line)) = rx.recv_timeout(Duration::from_millis(200)) {
            // JSON mode writes only JSON, the start banner included.
            let banner: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
            listening = banner["message"] == "storegate listening";
            assert_eq!(
                banner["base_url"],
                format!("http://127.0.0.1:{port}/api/rest"),
                "{line}"
            );
        }
    }
    assert!(listening, "the binary did not start");
    storegate::backend::transport::install_crypto();
    let r = sent(
        reqwest::Client::new()
            .get(format!("http://127.0.0.1:{port}/api/rest/products/1"))
            .header("Accept", "application/json")
            .header("X-Request-Id", "log-test-1")
            .bearer_auth(ADMIN_KEY),
    )
    .await;
    assert_eq!(r.status(), 500);
    let mut error_line = None;
    let mut stderr = String::new();
    while error_line.is_none() && Instant::now() < deadline {
        if let Ok((true, line)) = rx.recv_timeout(Duration::from_millis(200)) {
            stderr.push_str(&line);
            stderr.push('\n');
            let Ok(json) = serde_json::from_str::<Value>(&line) else {
                panic!("a log line that is not JSON: {line}");
            };
            if json["level"] == "ERROR" && json["span"]["request_id"] == "log-test-1" {
                error_line = Some(json);
            }
        }
    }
    drop(child);
    let line = error_line.unwrap_or_else(|| panic!("no error line with the request id:\n{stderr}"));
    // No colour codes when stderr is not a terminal.
    assert!(!stderr.contains('\u{1b}'), "{stderr}");
    assert_eq!(line["span"]["route"], "/api/rest/products/{id}");
    assert!(!stderr.contains(UPSTREAM_TOKEN) && !stderr.contains(ADMIN_KEY));
}

/// Repeats of a cached read are answered before the API's layers (the fast path); every
/// check of the slow path still holds for them.
#[tokio::test]
async fn repeated_reads_keep_every_check_of_the_slow_path() {
    let gw = Gateway::start().await;
    mount_catalog(&gw.upstream, "Harbor Duffle Bag").await;
    mount_render(&gw.upstream).await;
    let admin = gw.get_json("/products/1", &Who::Admin).await;
    let guest = gw.get_json("/products/1", &Who::Guest).await;
    let xml = gw.get_xml("/products/1", &Who::Guest).await;
    for _ in 0..2 {
        let again = gw.get_json("/products/1", &Who::Admin).await;
        assert_eq!((again.status, &again.body), (200, &admin.body));
        assert_eq!(again.header("x-cache"), Some("HIT"));
        for name in ["content-type", "etag", "vary"] {
            assert_eq!(again.header(name), admin.header(name), "{name}");
        }
        assert_eq!(
            again
                .header("cache-control")
                .map(|v| v.starts_with("private, max-age=")),
            Some(true)
        );
        // Views and formats stay apart.
        let g = gw.get_json("/products/1", &Who::Guest).await;
        assert_eq!(g.body, guest.body);
        assert_ne!(g.body, admin.body);
        assert_eq!(
            g.header("cache-control")
                .map(|v| v.starts_with("public, max-age=")),
            Some(true)
        );
        assert_eq!(gw.get_xml("/products/1", &Who::Guest).await.body, xml.body);
    }
    // Credentials are still checked.
    let r = gw
        .get_json("/products/1", &Who::Bearer("Bearer forged".into()))
        .await;
    assert_eq!(r.status, 401);
    // The version header, the Accept header and validators too.
    let r = gw
        .send_header("GET", "/products/1", &Who::Guest, "Version", "2")
        .await;
    assert_eq!(r.status, 400);
    let r = gw
        .send_raw(
            gw.request("GET", "/products/1", &Who::Guest)
                .header("Accept", "image/png"),
        )
        .await;
    assert_eq!(r.status, 406);
    let etag = guest.header("etag").unwrap();
    let r = gw
        .send_header("GET", "/products/1", &Who::Guest, "If-None-Match", etag)
        .await;
    assert_eq!((r.status, r.body.as_str()), (304, ""));
    // Magento was read once for all of that.
    assert_eq!(
        gw.upstream_count("GET", "^/rest/default/V1/products/24-MB01$")
            .await,
        1
    );
    // A write through the gateway is seen at once by repeats too.
    gw.upstream.reset().await;
    mount_catalog(&gw.upstream, "Renamed").await;
    Mock::given(method("PUT"))
        .and(path("/rest/all/V1/products/24-MB01"))
        .respond_with(ResponseTemplate::new(200).set_body_json(product_named("Renamed")))
        .mount(&gw.upstream)
        .await;
    let r = gw
        .send_json(
            "PUT",
            "/products/1",
            &Who::Admin,
            &json!({"name": "Renamed"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = gw.get_json("/products/1", &Who::Admin).await;
    assert_eq!(
        (r.header("x-cache"), r.json()["name"].clone()),
        (Some("MISS"), json!("Renamed"))
    );
}
