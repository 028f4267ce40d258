//! Calls whose path the URL standard would rewrite: a SKU `.` or `..`.
//!
//! A SKU is one path segment (`/V1/products/{sku}`). Magento's REST router percent-decodes
//! each segment, so `.` and `..` are sent as `%2E` and `%2E%2E`. But the WHATWG URL
//! standard, which `reqwest` (through the `url` crate) follows, treats `%2E` and `%2E%2E` as
//! dot segments too and removes them: a read of SKU `..` went to `/V1/`, and a create of SKU
//! `..` passed the uniqueness check and overwrote another product. No spelling of a dot
//! segment survives that parser, so these few calls go through hyper's client with the
//! request target exactly as written (an `http::Uri` is never normalised); every other call
//! keeps `reqwest`. [`super::HttpTransport`] picks one or the other, so recording
//! and replaying see these calls like any other. Same TLS verification (the platform's, as `reqwest` is configured), same
//! headers, same deadline; the retry, breaker and metrics around the call are the caller's.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request};
use http_body_util::{BodyExt, Full};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use super::Answer;
use crate::backend::error::UpstreamError;

/// Does this path (its segments already encoded) hold a segment a URL parser would
/// remove?
pub fn needs_raw(path: &str) -> bool {
    path.split('/').any(|segment| {
        segment.eq_ignore_ascii_case("%2E") || segment.eq_ignore_ascii_case("%2E%2E")
    })
}

/// hyper's pooled client, for [`needs_raw`] paths only.
#[derive(Debug, Clone)]
pub struct RawClient {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
}

impl RawClient {
    pub fn new(connect_timeout: Duration) -> Result<RawClient, String> {
        use rustls_platform_verifier::ConfigVerifierExt as _;
        let tls = rustls::ClientConfig::with_platform_verifier()
            .map_err(|e| format!("cannot set up TLS: {e}"))?;
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(connect_timeout));
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(60))
            .pool_max_idle_per_host(8)
            .build(connector);
        Ok(RawClient { client })
    }

    /// One request to `url`, exactly as written; the answer, whatever its status.
    pub async fn send(
        &self,
        method: Method,
        url: &str,
        headers: HeaderMap,
        body: Option<Bytes>,
        timeout: Duration,
    ) -> Result<Answer, UpstreamError> {
        let mut request = Request::builder()
            .method(method)
            .uri(url)
            .body(Full::new(body.unwrap_or_default()))
            .map_err(|e| UpstreamError::Connect(format!("bad upstream request: {e}")))?;
        *request.headers_mut() = headers;
        let exchange = async {
            let response = self.client.request(request).await.map_err(|e| {
                if e.is_connect() {
                    UpstreamError::Connect(e.to_string())
                } else {
                    UpstreamError::Protocol(e.to_string())
                }
            })?;
            let status = response.status();
            let headers = response.headers().clone();
            let body = response
                .into_body()
                .collect()
                .await
                .map_err(|e| UpstreamError::Protocol(e.to_string()))?
                .to_bytes();
            Ok::<_, UpstreamError>(Answer {
                status,
                headers,
                body,
            })
        };
        tokio::time::timeout(timeout, exchange)
            .await
            .map_err(|_| UpstreamError::Timeout)?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_dot_segments_need_the_raw_client() {
        assert!(needs_raw("/V1/products/%2E%2E"));
        assert!(needs_raw("/V1/products/%2E/media"));
        assert!(needs_raw("/V1/products/%2e%2e/stockItems/1"));
        assert!(!needs_raw("/V1/products/%2E%2E%2E"));
        assert!(!needs_raw("/V1/products/a.b"));
        // The URL parser really does remove them, which is why this module exists.
        let parsed = reqwest::Url::parse("http://m2.test/rest/all/V1/products/%2E%2E").unwrap();
        assert_eq!(parsed.path(), "/rest/all/V1/");
    }
}
