//! One budget taken by many connections at once, across Redis, from a gateway served as the
//! binary serves it (worker threads, each with its own runtime and socket): bench row 9c of
//! issue 34, where a limit of a billion a minute refused most requests after two seconds.
//!
//! What broke: every request that found its worker's share empty while a lease was on its
//! way from Redis waited, and each of them, once the lease came, took a whole chunk (a
//! hundredth of the limit) and replaced the chunk the one before it had left in the
//! worker's slot. The replaced chunks had been counted in Redis and were never spent nor
//! given back: sixty-four connections cost a third of the limit at once.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use storegate_sandbox::{Sandbox, SandboxOptions};

use crate::common::gateway::{Setup, parts, start_sandbox};
use crate::redis_server::RedisServer;
use crate::{ADMIN_KEY, client_from, limited};

/// A gateway of two workers in front of the sandbox, counting `limits` in its own Redis.
struct Served {
    workers: storegate::Workers,
    redis: RedisServer,
    _sandbox: Sandbox,
}

impl Served {
    /// None without redis-server outside CI (the test skips, loudly).
    async fn start(limits: &str) -> Option<Served> {
        let redis = RedisServer::start().await?;
        storegate::backend::transport::install_crypto();
        let sandbox = start_sandbox(SandboxOptions::default()).await;
        let config = storegate::Config {
            workers: 2,
            redis_timeout: Duration::from_secs(2),
            cache_ttl: Duration::from_secs(600),
            ..limited(&redis, limits)
        };
        let setup = Setup {
            upstream_url: &sandbox.base_url(),
            upstream_token: sandbox.token(),
            admin_key: ADMIN_KEY,
            token_secret: b"limits-load-token-secret",
        };
        let parts = parts(&config, &setup);
        let workers = storegate::serve_workers(config, parts, 2).unwrap();
        let served = Served {
            workers,
            redis,
            _sandbox: sandbox,
        };
        // The product in the cache, so the reads below are cache hits, as the bench's are
        // (read from the address they come from: one budget in Redis, admitted once).
        let warm = client_from("127.0.0.1");
        let r = warm
            .get(served.url())
            .header("Accept", "application/json")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        Some(served)
    }

    fn origin(&self) -> String {
        format!("http://{}", self.workers.addr)
    }

    fn url(&self) -> String {
        format!("{}/products/1", self.workers.base_url())
    }

    /// What Redis counts in the windows of every budget now.
    async fn counted(&self) -> u64 {
        let client = redis::Client::open(self.redis.url()).unwrap();
        let mut conn = client.get_multiplexed_async_connection().await.unwrap();
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg("storegate:rl:*")
            .query_async(&mut conn)
            .await
            .unwrap();
        let mut total = 0;
        for key in keys {
            let buckets: BTreeMap<u64, u64> = redis::cmd("HGETALL")
                .arg(&key)
                .query_async(&mut conn)
                .await
                .unwrap();
            total += buckets.values().sum::<u64>();
        }
        total
    }
}

/// `connections` guests on one address, each reading the product over its own connection
/// as fast as it is answered for `time`, all starting at once (each opened its connection
/// before, with a probe no limit counts): how many answers of each status.
async fn hammer(origin: &str, url: &str, connections: usize, time: Duration) -> BTreeMap<u16, u64> {
    let ready = std::sync::Arc::new(tokio::sync::Barrier::new(connections));
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let (health, url, ready) = (format!("{origin}/healthz"), url.to_owned(), ready.clone());
        tasks.push(tokio::spawn(async move {
            let client = client_from("127.0.0.1");
            let probe = client.get(&health).send().await.unwrap();
            assert_eq!(probe.status(), 200);
            let _ = probe.bytes().await;
            ready.wait().await;
            let until = Instant::now() + time;
            let mut seen = BTreeMap::<u16, u64>::new();
            while Instant::now() < until {
                let r = client
                    .get(&url)
                    .header("Accept", "application/json")
                    .send()
                    .await
                    .unwrap();
                *seen.entry(r.status().as_u16()).or_default() += 1;
                let _ = r.bytes().await;
            }
            seen
        }));
    }
    let mut seen = BTreeMap::new();
    for task in tasks {
        for (status, n) in task.await.unwrap() {
            *seen.entry(status).or_default() += n;
        }
    }
    seen
}

/// Row 9c's setting: a limit no client reaches. Nothing is refused however many
/// connections start at once, and Redis counts what was admitted and what the gateway
/// holds for the client (a chunk per worker, a hundredth of the limit each, and at most a
/// lease, a fortieth), not a chunk per connection.
// Multi-threaded: the workers wait for the start's revocation load, which runs on this
// runtime while `serve_workers` blocks the test's thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_never_reached_refuses_nothing_however_many_connections() {
    let Some(served) = Served::start("guest=1000000000/60s").await else {
        return;
    };
    let seen = hammer(&served.origin(), &served.url(), 256, Duration::from_secs(3)).await;
    // The cache's warm-up read was admitted too.
    let admitted = seen.get(&200).copied().unwrap_or(0) + 1;
    assert_eq!(seen.keys().copied().collect::<Vec<_>>(), [200], "{seen:?}");
    let counted = served.counted().await;
    // Two workers' chunks, and two leases (one and a top-up) not given back yet.
    let held = 2 * 5_000_000 + 2 * 25_000_000;
    assert!(
        counted <= admitted + held,
        "Redis counts {counted} for {admitted} admitted (at most {held} more held)"
    );
    served.workers.stop().await;
}

/// The limit, and not a tenth less, for many connections sharing one address: each
/// admission Redis counts is spent (or given back), none lost when connections pile up
/// on a worker waiting for a lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_connections_at_once_get_their_limit_across_redis() {
    let Some(served) = Served::start("guest=2000/10s").await else {
        return;
    };
    // Well past the limit within the window (nothing leaves it in 3 s): every admission
    // the budget holds is taken.
    let seen = hammer(&served.origin(), &served.url(), 64, Duration::from_secs(3)).await;
    let (ok, refused) = (seen.get(&200).copied(), seen.get(&429).copied());
    let (ok, refused) = (ok.unwrap_or(0), refused.unwrap_or(0));
    assert_eq!(ok + refused, seen.values().sum::<u64>(), "{seen:?}");
    // The cache's warm-up read was one of them.
    let admitted = ok + 1;
    assert!(refused > 0, "the limit was not reached: {seen:?}");
    assert!(
        (1_800..=2_000).contains(&admitted),
        "{admitted} of a 2000/10s budget admitted: {seen:?}"
    );
    served.workers.stop().await;
}
