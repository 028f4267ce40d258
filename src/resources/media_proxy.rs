//! The embedded sandbox's media files (`/media/catalog/product/...`) served under the
//! gateway's own address, in sandbox mode only.
//!
//! The sandbox names its media with the gateway's public URL (`STOREGATE_PUBLIC_URL`), so a
//! phone or an emulator that reaches the gateway loads product images through it, and the
//! sandbox itself can stay on loopback. Against a real Magento the store's media URLs are
//! the store's own and this route does not exist.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::StatusCode;
use http::header::{CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE};

use crate::config::Config;
use crate::http::route_list::Listed;

#[derive(Clone)]
struct Sandbox {
    base: String,
    http: reqwest::Client,
}

/// `/media/{*path}` when the configuration names the sandbox's media; nothing otherwise.
pub fn routes(config: &Config) -> Listed {
    let Some(base) = &config.sandbox_media else {
        return Listed::new();
    };
    crate::backend::transport::install_crypto();
    let http = match reqwest::Client::builder().build() {
        Ok(http) => http,
        Err(error) => {
            tracing::error!(%error, "cannot build the media client: sandbox media not served");
            return Listed::new();
        }
    };
    let sandbox = Sandbox {
        base: base.trim_end_matches('/').to_owned(),
        http,
    };
    Listed::new()
        .route("/media/{*path}", get(media))
        .with_state(sandbox)
}

async fn media(State(sandbox): State<Sandbox>, Path(path): Path<String>) -> Response {
    let not_found = || (StatusCode::NOT_FOUND, "not found\n").into_response();
    // Only plain relative file paths: the sandbox keeps files in memory, but nothing else
    // should ever be asked of it through this door.
    if path
        .split('/')
        .any(|segment| segment.is_empty() || segment == "." || segment == "..")
    {
        return not_found();
    }
    let url = format!("{}/media/{path}", sandbox.base);
    let answer = match sandbox.http.get(url).send().await {
        Ok(answer) => answer,
        Err(error) => {
            tracing::warn!(%error, "the sandbox's media did not answer");
            return (StatusCode::BAD_GATEWAY, "sandbox unavailable\n").into_response();
        }
    };
    if !answer.status().is_success() {
        return not_found();
    }
    let content_type = answer.headers().get(CONTENT_TYPE).cloned();
    let Ok(bytes) = answer.bytes().await else {
        return (StatusCode::BAD_GATEWAY, "sandbox unavailable\n").into_response();
    };
    let mut response = Response::new(Body::from(bytes.clone()));
    let headers = response.headers_mut();
    if let Some(content_type) = content_type {
        headers.insert(CONTENT_TYPE, content_type);
    }
    headers.insert(CONTENT_LENGTH, bytes.len().into());
    headers.insert(
        CACHE_CONTROL,
        http::HeaderValue::from_static("public, max-age=300"),
    );
    response
}
