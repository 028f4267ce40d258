//! The application: shared state and the HTTP service built from a configuration.
//!
//! Layers, outermost first: request id, trace, error rendering and format negotiation,
//! panic guard, authentication, request deadline, then one route per spec resource. The
//! operational endpoints (`/healthz`, `/readyz`, `/metrics`) sit outside the API's layers.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::middleware::{Next, from_fn, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use http::HeaderName;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;

use crate::auth::{self, Authenticator, TokenIssuer};
use crate::cache::Cache;
use crate::config::Config;
use crate::http::{ApiError, middleware::negotiate};
use crate::mapping::Mappings;
use crate::resources;
use crate::upstream::Magento;

/// Everything a handler may need, shared by every request.
#[derive(Debug)]
pub struct App {
    pub config: Config,
    pub magento: Magento,
    pub cache: Arc<Cache>,
    pub mappings: Mappings,
    pub auth: Arc<Authenticator>,
    /// Serialises creates of one SKU in this instance (Magento's create is an upsert).
    pub create_locks: moka::sync::Cache<String, Arc<tokio::sync::Mutex<()>>>,
}

pub type AppState = Arc<App>;

/// What the caller of [`build`] must know besides the configuration.
#[derive(Debug)]
pub struct Parts {
    /// Base URL of the Magento 2 to call (the sandbox's in sandbox mode).
    pub upstream_url: String,
    pub upstream_token: String,
    /// Admin key digests (plain keys already hashed).
    pub admin_digests: Vec<[u8; 32]>,
    /// The key customer tokens are signed with.
    pub token_secret: Vec<u8>,
    pub mappings: Mappings,
}

/// Builds the state and the service.
pub fn build(config: Config, parts: Parts) -> Result<(Router, AppState), String> {
    let magento = Magento::new(
        &parts.upstream_url,
        &parts.upstream_token,
        config.upstream_timeout,
        &config.default_store,
    )?;
    let cache = Arc::new(Cache::new(
        config.cache_max_bytes,
        config.cache_ttl,
        config.stale_if_error,
    ));
    let tokens = TokenIssuer::new(parts.token_secret, config.token_ttl);
    let auth = Arc::new(Authenticator::new(parts.admin_digests, tokens));
    let app = Arc::new(App {
        config,
        magento,
        cache,
        mappings: parts.mappings,
        auth,
        create_locks: moka::sync::Cache::builder()
            .max_capacity(10_000)
            .time_to_idle(Duration::from_secs(60))
            .build(),
    });
    Ok((router(app.clone()), app))
}

fn router(app: AppState) -> Router {
    let deadline = app.config.upstream_timeout + Duration::from_millis(500);
    let api = resources::routes()
        .fallback(any(route_not_found))
        .layer(from_fn(move |request: Request, next: Next| {
            request_deadline(deadline, request, next)
        }))
        .layer(from_fn_with_state(app.auth.clone(), auth::authenticate))
        .layer(CatchPanicLayer::custom(|_panic| {
            ApiError::internal()
                .with_cause("a handler panicked")
                .into_response()
        }))
        .layer(from_fn(negotiate))
        .with_state(app.clone());

    let request_id = HeaderName::from_static("x-request-id");
    Router::new()
        .nest("/api/rest", api)
        .merge(crate::ops::routes(app.clone()))
        .fallback(any(outside_api))
        // Spans name the method and path only: a query string can hold an e-mail filter.
        .layer(TraceLayer::new_for_http().make_span_with(|request: &Request| {
            tracing::info_span!("request", method = %request.method(), path = %request.uri().path())
        }))
        .layer(PropagateRequestIdLayer::new(request_id.clone()))
        .layer(SetRequestIdLayer::new(request_id, MakeRequestUuid))
}

async fn route_not_found() -> ApiError {
    ApiError::route_not_found()
}

/// Paths outside `/api/rest` get the API's answer too, in its format.
async fn outside_api(request: Request) -> Response {
    let format = crate::http::format::negotiate_response(request.headers())
        .unwrap_or(crate::http::Format::Xml);
    crate::http::middleware::finish(format, ApiError::route_not_found().into_response())
}

/// No request outlives the upstream deadline by more than a small margin, however many
/// upstream calls it makes.
async fn request_deadline(deadline: Duration, request: Request, next: Next) -> Response {
    match tokio::time::timeout(deadline, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError::gateway_timeout()
            .with_cause("request deadline passed")
            .into_response(),
    }
}
