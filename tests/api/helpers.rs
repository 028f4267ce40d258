//! Spawning the gateway on port 0 against a `wiremock` Magento 2, and talking to it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use storegate::Running;
use storegate::config::Config;
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::gateway::{Setup, start_gateway};

pub use crate::common::files::{DataDir, temp_dir, test_data_dir};
pub use crate::common::http::Reply;

pub const ADMIN_KEY: &str = "test-admin-key-0123456789";
pub const UPSTREAM_TOKEN: &str = "integration-token-secret-abc";

/// A gateway under test and the fake Magento behind it.
pub struct Gateway {
    pub running: Running,
    pub upstream: MockServer,
    pub http: reqwest::Client,
    /// Held to be removed with the gateway.
    pub _data_dir: DataDir,
}

/// Who makes a request.
#[derive(Debug, Clone)]
pub enum Who {
    Guest,
    Admin,
    Customer(u64),
    Bearer(String),
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A recorded Magento 2 exchange from `fixtures/magento2/<name>.json`.
pub fn fixture(name: &str) -> Value {
    let file = root()
        .join("fixtures/magento2")
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    serde_json::from_str(&text).unwrap()
}

/// The recorded answer as a wiremock response.
pub fn recorded(name: &str) -> ResponseTemplate {
    let exchange = fixture(name);
    let status = exchange["response"]["status"].as_u64().unwrap() as u16;
    ResponseTemplate::new(status).set_body_json(exchange["response"]["body"].clone())
}

/// `/rest/<scope>/V1/x` -> a regex matching it under any store scope.
pub fn any_scope(service_path: &str) -> String {
    let escaped = regex_escape(service_path);
    format!(
        "^/rest/(?:[a-z0-9_]+/)?{}$",
        escaped.trim_start_matches('/')
    )
}

fn regex_escape(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Mounts a recorded exchange on its method and service path, whatever the store scope.
pub async fn mount(server: &MockServer, name: &str) {
    let exchange = fixture(name);
    let full = exchange["request"]["path"].as_str().unwrap();
    let service = &full[full.find("/V1/").unwrap()..];
    Mock::given(method(exchange["request"]["method"].as_str().unwrap()))
        .and(path_regex(any_scope(service)))
        .respond_with(recorded(name))
        .mount(server)
        .await;
}

/// Answers `GET /rest/default/V1/products/{sku}` with the recorded exchange `name`.
pub async fn mount_product_as(server: &MockServer, sku: &str, name: &str) {
    let product = format!("/rest/default/V1/products/{sku}");
    mount_get(server, &product, name).await;
}

/// Answers `GET path` (exactly, whatever the query) with the recorded exchange `name`.
pub async fn mount_get(server: &MockServer, at: &str, name: &str) {
    Mock::given(method("GET"))
        .and(path(at))
        .respond_with(recorded(name))
        .mount(server)
        .await;
}

/// What a read of product 1 needs: the store views, the id-to-SKU lookups and product 1
/// (24-MB01) itself.
pub async fn mount_product_1(server: &MockServer) {
    mount_stores(server).await;
    mount_skus(server).await;
    mount_product_as(server, "24-MB01", "products/get-simple-24-mb01").await;
}

/// Category 4's products: its positions, and the products it lists found by SKU.
pub async fn mount_category_4(server: &MockServer) {
    let category = "/rest/default/V1/categories/4/products";
    mount_get(server, category, "categories/products-of-category-4").await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products"))
        .and(wiremock::matchers::query_param(
            "searchCriteria[filter_groups][0][filters][0][field]",
            "sku",
        ))
        .respond_with(recorded("products/list-by-category-4"))
        .mount(server)
        .await;
}

/// What every catalog read needs: store views and configurations.
pub async fn mount_stores(server: &MockServer) {
    mount(server, "store/store-views").await;
    mount(server, "store/store-configs").await;
}

/// The shoppers' rendering (prices with tax, salability) of the recorded products.
pub async fn mount_render(server: &MockServer) {
    let render = "/rest/default/V1/products-render-info";
    mount_get(server, render, "products/render-info-1-2-6").await;
}

/// The keys of a JSON object, in order.
pub fn keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .map(String::as_str)
        .collect()
}

/// Mounts the id-to-SKU lookups for the recorded products.
pub async fn mount_skus(server: &MockServer) {
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products"))
        .and(wiremock::matchers::query_param("fields", "items[id,sku],total_count"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "items": [
                {"id": 1, "sku": "24-MB01"}, {"id": 2, "sku": "24-MB02"}, {"id": 3, "sku": "24-UG05"},
                {"id": 4, "sku": "MT07-M-Gray"}, {"id": 5, "sku": "MT07-L-Gray"}, {"id": 6, "sku": "MT07"},
                {"id": 7, "sku": "SG-WARRANTY-2Y"}
            ],
            "total_count": 7
        })))
        .mount(server)
        .await;
}

pub fn test_config() -> Config {
    Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        upstream_timeout: Duration::from_millis(1500),
        data_dir: test_data_dir(),
        ..Config::default()
    }
}

impl Gateway {
    pub async fn start() -> Gateway {
        Gateway::start_with(|_| {}).await
    }

    /// In front of a Magento answering the recorded exchange `name` (whatever the store
    /// scope).
    pub async fn answering(name: &str) -> Gateway {
        let gw = Gateway::start().await;
        mount(&gw.upstream, name).await;
        gw
    }

    pub async fn start_with(tweak: impl FnOnce(&mut Config)) -> Gateway {
        let upstream = MockServer::start().await;
        let gw = Gateway::start_on(upstream, tweak).await;
        // The start's warm-up asked this empty store for the lookups and the product index
        // (and got 404s): those calls are not the test's.
        gw.upstream.reset().await;
        gw
    }

    pub async fn start_on(upstream: MockServer, tweak: impl FnOnce(&mut Config)) -> Gateway {
        let mut config = test_config();
        tweak(&mut config);
        let running = start_gateway(
            config,
            Setup {
                upstream_url: &upstream.uri(),
                upstream_token: UPSTREAM_TOKEN,
                admin_key: ADMIN_KEY,
                token_secret: b"test-token-secret",
            },
        )
        .await;
        Gateway {
            _data_dir: DataDir(running.app.config.data_dir.clone()),
            running,
            upstream,
            http: crate::common::http::client_without_redirects(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.running.base_url())
    }

    pub fn token_for(&self, customer_id: u64) -> String {
        self.running.app.auth.tokens().issue(customer_id).token
    }

    /// A request builder with the caller's credentials; `path` is under `/api/rest`.
    pub fn request(&self, verb: &str, path: &str, who: &Who) -> reqwest::RequestBuilder {
        let method = reqwest::Method::from_bytes(verb.as_bytes()).unwrap();
        let builder = self.http.request(method, self.url(path));
        match who {
            Who::Guest => builder,
            Who::Admin => builder.bearer_auth(ADMIN_KEY),
            Who::Customer(id) => builder.bearer_auth(self.token_for(*id)),
            Who::Bearer(token) => builder.header("Authorization", token.as_str()),
        }
    }

    /// Sends a request; without an `Accept` header it asks for JSON.
    pub async fn send(&self, builder: reqwest::RequestBuilder) -> Reply {
        let mut request = builder.build().expect("a valid request");
        if !request.headers().contains_key(reqwest::header::ACCEPT) {
            request
                .headers_mut()
                .insert(reqwest::header::ACCEPT, "application/json".parse().unwrap());
        }
        self.execute(request).await
    }

    /// Sends a request exactly as built.
    pub async fn send_raw(&self, builder: reqwest::RequestBuilder) -> Reply {
        self.execute(builder.build().expect("a valid request"))
            .await
    }

    async fn execute(&self, request: reqwest::Request) -> Reply {
        Reply::read(self.http.execute(request).await.expect("gateway answers")).await
    }

    /// `verb path` as `who` with `body` in JSON, asking for JSON.
    pub async fn send_json(
        &self,
        verb: &str,
        path: &str,
        who: &Who,
        body: &(impl serde::Serialize + ?Sized),
    ) -> Reply {
        self.send(self.request(verb, path, who).json(body)).await
    }

    /// `verb path` as `who` with `body` as `content_type`, asking for JSON.
    pub async fn send_body(
        &self,
        verb: &str,
        path: &str,
        who: &Who,
        content_type: &str,
        body: impl Into<reqwest::Body>,
    ) -> Reply {
        let request = self.request(verb, path, who);
        self.send(request.header("Content-Type", content_type).body(body))
            .await
    }

    /// `verb path` as `who` with one more header, asking for JSON unless that header says.
    pub async fn send_header(
        &self,
        verb: &str,
        path: &str,
        who: &Who,
        name: &str,
        value: impl AsRef<str>,
    ) -> Reply {
        self.send(self.request(verb, path, who).header(name, value.as_ref()))
            .await
    }

    /// GET with `Accept: application/json`.
    pub async fn get_json(&self, path: &str, who: &Who) -> Reply {
        self.send(
            self.request("GET", path, who)
                .header("Accept", "application/json"),
        )
        .await
    }

    /// GET with `Accept: application/xml`.
    pub async fn get_xml(&self, path: &str, who: &Who) -> Reply {
        self.send(
            self.request("GET", path, who)
                .header("Accept", "application/xml"),
        )
        .await
    }

    /// The `/metrics` page.
    pub async fn metrics(&self) -> String {
        crate::common::http::metrics_of(&self.http, self.running.addr).await
    }

    /// How many calls the fake Magento received whose path matches `regex`.
    pub async fn upstream_count(&self, verb: &str, regex: &str) -> usize {
        self.upstream_calls(verb, regex).await.len()
    }

    /// Calls received by the fake Magento whose path matches `regex`.
    pub async fn upstream_calls(&self, verb: &str, regex: &str) -> Vec<wiremock::Request> {
        let re = regex::Regex::new(regex).unwrap();
        self.upstream
            .received_requests()
            .await
            .unwrap_or_default()
            .into_iter()
            .filter(|r| r.method.as_str() == verb && re.is_match(r.url.path()))
            .collect()
    }
}

/// A fresh folder (named after `label`) with the default mappings, `file` of them changed by
/// `edit`: what an operator's edited mappings folder is.
pub fn edited_mappings(label: &str, file: &str, edit: impl FnOnce(String) -> String) -> PathBuf {
    let dir = temp_dir(label);
    copy_mappings(&dir);
    let file = dir.join(file);
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, edit(text)).unwrap();
    dir
}

/// A folder with a copy of the default mappings, for tests that edit them.
pub fn copy_mappings(to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(root().join("mappings/magento2")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// A log sink for one test: what the gateway's subscriber writes, kept to be read.
#[derive(Clone, Default)]
pub struct Captured(pub std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
