//! Calls whose path must reach the store exactly as written.
//!
//! The WHATWG URL standard, which `reqwest` (through the `url` crate) follows, treats `.`,
//! `..`, `%2E` and `%2E%2E` path segments as dot segments and removes them; no spelling of
//! one survives that parser. A store whose router decodes `%2E` back to a value (Magento 2,
//! where a SKU may be `..`: its client says when, `magento2::segment`) needs such a path
//! sent as it is, or the call names another resource. These few calls
//! ([`super::Outgoing::exact_path`]) go through hyper's client with the request target
//! exactly as written (an `http::Uri` is never normalised); every other call keeps
//! `reqwest`. [`super::HttpTransport`] picks one or the other, so recording and replaying
//! see these calls like any other. Same TLS verification (the platform's, as `reqwest` is
//! configured), same headers, same deadline; the retry, breaker and metrics around the call
//! are the caller's.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request};
use http_body_util::{BodyExt, Full};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use super::Answer;
use crate::backend::port::BackendError;

/// hyper's pooled client, for [`super::Outgoing::exact_path`] calls only.
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
    ) -> Result<Answer, BackendError> {
        let mut request = Request::builder()
            .method(method)
            .uri(url)
            .body(Full::new(body.unwrap_or_default()))
            .map_err(|e| BackendError::Connect(format!("bad upstream request: {e}")))?;
        *request.headers_mut() = headers;
        let exchange = async {
            let response = self.client.request(request).await.map_err(|e| {
                if e.is_connect() {
                    BackendError::Connect(e.to_string())
                } else {
                    BackendError::Protocol(e.to_string())
                }
            })?;
            let status = response.status();
            let headers = response.headers().clone();
            let body = response
                .into_body()
                .collect()
                .await
                .map_err(|e| BackendError::Protocol(e.to_string()))?
                .to_bytes();
            Ok::<_, BackendError>(Answer {
                status,
                headers,
                body,
            })
        };
        tokio::time::timeout(timeout, exchange)
            .await
            .map_err(|_| BackendError::Timeout)?
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_url_parser_removes_encoded_dot_segments() {
        // Which is why this module exists.
        let parsed = reqwest::Url::parse("http://store.test/api/%2E%2E").unwrap();
        assert_eq!(parsed.path(), "/");
    }
}
