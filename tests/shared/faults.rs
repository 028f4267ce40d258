//! Redis failing under two instances (issue 32), black-box through HTTP:
//!
//! - a customer DELETE refused while Redis is down (503 naming Redis) has no effect, then or
//!   when Redis returns: the customer's token keeps working on both instances;
//! - after Redis resumes from a 15 s hang (SIGSTOP), during which writes were refused,
//!   writes succeed again within a second (no lease taken late by a refused write holds
//!   the record).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::Cluster;

const REDIS_DOWN: &str = "The shared state store (Redis) is unavailable. Try again later.";

fn messages(body: &str) -> Vec<String> {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["messages"]["error"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|e| e["message"].as_str().map(str::to_owned))
        .collect()
}

/// One command to the cluster's Redis, on a connection of its own.
async fn redis_query<T: ::redis::FromRedisValue>(c: &Cluster, cmd: &::redis::Cmd) -> T {
    let client = ::redis::Client::open(c.redis.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    cmd.query_async(&mut conn).await.unwrap()
}

fn address() -> Value {
    json!({"firstname": "V", "lastname": "C", "street": ["1 Main St"], "city": "Calder",
           "country_id": "US", "region": "MI", "postcode": "49628", "telephone": "555-0100"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delete_refused_while_redis_is_down_leaves_the_customers_tokens_working() {
    let Some(mut c) = Cluster::start(false).await else {
        return;
    };
    let (token, id) = c.customer_token(&c.a).await;
    let path = format!("/customers/{id}");
    for gw in [&c.a, &c.b] {
        assert_eq!(
            c.call(gw, "GET", &path, Some(&token), None).await.status,
            200
        );
    }
    c.redis.kill();
    c.until(Duration::from_secs(3), || async {
        c.ready(&c.a).await.1.contains(r#""redis":"down""#)
    })
    .await;
    let started = Instant::now();
    let r = c.admin(&c.a, "DELETE", &path, None).await;
    assert_eq!(r.status, 503, "{}", r.body);
    assert_eq!(
        messages(&r.body),
        vec![REDIS_DOWN.to_owned()],
        "names Redis"
    );
    assert_eq!(r.header("retry-after"), Some("1"));
    assert!(started.elapsed() < Duration::from_secs(2));
    // Refused: nothing happened, here or in Magento.
    let r = c.call(&c.a, "GET", &path, Some(&token), None).await;
    assert_eq!(
        r.status, 200,
        "the token works on the refusing instance: {}",
        r.body
    );

    c.redis.restart().await;
    for gw in [&c.a, &c.b] {
        c.until(Duration::from_secs(5), || async {
            c.ready(gw).await.1.contains(r#""redis":"up""#)
        })
        .await;
    }
    // Long enough for anything queued during the outage to have been published.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    for gw in [&c.a, &c.b] {
        let r = c.call(gw, "GET", &path, Some(&token), None).await;
        assert_eq!(r.status, 200, "signed out by a refused DELETE: {}", r.body);
    }
    assert_eq!(
        c.admin(&c.b, "GET", &path, None).await.status,
        200,
        "not deleted"
    );
    // Now the delete goes through, and signs the customer out on both.
    let r = c.admin(&c.b, "DELETE", &path, None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    for gw in [&c.a, &c.b] {
        c.until(Duration::from_secs(1), || async {
            c.call(gw, "GET", "/products", Some(&token), None)
                .await
                .status
                == 401
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_succeed_within_a_second_after_redis_resumes_from_a_fifteen_second_hang() {
    let Some(c) = Cluster::start(false).await else {
        return;
    };
    let (token, id) = c.customer_token(&c.b).await;
    let path = format!("/customers/{id}/addresses");
    let write = |gw| c.call(gw, "POST", &path, Some(&token), Some(address()));
    assert_eq!(write(&c.a).await.status, 200);
    // Redis hangs with its script cache empty, as a Redis restarted since its scripts were
    // loaded would: the releases queued during the hang must not need a loaded script
    // (they once did, so that a take from the hang's first seconds held the record for the
    // lease's 4 s after Redis resumed; this test caught it only when the first write's
    // release had not reached Redis before the hang).
    let lease = format!("storegate:lock:customer:{id}");
    c.until(Duration::from_secs(2), || async {
        redis_query::<i64>(&c, ::redis::cmd("EXISTS").arg(&lease)).await == 0
    })
    .await;
    assert_eq!(
        redis_query::<String>(&c, ::redis::cmd("SCRIPT").arg("FLUSH")).await,
        "OK"
    );

    c.redis.pause();
    let paused = Instant::now();
    // Writes during the hang are refused quickly, naming Redis; their lock requests wait
    // in Redis's socket and run when it resumes.
    let mut refused = 0;
    while paused.elapsed() < Duration::from_secs(15) {
        for gw in [&c.a, &c.b] {
            let started = Instant::now();
            let r = write(gw).await;
            assert_eq!(r.status, 503, "{}", r.body);
            assert_eq!(messages(&r.body), vec![REDIS_DOWN.to_owned()]);
            assert!(
                started.elapsed() < Duration::from_secs(2),
                "{:?}",
                started.elapsed()
            );
            refused += 1;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    c.redis.resume();
    let resumed = Instant::now();
    let mut first = None;
    while first.is_none() {
        let r = write(&c.a).await;
        if r.status == 200 {
            first = Some(resumed.elapsed());
        } else {
            assert_eq!(r.status, 503, "{}", r.body);
            // Well inside the issue's second: the first write after a resume takes a few ms.
            assert!(
                resumed.elapsed() < Duration::from_millis(500),
                "writes still refused {:?} after Redis resumed: {}",
                resumed.elapsed(),
                r.body
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    eprintln!(
        "{refused} writes refused during the hang; the first write after it succeeded {first:?} after Redis resumed"
    );
    assert!(first < Some(Duration::from_millis(500)), "{first:?}");
    // And every write after it, on both instances.
    for gw in [&c.a, &c.b, &c.a, &c.b] {
        let r = write(gw).await;
        assert_eq!(r.status, 200, "{}", r.body);
    }
    assert!(
        resumed.elapsed() < Duration::from_secs(2),
        "{:?}",
        resumed.elapsed()
    );
}
