//! Operational endpoints, outside the API and its authentication: liveness, readiness and
//! Prometheus metrics.
//!
//! Readiness means "this instance can serve", not "Magento answers": a gateway with a
//! Magento outage still serves cached reads (stale-if-error) and the API's own errors, and a
//! Kubernetes readiness probe that followed Magento would take every replica out of service
//! at once, the opposite of what the cache is for. The upstream's state is reported beside
//! it (a field of the answer and `storegate_upstream_up`); `/readyz?upstream=required` is
//! the old, strict reading for those who want it.

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::StatusCode;
use http::header::CONTENT_TYPE;

use crate::app::AppState;
use crate::backend::port::CircuitState;
use crate::http::route_list::Listed;
use crate::shared_state::RedisStatus;

pub fn routes(app: AppState) -> Listed {
    Listed::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(app)
}

async fn healthz() -> &'static str {
    "ok\n"
}

#[derive(Debug, serde::Deserialize)]
struct ReadyQuery {
    /// `required`: not ready while Magento does not answer.
    upstream: Option<String>,
}

/// 503 `{"status":"draining"}` from the first shutdown signal on. 503 `"status":"warming"`
/// while the start's warm-up runs (`front::warm_start`: the lookups every request reads,
/// the previous hot answers refilled; within its bound), with `warm_start` saying how far
/// it got, which every answer carries. 503
/// `{"status":"not_ready","upstream":"refused","reason":...}` while the back end answers but
/// refuses the gateway's credentials (a wrong integration token: every call would fail; no
/// cache makes that servable). Otherwise 200 while the gateway serves, with the upstream's
/// state beside it:
/// `{"status":"ready","upstream":"up"|"down","circuit":"closed"|"open"|"half_open"}`, and
/// with `STOREGATE_REDIS_URL` `"redis":"up"|"down"`, the OAuth store's
/// `"oauth_store":"up"|"degraded"|"down"`, and with rate limits or the sign-in guard on
/// `"rate_limits":"fleet"|"instance"|"degraded"`. With the circuit open the ping fails at
/// once, adding no load to a failing back end. Redis down does not make the instance unready
/// either: reads are still served, and taking every instance out of rotation at once would
/// turn a Redis outage into a full one.
async fn readyz(State(app): State<AppState>, Query(query): Query<ReadyQuery>) -> Response {
    // Draining: out of rotation at once, while requests in flight finish.
    if app.connections.draining() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            [(CONTENT_TYPE, "application/json")],
            r#"{"status":"draining"}"#,
        )
            .into_response();
    }
    let up = match app.backend.ping().await {
        Ok(()) => true,
        Err(error) => {
            crate::observe::log_limit::warn(
                "readiness probe failed",
                format_args!("readiness probe: the upstream does not answer: {error}"),
            );
            false
        }
    };
    // Reachable is not enough: a back end refusing the integration token answers every
    // API call with an error, so this instance cannot serve and must say why.
    let refused = if up {
        app.backend.credentials_refused().await
    } else {
        None
    };
    if let Some(reason) = &refused {
        tracing::warn!(%reason, "readiness probe: the upstream refuses our credentials");
    }
    let up = up && refused.is_none();
    app.backend_up.set(up);
    let circuit = match app.backend.circuit()() {
        CircuitState::Closed => "closed",
        CircuitState::Open => "open",
        CircuitState::HalfOpen => "half_open",
    };
    let strict = query.upstream.as_deref() == Some("required");
    // Warming: the lookups every request reads and the previous hot answers are being
    // loaded (`front::warm_start`), within its bound; not in rotation until then.
    let warming = !app.warm_up.is_done();
    let status = if refused.is_none() && (up || !strict) && !warming {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let mut body = serde_json::json!({
        "status": match (status == StatusCode::OK, warming) {
            (true, _) => "ready",
            (false, true) if refused.is_none() => "warming",
            (false, _) => "not_ready",
        },
        "upstream": match (&refused, up) {
            (Some(_), _) => "refused",
            (None, true) => "up",
            (None, false) => "down",
        },
        "circuit": circuit,
    });
    if let Some(reason) = refused {
        body["reason"] = reason.into();
    }
    match app.shared.redis_status() {
        RedisStatus::Off => {}
        redis => body["redis"] = redis.as_str().into(),
    }
    // Where rate limits and failed sign-ins are counted: `fleet` (Redis), `instance` (no
    // Redis), `degraded` (Redis down: each instance alone, serving; not a reason to be
    // taken out of rotation).
    if app.limits.is_on() || app.limits.signin.is_on() {
        body["rate_limits"] = app.limits.counting().as_str().into();
    }
    body["warm_start"] = serde_json::to_value(app.warm_up.report()).unwrap_or_default();
    // The OAuth store failing does not take the instance out of rotation either: cached
    // reads, Bearer calls and signed calls of credentials already verified go on. Either
    // way its calls are refused at once until the breaker's probe finds it back.
    let (oauth_store, oauth_error) = app.oauth.store_state().await;
    body["oauth_store"] = oauth_store.into();
    if let Some(error) = oauth_error {
        body["oauth_store_error"] = error.into();
    }
    (
        status,
        [(CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
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
