//! The front's part of the dual run (`crate::shadow`, docs/dual-run.md): the candidate
//! back end built beside the serving one, from `STOREGATE_SHADOW_*` the way the serving one
//! is built; the gateway's own API stack over each back end, without a cache, as the
//! shadow's sides; and, with `STOREGATE_SHADOW_SERVE`, the whole gateway over the candidate
//! (its own cache, its own fast path) for the reads sent there.
//!
//! Each side is an [`App`] of its own that shares the serving gateway's handles (callers,
//! OAuth, shared state, metrics) but not its back end, cache or mappings: nothing the
//! serving gateway caches can answer for the candidate, or the other way round.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::response::Response;
use futures_util::future::BoxFuture;
use tokio::sync::Semaphore;
use tower::ServiceExt;

use super::{App, AppState, Parts, Store, settings_of};
use crate::backend::port::Backend;
use crate::backend::registry::{Registry, Wiring};
use crate::cache::Cache;
use crate::config::Config;
use crate::observe::metrics::{BackendMetrics, Metrics};
use crate::rules::mapping::Mappings;
use crate::shadow::{Series, Shadow, Side, Sides};
use crate::shared_state::SharedState;
use crate::shared_state::locks::Locks;

/// The candidate back end and the dual run, before the gateway's state is built.
pub(super) struct Candidate {
    backend: Arc<dyn Backend>,
    backend_metrics: BackendMetrics,
    mappings: Mappings,
    series: Series,
    /// The candidate's configuration: the serving one with the candidate's kind, store
    /// and store views (what its adapter and mappings are chosen by).
    config: Config,
}

impl Candidate {
    /// The candidate `STOREGATE_SHADOW_*` configures; None without one.
    pub(super) fn build(
        config: &Config,
        parts: &Parts,
        registry: &Registry,
    ) -> Result<Option<Candidate>, String> {
        let Some(settings) = &config.shadow else {
            return Ok(None);
        };
        let backend_metrics = BackendMetrics::default();
        // Not recorded: recordings are of the serving store (`STOREGATE_RECORD_DIR`); a
        // `replay:DIR` candidate replays in the strict mode, with the default scrubbing.
        let recording = crate::config::Recording::default();
        let store = Store {
            kind: settings.backend,
            url: &settings.upstream.url,
            token: settings.upstream.token.expose(),
            oauth: settings.upstream.oauth.as_ref(),
            store_views: &settings.openmage_store_views,
            recording: &recording,
        };
        // No customer sessions: the sessions kept are the serving store's (a candidate that
        // renders for each customer renders for them anonymously).
        let wiring = Wiring {
            metrics: backend_metrics.clone(),
            sessions: None,
        };
        let backend = registry
            .build(&settings_of(config, store), &wiring)
            .map_err(|e| format!("the shadow's candidate (STOREGATE_SHADOW_UPSTREAM_URL): {e}"))?;
        // The same mappings when the candidate is the same kind of store (an operator's
        // edits apply to both); the kind's own otherwise.
        let mappings = if settings.backend == config.backend {
            parts.mappings.clone()
        } else {
            Mappings::of_backend(settings.backend, &settings.backend.default_mappings())
                .map_err(|e| format!("the shadow's candidate mappings: {e}"))?
        };
        let mut candidate_config = config.clone();
        candidate_config.backend = settings.backend;
        candidate_config.upstream = Some(settings.upstream.clone());
        candidate_config.openmage_store_views = settings.openmage_store_views.clone();
        candidate_config.recording = recording;
        if settings.backend != config.backend {
            candidate_config.mappings = None;
        }
        Ok(Some(Candidate {
            backend,
            backend_metrics,
            mappings,
            series: Series::default(),
            config: candidate_config,
        }))
    }

    /// The candidate's series (its upstream calls, the comparisons) in `metrics`.
    pub(super) fn register(&self, metrics: Metrics) -> Metrics {
        metrics
            .with_shadow_backend(&self.backend_metrics)
            .with_collector(Box::new(self.series.clone()))
    }

    /// The dual run the serving gateway's state holds.
    pub(super) fn shadow(
        &self,
        config: &Config,
        parts: &Parts,
        shared: Arc<SharedState>,
    ) -> Option<Arc<Shadow>> {
        let settings = config.shadow.as_ref()?;
        Some(Arc::new(Shadow::new(
            settings,
            config.backend,
            shared,
            self.series.clone(),
            &parts.token_secret,
            config.upstream_timeout,
        )))
    }

    /// The sides, once the serving gateway's state (`app`) is built.
    pub(super) fn attach(self, app: &AppState) {
        let Some(shadow) = &app.shadow else {
            return;
        };
        let settings = shadow.settings();
        // The comparisons' own bound on requests in flight, so that a busy gateway's load
        // shedding does not count against the candidate (and the other way round).
        let fresh_in_flight = Arc::new(Semaphore::new(settings.max_in_flight.saturating_mul(3)));
        // A side's fresh reads: its own store and mappings, no cache, the shared bound.
        let fresh = |config: &Config, backend: &Arc<dyn Backend>, mappings: &Mappings| {
            let no_cache = Arc::new(Cache::new(0, Duration::ZERO, Duration::ZERO));
            let (config, backend, mappings) = (config.clone(), backend.clone(), mappings.clone());
            derived(
                app,
                config,
                backend,
                mappings,
                no_cache,
                fresh_in_flight.clone(),
                None,
            )
        };
        let serving_fresh = fresh(&app.config, &app.backend, &app.mappings);
        let candidate_fresh = fresh(&self.config, &self.backend, &self.mappings);
        let candidate_service = shadow.settings().serve.any().then(|| {
            let config = &self.config;
            let cache = Arc::new(Cache::with_windows(
                config.cache_max_bytes,
                config.cache_ttl,
                config.stale_while_revalidate,
                config.stale_if_error,
            ));
            // A write through the gateway, a purge, another instance's invalidation: what
            // is stale in the serving cache is stale in the candidate's.
            app.cache.mirror_to(cache.clone());
            // Its reads are apps' requests, counted in the serving gateway's budgets (a
            // read the candidate fails is counted again when the serving one answers it).
            if app.limits.is_on() {
                cache.reserve_hit_field(crate::limits::RATELIMIT);
            }
            let candidate = Arc::new(App {
                limits: app.limits.clone(),
                ..derived(
                    app,
                    self.config.clone(),
                    self.backend.clone(),
                    self.mappings.clone(),
                    cache,
                    app.in_flight.clone(),
                    Some(Arc::new(shadow.as_candidate())),
                )
            });
            let router = super::router(candidate.clone());
            Arc::new(Served(super::service(router, &candidate))) as Arc<dyn Side>
        });
        shadow.set_sides(Sides {
            serving_fresh: Arc::new(Api::over(Arc::new(serving_fresh))),
            candidate_fresh: Arc::new(Api::over(Arc::new(candidate_fresh))),
            candidate_service,
        });
    }
}

/// A gateway state over another back end, sharing the serving one's handles. Its limits
/// count nothing: a comparison's read is no request of an app (the app's own request was
/// counted); the candidate's gateway, which serves apps' reads, takes the serving one's.
fn derived(
    app: &AppState,
    config: Config,
    backend: Arc<dyn Backend>,
    mappings: Mappings,
    cache: Arc<Cache>,
    in_flight: Arc<Semaphore>,
    shadow: Option<Arc<Shadow>>,
) -> App {
    App {
        limits: crate::limits::Limits::none(&config),
        config,
        backend,
        cache,
        mappings,
        auth: app.auth.clone(),
        oauth: app.oauth.clone(),
        locks: Locks::new(app.shared.clone()),
        shared: app.shared.clone(),
        metrics: app.metrics.clone(),
        in_flight,
        connections: app.connections.clone(),
        uploads: app.uploads.clone(),
        backend_up: crate::observe::process::BackendUp::default(),
        // The serving side's warm-up: the candidate's state answers no `/readyz`.
        warm_up: app.warm_up.clone(),
        shadow,
    }
}

/// The API's stack over one back end, without the front (no access line, no request
/// metrics, no cache): a comparison's read is no request of an app.
struct Api(Router);

impl Api {
    fn over(app: AppState) -> Api {
        Api(Router::new().nest("/api/rest", super::api(app).0))
    }
}

impl Side for Api {
    fn answer(&self, request: Request) -> BoxFuture<'static, Response> {
        let router = self.0.clone();
        Box::pin(async move {
            router
                .oneshot(request)
                .await
                .unwrap_or_else(|never| match never {})
        })
    }
}

/// The whole gateway over the candidate: the reads `STOREGATE_SHADOW_SERVE` sends there
/// are requests of an app, counted, logged and cached as any other.
struct Served(super::Service);

impl Side for Served {
    fn answer(&self, request: Request) -> BoxFuture<'static, Response> {
        let service = self.0.clone();
        Box::pin(async move { crate::server::Serve::serve(&service, request).await })
    }
}
