//! Replay as a test bench, black-box through HTTP: `storegate replay` (the binary) with
//! latency, faults and its control API, and the gateway in front of it or on `replay:DIR`.
//! The store's bad days on demand: delays with the asked-for distribution, faults at the
//! asked-for rate and the same ones again with the same seed, connection faults on the
//! wire, a maintenance window opened and closed mid-scenario, bad settings refused.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use storegate::Running;
use storegate::config::Recording;

use super::recording::temp_dir;
use super::replay_support::{
    ReplayServer, gateway_with_short_cache, product, record_two_products, refused, write_cassette,
};
use crate::common::http::sent;

fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len()) - 1]
}

/// `calls` GETs of `url`, `at_once` at a time: each one's wall time in milliseconds and status.
async fn timed(url: &str, calls: usize, at_once: usize) -> Vec<(f64, u16)> {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(at_once)
        .build()
        .unwrap();
    let gate = Arc::new(tokio::sync::Semaphore::new(at_once));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..calls {
        let (http, url, gate) = (http.clone(), url.to_owned(), gate.clone());
        tasks.spawn(async move {
            let _permit = gate.acquire_owned().await.unwrap();
            let started = Instant::now();
            let response = http.get(&url).send().await.unwrap();
            let status = response.status().as_u16();
            response.bytes().await.unwrap();
            (started.elapsed().as_secs_f64() * 1000.0, status)
        });
    }
    let mut out = Vec::new();
    while let Some(done) = tasks.join_next().await {
        out.push(done.unwrap());
    }
    out
}

async fn get_json(url: &str) -> Value {
    reqwest::get(url).await.unwrap().json().await.unwrap()
}

/// `lognormal:median=100ms,p99=400ms` over 400 replayed calls: the delays replay chose
/// (the control API lists each) and the times the client measured both have the median
/// within 15% and the 99th percentile within 25% of the setting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lognormal_latency_has_the_median_and_p99_asked_for() {
    let dir = temp_dir("bench-lognormal");
    write_cassette(&dir, "get.products.{}.json", vec![product("A", 3, None)]);
    let server = ReplayServer::start(
        &dir,
        &[("STOREGATE_REPLAY_SEED", "11")],
        &["--latency", "lognormal:median=100ms,p99=400ms"],
    );
    let url = format!("{}/rest/default/V1/products/A", server.url);
    let seen = timed(&url, 400, 40).await;
    assert!(seen.iter().all(|(_, s)| *s == 200));
    let mut measured: Vec<f64> = seen.iter().map(|(ms, _)| *ms).collect();
    measured.sort_by(f64::total_cmp);

    let asked = get_json(&server.control("/requests")).await;
    let mut chosen: Vec<f64> = asked["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["delay_ms"].as_f64().unwrap())
        .collect();
    assert_eq!(chosen.len(), 400);
    chosen.sort_by(f64::total_cmp);
    let (median, p99) = (quantile(&chosen, 0.5), quantile(&chosen, 0.99));
    assert!(
        (median - 100.0).abs() <= 15.0,
        "chosen median {median:.1} ms, not within 15% of 100"
    );
    assert!(
        (p99 - 400.0).abs() <= 100.0,
        "chosen p99 {p99:.1} ms, not within 25% of 400"
    );
    // The client's clock: never before the delay chosen (below), and the median and p99 as
    // set, with room above for a machine busy with other builds (a call's wall time is its
    // delay plus however long the loaded machine took to run the two processes).
    let (median, p99) = (quantile(&measured, 0.5), quantile(&measured, 0.99));
    assert!(
        (85.0..=155.0).contains(&median),
        "measured median {median:.1} ms, not within 15% of 100 (+40 ms of load)"
    );
    assert!(
        (300.0..=600.0).contains(&p99),
        "measured p99 {p99:.1} ms, not within 25% of 400 (+100 ms of load)"
    );
    // Nothing comes faster than replay chose: the delay is real.
    assert!(
        measured[0] >= chosen[0] - 1.0,
        "{} < {}",
        measured[0],
        chosen[0]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `recorded` gives each answer after as long as the store took to record it (within 20%),
/// `recorded*2` twice that, and a latency for one endpoint leaves the others alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recorded_latency_reproduces_the_stores_own_timings() {
    let dir = temp_dir("bench-recorded");
    write_cassette(
        &dir,
        "get.products.{}.json",
        vec![
            product("A", 40, None),
            product("B", 120, None),
            product("C", 250, None),
        ],
    );
    write_cassette(
        &dir,
        "get.orders.json",
        vec![
            json!({"request": {"method": "GET", "path": "/rest/default/V1/orders"},
                    "response": {"status": 200, "body": {"items": []}, "elapsed_ms": 300}}),
        ],
    );
    for (latency, factor) in [
        ("GET /V1/products/{}=recorded", 1.0),
        ("GET /V1/products/{sku}=recorded*2", 2.0),
    ] {
        let server = ReplayServer::start(&dir, &[("STOREGATE_REPLAY_LATENCY", latency)], &[]);
        let http = reqwest::Client::new();
        // The connection made before the clock runs (orders have no latency rule).
        sent(http.get(format!("{}/rest/default/V1/orders", server.url))).await;
        let mut took: Vec<Vec<f64>> = vec![Vec::new(); 3];
        for _round in 0..5 {
            for (i, sku) in ["A", "B", "C"].into_iter().enumerate() {
                let started = Instant::now();
                let r =
                    sent(http.get(format!("{}/rest/default/V1/products/{sku}", server.url))).await;
                assert_eq!(r.status(), 200);
                r.bytes().await.unwrap();
                took[i].push(started.elapsed().as_secs_f64() * 1000.0);
            }
        }
        // What replay chose, exactly the recorded time scaled.
        let asked: Value = crate::common::http::get_json(server.control("/requests")).await;
        for call in asked["requests"].as_array().unwrap().iter().skip(1) {
            let recorded = match call["request"].as_str().unwrap() {
                r if r.ends_with("/A") => 40.0,
                r if r.ends_with("/B") => 120.0,
                _ => 250.0,
            };
            let chosen = call["delay_ms"].as_f64().unwrap();
            assert!((chosen - recorded * factor).abs() < 0.5, "{call}");
        }
        // What the client saw: never before the recorded time, scaled, and the median of five
        // within 20% of it, with 25 ms more for a machine busy with other builds (one slow
        // call says nothing of replay; the delays chosen are checked exactly above).
        for (i, recorded) in [40.0, 120.0, 250.0].into_iter().enumerate() {
            let mut times = took[i].clone();
            times.sort_by(f64::total_cmp);
            let (median, want) = (times[2], recorded * factor);
            assert!(
                times[0] >= want - 1.0 && median >= want * 0.8 && median <= want * 1.2 + 25.0,
                "{latency}: recorded {recorded} ms, took {times:?}"
            );
        }
        // Orders have no latency rule: at once, not after their recorded 300 ms.
        let started = Instant::now();
        sent(http.get(format!("{}/rest/default/V1/orders", server.url))).await;
        assert!(
            started.elapsed() < Duration::from_millis(290),
            "{:?}",
            started.elapsed()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Faults the same calls as `seed`: a 0/1 per call.
async fn fault_pattern(server: &ReplayServer, calls: usize) -> Vec<bool> {
    let http = reqwest::Client::new();
    let mut out = Vec::with_capacity(calls);
    for _ in 0..calls {
        let r = sent(http.get(format!("{}/rest/default/V1/products/A", server.url))).await;
        let status = r.status().as_u16();
        let body = r.text().await.unwrap();
        match status {
            200 => out.push(false),
            503 => {
                assert!(body.contains("Service Temporarily Unavailable"), "{body}");
                out.push(true)
            }
            other => panic!("{other}: {body}"),
        }
    }
    out
}

/// A fault at probability 0.5 over 400 calls faults 40-60% of them, and the same calls
/// again with the same seed (after a reset, and in another server); another seed, others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fault_at_one_half_faults_half_the_calls_and_the_same_with_the_same_seed() {
    let dir = temp_dir("bench-half");
    write_cassette(&dir, "get.products.{}.json", vec![product("A", 3, None)]);
    let faults = (
        "STOREGATE_REPLAY_FAULTS",
        "GET /V1/products/{}=maintenance@0.5",
    );
    let server = ReplayServer::start(&dir, &[faults, ("STOREGATE_REPLAY_SEED", "2026")], &[]);
    let first = fault_pattern(&server, 400).await;
    let faulted = first.iter().filter(|f| **f).count();
    assert!((160..=240).contains(&faulted), "{faulted} of 400 faulted");

    let counts = get_json(&server.control("/counts")).await;
    assert_eq!(counts["counts"]["GET /V1/products/{}"]["asked"], 400);
    assert_eq!(counts["counts"]["GET /V1/products/{}"]["faulted"], faulted);

    let reset = sent(reqwest::Client::new().post(server.control("/reset"))).await;
    assert_eq!(reset.status(), 200);
    assert_eq!(fault_pattern(&server, 400).await, first, "after a reset");

    let again = ReplayServer::start(&dir, &[faults], &["--seed", "2026"]);
    assert_eq!(
        fault_pattern(&again, 400).await,
        first,
        "another server, same seed"
    );
    let other = ReplayServer::start(&dir, &[faults, ("STOREGATE_REPLAY_SEED", "2027")], &[]);
    assert_ne!(fault_pattern(&other, 400).await, first, "another seed");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Connection faults happen on the wire: a reset, an answer that never comes, a close with
/// no byte, a body cut short, a body dribbled over a second. HTTP faults carry any status
/// and body.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_faults_reach_the_wire() {
    let dir = temp_dir("bench-wire");
    write_cassette(&dir, "get.products.{}.json", vec![product("A", 3, None)]);
    let server = ReplayServer::start(&dir, &[], &[]);
    let url = format!("{}/rest/default/V1/products/A", server.url);
    let http = reqwest::Client::builder()
        .timeout(Duration::from_millis(800))
        .build()
        .unwrap();
    let set = |rules: &'static str| {
        let http = reqwest::Client::new();
        let url = server.control("/faults");
        async move {
            let r = http.put(url).body(rules).send().await.unwrap();
            assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
        }
    };

    set("reset").await;
    let error = http.get(&url).send().await.unwrap_err();
    let chain = format!("{error:?}");
    assert!(
        chain.contains("reset") || chain.contains("Reset"),
        "{chain}"
    );

    set("empty").await;
    let error = http.get(&url).send().await.unwrap_err();
    assert!(!error.is_timeout(), "{error:?}");

    set("hang").await;
    let started = Instant::now();
    let error = http.get(&url).send().await.unwrap_err();
    assert!(error.is_timeout(), "{error:?}");
    assert!(started.elapsed() >= Duration::from_millis(750));

    set("truncate").await;
    let r = http.get(&url).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.bytes().await.is_err(), "a cut body is an error");

    set("dribble:1s").await;
    let slow = reqwest::Client::new();
    let started = Instant::now();
    let r = slow.get(&url).send().await.unwrap();
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["sku"], "A");
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );

    set("http:418:{\"message\":\"teapot\"}").await;
    let r = slow.get(&url).send().await.unwrap();
    assert_eq!(r.status(), 418);
    assert_eq!(r.json::<Value>().await.unwrap()["message"], "teapot");

    set("slow_first_byte:700ms").await;
    let started = Instant::now();
    let r = slow.get(&url).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(started.elapsed() >= Duration::from_millis(690));

    // Cleared: the recorded answer at once.
    let r = slow.delete(server.control("/faults")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(get_json(&url).await["sku"], "A");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The store's failures by name, each in the form of the store at hand.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn named_failures_answer_as_the_store_does() {
    let dir = temp_dir("bench-named");
    write_cassette(&dir, "get.products.{}.json", vec![product("A", 3, None)]);
    let server = ReplayServer::start(&dir, &[], &[]);
    let url = format!("{}/rest/default/V1/products/A", server.url);
    let http = reqwest::Client::new();
    for (fault, status, content_type, text) in [
        (
            "maintenance",
            503,
            "text/html",
            "<title>Error 503: Service Unavailable</title>",
        ),
        (
            "php_fatal",
            200,
            "text/html",
            "<b>Fatal error</b>:  Uncaught Error",
        ),
        (
            "db_gone",
            500,
            "application/json",
            "Internal Error. Details are available in Magento log file. Report ID: webapi-",
        ),
        ("rate_limited", 429, "text/html", "429 Too Many Requests"),
        (
            "oauth_timestamp_refused",
            401,
            "application/json",
            "The consumer isn't authorized to access %resources.",
        ),
    ] {
        let r = sent(http.put(server.control("/faults")).body(fault)).await;
        assert_eq!(r.status(), 200);
        let r = http.get(&url).send().await.unwrap();
        assert_eq!(r.status(), status, "{fault}");
        let ct = r.headers()["content-type"].to_str().unwrap().to_owned();
        assert!(ct.starts_with(content_type), "{fault}: {ct}");
        let body = r.text().await.unwrap();
        assert!(body.contains(text), "{fault}: {body}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The control API: bad rules are a 400 naming the part (the settings stay as they were);
/// what was asked, what was never used and the counts per endpoint are listed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_control_api_lists_and_refuses_bad_rules() {
    let dir = temp_dir("bench-control");
    write_cassette(
        &dir,
        "get.products.{}.json",
        vec![product("A", 3, None), product("B", 3, None)],
    );
    let server = ReplayServer::start(
        &dir,
        &[("STOREGATE_REPLAY_FAULTS", "GET /V1/orders=reset")],
        &[],
    );
    let http = reqwest::Client::new();
    for (path, body, says) in [
        ("/faults", "maintenance@1.5", "outside 0-1"),
        (
            "/faults",
            "GET /V1/products/{}=gremlins@0.5",
            "unknown failure \"gremlins\"",
        ),
        ("/faults", "{\"faults\": \"reset@often\"}", "\"often\""),
        ("/latency", "lognormal:median=100ms", "needs both"),
        ("/latency", "fixed:soon", "the delay"),
    ] {
        let r = sent(http.put(server.control(path)).body(body)).await;
        assert_eq!(r.status(), 400, "{body}");
        let message = r.json::<Value>().await.unwrap()["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(message.contains(says), "{body}: {message}");
    }
    let state = get_json(&server.control("/")).await;
    assert_eq!(
        state["faults"],
        json!(["GET /V1/orders=reset"]),
        "unchanged"
    );

    let r = sent(http.get(format!("{}/rest/default/V1/products/A", server.url))).await;
    assert_eq!(r.status(), 200);
    let r = sent(http.get(format!("{}/rest/default/V1/products/Z", server.url))).await;
    assert_eq!(r.status(), 502);
    let asked = get_json(&server.control("/requests")).await;
    let asked = asked["requests"].as_array().unwrap();
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[0]["outcome"], "answered");
    assert_eq!(asked[0]["cassette"], "get.products.{}.json#0");
    assert_eq!(asked[1]["outcome"], "missed");
    assert_eq!(asked[1]["request"], "GET /rest/default/V1/products/Z");
    let unused = get_json(&server.control("/unused")).await;
    assert_eq!(
        unused["unused"],
        json!([{"cassette": "get.products.{}.json", "index": 1, "request": "GET /rest/default/V1/products/B"}])
    );
    let counts = get_json(&server.control("/counts")).await;
    assert_eq!(
        counts["counts"]["GET /V1/products/{}"],
        json!({"asked": 2, "answered": 1, "faulted": 0, "missed": 1, "stale": 0})
    );
    // Reset: nothing asked, everything unused again, the start's faults back.
    http.delete(server.control("/faults")).send().await.unwrap();
    http.post(server.control("/reset")).send().await.unwrap();
    assert_eq!(
        get_json(&server.control("/requests")).await["requests"],
        json!([])
    );
    assert_eq!(
        get_json(&server.control("/unused")).await["unused"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        get_json(&server.control("/")).await["faults"],
        json!(["GET /V1/orders=reset"])
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A malformed latency or fault setting, an unknown failure name, a probability outside
/// 0-1: the start is refused (exit 2) with the variable or flag and the part named. A
/// cassette file that does not parse is named with its place; the others are served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_settings_stop_the_start_and_a_broken_cassette_is_named() {
    let dir = temp_dir("bench-bad");
    write_cassette(&dir, "get.products.{}.json", vec![product("A", 3, None)]);
    let folder = dir.to_str().unwrap();
    for (args, env, says) in [
        (
            vec!["replay", folder],
            vec![("STOREGATE_REPLAY_LATENCY", "lognormal:median=1s")],
            "STOREGATE_REPLAY_LATENCY",
        ),
        (
            vec!["replay", folder, "--latency", "uniform:3ms"],
            vec![],
            "--latency",
        ),
        (
            vec!["replay", folder],
            vec![(
                "STOREGATE_REPLAY_FAULTS",
                "GET /V1/products/{}=gremlins@0.3",
            )],
            "unknown failure \"gremlins\"",
        ),
        (
            vec!["replay", folder],
            vec![("STOREGATE_REPLAY_FAULTS", "maintenance@1.2")],
            "outside 0-1",
        ),
        (
            vec!["replay", folder, "--faults", "reset@x"],
            vec![],
            "--faults",
        ),
        (
            vec!["replay", folder],
            vec![("STOREGATE_REPLAY_STALE", "error")],
            "STOREGATE_REPLAY_MAX_AGE",
        ),
        (
            vec!["replay", folder],
            vec![("STOREGATE_REPLAY_MAX_AGE", "a while")],
            "STOREGATE_REPLAY_MAX_AGE",
        ),
        (
            vec!["replay", folder],
            vec![("STOREGATE_REPLAY_SEED", "-4")],
            "STOREGATE_REPLAY_SEED",
        ),
        // The gateway on replay:DIR refuses the same.
        (
            vec![],
            vec![
                ("STOREGATE_UPSTREAM_URL", &*format!("replay:{folder}")),
                ("STOREGATE_LISTEN", "127.0.0.1:0"),
                ("STOREGATE_REPLAY_FAULTS", "maintenance@2"),
            ],
            "STOREGATE_REPLAY_FAULTS",
        ),
    ] {
        let (status, stderr) = refused(&args, &env);
        assert_eq!(status, Some(2), "{env:?} {args:?}: {stderr}");
        assert!(stderr.contains(says), "{env:?} {args:?}: {stderr}");
    }

    std::fs::write(
        dir.join("get.orders.json"),
        "{\"storegate_cassette\": 1,\n \"interactions\": [\n  {\"request\": }\n]}",
    )
    .unwrap();
    let server = ReplayServer::start(&dir, &[], &[]);
    let r = reqwest::get(format!("{}/rest/default/V1/products/A", server.url))
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "the other files are still served");
    let state = get_json(&server.control("/")).await;
    let broken = state["broken"][0].as_str().unwrap();
    assert!(
        broken.contains("get.orders.json") && broken.contains("line 3 column"),
        "{broken}"
    );
    let log = server.log_with("get.orders.json");
    assert!(
        log.contains("get.orders.json") && log.contains("line 3"),
        "{log}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

async fn read(gateway: &Running, id: u32) -> (u16, Option<String>, Value) {
    let r = sent(
        reqwest::Client::new()
            .get(format!("{}/products/{id}", gateway.base_url()))
            .header("Accept", "application/json"),
    )
    .await;
    let status = r.status().as_u16();
    let cache = r
        .headers()
        .get("x-cache")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, cache, r.json().await.unwrap_or(Value::Null))
}

/// Mid-scenario, the control API puts the store in maintenance: the gateway in front serves
/// the read it has cached, stale, and answers an uncached one with its 5xx error tree;
/// cleared, fresh reads come back. No restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_maintenance_window_mid_scenario() {
    let dir = temp_dir("bench-maintenance");
    record_two_products(&dir).await;
    let server = ReplayServer::start(&dir, &[], &[]);
    let gateway = gateway_with_short_cache(&server.url, Recording::default()).await;

    let (status, cache, first) = read(&gateway, 1).await;
    assert_eq!((status, cache.as_deref()), (200, Some("MISS")), "{first}");

    let http = reqwest::Client::new();
    let r = sent(http.put(server.control("/faults")).body("maintenance")).await;
    assert_eq!(r.status(), 200);
    tokio::time::sleep(Duration::from_millis(1200)).await;

    let (status, cache, body) = read(&gateway, 1).await;
    assert_eq!((status, cache.as_deref()), (200, Some("STALE")), "{body}");
    assert_eq!(body, first);
    let (status, _, body) = read(&gateway, 2).await;
    assert!((500..600).contains(&status), "{status} {body}");
    assert_eq!(body["messages"]["error"][0]["code"], status, "{body}");
    let counts = get_json(&server.control("/counts")).await;
    assert!(
        counts["counts"]
            .as_object()
            .unwrap()
            .values()
            .any(|c| c["faulted"].as_u64() > Some(0)),
        "{counts}"
    );

    let r = http.delete(server.control("/faults")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let (status, cache, body) = read(&gateway, 1).await;
    assert_eq!((status, cache.as_deref()), (200, Some("MISS")), "{body}");
    assert_eq!(body, first);
    let (status, _, body) = read(&gateway, 2).await;
    assert_eq!(status, 200, "{body}");
    gateway.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// `STOREGATE_UPSTREAM_URL=replay:DIR` has the same latency and faults: the gateway's own
/// deadline cuts a slow answer, a fault becomes its error tree.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateways_own_replay_has_latency_and_faults() {
    let dir = temp_dir("bench-inprocess");
    record_two_products(&dir).await;
    let recording = Recording {
        replay_latency: Some("fixed:300ms".into()),
        replay_faults: Some("GET /V1/products/{}=php_fatal".into()),
        replay_seed: Some(5),
        ..Recording::default()
    };
    // Product 2's record comes through a PHP fatal error: a 200 whose body is not JSON.
    let gateway = gateway_with_short_cache(&format!("replay:{}", dir.display()), recording).await;
    let started = Instant::now();
    let (status, _, body) = read(&gateway, 2).await;
    assert!((500..600).contains(&status), "{status} {body}");
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
    gateway.stop().await;

    let recording = Recording {
        replay_latency: Some("fixed:300ms".into()),
        ..Recording::default()
    };
    let gateway = gateway_with_short_cache(&format!("replay:{}", dir.display()), recording).await;
    let started = Instant::now();
    let (status, _, body) = read(&gateway, 1).await;
    assert_eq!(status, 200, "{body}");
    assert!(started.elapsed() >= Duration::from_millis(300));
    gateway.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// OpenMage cassettes get the same bench: the store's failures in OpenMage's own form,
/// latency per endpoint, the control API's counts, on the paths `/api/rest/...`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openmage_cassettes_get_the_same_bench() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("tests/cassettes/openmage/binary");
    let server = ReplayServer::start(
        &dir,
        &[
            (
                "STOREGATE_REPLAY_LATENCY",
                "GET /api/rest/products/{}/store/{}=fixed:250ms",
            ),
            (
                "STOREGATE_REPLAY_FAULTS",
                "GET /api/rest/products/{}/websites=maintenance",
            ),
        ],
        &[],
    );
    let recorded = |file: &str| -> String {
        let cassette: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(file)).unwrap()).unwrap();
        let request = &cassette["interactions"][0]["request"];
        let mut url = format!("{}{}", server.url, request["path"].as_str().unwrap());
        if let Some(query) = request["query"].as_object() {
            let mut pairs: Vec<(String, String)> = Vec::new();
            for (name, value) in query {
                match value {
                    Value::Array(list) => pairs.extend(
                        list.iter()
                            .map(|v| (name.clone(), v.as_str().unwrap().to_owned())),
                    ),
                    other => pairs.push((name.clone(), other.as_str().unwrap().to_owned())),
                }
            }
            url.push('?');
            url.push_str(
                &form_urlencoded::Serializer::new(String::new())
                    .extend_pairs(pairs)
                    .finish(),
            );
        }
        url
    };
    let http = reqwest::Client::new();
    let started = Instant::now();
    let r = sent(
        http.get(recorded("get.api.rest.products.{}.store.{}.json"))
            .header("Accept", "application/json"),
    )
    .await;
    assert_eq!(r.status(), 200);
    assert!(started.elapsed() >= Duration::from_millis(250));
    let r = sent(http.get(recorded("get.api.rest.products.{}.websites.json"))).await;
    assert_eq!(r.status(), 503);
    let page = r.text().await.unwrap();
    assert!(
        page.contains("/errors/default/") && !page.contains("/pub/errors/"),
        "{page}"
    );

    let r = sent(
        http.put(server.control("/faults"))
            .body("GET /api/rest/products/{}/websites=oauth_timestamp_refused"),
    )
    .await;
    assert_eq!(r.status(), 200);
    let r = sent(
        http.get(recorded("get.api.rest.products.{}.websites.json"))
            .header("Accept", "application/xml"),
    )
    .await;
    assert_eq!(r.status(), 401);
    assert!(
        r.text()
            .await
            .unwrap()
            .contains("<message>oauth_problem=timestamp_refused</message>")
    );
    let counts = get_json(&server.control("/counts")).await;
    assert_eq!(
        counts["counts"]["GET /api/rest/products/{}/websites"]["faulted"], 2,
        "{counts}"
    );
    assert_eq!(
        counts["counts"]["GET /api/rest/products/{}/store/{}"]["answered"], 1,
        "{counts}"
    );
}
