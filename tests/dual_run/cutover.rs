//! The cut-over (`STOREGATE_SHADOW_SERVE`): a class's reads served from the candidate, the
//! serving store answering when the candidate is down, caches that never mix.

use std::time::{Duration, Instant};

use serde_json::json;
use storegate::config::shadow::ServeShares;

use crate::harness::{As, Dual, change_product, count, entry};

/// A dual run serving `shares` from the candidate, comparing nothing.
async fn serving_unsampled(shares: &str) -> Dual {
    Dual::start(Duration::ZERO, |shadow, _| {
        shadow.serve = ServeShares::parse(shares).unwrap();
        shadow.sample = 0.0;
    })
    .await
}

#[tokio::test]
async fn products_at_100_show_the_candidates_values_and_the_serving_stores_when_it_is_down() {
    let mut dual = Dual::start(Duration::ZERO, |shadow, config| {
        shadow.serve = ServeShares::parse("products=100").unwrap();
        config.upstream_timeout = Duration::from_millis(2000);
    })
    .await;
    dual.candidate_differs("Joust Duffle Bag 2").await;
    for _ in 0..3 {
        let r = dual.get("/products/1", As::Guest).await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.json()["name"], "Joust Duffle Bag 2");
        let xml = dual
            .call(
                &dual.gateway,
                "GET",
                "/products/1",
                As::Guest,
                "application/xml",
                None,
            )
            .await;
        xml.assert_contains("Joust Duffle Bag 2");
    }
    // Stock items are not cut over: the serving store's.
    let stock = dual.get("/stockitems/1001", As::Admin).await;
    assert_eq!(stock.status, 200);
    // Writes still go to the serving store.
    let r = dual
        .admin_json(
            "PUT",
            "/products/2",
            json!({"name": "Written to the serving store"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        crate::harness::product_in(&dual.serving, "24-MB04").await["name"],
        "Written to the serving store"
    );
    assert_ne!(
        crate::harness::product_in(dual.candidate(), "24-MB04").await["name"],
        "Written to the serving store"
    );
    // The serving store is the comparison side of the reads the candidate served.
    let report = dual.compared(15, "GET /products/:id", "guest", 1).await;
    let e = entry(&report, "GET /products/:id", "guest");
    assert!(count(e, "differed") >= 1, "{e:#}");
    let served = report["served"].as_array().unwrap();
    assert!(
        served
            .iter()
            .any(|s| s["class"] == "products" && s["candidate"].as_i64() >= Some(6))
    );
    assert_eq!(report["serve"]["products"], 100);

    // The candidate down: the serving store answers, within the deadline.
    dual.candidate.take().unwrap().shutdown().await;
    for path in ["/products/1", "/products/3"] {
        let start = Instant::now();
        let r = dual.get(path, As::Guest).await;
        let took = start.elapsed();
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        assert!(took < Duration::from_millis(2500), "{path} took {took:?}");
        if path == "/products/1" {
            // Served stale from the candidate's cache, or by the serving store: never mixed.
            let name = r.json()["name"].clone();
            assert!(
                name == "Joust Duffle Bag 2" || name == "Joust Duffle Bag",
                "{name}"
            );
        } else {
            assert_eq!(r.json()["name"], "Crown Summit Backpack");
        }
    }
    let report = dual.report().await;
    let served = report["served"].as_array().unwrap();
    assert!(
        served
            .iter()
            .any(|s| s["class"] == "products" && s["fallback"].as_i64() >= Some(1)),
        "{report:#}"
    );
}

#[tokio::test]
async fn with_half_the_reads_cut_over_each_answer_is_wholly_one_stores() {
    let dual = serving_unsampled("products=50").await;
    dual.candidate_differs("Candidate Bag").await;
    let (mut candidate, mut serving) = (0, 0);
    for _ in 0..60 {
        let r = dual.get("/products/1", As::Guest).await.json();
        let price = r["final_price_without_tax"].to_string();
        match (r["name"].as_str().unwrap(), price.as_str()) {
            ("Candidate Bag", price) => {
                assert!(price.starts_with("30"), "{r}");
                candidate += 1;
            }
            ("Joust Duffle Bag", price) => {
                assert!(price.starts_with("34"), "{r}");
                serving += 1;
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(candidate > 5 && serving > 5, "{candidate} / {serving}");
    // Every answer with the candidate's values was served by it: its cache never answered
    // for the serving store, nor the other way round.
    let report = dual.report().await;
    let served = report["served"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["class"] == "products")
        .unwrap()
        .clone();
    assert_eq!(served["candidate"], candidate, "{report:#}");
    assert_eq!(served["fallback"], 0);
}

#[tokio::test]
async fn a_purge_reaches_the_candidates_cache_too() {
    let dual = serving_unsampled("products=100").await;
    assert_eq!(
        dual.get("/products/1", As::Guest).await.json()["name"],
        "Joust Duffle Bag"
    );
    change_product(dual.candidate(), "24-MB01", json!({"name": "Migrated Bag"})).await;
    // Cached: still the old one.
    assert_eq!(
        dual.get("/products/1", As::Guest).await.json()["name"],
        "Joust Duffle Bag"
    );
    let r = dual
        .admin_json("POST", "/cache/purge", json!({"all": true}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        dual.get("/products/1", As::Guest).await.json()["name"],
        "Migrated Bag"
    );
}

/// Rate limits (issue 34) count an app's read once: neither the comparison read behind it
/// nor the candidate's gateway serving it (the cut-over) spends the app's budget again.
#[tokio::test]
async fn an_apps_read_is_counted_once_whatever_the_dual_run_does_with_it() {
    let dual = Dual::start(Duration::ZERO, |shadow, config| {
        shadow.serve = ServeShares::parse("products=100").unwrap();
        config.rate_limits =
            storegate::config::RateLimits::parse("customer=4/60s").expect("a valid setting");
    })
    .await;
    // Products are served by the candidate's gateway and compared with the serving store;
    // a product's images are served here and compared with the candidate.
    for (i, path) in [
        "/products/1",
        "/products/1",
        "/products/1/images",
        "/products/1/images",
    ]
    .into_iter()
    .enumerate()
    {
        let r = dual.get(path, As::Customer(1)).await;
        assert_eq!(r.status, 200, "read {i} of {path}: {}", r.body);
        assert!(r.headers.contains_key("ratelimit"), "{:?}", r.headers);
        let route = if path.ends_with("/images") {
            "GET /products/:id/images"
        } else {
            "GET /products/:id"
        };
        let n = 1 + (i as i64 % 2);
        dual.compared(15, route, "customer", n).await;
    }
    // The fifth is past the limit, on either path.
    for path in ["/products/1", "/products/1/images"] {
        let r = dual.get(path, As::Customer(1)).await;
        assert_eq!(r.status, 429, "{path}: {}", r.body);
    }
}
