//! Two Magento 2 stores (two sandboxes) and a gateway serving from the first with the
//! second as its candidate; a plain gateway on the first for what an app would see
//! without the shadow.

use std::time::{Duration, Instant};

use crate::common::http::sent;
use serde_json::{Value, json};
use storegate::Running;
use storegate::config::shadow::{ServeShares, Shadow};
use storegate::config::{BackendKind, Config, Secret, Upstream};
use storegate_sandbox::{Sandbox, SandboxOptions};

pub use crate::common::http::Reply;

pub const ADMIN_KEY: &str = "dual-run-admin-key-0123456789";
pub const TOKEN_SECRET: &[u8] = b"dual-run-token-secret";

/// Who calls.
#[derive(Debug, Clone, Copy)]
pub enum As {
    Admin,
    Customer(u64),
    Guest,
}

pub async fn sandbox(latency: Duration) -> Sandbox {
    storegate::backend::transport::install_crypto();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let sandbox = Sandbox::start(
        listener,
        SandboxOptions {
            latency,
            ..SandboxOptions::default()
        },
    )
    .await
    .unwrap();
    // Both stores under the shop's one domain, as a migrated store is: their storefront and
    // media URLs name it, not each sandbox's own port.
    sandbox.set_public_origin(SHOP_ORIGIN);
    sandbox
}

/// The domain both stores' URLs name.
pub const SHOP_ORIGIN: &str = "http://shop.example";

/// The shadow's settings for a Magento 2 candidate at `url`.
pub fn shadow_of(url: &str, token: &str) -> Shadow {
    Shadow {
        backend: BackendKind::Magento2,
        upstream: Upstream {
            url: url.to_owned(),
            token: Secret::new(token),
            oauth: None,
        },
        openmage_store_views: Vec::new(),
        sample: 1.0,
        max_in_flight: 64,
        recheck: Duration::from_secs(1),
        min_compared: 3,
        serve: ServeShares::default(),
    }
}

pub fn config() -> Config {
    Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        upstream_timeout: Duration::from_millis(3000),
        data_dir: std::env::temp_dir().join(format!(
            "storegate-dual-run-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        )),
        access_log: false,
        ..Config::default()
    }
}

static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A gateway serving from `serving`, configured by `config`.
pub async fn gateway(serving: &Sandbox, config: Config) -> Running {
    crate::common::gateway::start_gateway(
        config,
        crate::common::gateway::Setup {
            upstream_url: &serving.base_url(),
            upstream_token: serving.token(),
            admin_key: ADMIN_KEY,
            token_secret: TOKEN_SECRET,
        },
    )
    .await
}

pub struct Dual {
    pub serving: Sandbox,
    pub candidate: Option<Sandbox>,
    /// Serves from `serving`, with `candidate` as its shadow.
    pub gateway: Running,
    /// Serves from `serving`, with no shadow: what an app sees without one.
    pub plain: Running,
    pub http: reqwest::Client,
}

impl Dual {
    /// Two stores, the candidate answering after `latency`; `tweak` sets the shadow.
    pub async fn start(latency: Duration, tweak: impl FnOnce(&mut Shadow, &mut Config)) -> Dual {
        let serving = sandbox(Duration::ZERO).await;
        let candidate = sandbox(latency).await;
        let mut shadow = shadow_of(&candidate.base_url(), candidate.token());
        let mut with_shadow = config();
        tweak(&mut shadow, &mut with_shadow);
        with_shadow.shadow = Some(shadow);
        let mut plain_config = config();
        plain_config.cache_ttl = with_shadow.cache_ttl;
        let gateway = gateway(&serving, with_shadow).await;
        let plain = gateway_plain(&serving, plain_config).await;
        Dual {
            serving,
            candidate: Some(candidate),
            gateway,
            plain,
            http: reqwest::Client::new(),
        }
    }

    pub fn candidate(&self) -> &Sandbox {
        self.candidate.as_ref().unwrap()
    }

    /// The candidate's 24-MB01 (product 1) changed to cost 30 and be called `name`: the
    /// stores differ in a price and a name.
    pub async fn candidate_differs(&self, name: &str) {
        change_product(
            self.candidate(),
            "24-MB01",
            json!({"price": 30, "name": name}),
        )
        .await;
    }

    pub async fn call(
        &self,
        running: &Running,
        verb: &str,
        path: &str,
        who: As,
        accept: &str,
        body: Option<Value>,
    ) -> Reply {
        let bearer = match who {
            As::Guest => None,
            As::Admin => Some(ADMIN_KEY.to_owned()),
            As::Customer(id) => Some(running.app.auth.tokens().issue(id).token),
        };
        let url = format!("{}{path}", running.base_url());
        let bearer = bearer.as_deref();
        crate::common::http::call(&self.http, verb, &url, accept, bearer, body.as_ref()).await
    }

    /// `verb path` on `running` as Admin, asking for `accept`, without a body.
    pub async fn admin(&self, running: &Running, verb: &str, path: &str, accept: &str) -> Reply {
        self.call(running, verb, path, As::Admin, accept, None)
            .await
    }

    /// `verb path` on the gateway as Admin with a JSON `body`, asking for JSON.
    pub async fn admin_json(&self, verb: &str, path: &str, body: Value) -> Reply {
        let json = "application/json";
        self.call(&self.gateway, verb, path, As::Admin, json, Some(body))
            .await
    }

    pub async fn get(&self, path: &str, who: As) -> Reply {
        self.call(&self.gateway, "GET", path, who, "application/json", None)
            .await
    }

    /// The report, as Admin, in JSON.
    pub async fn report(&self) -> Value {
        let r = self
            .admin(&self.gateway, "GET", "/shadow/report", "application/json")
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        r.json()
    }

    /// Polls the report until `route` for `user_type` has at least `n` comparisons, for at
    /// most `within` seconds.
    pub async fn compared(&self, within: u64, route: &str, user_type: &str, n: i64) -> Value {
        self.report_when(Duration::from_secs(within), |report| {
            compared_at_least(report, route, user_type, n)
        })
        .await
    }

    /// Polls the report until `done` holds (nothing pending), for at most `within`.
    pub async fn report_when(&self, within: Duration, done: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        loop {
            let report = self.report().await;
            let pending: i64 = report["routes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["pending"].as_i64().unwrap_or(0))
                .sum();
            if pending == 0 && done(&report) {
                return report;
            }
            if start.elapsed() > within {
                panic!("the report never got there: {report:#}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

pub async fn gateway_plain(serving: &Sandbox, config: Config) -> Running {
    gateway(serving, config).await
}

/// A product changed in a store directly (as the migration or an admin would).
pub async fn change_product(store: &Sandbox, sku: &str, product: Value) {
    let mut product = product;
    product["sku"] = json!(sku);
    let r = sent(
        reqwest::Client::new()
            .put(format!("{}/rest/all/V1/products/{sku}", store.base_url()))
            .bearer_auth(store.token())
            .json(&json!({ "product": product })),
    )
    .await;
    assert!(r.status().is_success(), "{}", r.text().await.unwrap());
}

/// A product as the store has it.
pub async fn product_in(store: &Sandbox, sku: &str) -> Value {
    crate::common::http::json_of(
        reqwest::Client::new()
            .get(format!("{}/rest/V1/products/{sku}", store.base_url()))
            .bearer_auth(store.token()),
    )
    .await
}

/// The report's entry of `route` for `user_type`.
pub fn entry<'a>(report: &'a Value, route: &str, user_type: &str) -> &'a Value {
    find(report, route, user_type)
        .unwrap_or_else(|| panic!("no {route} for {user_type} in {report:#}"))
}

/// The report's entry of `route` for `user_type`, if it has one yet.
pub fn find<'a>(report: &'a Value, route: &str, user_type: &str) -> Option<&'a Value> {
    report["routes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["route"] == route && r["user_type"] == user_type)
}

/// Whether `route` for `user_type` has at least `n` comparisons.
pub fn compared_at_least(report: &Value, route: &str, user_type: &str, n: i64) -> bool {
    find(report, route, user_type).is_some_and(|e| count(e, "compared") >= n)
}

/// The entry's difference at `path` of `class`.
pub fn difference<'a>(entry: &'a Value, path: &str, class: &str) -> Option<&'a Value> {
    entry["differences"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["path"] == path && d["class"] == class)
}

pub fn count(entry: &Value, name: &str) -> i64 {
    entry[name]
        .as_i64()
        .unwrap_or_else(|| panic!("no {name} in {entry:#}"))
}
