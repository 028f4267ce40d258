//! A small HTTP client over a sandbox started on 127.0.0.1:0, shared by the test files.

#![allow(dead_code)]

use serde_json::Value;
use storegate_sandbox::{Sandbox, SandboxOptions};

pub struct Harness {
    pub sandbox: Sandbox,
    http: reqwest::Client,
}

/// A response: status and parsed JSON body (`Value::Null` when the body is not JSON).
pub struct Reply {
    pub status: u16,
    pub body: Value,
}

impl Harness {
    pub async fn start() -> Harness {
        Harness::with_options(SandboxOptions::default()).await
    }

    pub async fn with_options(options: SandboxOptions) -> Harness {
        install_crypto();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let sandbox = Sandbox::start(listener, options)
            .await
            .expect("sandbox starts");
        Harness {
            sandbox,
            http: reqwest::Client::new(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.sandbox.base_url(), path)
    }

    /// Sends a request; `token` None means no Authorization header.
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        token: Option<&str>,
    ) -> Reply {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut request = self.http.request(method, self.url(path));
        if let Some(token) = token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        if let Some(body) = body {
            request = request
                .header("Content-Type", "application/json")
                .body(serde_json::to_vec(body).expect("json"));
        }
        let response = request.send().await.expect("request sent");
        let status = response.status().as_u16();
        let bytes = response.bytes().await.expect("body read");
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Reply { status, body }
    }

    /// Sends raw bytes with an explicit content type.
    pub async fn send_raw(
        &self,
        method: &str,
        path: &str,
        body: &[u8],
        content_type: Option<&str>,
    ) -> Reply {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut request = self
            .http
            .request(method, self.url(path))
            .header("Authorization", format!("Bearer {}", self.sandbox.token()))
            .body(body.to_vec());
        if let Some(content_type) = content_type {
            request = request.header("Content-Type", content_type);
        }
        let response = request.send().await.expect("request sent");
        let status = response.status().as_u16();
        let bytes = response.bytes().await.expect("body read");
        Reply {
            status,
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        }
    }

    /// As the integration (admin) user.
    pub async fn admin(&self, method: &str, path: &str, body: Option<&Value>) -> Reply {
        let token = self.sandbox.token().to_string();
        self.send(method, path, body, Some(&token)).await
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.admin("GET", path, None).await
    }

    pub async fn raw_get(&self, path: &str) -> (u16, Vec<u8>, String) {
        let response = self
            .http
            .get(self.url(path))
            .send()
            .await
            .expect("request sent");
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        (
            status,
            response.bytes().await.expect("body").to_vec(),
            content_type,
        )
    }
}

/// `searchCriteria[filter_groups][G][filters][F][...]` for one filter.
pub fn filter(group: usize, index: usize, field: &str, value: &str, condition: &str) -> String {
    let prefix = format!("searchCriteria[filter_groups][{group}][filters][{index}]");
    format!(
        "{prefix}[field]={field}&{prefix}[value]={}&{prefix}[condition_type]={condition}",
        urlencode(value)
    )
}

pub fn urlencode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// The value of a custom attribute in a product/category JSON.
pub fn custom<'a>(entity: &'a Value, code: &str) -> Option<&'a Value> {
    entity["custom_attributes"]
        .as_array()?
        .iter()
        .find(|a| a["attribute_code"] == code)
        .map(|a| &a["value"])
}

/// A 2x2 red PNG, base64.
pub fn png_base64() -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(png_bytes())
}

pub fn png_bytes() -> Vec<u8> {
    // Built once by hand: 1x1 RGBA PNG.
    vec![
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44,
        0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F,
        0x15, 0xC4, 0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0xF8,
        0xCF, 0xC0, 0xF0, 0x1F, 0x00, 0x05, 0x00, 0x01, 0xFF, 0x89, 0x99, 0x3D, 0x1D, 0x00, 0x00,
        0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
    ]
}

/// See the note on `rustls` in Cargo.toml. Safe to call more than once.
pub fn install_crypto() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
