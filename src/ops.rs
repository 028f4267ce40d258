//! Operational endpoints, outside the API and its authentication: liveness, readiness
//! (is the back end answering?) and Prometheus metrics.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::StatusCode;
use http::header::CONTENT_TYPE;

use crate::app::AppState;

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

async fn readyz(State(app): State<AppState>) -> Response {
    match app.magento.ping().await {
        Ok(()) => (StatusCode::OK, "ready\n").into_response(),
        Err(error) => {
            tracing::warn!(%error, "readiness check failed");
            (StatusCode::SERVICE_UNAVAILABLE, "upstream unavailable\n").into_response()
        }
    }
}

async fn metrics(State(app): State<AppState>) -> Response {
    let stats = app.cache.stats();
    let (bytes, entries) = app.cache.usage();
    let mut out = String::new();
    let counters = [
        (
            "storegate_cache_hits_total",
            "Reads answered from a fresh cache entry.",
            stats.hits.load(Ordering::Relaxed),
        ),
        (
            "storegate_cache_misses_total",
            "Reads that fetched from the upstream.",
            stats.misses.load(Ordering::Relaxed),
        ),
        (
            "storegate_cache_coalesced_total",
            "Reads that waited for another caller's fetch.",
            stats.coalesced.load(Ordering::Relaxed),
        ),
        (
            "storegate_cache_stale_while_revalidate_total",
            "Stale entries served while refreshing.",
            stats.stale_while_revalidate.load(Ordering::Relaxed),
        ),
        (
            "storegate_cache_stale_if_error_total",
            "Stale entries served because the upstream failed.",
            stats.stale_if_error.load(Ordering::Relaxed),
        ),
        (
            "storegate_cache_evictions_total",
            "Entries evicted for capacity.",
            stats.evictions.load(Ordering::Relaxed),
        ),
        (
            "storegate_cache_invalidations_total",
            "Invalidation requests (writes and purges).",
            stats.invalidations.load(Ordering::Relaxed),
        ),
    ];
    for (name, help, value) in counters {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}"
        );
    }
    let _ = writeln!(
        out,
        "# HELP storegate_cache_weight_bytes Weighted size of the cache.\n# TYPE storegate_cache_weight_bytes gauge\nstoregate_cache_weight_bytes {bytes}"
    );
    let _ = writeln!(
        out,
        "# HELP storegate_cache_entries Entries in the cache.\n# TYPE storegate_cache_entries gauge\nstoregate_cache_entries {entries}"
    );
    (
        [(CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        out,
    )
        .into_response()
}
