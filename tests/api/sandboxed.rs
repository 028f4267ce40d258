//! The gateway in front of the embedded sandbox (a stateful Magento 2), for the tests whose
//! flows need a store that remembers writes: the original's extra routes, the first-hour
//! walk-through. Each test gets its own sandbox, so writes never leak between tests.

use serde_json::Value;
use storegate::Running;
use storegate_sandbox::{Sandbox, SandboxOptions};

use crate::common::gateway::{Setup, start_gateway, start_sandbox};
use crate::helpers::{ADMIN_KEY, Reply, test_config};

pub struct OnSandbox {
    pub running: Running,
    /// Kept alive for the test's duration.
    pub _sandbox: Sandbox,
    pub http: reqwest::Client,
}

/// Who calls.
#[derive(Debug, Clone, Copy)]
pub enum As {
    Admin,
    Customer(u64),
    Guest,
}

impl OnSandbox {
    pub async fn start() -> OnSandbox {
        OnSandbox::start_with(|_| {}).await
    }

    pub async fn start_with(tweak: impl FnOnce(&mut storegate::Config)) -> OnSandbox {
        OnSandbox::start_public(None, tweak).await
    }

    /// With the sandbox's media served by the gateway under `public` (what
    /// `STOREGATE_PUBLIC_URL` names), as `cargo run` sets it up.
    pub async fn start_public(
        public: Option<&str>,
        tweak: impl FnOnce(&mut storegate::Config),
    ) -> OnSandbox {
        storegate::backend::transport::install_crypto();
        let sandbox = start_sandbox(SandboxOptions::default()).await;
        let mut config = test_config();
        if let Some(public) = public {
            sandbox.set_public_origin(public);
            config.sandbox_media = Some(sandbox.base_url());
            config.public_url = Some(public.to_owned());
        }
        tweak(&mut config);
        let running = start_gateway(
            config,
            Setup {
                upstream_url: &sandbox.base_url(),
                upstream_token: sandbox.token(),
                admin_key: ADMIN_KEY,
                token_secret: b"sandboxed-token-secret",
            },
        )
        .await;
        OnSandbox {
            running,
            _sandbox: sandbox,
            http: crate::common::http::client_without_redirects(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.running.base_url())
    }

    /// A request under `/api/rest` as `who`, asking for `accept`.
    pub fn request(
        &self,
        verb: &str,
        path: &str,
        who: As,
        accept: &str,
    ) -> reqwest::RequestBuilder {
        let method = reqwest::Method::from_bytes(verb.as_bytes()).unwrap();
        let builder = self
            .http
            .request(method, self.url(path))
            .header("Accept", accept);
        match who {
            As::Guest => builder,
            As::Admin => builder.bearer_auth(ADMIN_KEY),
            As::Customer(id) => builder.bearer_auth(self.running.app.auth.tokens().issue(id).token),
        }
    }

    pub async fn send(&self, builder: reqwest::RequestBuilder) -> Reply {
        Reply::read(builder.send().await.expect("the gateway answers")).await
    }

    pub async fn get(&self, path: &str, who: As) -> Reply {
        self.send(self.request("GET", path, who, "application/json"))
            .await
    }

    pub async fn get_xml(&self, path: &str, who: As) -> Reply {
        self.send(self.request("GET", path, who, "application/xml"))
            .await
    }

    /// The `/metrics` page.
    pub async fn metrics(&self) -> String {
        crate::common::http::metrics_of(&self.http, self.running.addr).await
    }

    /// A JSON body, JSON answer.
    pub async fn send_json(&self, verb: &str, path: &str, who: As, body: &Value) -> Reply {
        self.send(
            self.request(verb, path, who, "application/json")
                .header("Content-Type", "application/json")
                .body(body.to_string()),
        )
        .await
    }
}
