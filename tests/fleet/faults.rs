//! A fleet that fails soft (issue 32): the OAuth database killed, locked and hung, Redis
//! killed, hung and restarted empty, under two gateways, black-box through HTTP:
//!
//! - a sign-in forgets only what it replaces: with MariaDB killed after another consumer's
//!   sign-in, a verified token still gets 200 on both instances, each call under 1 s;
//! - a table locked for 15 s or the server hung for 8 s: a verified token's call answers
//!   within 2 s, a new sign-in gets its 503 within 2 s, `/readyz` and `/metrics` say the
//!   store is degraded; sign-ins work again within 1 s of the store coming back;
//! - Redis killed: signed calls of verified tokens get 200 on both instances (nonces claimed
//!   in-process, counted), a replay to the same instance is still refused;
//! - a token revoked before Redis restarts empty is refused by an instance started after.

use std::time::{Duration, Instant};

use serde_json::Value;
use storegate::Running;
use storegate::auth::oauth::store::random_hex32;

use crate::common::http::sent;
use crate::{ADMIN_KEY, EMAIL, Fleet, PASSWORD, message, until_refused};

type Pair = (String, String);

impl Fleet {
    /// A signed `GET /api/rest/customers/1` on `gw` with a fresh nonce: status, body, time.
    async fn verified_call(
        &self,
        gw: &Running,
        consumer: &Pair,
        token: &Pair,
    ) -> (u16, String, Duration) {
        let began = Instant::now();
        let (status, body) = self.own_record(gw, consumer, token, &random_hex32()).await;
        (status, body, began.elapsed())
    }

    async fn metric(&self, gw: &Running, name: &str) -> Option<f64> {
        let text =
            crate::common::http::text_of(self.http.get(format!("http://{}/metrics", gw.addr)))
                .await;
        text.lines()
            .find_map(|line| line.strip_prefix(&format!("{name} ")))
            .and_then(|value| value.trim().parse().ok())
    }

    /// `verb /api/rest{path}` on `gw` as the Admin, JSON: status and body.
    async fn admin(&self, gw: &Running, verb: reqwest::Method, path: &str) -> (u16, String) {
        let response = sent(
            self.http
                .request(verb, format!("{}/api/rest{path}", Fleet::origin(gw)))
                .bearer_auth(ADMIN_KEY)
                .header("Accept", "application/json"),
        )
        .await;
        (response.status().as_u16(), response.text().await.unwrap())
    }

    /// The demo customer's Bearer token, from `gw`.
    async fn customer_token(&self, gw: &Running) -> String {
        let response = sent(
            self.http
                .post(format!("{}/api/rest/auth/token", Fleet::origin(gw)))
                .header("Accept", "application/json")
                .json(&serde_json::json!({"username": EMAIL, "password": PASSWORD})),
        )
        .await;
        assert_eq!(response.status(), 200);
        let body: Value = response.json().await.unwrap();
        body["access_token"].as_str().unwrap().to_owned()
    }

    /// `GET /api/rest/customers/1` with `Authorization: Bearer <token>` on `gw`.
    async fn bearer_get(&self, gw: &Running, token: &str) -> (u16, String) {
        let response = sent(
            self.http
                .get(format!("{}/api/rest/customers/1", Fleet::origin(gw)))
                .bearer_auth(token)
                .header("Accept", "application/json"),
        )
        .await;
        (response.status().as_u16(), response.text().await.unwrap())
    }

    /// Polls `initiate` on `gw` until it is 200; how long that took.
    async fn until_sign_ins_work(
        &self,
        gw: &Running,
        consumer: &Pair,
        within: Duration,
    ) -> Duration {
        let began = Instant::now();
        loop {
            let (status, body) = self.initiate(gw, consumer).await;
            if status == 200 {
                return began.elapsed();
            }
            assert!(
                began.elapsed() < within,
                "sign-ins did not work again within {within:?}: {status} {body}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Polls `/readyz` on `gw` until its OAuth store reads `state`.
    async fn until_store_is(&self, gw: &Running, state: &str, within: Duration) -> Value {
        let began = Instant::now();
        loop {
            let (status, ready) = self.ready(gw).await;
            assert_eq!(status, 200, "the instance stays ready: {ready}");
            if ready["oauth_store"] == state {
                return ready;
            }
            assert!(began.elapsed() < within, "never {state}: {ready}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Verified calls on `gw` for `span`: each 200 within `bound`. Printed: how many, the
/// slowest (the figures docs/fleet.md quotes).
async fn verified_calls_hold(
    fleet: &Fleet,
    gw: &Running,
    consumer: &Pair,
    token: &Pair,
    span: Duration,
    bound: Duration,
    what: &str,
) {
    let began = Instant::now();
    let (mut calls, mut slowest) = (0, Duration::ZERO);
    while began.elapsed() < span {
        let (status, body, took) = fleet.verified_call(gw, consumer, token).await;
        assert_eq!(
            status,
            200,
            "{what}: call {calls} after {:?}: {body}",
            began.elapsed()
        );
        assert!(took < bound, "{what}: call {calls} took {took:?}");
        slowest = slowest.max(took);
        calls += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    eprintln!("{what}: {calls} verified calls, each 200, the slowest {slowest:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_forgets_only_what_it_replaces_so_a_dead_database_leaves_verified_tokens_served()
{
    // Production freshness: revocations arrive through Redis.
    let Some(mut fleet) = Fleet::start(true, None).await else {
        return;
    };
    let (first, replaced) = fleet.app_signed_in("first app").await;
    for gw in [&fleet.a, &fleet.b] {
        assert_eq!(fleet.verified_call(gw, &first, &replaced).await.0, 200);
    }
    // The same user signs in to the same app again: the store replaces the older token, and
    // every instance drops it within a second.
    let token = fleet.dance(&first).await;
    for gw in [&fleet.a, &fleet.b] {
        let took = until_refused(&fleet, gw, &first, &replaced).await;
        assert!(took < Duration::from_secs(1), "refused after {took:?}");
        assert_eq!(fleet.verified_call(gw, &first, &token).await.0, 200);
    }
    // Another consumer's sign-in replaces nothing of the first's.
    let _ = fleet.app_signed_in("other app").await;
    let bearer = fleet.customer_token(&fleet.a).await;

    fleet.database.kill();
    for gw in [&fleet.a, &fleet.b] {
        verified_calls_hold(
            &fleet,
            gw,
            &first,
            &token,
            Duration::from_millis(1500),
            Duration::from_secs(1),
            "database killed",
        )
        .await;
    }
    // A new sign-in cannot be vouched for: a clear 503, at once.
    let began = Instant::now();
    let (status, body) = fleet.initiate(&fleet.a, &first).await;
    assert_eq!(
        (status, body.as_str()),
        (503, "oauth_problem=internal_error")
    );
    assert!(
        began.elapsed() < Duration::from_secs(2),
        "{:?}",
        began.elapsed()
    );
    eprintln!(
        "database killed: a new sign-in's 503 in {:?}",
        began.elapsed()
    );
    // The Admin's token list names the store that failed.
    let (status, body) = fleet
        .admin(&fleet.b, reqwest::Method::GET, "/oauth/tokens")
        .await;
    assert_eq!(
        (status, message(&body).as_str()),
        (
            503,
            "The OAuth sign-in store is unavailable. Try again later."
        )
    );
    fleet
        .until_store_is(&fleet.a, "down", Duration::from_secs(2))
        .await;
    // A customer DELETE needs the store to keep the revocation: refused, naming it, and
    // nothing happens.
    let (status, body) = fleet
        .admin(&fleet.a, reqwest::Method::DELETE, "/customers/1")
        .await;
    assert_eq!(
        (status, message(&body).as_str()),
        (
            503,
            "The OAuth sign-in store is unavailable. Try again later."
        )
    );

    // Back: sign-ins work within a second of the database answering again.
    fleet.database.restart().await;
    let took = fleet
        .until_sign_ins_work(&fleet.b, &first, Duration::from_secs(1))
        .await;
    eprintln!("sign-ins back {took:?} after the database answered");
    fleet
        .until_store_is(&fleet.a, "up", Duration::from_secs(1))
        .await;
    // The refused DELETE took no effect: the customer is there, their token works.
    for gw in [&fleet.a, &fleet.b] {
        let (status, body) = fleet.bearer_get(gw, &bearer).await;
        assert_eq!(status, 200, "{body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locked_or_hung_database_is_degraded_and_costs_a_verified_token_under_two_seconds() {
    // Fresh for a moment only: every call below is past it and asks the store.
    let Some(fleet) = Fleet::start(true, Some(Duration::from_millis(200))).await else {
        return;
    };
    let (consumer, token) = fleet.app_signed_in("lock app").await;
    for gw in [&fleet.a, &fleet.b] {
        assert_eq!(fleet.verified_call(gw, &consumer, &token).await.0, 200);
    }

    // An operator's LOCK TABLES ... WRITE held for 15 s.
    let lock = fleet
        .database
        .lock_tables(&["oauth_token", "oauth_consumer"], 15);
    let locked = Instant::now();
    verified_calls_hold(
        &fleet,
        &fleet.a,
        &consumer,
        &token,
        Duration::from_secs(4),
        Duration::from_secs(2),
        "tables locked",
    )
    .await;
    let ready = fleet
        .until_store_is(&fleet.a, "degraded", Duration::from_secs(2))
        .await;
    assert!(
        ready["oauth_store_error"]
            .as_str()
            .is_some_and(|e| e.starts_with("OAuth store: mysql://127.0.0.1:")),
        "{ready}"
    );
    assert_eq!(
        fleet.metric(&fleet.a, "storegate_oauth_store_state").await,
        Some(1.0)
    );
    assert_eq!(
        fleet.metric(&fleet.a, "storegate_oauth_store_up").await,
        Some(0.0)
    );
    assert!(
        fleet
            .metric(&fleet.a, "storegate_oauth_store_fallbacks_total")
            .await
            .unwrap()
            >= 1.0
    );
    let began = Instant::now();
    let (status, _) = fleet.initiate(&fleet.a, &consumer).await;
    assert_eq!(status, 503);
    assert!(
        began.elapsed() < Duration::from_secs(2),
        "{:?}",
        began.elapsed()
    );
    // The other instance, which made no call meanwhile, sees it at its first probe.
    fleet
        .until_store_is(&fleet.b, "degraded", Duration::from_secs(2))
        .await;
    lock.wait();
    assert!(locked.elapsed() >= Duration::from_secs(14), "the lock held");
    let took = fleet
        .until_sign_ins_work(&fleet.a, &consumer, Duration::from_secs(1))
        .await;
    eprintln!("sign-ins back {took:?} after the lock was released");
    fleet
        .until_store_is(&fleet.a, "up", Duration::from_secs(1))
        .await;

    // The server hung (SIGSTOP) for 8 s, its connections open and silent.
    fleet.database.pause();
    let paused = Instant::now();
    verified_calls_hold(
        &fleet,
        &fleet.b,
        &consumer,
        &token,
        Duration::from_secs(3),
        Duration::from_secs(2),
        "server hung",
    )
    .await;
    fleet
        .until_store_is(&fleet.b, "degraded", Duration::from_secs(2))
        .await;
    assert_eq!(
        fleet.metric(&fleet.b, "storegate_oauth_store_state").await,
        Some(1.0)
    );
    let began = Instant::now();
    let (status, _) = fleet.initiate(&fleet.b, &consumer).await;
    assert_eq!(status, 503);
    assert!(
        began.elapsed() < Duration::from_secs(2),
        "{:?}",
        began.elapsed()
    );
    let rest = Duration::from_secs(8).saturating_sub(paused.elapsed());
    verified_calls_hold(
        &fleet,
        &fleet.a,
        &consumer,
        &token,
        rest,
        Duration::from_secs(2),
        "server hung, the other instance",
    )
    .await;
    fleet.database.resume();
    let took = fleet
        .until_sign_ins_work(&fleet.b, &consumer, Duration::from_secs(1))
        .await;
    eprintln!("sign-ins back {took:?} after the server resumed");
    for gw in [&fleet.a, &fleet.b] {
        fleet.until_store_is(gw, "up", Duration::from_secs(1)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_killed_leaves_signed_calls_of_verified_tokens_served_on_both_instances() {
    let Some(mut fleet) = Fleet::start(true, None).await else {
        return;
    };
    let (consumer, token) = fleet.app_signed_in("redis app").await;
    for gw in [&fleet.a, &fleet.b] {
        assert_eq!(fleet.verified_call(gw, &consumer, &token).await.0, 200);
    }
    fleet.redis.as_mut().unwrap().kill();
    for gw in [&fleet.a, &fleet.b] {
        let began = Instant::now();
        while fleet.ready(gw).await.1["redis"] != "down" {
            assert!(
                began.elapsed() < Duration::from_secs(3),
                "Redis never seen down"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    for gw in [&fleet.a, &fleet.b] {
        verified_calls_hold(
            &fleet,
            gw,
            &consumer,
            &token,
            Duration::from_secs(1),
            Duration::from_secs(1),
            "Redis killed",
        )
        .await;
        assert!(
            fleet
                .metric(gw, "storegate_oauth_nonce_fallbacks_total")
                .await
                .unwrap()
                >= 1.0,
            "counted"
        );
        // A replay to the same instance is still refused.
        let nonce = random_hex32();
        let first = fleet.own_record(gw, &consumer, &token, &nonce).await;
        assert_eq!(first.0, 200, "{}", first.1);
        let replay = fleet.own_record(gw, &consumer, &token, &nonce).await;
        assert_eq!(
            (replay.0, message(&replay.1).as_str()),
            (401, "oauth_problem=nonce_used")
        );
    }
    // Back: the nonces are the fleet's again within a second.
    fleet.redis.as_mut().unwrap().restart().await;
    let began = Instant::now();
    loop {
        let nonce = random_hex32();
        let on_a = fleet.own_record(&fleet.a, &consumer, &token, &nonce).await;
        assert_eq!(on_a.0, 200, "{}", on_a.1);
        let on_b = fleet.own_record(&fleet.b, &consumer, &token, &nonce).await;
        if on_b.0 == 401 && message(&on_b.1) == "oauth_problem=nonce_used" {
            break;
        }
        assert!(
            began.elapsed() < Duration::from_secs(1),
            "nonces not shared again within a second: {on_b:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    eprintln!(
        "nonces shared again {:?} after Redis answered",
        began.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_revoked_before_redis_restarts_empty_is_refused_by_an_instance_started_after() {
    let Some(mut fleet) = Fleet::start(true, None).await else {
        return;
    };
    // An OAuth token revoked by the Admin, and the demo customer's Bearer and OAuth tokens
    // revoked by deleting the customer.
    let (admin_app, revoked) = fleet.app_signed_in("revoked app").await;
    let (consumer, oauth) = fleet.app_signed_in("customer app").await;
    let bearer = fleet.customer_token(&fleet.a).await;
    assert_eq!(fleet.bearer_get(&fleet.b, &bearer).await.0, 200);
    assert_eq!(
        fleet.verified_call(&fleet.b, &consumer, &oauth).await.0,
        200
    );

    // The first app's token by id, through A's Admin endpoint.
    let (_, body) = fleet
        .admin(
            &fleet.a,
            reqwest::Method::GET,
            "/oauth/tokens?customer_id=1",
        )
        .await;
    let list: Value = serde_json::from_str(&body).unwrap();
    let id = list
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["consumer_key"] == admin_app.0.as_str())
        .map(|t| t["id"].clone())
        .unwrap_or_else(|| panic!("{list}"));
    let revoke = format!("/oauth/tokens/{id}");
    assert_eq!(
        fleet
            .admin(&fleet.a, reqwest::Method::DELETE, &revoke)
            .await
            .0,
        200
    );
    let (status, body) = fleet
        .admin(&fleet.a, reqwest::Method::DELETE, "/customers/1")
        .await;
    assert_eq!(status, 200, "{body}");
    // Refused by the other instance within a second (until then the customer is simply
    // gone from Magento: 404).
    let began = Instant::now();
    loop {
        let (status, body, _) = fleet.verified_call(&fleet.b, &consumer, &oauth).await;
        if status == 401 {
            assert_eq!(message(&body), "oauth_problem=token_rejected");
            break;
        }
        assert_eq!(status, 404, "{body}");
        assert!(began.elapsed() < Duration::from_secs(1), "never refused");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // Redis loses everything; an instance starts afterwards.
    fleet.redis.as_mut().unwrap().restart().await;
    let late = fleet.another("late").await;
    let (status, body) = fleet.bearer_get(&late, &bearer).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(message(&body), "The access token has been revoked.");
    for (app, token) in [(&admin_app, &revoked), (&consumer, &oauth)] {
        let (status, body, _) = fleet.verified_call(&late, app, token).await;
        assert_eq!(status, 401, "{body}");
        assert_eq!(message(&body), "oauth_problem=token_rejected");
    }
    // And the instances that ran through it still refuse them.
    for gw in [&fleet.a, &fleet.b] {
        assert_eq!(fleet.bearer_get(gw, &bearer).await.0, 401);
    }
}
