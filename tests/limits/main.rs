//! Rate limits across a fleet (issue 34): gateways sharing one real `redis-server` (on a
//! free loopback port) in front of the sandbox. One budget per client over every instance
//! (two instances: 18-22 of 60 reads admitted at `guest=20/10s`; four: within 10 %),
//! others unaffected (another address, a Bearer customer, a signed consumer), served again
//! a window later; failed sign-ins counted fleet-wide; Redis killed: reads served, `/readyz`
//! and `/metrics` say so, and the fleet counts again within a second of Redis's return;
//! Redis hung (SIGSTOP): a read waits at most about its deadline, and the same on its return.

#[allow(dead_code)]
#[path = "../common/mod.rs"]
mod common;
#[path = "../shared/redis_server.rs"]
mod redis_server;
mod under_load;

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use storegate::Running;
use storegate_sandbox::{Sandbox, SandboxOptions};

use common::files::{DataDir, temp_dir};
use common::gateway::{Setup, start_gateway, start_sandbox};
use common::http::{Reply, get_json, metric_in, text_of};
use common::oauth_sign::{App, app_header, register_app};
use redis_server::RedisServer;

const ADMIN_KEY: &str = "limits-admin-key-0123456789";
const DEMO: (&str, &str) = (
    storegate_sandbox::DEMO_CUSTOMER_EMAIL,
    storegate_sandbox::DEMO_CUSTOMER_PASSWORD,
);

struct Fleet {
    gateways: Vec<Running>,
    _sandbox: Sandbox,
    redis: RedisServer,
    data_dir: PathBuf,
    _removed: DataDir,
}

/// A gateway's configuration on loopback counting `limits` in `redis`.
fn limited(redis: &RedisServer, limits: &str) -> storegate::Config {
    storegate::Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        upstream_timeout: Duration::from_secs(2),
        redis_url: Some(storegate::config::Secret::new(redis.url())),
        rate_limits: storegate::config::RateLimits::parse(limits).unwrap(),
        ..storegate::Config::default()
    }
}

impl Fleet {
    /// `n` gateways with `limits`, sharing Redis, the OAuth store's folder and the token
    /// secret (as instances behind one load balancer do). None without redis-server
    /// outside CI (the test skips, loudly).
    async fn start(n: usize, limits: &str) -> Option<Fleet> {
        let redis = RedisServer::start().await?;
        storegate::backend::transport::install_crypto();
        let sandbox = start_sandbox(SandboxOptions::default()).await;
        let data_dir = temp_dir("limits-tests");
        let mut gateways = Vec::new();
        for _ in 0..n {
            let config = storegate::Config {
                data_dir: data_dir.clone(),
                ..limited(&redis, limits)
            };
            let setup = Setup {
                upstream_url: &sandbox.base_url(),
                upstream_token: sandbox.token(),
                admin_key: ADMIN_KEY,
                token_secret: b"limits-fleet-token-secret",
            };
            gateways.push(start_gateway(config, setup).await);
        }
        Some(Fleet {
            gateways,
            _sandbox: sandbox,
            redis,
            _removed: DataDir(data_dir.clone()),
            data_dir,
        })
    }

    fn origin(&self, i: usize) -> String {
        format!("http://{}", self.gateways[i % self.gateways.len()].addr)
    }

    /// Product 1 on instance `i` (in turn).
    fn product(&self, i: usize) -> String {
        format!("{}/api/rest/products/1", self.origin(i))
    }

    /// A guest read of product 1 by `client` on instance `i`.
    async fn read(&self, client: &reqwest::Client, i: usize) -> Reply {
        get(client, &self.product(i), &[]).await
    }

    /// The statuses of seven reads of instance 0 by a new client from `address`: the
    /// instance alone holding it to `guest=5/10s`.
    async fn seven_reads_alone(&self, address: &str) -> Vec<u16> {
        let alone = client_from(address);
        let mut seen = Vec::new();
        for _ in 0..7 {
            seen.push(self.read(&alone, 0).await.status);
        }
        seen
    }

    /// Redis back: both instances count with it again within a second, and a new client
    /// from `address` gets five reads of twelve, wherever it asks.
    async fn counts_as_one_again(&self, address: &str) {
        let back = Instant::now();
        for i in 0..2 {
            self.wait_for(i, "fleet", Duration::from_secs(3)).await;
        }
        assert!(
            back.elapsed() < Duration::from_secs(1),
            "back after {:?}",
            back.elapsed()
        );
        let fresh = client_from(address);
        let replies = reads(self, &fresh, 12, Duration::from_millis(300)).await;
        assert_five_admitted(&replies);
    }

    /// The fleet's Redis reached by its gateways again (its health loop pings every
    /// second), waited for at most `within`.
    async fn wait_for(&self, i: usize, state: &str, within: Duration) -> Duration {
        let start = Instant::now();
        loop {
            let ready = ready(&self.origin(i)).await;
            if ready["rate_limits"] == state {
                return start.elapsed();
            }
            assert!(
                start.elapsed() < within,
                "rate limits still {ready} after {within:?}"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

fn client_from(address: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(address.parse::<IpAddr>().ok())
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

async fn get(client: &reqwest::Client, url: &str, headers: &[(&str, &str)]) -> Reply {
    let mut request = client.get(url).header("Accept", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    Reply::read(request.send().await.unwrap()).await
}

async fn ready(origin: &str) -> Value {
    get_json(format!("{origin}/readyz")).await
}

async fn metric(origin: &str, series: &str) -> Option<i64> {
    let page = text_of(reqwest::Client::new().get(format!("{origin}/metrics"))).await;
    metric_in(&page, series)
}

/// Five of `replies` admitted (the statuses shown when not).
#[track_caller]
fn assert_five_admitted(replies: &[Reply]) {
    let ok = replies.iter().filter(|r| r.status == 200).count();
    assert_eq!(
        ok,
        5,
        "{:?}",
        replies.iter().map(|r| r.status).collect::<Vec<_>>()
    );
}

/// A guest sign-in as the demo customer with `password`, on instance `i`: its status.
async fn sign_in(fleet: &Fleet, client: &reqwest::Client, i: usize, password: &str) -> u16 {
    let r = client
        .post(format!("{}/api/rest/auth/token", fleet.origin(i)))
        .header("Accept", "application/json")
        .json(&json!({"username": DEMO.0, "password": password}))
        .send()
        .await
        .unwrap();
    r.status().as_u16()
}

/// `count` guest reads of one product from `client`, spread over the fleet's instances in
/// turn and over `spread`, all sent at their time whatever the others' answers.
async fn reads(
    fleet: &Fleet,
    client: &reqwest::Client,
    count: usize,
    spread: Duration,
) -> Vec<Reply> {
    let start = tokio::time::Instant::now();
    let mut tasks = Vec::new();
    for i in 0..count {
        let url = fleet.product(i);
        let client = client.clone();
        let at = start + spread * i as u32 / count as u32;
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep_until(at).await;
            get(&client, &url, &[]).await
        }));
    }
    let mut replies = Vec::new();
    for task in tasks {
        replies.push(task.await.unwrap());
    }
    replies
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_instances_hold_one_budget_per_client() {
    let Some(fleet) = Fleet::start(2, "guest=20/10s,customer=600/60s,consumer=6000/60s").await
    else {
        return;
    };
    // Warm both instances' caches (from another address), so the reads below are the
    // fast path of cache hits as much as misses.
    let warm = client_from("127.0.0.9");
    for i in 0..2 {
        assert_eq!(fleet.read(&warm, i).await.status, 200);
    }
    let guest = client_from("127.0.0.1");
    // Sent over 1.5 s, each at its time whatever the answers before it (the count is what
    // is checked: a loaded machine answering late changes nothing within the window).
    let replies = reads(&fleet, &guest, 60, Duration::from_millis(1500)).await;
    let ok = replies.iter().filter(|r| r.status == 200).count();
    assert!((18..=22).contains(&ok), "{ok} of 60 admitted");
    for (i, reply) in replies.iter().enumerate() {
        if reply.status == 200 {
            assert!(
                reply.header("ratelimit").is_some(),
                "read {i}: {:?}",
                reply.headers
            );
            continue;
        }
        assert_eq!(reply.status, 429, "read {i}: {}", reply.body);
        let body: Value = serde_json::from_str(&reply.body).unwrap();
        assert_eq!(body["messages"]["error"][0]["code"], 429);
        assert!(reply.header("retry-after").unwrap().parse::<u64>().unwrap() >= 1);
        assert!(
            reply
                .header("ratelimit-policy")
                .unwrap()
                .starts_with("\"guest-catalog\";q=20;w=10;pk=:")
        );
        assert!(reply.header("ratelimit").unwrap().contains(";r=0;"));
        assert!(reply.header("x-request-id").is_some());
    }
    // Both instances refused: the budget is the fleet's, not each one's.
    for i in 0..2 {
        let refused = replies
            .iter()
            .skip(i)
            .step_by(2)
            .filter(|r| r.status == 429)
            .count();
        assert!(refused > 0, "instance {i} refused nothing");
    }

    // Others are not affected: another address, a Bearer customer, a signed consumer.
    let other = client_from("127.0.0.2");
    let token = fleet.gateways[0].app.auth.tokens().issue(1).token;
    let bearer = format!("Bearer {token}");
    let app = signed_app(&fleet);
    for i in 0..2 {
        let url = fleet.product(i);
        assert_eq!(get(&other, &url, &[]).await.status, 200);
        let r = get(&guest, &url, &[("Authorization", &bearer)]).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let header = app_header("GET", &url, &app);
        let r = get(&guest, &url, &[("Authorization", &header)]).await;
        assert_eq!(r.status, 200, "{}", r.body);
    }

    // A window later, the address is served again.
    tokio::time::sleep(Duration::from_secs(10)).await;
    for i in 0..2 {
        let r = fleet.read(&guest, i).await;
        assert_eq!(r.status, 200, "{}", r.body);
    }
    let refused: i64 = {
        let mut sum = 0;
        for i in 0..2 {
            sum += metric(
                &fleet.origin(i),
                "storegate_rate_limited_total{class=\"catalog\",client=\"guest\"}",
            )
            .await
            .unwrap();
        }
        sum
    };
    assert_eq!(refused as usize, 60 - ok);
}

/// A consumer and customer 1's access token, in the store the fleet shares.
fn signed_app(fleet: &Fleet) -> App {
    register_app(
        &fleet.data_dir,
        storegate::auth::oauth::store::Owner::Customer(1),
        None,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn four_instances_stay_within_ten_percent() {
    let Some(fleet) = Fleet::start(4, "guest=100/10s").await else {
        return;
    };
    let guest = client_from("127.0.0.1");
    let replies = reads(&fleet, &guest, 300, Duration::from_millis(1500)).await;
    let ok = replies.iter().filter(|r| r.status == 200).count();
    assert!((90..=110).contains(&ok), "{ok} of 300 admitted at 100/10s");
    for r in &replies {
        assert!(matches!(r.status, 200 | 429), "{}: {}", r.status, r.body);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_killed_reads_are_served_and_the_fleet_counts_again_when_it_returns() {
    let Some(mut fleet) = Fleet::start(2, "guest=5/10s").await else {
        return;
    };
    let guest = client_from("127.0.0.1");
    let replies = reads(&fleet, &guest, 10, Duration::from_millis(200)).await;
    assert_five_admitted(&replies);
    for i in 0..2 {
        assert_eq!(ready(&fleet.origin(i)).await["rate_limits"], "fleet");
        assert_eq!(
            metric(&fleet.origin(i), "storegate_rate_limit_fleet").await,
            Some(1)
        );
    }

    fleet.redis.kill();
    // Served at once: a client under its limit (its first read finds Redis gone and counts
    // here instead) ...
    let newcomer = client_from("127.0.0.4");
    for i in 0..2 {
        let r = fleet.read(&newcomer, i).await;
        assert_eq!(r.status, 200, "with Redis down: {}", r.body);
    }
    for i in 0..2 {
        let took = fleet.wait_for(i, "degraded", Duration::from_secs(3)).await;
        assert!(took < Duration::from_secs(1), "noticed after {took:?}");
        assert_eq!(
            metric(&fleet.origin(i), "storegate_rate_limit_fleet").await,
            Some(0)
        );
        assert!(
            metric(&fleet.origin(i), "storegate_rate_limit_fallbacks_total")
                .await
                .unwrap()
                > 0
        );
    }
    // ... and the address the fleet refused: each instance counts alone, from zero.
    for i in 0..4 {
        let r = fleet.read(&guest, i).await;
        assert_eq!(r.status, 200, "with Redis down: {}", r.body);
    }
    // Still limited, by each instance alone.
    let replies = fleet.seven_reads_alone("127.0.0.5").await;
    assert_eq!(replies, [200, 200, 200, 200, 200, 429, 429]);

    fleet.redis.restart().await;
    // One budget across the fleet again: a new address gets five, wherever it asks.
    fleet.counts_as_one_again("127.0.0.6").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_hung_reads_wait_at_most_its_deadline_and_the_fleet_counts_again_after() {
    let Some(fleet) = Fleet::start(2, "guest=5/10s").await else {
        return;
    };
    // Warm the caches, so a read's time is the limits' and not the store's.
    let warm = client_from("127.0.0.9");
    for i in 0..2 {
        assert_eq!(fleet.read(&warm, i).await.status, 200);
    }
    // Hung (SIGSTOP): connections open, nothing answered. New clients' first reads ask
    // Redis and are served once its deadline (STOREGATE_REDIS_TIMEOUT_MS, 250 ms) passed;
    // once an instance knows, it asks no more.
    fleet.redis.pause();
    let mut slowest = Duration::ZERO;
    for (n, address) in ["127.0.0.21", "127.0.0.22", "127.0.0.23"]
        .iter()
        .enumerate()
    {
        let client = client_from(address);
        for i in 0..2 {
            let asked = Instant::now();
            let r = fleet.read(&client, i).await;
            let took = asked.elapsed();
            assert_eq!(r.status, 200, "read {n} on {i} with Redis hung: {}", r.body);
            slowest = slowest.max(took);
        }
    }
    // 250 ms and a little; a loaded machine's scheduling beside it.
    assert!(
        slowest < Duration::from_millis(1500),
        "a read waited {slowest:?}"
    );
    for i in 0..2 {
        fleet.wait_for(i, "degraded", Duration::from_secs(3)).await;
    }
    // Still held to the limit, by each instance alone.
    let seen = fleet.seven_reads_alone("127.0.0.24").await;
    assert_eq!(seen, [200, 200, 200, 200, 200, 429, 429]);

    fleet.redis.resume();
    fleet.counts_as_one_again("127.0.0.25").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn failed_sign_ins_count_across_the_fleet() {
    let Some(fleet) = Fleet::start(2, "").await else {
        return;
    };
    let client = client_from("127.0.0.1");
    let mut seen = Vec::new();
    for i in 0..12 {
        seen.push(sign_in(&fleet, &client, i, "not-the-password").await);
    }
    assert_eq!(&seen[..10], [401; 10], "{seen:?}");
    assert_eq!(&seen[10..], [429, 429]);
    // The right password from another address is held too: the username's count is the
    // fleet's.
    let other = client_from("127.0.0.7");
    assert_eq!(sign_in(&fleet, &other, 1, DEMO.1).await, 429);
}
