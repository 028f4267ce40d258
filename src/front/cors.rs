//! CORS for web apps and hybrid shells (`STOREGATE_CORS_ORIGINS`), off by default.
//!
//! tower-http's `CorsLayer` answers preflights and adds the headers; this module only turns
//! the configuration into it. Credentials are bearer tokens, never cookies, so
//! `Access-Control-Allow-Credentials` is never sent and `*` is safe to offer. Headers a
//! client reads from an answer (`Location` after a create, `ETag`, `X-Request-Id`, ...) are
//! exposed; preflights are cached by the browser for ten minutes.

use std::time::Duration;

use http::{HeaderName, HeaderValue, Method};
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::config::CorsOrigins;

const ALLOWED_HEADERS: [HeaderName; 7] = [
    http::header::AUTHORIZATION,
    http::header::ACCEPT,
    http::header::CONTENT_TYPE,
    http::header::IF_NONE_MATCH,
    HeaderName::from_static("version"),
    HeaderName::from_static("x-request-id"),
    HeaderName::from_static("traceparent"),
];

const EXPOSED_HEADERS: [HeaderName; 6] = [
    http::header::LOCATION,
    http::header::ETAG,
    http::header::WARNING,
    http::header::RETRY_AFTER,
    HeaderName::from_static("x-request-id"),
    HeaderName::from_static("x-cache"),
];

/// The layer for the configured origins; None when CORS is off.
pub fn layer(origins: &CorsOrigins) -> Option<CorsLayer> {
    let allow = match origins {
        CorsOrigins::Off => return None,
        CorsOrigins::Any => AllowOrigin::any(),
        CorsOrigins::List(list) => AllowOrigin::list(
            list.iter()
                .filter_map(|origin| HeaderValue::from_str(origin).ok()),
        ),
    };
    Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods([
                Method::GET,
                Method::HEAD,
                Method::POST,
                Method::PUT,
                Method::DELETE,
            ])
            .allow_headers(ALLOWED_HEADERS)
            .expose_headers(EXPOSED_HEADERS)
            .max_age(Duration::from_secs(600)),
    )
}
