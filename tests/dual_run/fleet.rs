//! With Redis, the counts are the fleet's: any instance's report covers every instance, and
//! a new count on one starts it for all. And a shared second-level cache never serves one
//! back end's records as another's.

// Shared with tests/shared, which uses all of it (pausing Redis, for one).
#[allow(dead_code)]
#[path = "../shared/redis_server.rs"]
mod redis_server;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use storegate::Running;

use crate::common::http::sent;
use crate::harness::{self, ADMIN_KEY, change_product, count, entry};

async fn report(http: &reqwest::Client, gateway: &Running) -> Value {
    crate::common::http::json_of(
        http.get(format!("{}/shadow/report", gateway.base_url()))
            .bearer_auth(ADMIN_KEY)
            .header("Accept", "application/json"),
    )
    .await
}

async fn read(http: &reqwest::Client, gateway: &Running, path: &str) -> Value {
    crate::common::http::json_of(
        http.get(format!("{}{path}", gateway.base_url()))
            .header("Accept", "application/json"),
    )
    .await
}

#[tokio::test]
async fn any_instances_report_covers_the_fleet() {
    let Some(redis) = redis_server::RedisServer::start().await else {
        return;
    };
    let serving = harness::sandbox(Duration::ZERO).await;
    let candidate = harness::sandbox(Duration::ZERO).await;
    change_product(&candidate, "24-MB01", json!({"name": "Other Bag"})).await;
    let gateway = || {
        let mut config = harness::config();
        config.redis_url = Some(storegate::config::Secret::new(redis.url()));
        config.cache_ttl = Duration::ZERO;
        config.shadow = Some(harness::shadow_of(&candidate.base_url(), candidate.token()));
        harness::gateway(&serving, config)
    };
    let (a, b) = (gateway().await, gateway().await);
    let http = reqwest::Client::new();
    for _ in 0..3 {
        read(&http, &a, "/products/1").await;
    }
    for _ in 0..2 {
        read(&http, &b, "/products/1").await;
    }
    let start = Instant::now();
    loop {
        let fleet = report(&http, &a).await;
        let done = fleet["routes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["route"] == "GET /products/:id")
            .is_some_and(|e| count(e, "compared") == 5 && count(e, "pending") == 0);
        if done {
            assert_eq!(fleet["counts"], "fleet");
            let e = entry(&fleet, "GET /products/:id", "guest");
            assert_eq!(count(e, "differed"), 5, "{e:#}");
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "{fleet:#}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The other instance's report says the same.
    let from_b = report(&http, &b).await;
    assert_eq!(
        count(entry(&from_b, "GET /products/:id", "guest"), "compared"),
        5
    );
    // A new count started on B is A's new count too.
    let r = sent(
        http.delete(format!("{}/shadow/report", b.base_url()))
            .bearer_auth(ADMIN_KEY),
    )
    .await;
    assert_eq!(r.status(), 200);
    let fresh = report(&http, &a).await;
    assert!(fresh["routes"].as_array().unwrap().is_empty(), "{fresh:#}");
}

#[tokio::test]
async fn the_shared_cache_never_serves_one_back_ends_records_as_anothers() {
    let Some(redis) = redis_server::RedisServer::start().await else {
        return;
    };
    let (old, new) = (
        harness::sandbox(Duration::ZERO).await,
        harness::sandbox(Duration::ZERO).await,
    );
    change_product(&new, "24-MB01", json!({"name": "Bag on the new store"})).await;
    let config_for = |store: &storegate_sandbox::Sandbox| {
        let mut config = harness::config();
        config.redis_url = Some(storegate::config::Secret::new(redis.url()));
        config.shared_cache = true;
        // The store as configured (the second level's scope is the configured back end).
        config.upstream = Some(storegate::config::Upstream {
            url: store.base_url(),
            token: storegate::config::Secret::new(store.token()),
            oauth: None,
        });
        config
    };
    let http = reqwest::Client::new();
    // The fleet on the old store fills the shared cache...
    let before = harness::gateway_plain(&old, config_for(&old)).await;
    assert_eq!(
        read(&http, &before, "/products/1").await["name"],
        "Joust Duffle Bag"
    );
    // ...then is pointed at the new one (same Redis): the new store's record, not the
    // old one's from Redis.
    let after = harness::gateway_plain(&new, config_for(&new)).await;
    assert_eq!(
        read(&http, &after, "/products/1").await["name"],
        "Bag on the new store"
    );
}
