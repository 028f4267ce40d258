//! The gateway against the embedded sandbox, with a recording proxy in between.
//!
//! The proxy forwards every upstream call to the sandbox unchanged and keeps a copy of each
//! answer, so a test can check afterwards that every answer the gateway relied on matches
//! Magento 2.4.5's own schema: the sandbox cannot drift from the real back end unnoticed.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use serde_json::Value;
use storegate::Running;
use storegate_sandbox::{Sandbox, SandboxOptions};

use crate::common::gateway::{Setup, start_gateway, start_sandbox};
pub use crate::common::http::Reply;

pub const ADMIN_KEY: &str = "e2e-admin-key-0123456789";

/// One upstream exchange as the gateway saw it.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    pub status: u16,
    pub body: Vec<u8>,
    /// When the proxy got the call, and when it had the sandbox's answer: which calls of an
    /// operation ran side by side and which one after another (`round_trips`).
    pub started: std::time::Instant,
    pub ended: std::time::Instant,
}

#[derive(Clone)]
struct Proxy {
    target: String,
    /// hyper's client, not reqwest's: it sends the path exactly as the gateway did, where a
    /// URL parser would resolve `%2E%2E` segments (SKU `..`).
    client: hyper_util::client::legacy::Client<
        hyper_util::client::legacy::connect::HttpConnector,
        http_body_util::Full<bytes::Bytes>,
    >,
    log: Arc<Mutex<Vec<Exchange>>>,
}

async fn forward(State(proxy): State<Proxy>, request: Request) -> Response {
    let started = std::time::Instant::now();
    let method = request.method().clone();
    let uri = request.uri().clone();
    let headers = request.headers().clone();
    let body = axum::body::to_bytes(request.into_body(), 64 * 1024 * 1024)
        .await
        .unwrap_or_default();
    let url = format!(
        "{}{}",
        proxy.target,
        uri.path_and_query().map(|p| p.as_str()).unwrap_or("/")
    );
    let mut outgoing = http::Request::builder()
        .method(method.clone())
        .uri(url)
        .body(http_body_util::Full::new(body))
        .unwrap();
    for (name, value) in &headers {
        if name != "host" && name != "content-length" {
            outgoing.headers_mut().append(name, value.clone());
        }
    }
    let answer = proxy
        .client
        .request(outgoing)
        .await
        .expect("the sandbox answers");
    let status = answer.status();
    let content_type = answer.headers().get("content-type").cloned();
    let bytes = http_body_util::BodyExt::collect(answer.into_body())
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    proxy.log.lock().unwrap().push(Exchange {
        method: method.to_string(),
        path: uri.path().to_owned(),
        query: uri.query().map(str::to_owned),
        status: status.as_u16(),
        body: bytes.to_vec(),
        started,
        ended: std::time::Instant::now(),
    });
    let mut response = Response::new(Body::from(bytes));
    *response.status_mut() = status;
    if let Some(ct) = content_type {
        response.headers_mut().insert("content-type", ct);
    }
    response
}

pub struct Stack {
    pub gateway: Running,
    /// Kept alive for the test's duration.
    pub _sandbox: Sandbox,
    pub http: reqwest::Client,
    log: Arc<Mutex<Vec<Exchange>>>,
}

impl Stack {
    pub async fn start() -> Stack {
        Stack::start_with(|_| {}).await
    }

    /// A stack whose gateway configuration `tweak` changes (the profile, say).
    pub async fn start_with(tweak: impl FnOnce(&mut storegate::Config)) -> Stack {
        Stack::start_on(SandboxOptions::default(), tweak).await
    }

    /// A stack whose sandbox starts with `options` (a latency, say).
    pub async fn start_on(
        options: SandboxOptions,
        tweak: impl FnOnce(&mut storegate::Config),
    ) -> Stack {
        // reqwest is built without a bundled crypto provider; the gateway installs ring's
        // when it starts, the proxy's client is built before that.
        storegate::backend::transport::install_crypto();
        let sandbox = start_sandbox(options).await;
        let log = Arc::new(Mutex::new(Vec::new()));
        let proxy = Proxy {
            target: sandbox.base_url(),
            client: hyper_util::client::legacy::Client::builder(
                hyper_util::rt::TokioExecutor::new(),
            )
            .build_http(),
            log: log.clone(),
        };
        let proxy_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let proxy_url = format!("http://{}", proxy_listener.local_addr().unwrap());
        let app = Router::new().fallback(forward).with_state(proxy);
        tokio::spawn(async move { axum::serve(proxy_listener, app).await });

        let mut config = storegate::Config {
            listen: "127.0.0.1:0".parse().unwrap(),
            // Not the checkout's `data/`, and not another test's: the OAuth store keeps
            // customer revocations, which every gateway on it loads.
            data_dir: crate::common::files::test_data_dir(),
            ..storegate::Config::default()
        };
        tweak(&mut config);
        let gateway = start_gateway(
            config,
            Setup {
                upstream_url: &proxy_url,
                upstream_token: sandbox.token(),
                admin_key: ADMIN_KEY,
                token_secret: b"e2e-token-secret",
            },
        )
        .await;
        Stack {
            gateway,
            _sandbox: sandbox,
            http: reqwest::Client::new(),
            log,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.gateway.base_url())
    }

    /// Sends `verb path` as `who` (None: guest; Some(token)) asking for JSON.
    pub async fn call(
        &self,
        verb: &str,
        path: &str,
        bearer: Option<&str>,
        body: Option<Value>,
    ) -> Reply {
        crate::common::http::call(
            &self.http,
            verb,
            &self.url(path),
            "application/json",
            bearer,
            body.as_ref(),
        )
        .await
    }

    pub async fn admin(&self, verb: &str, path: &str, body: Option<Value>) -> Reply {
        self.call(verb, path, Some(ADMIN_KEY), body).await
    }

    /// `GET path` by the admin, read as JSON.
    pub async fn admin_json(&self, path: &str) -> Value {
        self.admin("GET", path, None).await.json()
    }

    /// Product `id` renamed `name` by the admin (a partial update).
    pub async fn rename_product(&self, id: &str, name: &str) -> Reply {
        let body = serde_json::json!({ "name": name });
        self.admin("PUT", &format!("/products/{id}"), Some(body))
            .await
    }

    /// Logs the demo customer in through the gateway.
    pub async fn customer_token(&self, email: &str, password: &str) -> String {
        let r = self
            .call(
                "POST",
                "/auth/token",
                None,
                Some(serde_json::json!({"username": email, "password": password})),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        r.json()["access_token"].as_str().unwrap().to_owned()
    }

    /// Everything the gateway received from the sandbox so far.
    pub fn exchanges(&self) -> Vec<Exchange> {
        self.log.lock().unwrap().clone()
    }
}
