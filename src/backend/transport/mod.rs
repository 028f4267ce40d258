//! The seam between a store's client and the wire: one request out, one answer back.
//!
//! A store's client decides what to call (path, credentials, body) and the client shell
//! (`crate::backend::shell`) when (deadline, retries, breaker); the finished [`Outgoing`]
//! goes to a [`Transport`]. The default transport is [`HttpTransport`], the pooled
//! `reqwest::Client`; `crate::backend::recording` puts its recorder and its cassette player
//! here, so recording and replaying see exactly the calls the store would see, and the
//! client cannot tell the difference. Nothing here knows a store.

pub mod raw_path;

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{HeaderMap, Method, StatusCode};

use crate::backend::port::BackendError;

/// A call ready to send.
#[derive(Debug, Clone)]
pub struct Outgoing {
    pub method: Method,
    /// The store's path, segments already encoded; no base URL, no query.
    pub path: String,
    /// Decoded query pairs, in the order they are sent.
    pub query: Vec<(String, String)>,
    /// Authorization, Accept, Content-Type, X-Request-Id.
    pub headers: HeaderMap,
    pub body: Option<Bytes>,
    /// What is left of the call's deadline.
    pub timeout: Duration,
    /// Send the path exactly as written: it holds a segment a URL parser would rewrite
    /// (`%2E`, a dot segment), which the store's client asks for ([`raw_path`]).
    pub exact_path: bool,
}

impl Outgoing {
    /// `path?query` as sent on the wire.
    pub fn path_and_query(&self) -> String {
        if self.query.is_empty() {
            return self.path.clone();
        }
        let query = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(self.query.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .finish();
        format!("{}?{query}", self.path)
    }
}

/// What came back: any status, the body read in full.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// Sends one call. Errors are the wire's (timeout, connection, unreadable body); an HTTP
/// error status is an [`Answer`] like any other.
pub trait Transport: Send + Sync + fmt::Debug {
    fn send(&self, request: Outgoing) -> BoxFuture<'static, Result<Answer, BackendError>>;
}

/// The network: one pooled client to one base URL.
#[derive(Debug, Clone)]
pub struct HttpTransport {
    http: reqwest::Client,
    /// For the rare paths `reqwest`'s URL parser would rewrite (a dot segment).
    raw: raw_path::RawClient,
    base: String,
}

impl HttpTransport {
    /// `base` is the store's URL; a trailing slash is dropped. Redirects are followed
    /// (reqwest's default, up to ten; a 301/302/303 turns the call into a GET).
    pub fn new(base: &str, timeout: Duration) -> Result<HttpTransport, String> {
        HttpTransport::build(base, timeout, reqwest::redirect::Policy::default())
    }

    /// The same, but a redirect is handed back as the answer it is, never followed: for a
    /// store that answers a create with `302` and a `Location` (OpenMage behind nginx and
    /// php-fpm), where following would turn the write into a GET of the new record, signed
    /// for another request. The dot-segment client never follows redirects either.
    pub fn without_redirects(base: &str, timeout: Duration) -> Result<HttpTransport, String> {
        HttpTransport::build(base, timeout, reqwest::redirect::Policy::none())
    }

    fn build(
        base: &str,
        timeout: Duration,
        redirects: reqwest::redirect::Policy,
    ) -> Result<HttpTransport, String> {
        install_crypto();
        let http = reqwest::Client::builder()
            .redirect(redirects)
            .pool_max_idle_per_host(256)
            .pool_idle_timeout(Duration::from_secs(60))
            .tcp_nodelay(true)
            .connect_timeout(timeout.min(Duration::from_secs(3)))
            .user_agent(concat!("storegate/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(HttpTransport {
            http,
            raw: raw_path::RawClient::new(timeout.min(Duration::from_secs(3)))?,
            base: base.trim_end_matches('/').to_owned(),
        })
    }

    pub fn base(&self) -> &str {
        &self.base
    }
}

impl Transport for HttpTransport {
    fn send(&self, request: Outgoing) -> BoxFuture<'static, Result<Answer, BackendError>> {
        let url = format!("{}{}", self.base, request.path_and_query());
        if request.exact_path {
            let raw = self.raw.clone();
            let mut headers = request.headers;
            headers.insert(
                http::header::USER_AGENT,
                http::HeaderValue::from_static(concat!("storegate/", env!("CARGO_PKG_VERSION"))),
            );
            return Box::pin(async move {
                raw.send(request.method, &url, headers, request.body, request.timeout)
                    .await
            });
        }
        let mut builder = self
            .http
            .request(request.method, url)
            .timeout(request.timeout)
            .headers(request.headers);
        if let Some(body) = request.body {
            builder = builder.body(body);
        }
        Box::pin(async move {
            let response = builder.send().await.map_err(classify)?;
            let status = response.status();
            let headers = response.headers().clone();
            let body = response.bytes().await.map_err(classify)?;
            Ok(Answer {
                status,
                headers,
                body,
            })
        })
    }
}

fn classify(error: reqwest::Error) -> BackendError {
    if error.is_timeout() {
        BackendError::Timeout
    } else if error.is_connect() || error.is_request() {
        // The URL (with the store's host) is part of reqwest's message; never the token.
        BackendError::Connect(error.without_url().to_string())
    } else if error.is_body() || error.is_decode() {
        BackendError::Protocol(error.without_url().to_string())
    } else {
        BackendError::Connect(error.without_url().to_string())
    }
}

/// reqwest is built without a bundled TLS crypto provider (the default one needs cmake and
/// a long C build); this installs ring's for the process. Safe to call more than once.
pub fn install_crypto() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
