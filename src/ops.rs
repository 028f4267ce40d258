//! Operational endpoints, outside the API and its authentication: liveness, readiness
//! (is the back end answering?) and Prometheus metrics.

use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::StatusCode;
use http::header::CONTENT_TYPE;

use crate::shared_state::RedisStatus;
use crate::state::AppState;

pub fn routes(app: AppState) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(app)
}

async fn healthz() -> &'static str {
    "ok\n"
}

/// Ready when Magento answers. With the circuit open the ping fails at once, so a load
/// balancer takes the instance out of rotation without adding load to a failing back end.
///
/// With `STOREGATE_REDIS_URL` a second line says `redis: up` or `redis: down`. Redis down
/// does not make the instance unready: reads are still served, and taking every instance
/// out of rotation at once would turn a Redis outage into a full one.
async fn readyz(State(app): State<AppState>) -> Response {
    let redis = app.shared.redis_status();
    let line = |first: &str| match redis {
        RedisStatus::Off => first.to_owned(),
        other => format!("{first}redis: {}\n", other.as_str()),
    };
    match app.magento.ping().await {
        Ok(()) => (StatusCode::OK, line("ready\n")).into_response(),
        Err(error) => {
            tracing::warn!(%error, "readiness check failed");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                line("upstream unavailable\n"),
            )
                .into_response()
        }
    }
}

/// Prometheus scrapes the OpenMetrics text format (it asks for it first in `Accept`).
async fn metrics(State(app): State<AppState>) -> Response {
    app.cache.settle().await;
    (
        [(
            CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        app.metrics.encode(),
    )
        .into_response()
}
