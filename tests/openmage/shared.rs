//! Two gateways over one OpenMage store, sharing Redis and the second-level cache
//! (`STOREGATE_SHARED_CACHE=1`), as a fleet runs: what one fetched from the store the other
//! serves without asking the store again; a write through one is read fresh through the
//! other within a second; a purge sent to one empties both.
//!
//! Each gateway has its own cassette folder (`shared-a`, `shared-b`): in replay, a call the
//! other gateway should not have made has no recorded answer and fails. Recorded from the
//! seeded store; product 1's name is changed and put back.

use std::time::{Duration, Instant};

use serde_json::json;

use super::redis_server::RedisServer;
use super::*;
use crate::common::http::sent;

const ADMIN_KEY: &str = "openmage-test-admin-key-0123456789";

/// The store calls a gateway made for products, from its metrics.
async fn product_calls(stack: &Stack) -> u64 {
    let text = stack.ops("/metrics").await.body;
    text.lines()
        .filter(|l| {
            l.starts_with("storegate_upstream_call_duration_seconds_count{")
                && l.contains("endpoint=\"/api/rest/products")
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

async fn name(stack: &Stack) -> String {
    let reply = stack.get(Who::Guest, "/products/1").await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.json()["name"].as_str().unwrap_or_default().to_owned()
}

async fn until_name(stack: &Stack, wanted: &str) -> Duration {
    let started = Instant::now();
    loop {
        if name(stack).await == wanted {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{wanted:?} not read within a second"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn rename(stack: &Stack, to: &str) {
    let url = stack.url("/products/1");
    let (token, secret) = Who::Admin.token().unwrap();
    let signer = Signer::new(&consumer_key(), &consumer_secret()).token(&token, &secret);
    let reply = sent(
        stack
            .http
            .put(&url)
            .header("Accept", "application/json")
            .header("Authorization", signer.header("PUT", &url))
            .json(&json!({ "name": to })),
    )
    .await;
    assert_eq!(reply.status(), 200, "{}", reply.text().await.unwrap());
}

#[tokio::test]
async fn two_gateways_share_one_fetch_a_write_and_a_purge() {
    let Some(redis) = RedisServer::start().await else {
        eprintln!("skipped: no redis-server on this machine");
        return;
    };
    let vars = [
        ("STOREGATE_REDIS_URL", redis.url()),
        ("STOREGATE_SHARED_CACHE", "1".to_owned()),
    ];
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let a = Stack::start_alone_with("shared-a", &vars).await;
    let b = Stack::start_beside("shared-b", &vars).await;
    for stack in [&a, &b] {
        let started = Instant::now();
        loop {
            let ready = stack.ops("/readyz").await;
            if ready.body.contains(r#""redis":"up""#) {
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(5), "{}", ready.body);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    // A fetches product 1 from the store; B, cold, serves it from the shared level.
    assert_eq!(name(&a).await, "Test Product One");
    assert!(product_calls(&a).await > 0);
    // (B's start read the product index, ids and SKUs: not product 1's record.)
    let before = product_calls(&b).await;
    let first = b.get(Who::Guest, "/products/1").await;
    assert_eq!(
        first.header("x-cache"),
        Some("MISS"),
        "B's own cache was cold"
    );
    assert_eq!(first.json()["name"], "Test Product One");
    assert_eq!(
        product_calls(&b).await,
        before,
        "B asked the store for product 1"
    );

    // A write through A reaches B within a second.
    assert_eq!(
        b.get(Who::Guest, "/products/1").await.header("x-cache"),
        Some("HIT")
    );
    rename(&a, "Renamed through A").await;
    let took = until_name(&b, "Renamed through A").await;
    eprintln!("the write reached B in {took:?}");

    // A purge of everything, sent to A, empties B too: B asks the store again.
    assert_eq!(
        b.get(Who::Guest, "/products/1").await.header("x-cache"),
        Some("HIT")
    );
    let before = product_calls(&b).await;
    let purged = sent(
        b.http
            .post(a.url("/cache/purge"))
            .header("Accept", "application/json")
            .bearer_auth(ADMIN_KEY)
            .json(&json!({"all": true})),
    )
    .await;
    assert_eq!(purged.status(), 200);
    let started = Instant::now();
    loop {
        let reply = b.get(Who::Guest, "/products/1").await;
        if reply.header("x-cache") == Some("MISS") {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "B still holds it"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        product_calls(&b).await > before,
        "B fetched again after the purge"
    );

    rename(&a, "Test Product One").await;
    b.stop().await;
    a.stop().await;
}
