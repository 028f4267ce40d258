//! The dual run (issue 31) through HTTP: two Magento 2 stores (two sandboxes), the gateway
//! serving from one with the other as its candidate (`STOREGATE_SHADOW_*`), and what apps,
//! the report, the metrics and the stores see.

mod browser;
#[allow(dead_code)]
#[path = "../common/mod.rs"]
mod common;
mod cutover;
mod fleet;
mod harness;
mod seeding;
mod settings;

use std::time::{Duration, Instant};

use serde_json::json;

use common::http::sent;
use harness::{As, Dual, change_product, count, difference, entry, product_in};

/// The reads an app makes, by every user type, of every resource.
const READS: &[(&str, As)] = &[
    ("/products/1", As::Guest),
    ("/products/1", As::Customer(1)),
    ("/products/1", As::Admin),
    ("/products", As::Guest),
    ("/products/1/images", As::Guest),
    ("/stockitems/1001", As::Admin),
    ("/customers/1", As::Admin),
    ("/customers/1", As::Customer(1)),
    ("/customers/1/addresses", As::Customer(1)),
    ("/customers/addresses/1", As::Admin),
    ("/orders", As::Customer(1)),
    ("/orders/1", As::Admin),
    ("/orders/1", As::Customer(1)),
];

#[tokio::test]
async fn two_stores_differing_in_a_price_and_a_name_every_app_answer_is_the_serving_stores() {
    let dual = Dual::start(Duration::ZERO, |_, _| {}).await;
    dual.candidate_differs("Joust Duffle Bag 2").await;
    // Every read twice (the second a cache hit for the cacheable ones), in JSON and XML.
    for round in 0..2 {
        for (path, who) in READS {
            for accept in ["application/json", "application/xml"] {
                let shadowed = dual
                    .call(&dual.gateway, "GET", path, *who, accept, None)
                    .await;
                let plain = dual
                    .call(&dual.plain, "GET", path, *who, accept, None)
                    .await;
                assert_eq!(shadowed.status, plain.status, "{path} {who:?} {accept}");
                assert_eq!(
                    shadowed.body, plain.body,
                    "round {round}: {path} as {who:?} in {accept}: not the serving store's answer"
                );
                for header in ["content-type", "etag", "content-length"] {
                    assert_eq!(
                        shadowed.headers.get(header),
                        plain.headers.get(header),
                        "{path} {header}"
                    );
                }
            }
        }
    }
    // The app saw the serving store's values.
    let seen = dual.get("/products/1", As::Guest).await.json();
    assert_eq!(seen["name"], "Joust Duffle Bag");

    let report = dual.compared(20, "GET /products/:id", "guest", 4).await;
    assert_eq!(report["sample"], 1.0);
    assert_eq!(report["counts"], "instance");
    for (user, who) in [
        ("guest", As::Guest),
        ("customer", As::Customer(1)),
        ("admin", As::Admin),
    ] {
        let seen = dual.get("/products/1", who).await.json();
        let product = entry(&report, "GET /products/:id", user);
        assert_eq!(product["verdict"], "not ready", "{product:#}");
        assert!(count(product, "differed") >= 1, "{product:#}");
        // An admin sees the price itself; shoppers the prices the store computes from it.
        let price = if user == "admin" {
            "price"
        } else {
            "final_price_without_tax"
        };
        for (path, candidate) in [(price, "30"), ("name", "Joust Duffle Bag 2")] {
            let d = difference(product, path, "value")
                .unwrap_or_else(|| panic!("no {path} difference: {product:#}"));
            assert!(d["count"].as_i64().unwrap() >= 1, "{d:#}");
            let example = &d["example"];
            assert_eq!(example["request"], "/api/rest/products/1", "{d:#}");
            assert_eq!(example["serving"], seen[path], "{d:#}");
            let shown = example["candidate"].to_string();
            assert!(shown.trim_matches('"').starts_with(candidate), "{d:#}");
            assert_ne!(example["serving"], example["candidate"]);
        }
    }
    // The customer's, address and order routes: compared, all matched.
    for (route, user) in [
        ("GET /customers/:id", "admin"),
        ("GET /customers/:id", "customer"),
        ("GET /customers/:id/addresses", "customer"),
        ("GET /customers/addresses/:id", "admin"),
        ("GET /orders", "customer"),
        ("GET /orders/:id", "admin"),
        ("GET /orders/:id", "customer"),
        ("GET /stockitems/:id", "admin"),
        ("GET /products/:id/images", "guest"),
    ] {
        let e = entry(&report, route, user);
        assert!(count(e, "compared") >= 4, "{e:#}");
        assert_eq!(count(e, "compared"), count(e, "matched"), "{e:#}");
        assert_eq!(count(e, "differed"), 0, "{e:#}");
        assert_eq!(count(e, "error") + count(e, "timeout"), 0, "{e:#}");
        assert_eq!(e["verdict"], "ready", "{e:#}");
    }
    // The product list shows the product too.
    let list = entry(&report, "GET /products", "guest");
    assert!(difference(list, "{id}.name", "value").is_some(), "{list:#}");

    // The metrics count the same.
    let metrics = reqwest::get(format!("http://{}/metrics", dual.gateway.addr))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains(
            "storegate_shadow_comparisons_total{route=\"GET /products/:id\",user_type=\"guest\",outcome=\"differed\"}"
        ),
        "{metrics}"
    );
    // The report in XML, like every route.
    let xml = dual
        .admin(&dual.gateway, "GET", "/shadow/report", "application/xml")
        .await;
    assert_eq!(xml.status, 200);
    xml.assert_contains("<route>GET /products/:id</route>");
    xml.assert_contains("<verdict>not ready</verdict>");
}

#[tokio::test]
async fn personal_values_appear_only_as_digests() {
    let dual = Dual::start(Duration::ZERO, |_, _| {}).await;
    // The candidate's customer 1 has another e-mail and city.
    let r = sent(dual
        .http
        .put(format!("{}/rest/all/V1/customers/1", dual.candidate().base_url()))
        .bearer_auth(dual.candidate().token())
        .json(&json!({"customer": {"id": 1, "email": "veronica.new@example.com", "firstname": "Veronica",
            "lastname": "Costello", "website_id": 1, "group_id": 1}}))).await;
    assert!(r.status().is_success(), "{}", r.text().await.unwrap());
    let shown = dual.get("/customers/1", As::Admin).await;
    assert_eq!(shown.status, 200);
    assert_eq!(shown.json()["email"], "roni_cost@example.com");
    let report = dual
        .report_when(Duration::from_secs(15), |report| {
            report["routes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["route"] == "GET /customers/:id" && r["differed"].as_i64() >= Some(1))
        })
        .await;
    let e = entry(&report, "GET /customers/:id", "admin");
    let d = difference(e, "email", "value").unwrap_or_else(|| panic!("{e:#}"));
    let (serving, candidate) = (&d["example"]["serving"], &d["example"]["candidate"]);
    assert!(
        serving["digest"].as_str().is_some_and(|s| s.len() == 16),
        "{d:#}"
    );
    assert!(candidate["digest"].as_str().is_some(), "{d:#}");
    assert_ne!(serving, candidate);
    let text = report.to_string();
    for secret in [
        "roni_cost@example.com",
        "veronica.new@example.com",
        "Costello",
    ] {
        assert!(!text.contains(secret), "{secret} in the report: {report:#}");
    }
}

/// A stock item's quantity in a store, written there directly (the migration's delta).
async fn set_qty(store: &storegate_sandbox::Sandbox, qty: u64) {
    let r = sent(
        reqwest::Client::new()
            .put(format!(
                "{}/rest/all/V1/products/24-MB04/stockItems/1002",
                store.base_url()
            ))
            .bearer_auth(store.token())
            .json(&json!({"stockItem": {"qty": qty, "is_in_stock": true}})),
    )
    .await;
    assert!(r.status().is_success(), "{}", r.text().await.unwrap());
}

#[tokio::test]
async fn a_difference_the_candidate_catches_up_with_is_lag() {
    let dual = Dual::start(Duration::ZERO, |shadow, config| {
        shadow.recheck = Duration::from_secs(2);
        config.cache_ttl = Duration::ZERO;
    })
    .await;
    // The shop sold some: the serving store has 45 left, the candidate still 50.
    set_qty(&dual.serving, 45).await;
    assert_eq!(dual.get("/stockitems/1002", As::Admin).await.status, 200);
    // The migration's delta catches up before the recheck.
    tokio::time::sleep(Duration::from_millis(300)).await;
    set_qty(dual.candidate(), 45).await;
    let report = dual.compared(15, "GET /stockitems/:id", "admin", 1).await;
    let e = entry(&report, "GET /stockitems/:id", "admin");
    assert_eq!(count(e, "lag"), 1, "{e:#}");
    assert_eq!(count(e, "differed"), 0, "{e:#}");
    let d = difference(e, "qty", "value").unwrap_or_else(|| panic!("{e:#}"));
    assert_eq!(d["lag"], 1, "{d:#}");
    assert_eq!(d["count"], 0, "{d:#}");
    assert_ne!(e["verdict"], "not ready");

    // One that stays is `differed`.
    set_qty(&dual.serving, 40).await;
    assert_eq!(dual.get("/stockitems/1002", As::Admin).await.status, 200);
    let report = dual.compared(15, "GET /stockitems/:id", "admin", 2).await;
    let e = entry(&report, "GET /stockitems/:id", "admin");
    assert_eq!(count(e, "differed"), 1, "{e:#}");
    assert_eq!(e["verdict"], "not ready");
}

#[tokio::test]
async fn what_differs_between_two_reads_of_the_serving_store_is_noise() {
    // The app's answer comes from the cache: both stores changed since, so a fresh read of
    // the serving store differs from what the app saw, and the candidate's alike.
    let dual = Dual::start(Duration::ZERO, |_, _| {}).await;
    assert_eq!(dual.get("/products/3", As::Guest).await.status, 200);
    let settled = dual.compared(10, "GET /products/:id", "guest", 1).await;
    assert_eq!(
        count(entry(&settled, "GET /products/:id", "guest"), "matched"),
        1
    );
    for store in [&dual.serving, dual.candidate()] {
        change_product(
            store,
            "24-MB03",
            json!({"name": "Crown Summit Backpack II"}),
        )
        .await;
    }
    // A hit: the cached answer still names the old product.
    let hit = dual.get("/products/3", As::Guest).await;
    assert_eq!(hit.json()["name"], "Crown Summit Backpack");
    let report = dual.compared(10, "GET /products/:id", "guest", 2).await;
    let e = entry(&report, "GET /products/:id", "guest");
    assert_eq!(count(e, "noise"), 1, "{e:#}");
    assert_eq!(count(e, "differed"), 0, "{e:#}");
    let d = difference(e, "name", "value").unwrap_or_else(|| panic!("{e:#}"));
    assert_eq!(d["noise"], 1);
}

#[tokio::test]
async fn a_product_write_through_the_gateway_never_reaches_the_candidate() {
    let dual = Dual::start(Duration::ZERO, |_, _| {}).await;
    let before = product_in(dual.candidate(), "24-MB01").await;
    let r = dual
        .admin_json(
            "PUT",
            "/products/1",
            json!({"name": "Renamed through the gateway", "price": 99}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let serving = product_in(&dual.serving, "24-MB01").await;
    assert_eq!(serving["name"], "Renamed through the gateway");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after = product_in(dual.candidate(), "24-MB01").await;
    assert_eq!(after, before, "the candidate's record changed");
    assert_eq!(dual.candidate().count("PUT", "/V1/products/24-MB01"), 0);
    assert_eq!(dual.candidate().count("POST", "/V1/products"), 0);
    let report = dual.report().await;
    let e = entry(&report, "PUT /products/:id", "admin");
    assert_eq!(count(e, "not_compared"), 1, "{e:#}");
    assert_eq!(count(e, "compared"), 0);
}

#[tokio::test]
async fn a_candidate_answering_in_two_seconds_costs_the_apps_reads_nothing() {
    // Misses, so that every read goes to the serving store; the same reads without a shadow
    // for the baseline.
    let dual = Dual::start(Duration::from_secs(2), |_, config| {
        config.cache_ttl = Duration::ZERO;
    })
    .await;
    let paths = [
        "/products/1",
        "/products/2",
        "/stockitems/1001",
        "/products/5",
    ];
    let (mut with, mut without): (Vec<Duration>, Vec<Duration>) = (Vec::new(), Vec::new());
    for i in 0..40 {
        let path = paths[i % paths.len()];
        let who = if path.starts_with("/stock") {
            As::Admin
        } else {
            As::Guest
        };
        for (running, into) in [(&dual.gateway, &mut with), (&dual.plain, &mut without)] {
            let start = Instant::now();
            let r = dual
                .call(running, "GET", path, who, "application/json", None)
                .await;
            into.push(start.elapsed());
            assert_eq!(r.status, 200, "{}", r.body);
        }
    }
    let p50 = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let (with, without) = (p50(&mut with), p50(&mut without));
    eprintln!("p50 with a 2 s candidate: {with:?}; without a shadow: {without:?}");
    // Well under the candidate's 2 s, and within noise of the same reads without a shadow
    // (a loaded CI machine moves both alike).
    assert!(with < Duration::from_millis(1000), "p50 {with:?}");
    assert!(
        with < without * 3 + Duration::from_millis(50),
        "p50 {with:?} against {without:?}"
    );
    // The comparisons ran, later, and the candidate (four calls of 2 s for a product, past
    // the deadline) was counted as a timeout.
    let report = dual
        .report_when(Duration::from_secs(30), |report| {
            harness::find(report, "GET /products/:id", "guest")
                .is_some_and(|e| count(e, "timeout") + count(e, "compared") >= 10)
        })
        .await;
    assert!(count(entry(&report, "GET /products/:id", "guest"), "timeout") >= 1);
}

#[tokio::test]
async fn a_candidate_that_is_down_or_answers_garbage_is_counted_never_seen() {
    let mut dual = Dual::start(Duration::ZERO, |_, _| {}).await;
    dual.candidate.take().unwrap().shutdown().await;
    let shadowed = dual.get("/products/1", As::Guest).await;
    let plain = dual
        .call(
            &dual.plain,
            "GET",
            "/products/1",
            As::Guest,
            "application/json",
            None,
        )
        .await;
    assert_eq!((shadowed.status, &shadowed.body), (200, &plain.body));
    let report = dual
        .report_when(Duration::from_secs(15), |report| {
            harness::find(report, "GET /products/:id", "guest")
                .is_some_and(|e| count(e, "error") + count(e, "timeout") >= 1)
        })
        .await;
    let e = entry(&report, "GET /products/:id", "guest");
    assert_eq!(count(e, "compared"), 0, "{e:#}");

    // A candidate answering an HTML page to everything.
    let html = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::any())
        .respond_with(
            wiremock::ResponseTemplate::new(200)
                .set_body_raw("<html><body>Maintenance</body></html>", "text/html"),
        )
        .mount(&html)
        .await;
    let serving = harness::sandbox(Duration::ZERO).await;
    let mut config = harness::config();
    config.shadow = Some(harness::shadow_of(&html.uri(), "t"));
    let gateway = harness::gateway(&serving, config).await;
    let http = reqwest::Client::new();
    let r = sent(
        http.get(format!("{}/products/1", gateway.base_url()))
            .header("Accept", "application/json"),
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.json::<serde_json::Value>().await.unwrap()["name"],
        "Joust Duffle Bag"
    );
    let start = Instant::now();
    loop {
        let report: serde_json::Value = common::http::json_of(
            http.get(format!("{}/shadow/report", gateway.base_url()))
                .bearer_auth(harness::ADMIN_KEY)
                .header("Accept", "application/json"),
        )
        .await;
        let routes = report["routes"].as_array().unwrap();
        if let Some(e) = routes.iter().find(|r| r["route"] == "GET /products/:id")
            && count(e, "error") >= 1
        {
            assert_eq!(count(e, "compared"), 0);
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "{report:#}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn the_report_is_for_admins_only_and_a_delete_starts_a_new_count() {
    let dual = Dual::start(Duration::ZERO, |_, _| {}).await;
    assert_eq!(dual.get("/products/1", As::Guest).await.status, 200);
    dual.report_when(Duration::from_secs(10), |report| {
        !report["routes"].as_array().unwrap().is_empty()
    })
    .await;
    for (verb, path) in [
        ("GET", "/shadow/report"),
        ("DELETE", "/shadow/report"),
        ("GET", "/shadow"),
    ] {
        for who in [As::Guest, As::Customer(1)] {
            let r = dual
                .call(&dual.gateway, verb, path, who, "application/json", None)
                .await;
            assert_eq!(r.status, 403, "{verb} {path} as {who:?}: {}", r.body);
            assert_eq!(r.json()["messages"]["error"][0]["message"], "Access denied");
        }
        let r = sent(
            dual.http
                .request(
                    reqwest::Method::from_bytes(verb.as_bytes()).unwrap(),
                    format!("{}{path}", dual.gateway.base_url()),
                )
                .bearer_auth("not-a-key")
                .header("Accept", "application/json"),
        )
        .await;
        assert_eq!(r.status(), 401, "{verb} {path}");
    }
    // The page, for an admin; for a browser without a key, the page to type it in.
    let page = dual
        .admin(&dual.gateway, "GET", "/shadow", "application/json")
        .await;
    assert_eq!(page.status, 200);
    assert!(
        page.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    assert!(page.body.contains("Admin key"));
    let browser = dual
        .call(
            &dual.gateway,
            "GET",
            "/shadow",
            As::Guest,
            "text/html,*/*;q=0.8",
            None,
        )
        .await;
    assert_eq!(browser.status, 200);
    assert_eq!(browser.body, page.body);

    let since = dual.report().await["since"].clone();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let r = dual
        .admin(
            &dual.gateway,
            "DELETE",
            "/shadow/report",
            "application/json",
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let report = dual.report().await;
    assert!(
        report["routes"].as_array().unwrap().is_empty(),
        "{report:#}"
    );
    assert_ne!(report["since"], since);
    // Without a candidate, no report.
    let serving = harness::sandbox(Duration::ZERO).await;
    let plain = harness::gateway(&serving, harness::config()).await;
    let r = dual
        .admin(&plain, "GET", "/shadow/report", "application/json")
        .await;
    assert_eq!(r.status, 404);
}
