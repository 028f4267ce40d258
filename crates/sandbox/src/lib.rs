//! An in-memory, Magento-2.4-compatible REST server.
//!
//! storegate talks to it over HTTP exactly as it talks to a real Magento 2 store: demos run
//! it in-process, app developers point at it, end-to-end tests and benchmarks use it as the
//! upstream. It is an independent reading of Magento 2 (no types shared with the gateway), so
//! a misread response shape shows up as a failing test instead of cancelling out.
//!
//! Routes: `/rest/V1/...` (default store view), `/rest/<store_code>/V1/...`,
//! `/rest/all/V1/...` (admin scope), plus `GET /__sandbox/stats`,
//! `POST /__sandbox/stats/reset` and the gallery files under `/media/catalog/product/`.
//! The seeded data is described in `fixtures/sandbox/README.md`.
//!
//! Layout: `model` holds the entities and Magento's rules for them (no HTTP); `state`
//! the in-memory store, its seed and its files; `webapi` the Web API conventions every
//! endpoint shares (errors, messages, input, search criteria); `api` the endpoints, where
//! `api::dispatch` alone knows every handler, and no handler imports it (they take
//! `api::call`'s `Call`).

mod api;
mod model;
mod state;
mod webapi;

use std::net::SocketAddr;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::api::dispatch::RawRequest;
use crate::api::{dispatch, token};
use crate::model::image;
use crate::state::{Shared, Stats, seed};
use crate::webapi::messages;

/// E-mail of the seeded demo customer (printed by the gateway at start).
pub const DEMO_CUSTOMER_EMAIL: &str = "roni_cost@example.com";
/// Password of the seeded demo customer; it satisfies Magento's default password rules.
pub const DEMO_CUSTOMER_PASSWORD: &str = "Roni-Cost-2024";

/// Largest request body accepted (base64 images make media uploads big).
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// How to start a [`Sandbox`].
#[derive(Debug, Clone, Default)]
pub struct SandboxOptions {
    /// Integration access token accepted as `Authorization: Bearer <token>`. None: generate a random one.
    pub token: Option<String>,
    /// Delay added before every answer (benchmarks simulate a slow back end with it).
    pub latency: Duration,
    /// Number of extra generated simple products added to the seed catalog (benchmarks: 100_000).
    pub generated_products: usize,
    /// Another store's catalog, customers and orders instead of `fixtures/sandbox/`'s
    /// (`storegate sandbox --seed-from URL`); the stores, directory, categories and
    /// catalog configuration stay the fixtures'.
    pub seed: Option<Arc<Seed>>,
}

/// A store's data in the fixtures' shapes (`fixtures/sandbox/README.md`): what the sandbox
/// starts with instead of its own seed.
#[derive(Debug, Clone, Default)]
pub struct Seed {
    /// `ProductInterface` bodies as `products.json` holds them: a fixed `id`, the gallery's
    /// `media_gallery_entries` with their `id` and `file`, the stock in
    /// `extension_attributes.stock_item`.
    pub products: Vec<Value>,
    /// `{"customer": CustomerInterface with its id and addresses, "password": ...}`, as
    /// `customers.json` holds them.
    pub customers: Vec<Value>,
    /// `OrderInterface`, returned as stored.
    pub orders: Vec<Value>,
    /// The gallery's files, by their `file` path (`/m/b/mb01.png`).
    pub media_files: Vec<(String, Vec<u8>)>,
}

/// A running sandbox server.
pub struct Sandbox {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
}

impl Sandbox {
    /// Serve on an already-bound listener (tests bind 127.0.0.1:0). Returns once it is accepting.
    pub async fn start(listener: TcpListener, options: SandboxOptions) -> std::io::Result<Sandbox> {
        let addr = listener.local_addr()?;
        let generated = options.generated_products;
        let from = options.seed.clone();
        let (db, skipped) = tokio::task::spawn_blocking(move || match from {
            Some(from) => seed::build_from(&from),
            None => seed::build(generated).map(|db| (db, Vec::new())),
        })
        .await
        .map_err(std::io::Error::other)?
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        for why in &skipped {
            tracing::warn!(record = %why, "seed: a record the sandbox refused was left out");
        }
        let shared = Arc::new(Shared {
            db: RwLock::new(db),
            token: options.token.unwrap_or_else(token::random_token),
            latency: options.latency,
            stats: Stats::default(),
            origin: origin_of(addr),
            public_origin: std::sync::OnceLock::new(),
        });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await
        });
        tracing::info!(%addr, "Magento sandbox listening");
        Ok(Sandbox {
            addr,
            shared,
            stop: Some(stop),
            task,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR` (no trailing slash). The gateway calls `{base_url}/rest/{scope}/V1/...`.
    pub fn base_url(&self) -> String {
        self.shared.origin.clone()
    }

    /// From now on, media and storefront URLs name `origin` (`http://host:port`, no trailing
    /// slash) instead of the address each caller used. Set once; later calls are ignored.
    pub fn set_public_origin(&self, origin: &str) {
        let _ = self
            .shared
            .public_origin
            .set(origin.trim_end_matches('/').to_owned());
    }

    pub fn token(&self) -> &str {
        &self.shared.token
    }

    /// Number of calls received so far whose method and path match, where `path` is the path after
    /// `/rest/<scope>` e.g. count("GET", "/V1/products/24-MB01"). Lets tests and benchmarks count upstream calls.
    pub fn count(&self, method: &str, path: &str) -> u64 {
        self.shared.stats.count(method, path)
    }

    /// Stop serving (graceful).
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match (&mut self.task).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::warn!(%error, "sandbox server stopped with an error"),
            Err(error) => tracing::warn!(%error, "sandbox server task failed"),
        }
    }
}

/// A listener on `0.0.0.0` is reachable through loopback; URLs must name a usable host.
fn origin_of(addr: SocketAddr) -> String {
    let host = match addr {
        SocketAddr::V4(v4) if v4.ip().is_unspecified() => "127.0.0.1".to_string(),
        SocketAddr::V6(v6) if v6.ip().is_unspecified() => "[::1]".to_string(),
        SocketAddr::V4(v4) => v4.ip().to_string(),
        SocketAddr::V6(v6) => format!("[{}]", v6.ip()),
    };
    format!("http://{host}:{}", addr.port())
}

fn json_response(status: u16, body: &Value) -> Response<Body> {
    let bytes = serde_json::to_vec(body).unwrap_or_else(|_| b"null".to_vec());
    let mut response = Response::new(Body::from(bytes));
    *response.status_mut() =
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    response
}

fn header_text(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Serves `/media/catalog/product/<file>` and its `cache/<hash>/<file>` resized variants.
fn media_file(shared: &Shared, path: &str) -> Response<Body> {
    let Some(rest) = path.strip_prefix("/media/catalog/product") else {
        return json_response(404, &json!({"message": "Not found"}));
    };
    let file = match rest.strip_prefix("/cache/") {
        Some(cached) => cached.split_once('/').map_or("", |(_, f)| f).to_string(),
        None => rest.trim_start_matches('/').to_string(),
    };
    let key = format!("/{file}");
    let db = shared
        .db
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let Some(bytes) = db.media_files.get(&key).cloned() else {
        return json_response(404, &json!({"message": "Not found"}));
    };
    drop(db);
    let mime = image::sniff(&bytes).map_or("application/octet-stream", |i| i.mime);
    let mut response = Response::new(Body::from(bytes.to_vec()));
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    response
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request<Body>) -> Response<Body> {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_string();
    match (&parts.method, path.as_str()) {
        (&Method::GET, "/__sandbox/stats") => {
            return json_response(200, &json!(shared.stats.snapshot()));
        }
        (&Method::POST, "/__sandbox/stats/reset") => {
            shared.stats.reset();
            return json_response(200, &json!(true));
        }
        _ => {}
    }
    if !shared.latency.is_zero() {
        tokio::time::sleep(shared.latency).await;
    }
    if parts.method == Method::GET && path.starts_with("/media/") {
        return media_file(&shared, &path);
    }
    let Some(rest_path) = path.strip_prefix("/rest") else {
        return json_response(404, &json!({"message": messages::NO_ROUTE}));
    };
    let body = match to_bytes(body, MAX_BODY_BYTES).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return json_response(413, &json!({"message": "Request body too large."}));
        }
    };
    let origin = match shared.public_origin.get() {
        Some(public) => public.clone(),
        None => header_text(&parts.headers, header::HOST)
            .map_or_else(|| shared.origin.clone(), |host| format!("http://{host}")),
    };
    let raw = RawRequest {
        method: parts.method.as_str(),
        rest_path,
        query: parts.uri.query().unwrap_or(""),
        authorization: header_text(&parts.headers, header::AUTHORIZATION),
        content_type: header_text(&parts.headers, header::CONTENT_TYPE),
        body: &body,
        origin,
    };
    let shared_ref: &Shared = &shared;
    let (answer, service_path) = dispatch::dispatch(shared_ref, &raw);
    shared.stats.record(parts.method.as_str(), &service_path);
    json_response(answer.status, &answer.body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unspecified_listen_address_maps_to_loopback() {
        assert_eq!(
            origin_of(
                "0.0.0.0:8080"
                    .parse()
                    .unwrap_or(SocketAddr::from(([0, 0, 0, 0], 8080)))
            ),
            "http://127.0.0.1:8080"
        );
    }
}
