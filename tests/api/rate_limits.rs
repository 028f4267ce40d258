//! Per-client rate limits on one instance (`STOREGATE_RATE_LIMITS`, docs/limits.md),
//! through HTTP in front of the sandbox: the 429 and its headers in both formats, the
//! `RateLimit` field on answers under the limit (cache hits and misses), who counts as
//! which client (addresses, `X-Forwarded-For` believed only from a trusted proxy, customers,
//! admin keys, signed consumers and their own limits), route classes, shadow mode, and the
//! limits off costing nothing. The fleet (Redis) is `tests/limits`.

use std::net::IpAddr;

use serde_json::Value;

use crate::common::http::metric_in;
use crate::common::oauth_sign::{App, app_header, register_app};
use crate::helpers::{ADMIN_KEY, Reply, temp_dir};
use crate::sandboxed::OnSandbox;

/// A client of the gateway from `from` (a loopback address: every 127.x reaches it).
struct From {
    http: reqwest::Client,
}

impl From {
    fn address(address: &str) -> From {
        From {
            http: reqwest::Client::builder()
                .local_address(address.parse::<IpAddr>().ok())
                .build()
                .unwrap(),
        }
    }

    /// Product 1, with `headers`.
    async fn product(&self, gw: &OnSandbox, headers: &[(&str, &str)]) -> Reply {
        self.get(gw, "/products/1", headers).await
    }

    async fn get(&self, gw: &OnSandbox, path: &str, headers: &[(&str, &str)]) -> Reply {
        let mut builder = self.http.get(gw.url(path));
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        if !headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("accept"))
        {
            builder = builder.header("Accept", "application/json");
        }
        gw.send(builder).await
    }
}

async fn gateway(limits: &str, tweak: impl FnOnce(&mut storegate::Config)) -> OnSandbox {
    let limits = storegate::config::RateLimits::parse(limits).unwrap();
    OnSandbox::start_with(|c| {
        c.rate_limits = limits;
        c.data_dir = temp_dir("rate-limits");
        tweak(c);
    })
    .await
}

/// `storegate_<name>{labels}` from `/metrics`, 0 when absent.
async fn metric(gw: &OnSandbox, series: &str) -> u64 {
    metric_in(&gw.metrics().await, series).unwrap_or(0)
}

/// `storegate_rate_limited_total` (or its `_shadow_` twin when `shadow`) of `class` and
/// `client`.
async fn limited(gw: &OnSandbox, shadow: bool, class: &str, client: &str) -> u64 {
    let name = if shadow {
        "rate_limited_shadow"
    } else {
        "rate_limited"
    };
    let series = format!("storegate_{name}_total{{class=\"{class}\",client=\"{client}\"}}");
    metric(gw, &series).await
}

fn statuses(replies: &[Reply]) -> Vec<u16> {
    replies.iter().map(|r| r.status).collect()
}

/// The `r` of a `RateLimit` field.
fn remaining(reply: &Reply) -> u64 {
    let value = reply.header("ratelimit").expect("a RateLimit field");
    value
        .split(';')
        .find_map(|p| p.strip_prefix("r="))
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("no r= in {value}"))
}

#[tokio::test]
async fn past_the_limit_a_429_with_its_headers_in_the_callers_format() {
    let gw = gateway("guest=3/10s", |_| {}).await;
    let guest = From::address("127.0.0.1");
    let mut replies = Vec::new();
    for _ in 0..3 {
        replies.push(guest.product(&gw, &[]).await);
    }
    assert_eq!(statuses(&replies), [200, 200, 200]);
    // Under the limit every answer says what is left, the miss and the two cache hits.
    assert_eq!(replies.iter().map(remaining).collect::<Vec<_>>(), [2, 1, 0]);
    assert!(
        replies[1]
            .header("cache-status")
            .is_some_and(|s| s.contains("hit")),
        "{:?}",
        replies[1].headers
    );
    for reply in &replies {
        // The policy's name and partition key, the same on every answer; its numbers
        // (`RateLimit-Policy`) on the 429.
        let current = reply.header("ratelimit").unwrap();
        assert!(current.starts_with("\"guest-catalog\";r="), "{current}");
        assert_eq!(
            current.rsplit_once(";pk=").unwrap().1,
            replies[0]
                .header("ratelimit")
                .unwrap()
                .rsplit_once(";pk=")
                .unwrap()
                .1
        );
        assert_eq!(reply.headers.get_all("ratelimit").iter().count(), 1);
    }
    let json = guest.product(&gw, &[]).await;
    assert_eq!(json.status, 429);
    assert_eq!(json.json()["messages"]["error"][0]["code"], 429);
    let message = json.messages()[0].clone();
    assert!(
        message.starts_with("Too many requests. Try again in "),
        "{message}"
    );
    let retry: u64 = json.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=11).contains(&retry), "{retry}");
    let policy = json.header("ratelimit-policy").unwrap();
    assert!(
        policy.starts_with("\"guest-catalog\";q=3;w=10;pk=:"),
        "{policy}"
    );
    let current = json.header("ratelimit").unwrap();
    assert!(current.starts_with("\"guest-catalog\";r=0;t="), "{current}");
    // The partition key is a digest: never the address.
    assert!(!policy.contains("127.0.0.1") && !current.contains("127.0.0.1"));
    assert!(json.header("x-request-id").is_some());
    assert!(json.header("content-type").unwrap().contains("json"));
    // The same refusal in XML, for a read never cached (the miss path refuses too).
    let xml = guest
        .get(&gw, "/products/2", &[("Accept", "application/xml")])
        .await;
    assert_eq!(xml.status, 429);
    assert!(xml.header("content-type").unwrap().contains("xml"));
    assert!(
        xml.body.contains("<code>429</code>") && xml.body.contains("Too many requests."),
        "{}",
        xml.body
    );
    assert!(xml.header("retry-after").is_some() && xml.header("ratelimit").is_some());
    assert_eq!(limited(&gw, false, "catalog", "guest").await, 2);
}

#[tokio::test]
async fn each_client_has_its_own_budget() {
    let gw = gateway("guest=2/10s,customer=4/10s,admin=2/10s", |c| {
        c.trusted_proxies = vec!["127.0.0.9/32".parse().unwrap()]
    })
    .await;
    let guest = From::address("127.0.0.1");
    for _ in 0..2 {
        assert_eq!(guest.product(&gw, &[]).await.status, 200);
    }
    assert_eq!(guest.product(&gw, &[]).await.status, 429);
    // A forged X-Forwarded-For from a peer that is not a trusted proxy changes nothing.
    let forged = guest
        .product(&gw, &[("X-Forwarded-For", "203.0.113.50")])
        .await;
    assert_eq!(forged.status, 429);
    // Another address has its own budget.
    let other = From::address("127.0.0.2");
    assert_eq!(other.product(&gw, &[]).await.status, 200);
    // From the trusted proxy, the forwarded address is the client: one budget each.
    let proxy = From::address("127.0.0.9");
    for _ in 0..2 {
        let r = proxy
            .product(&gw, &[("X-Forwarded-For", "203.0.113.7")])
            .await;
        assert_eq!(r.status, 200);
    }
    let r = proxy
        .product(&gw, &[("X-Forwarded-For", "203.0.113.7")])
        .await;
    assert_eq!(r.status, 429);
    let r = proxy
        .product(&gw, &[("X-Forwarded-For", "203.0.113.8")])
        .await;
    assert_eq!(r.status, 200);
    // A customer from the exhausted address: their own budget, at their own rate.
    let token = gw.running.app.auth.tokens().issue(1).token;
    let bearer = format!("Bearer {token}");
    for _ in 0..4 {
        let r = guest.product(&gw, &[("Authorization", &bearer)]).await;
        assert_eq!(r.status, 200);
        assert!(
            r.header("ratelimit")
                .unwrap()
                .starts_with("\"customer-catalog\";r=")
        );
    }
    let r = guest.product(&gw, &[("Authorization", &bearer)]).await;
    assert_eq!(r.status, 429);
    // Its account reads are another budget.
    let r = guest
        .get(&gw, "/customers/1", &[("Authorization", &bearer)])
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    // Admin keys are limited per key; a token never shows in the headers.
    let admin = format!("Bearer {ADMIN_KEY}");
    for _ in 0..2 {
        let r = guest.product(&gw, &[("Authorization", &admin)]).await;
        assert_eq!(r.status, 200);
        assert!(!r.header("ratelimit").unwrap().contains(ADMIN_KEY));
    }
    let r = guest.product(&gw, &[("Authorization", &admin)]).await;
    assert_eq!(r.status, 429);
    assert!(!r.body.contains(ADMIN_KEY) && !r.body.contains(&token));
}

#[tokio::test]
async fn writes_have_their_own_class_and_admin_off_means_off() {
    let gw = gateway("guest=100/10s,admin=off,writes=2/10s", |_| {}).await;
    let guest = From::address("127.0.0.1");
    let post = || {
        gw.http
            .post(gw.url("/auth/token"))
            .header("Accept", "application/json")
            .header("Content-Type", "application/json")
            .body("{}")
    };
    // Refused for their body (400), and counted as writes all the same.
    assert_eq!(gw.send(post()).await.status, 400);
    assert_eq!(gw.send(post()).await.status, 400);
    let third = gw.send(post()).await;
    assert_eq!(third.status, 429, "{}", third.body);
    assert!(
        third
            .header("ratelimit-policy")
            .unwrap()
            .starts_with("\"guest-writes\";q=2")
    );
    // Reads are another class.
    assert_eq!(guest.product(&gw, &[]).await.status, 200);
    // `admin=off`: an admin key is not limited, not even by `writes=`.
    let admin = format!("Bearer {ADMIN_KEY}");
    for _ in 0..4 {
        let r = guest.product(&gw, &[("Authorization", &admin)]).await;
        assert_eq!(r.status, 200);
        assert!(r.header("ratelimit").is_none());
    }
    assert_eq!(limited(&gw, false, "writes", "guest").await, 1);
}

#[tokio::test]
async fn shadow_mode_counts_what_it_would_refuse_and_serves_it() {
    let gw = gateway("guest=2/10s", |c| {
        c.rate_limit_mode = storegate::config::RateLimitMode::Shadow;
    })
    .await;
    let guest = From::address("127.0.0.1");
    for _ in 0..6 {
        let r = guest.product(&gw, &[]).await;
        assert_eq!(r.status, 200);
        assert!(r.header("ratelimit").is_none());
    }
    assert_eq!(limited(&gw, true, "catalog", "guest").await, 4);
    assert_eq!(limited(&gw, false, "catalog", "guest").await, 0);
}

#[tokio::test]
async fn unset_nothing_is_limited_nor_said() {
    let gw = gateway("", |_| {}).await;
    let guest = From::address("127.0.0.1");
    for _ in 0..30 {
        let r = guest.product(&gw, &[]).await;
        assert_eq!(r.status, 200);
        assert!(r.header("ratelimit").is_none() && r.header("ratelimit-policy").is_none());
    }
    assert_eq!(metric(&gw, "storegate_rate_limit_pools").await, 0);
}

/// A consumer and an access token of customer 1, in the gateway's store.
fn signed_app(gw: &OnSandbox, own: Option<&str>) -> App {
    register_app(
        &gw.running.app.config.data_dir,
        storegate::auth::oauth::store::Owner::Customer(1),
        own,
    )
}

async fn signed_get(gw: &OnSandbox, app: &App) -> Reply {
    let url = gw.url("/products/1");
    let header = app_header("GET", &url, app);
    gw.send(
        gw.http
            .get(url)
            .header("Authorization", header)
            .header("Accept", "application/json"),
    )
    .await
}

#[tokio::test]
async fn a_signed_consumer_spends_its_own_budget_at_its_own_rate() {
    let gw = gateway("guest=1/10s,consumer=100/10s,customer=100/10s", |_| {}).await;
    let guest = From::address("127.0.0.1");
    assert_eq!(guest.product(&gw, &[]).await.status, 200);
    assert_eq!(guest.product(&gw, &[]).await.status, 429);
    // The exhausted guest's address does not touch a signed app's calls.
    let plain = signed_app(&gw, None);
    let r = signed_get(&gw, &plain).await;
    assert_eq!(r.status, 200, "{}", r.body);
    // Two budgets, two fields: the app's and the customer's.
    let fields: Vec<&str> = r
        .headers
        .get_all("ratelimit")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    assert!(
        fields
            .iter()
            .any(|p| p.starts_with("\"consumer-catalog\";r=99;"))
            && fields
                .iter()
                .any(|p| p.starts_with("\"customer-catalog\";r=99;")),
        "{fields:?}"
    );
    // An app with its own limit (`storegate oauth consumer update --rate-limit 3/10s`).
    let own = signed_app(&gw, Some("3/10s"));
    let mut seen = Vec::new();
    for _ in 0..4 {
        seen.push(signed_get(&gw, &own).await.status);
    }
    assert_eq!(seen, [200, 200, 200, 429]);
    // The other app is not affected by it.
    assert_eq!(signed_get(&gw, &plain).await.status, 200);
    assert_eq!(limited(&gw, false, "catalog", "consumer").await, 1);
}

#[tokio::test]
async fn the_operational_endpoints_and_the_reference_are_never_limited() {
    let gw = gateway("guest=1/10s", |_| {}).await;
    let guest = From::address("127.0.0.1");
    assert_eq!(guest.product(&gw, &[]).await.status, 200);
    for _ in 0..3 {
        assert_eq!(guest.get(&gw, "/openapi.json", &[]).await.status, 200);
        let ready = gw
            .http
            .get(format!("http://{}/readyz", gw.running.addr))
            .send()
            .await
            .unwrap();
        assert_eq!(ready.status(), 200);
        let body: Value = ready.json().await.unwrap();
        assert_eq!(body["rate_limits"], "instance");
    }
}
