//! The application: the HTTP service (its layer stack and routes) and the shared state,
//! built from a configuration.
//!
//! Layers, outermost first: a trailing slash trimmed before routing ([`service`]); the front
//! of every request ([`front`], run in the configured compatibility profile: request id,
//! access log and request metrics; the caller, authenticated and negotiated once; the fast path, which
//! answers repeats of cached reads at once; the log span and the request id for the
//! upstream client, for requests the fast path did not answer); then, for the API only:
//! error rendering and format negotiation, load shedding (at most
//! `STOREGATE_MAX_IN_FLIGHT` requests at once, the rest a 503 at once), panic guard,
//! authentication, request deadline, then one route per spec resource.
//! The operational endpoints (`/healthz`, `/readyz`, `/metrics`), the API reference
//! (`/api/rest/openapi.json`, `/api/rest/docs`) and the sandbox's media sit outside the API's
//! layers, so they answer even when the API sheds load. CORS, when configured, wraps it all.

pub mod cors;
mod dual;
pub mod fallback;
pub mod fast_path;
pub mod limit_step;
pub mod warm_start;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::{Next, from_fn, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use http::{HeaderValue, StatusCode};
use tokio::sync::Semaphore;
use tower::{ServiceBuilder, ServiceExt};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::normalize_path::NormalizePath;

use crate::auth::caller;
use crate::auth::{self, Authenticator, TokenIssuer};
use crate::backend::port::SessionKeeper;
use crate::backend::registry::{OAuthKeys, Registry, Settings, Wiring};
use crate::backend::shell::resilience;
use crate::cache::Cache;
use crate::config::Config;
use crate::context::request;
use crate::http::{ApiError, middleware::negotiate};
use crate::observe::metrics::{BackendMetrics, Metrics};
use crate::observe::telemetry;
use crate::resources;
use crate::rules::mapping::Mappings;
use crate::shared_state::SharedState;
use crate::shared_state::locks::Locks;
use fast_path::FastPath;

pub use crate::app::{App, AppState};

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

/// The settings of the configured back end, from the configuration and what the caller
/// knows besides (the store's URL and credential, the sandbox's in sandbox mode).
pub fn backend_settings(config: &Config, parts: &Parts) -> Settings {
    settings_of(
        config,
        Store {
            kind: config.backend,
            url: &parts.upstream_url,
            token: &parts.upstream_token,
            oauth: config.upstream.as_ref().and_then(|u| u.oauth.as_ref()),
            store_views: &config.openmage_store_views,
            recording: &config.recording,
        },
    )
}

/// Which store a back end talks to: the serving back end's comes from `STOREGATE_BACKEND`
/// and `STOREGATE_UPSTREAM_*`, the dual run's candidate from `STOREGATE_SHADOW_*` (`dual`);
/// both are built from it alike.
pub(crate) struct Store<'a> {
    pub kind: crate::config::BackendKind,
    /// The base URL called (the embedded sandbox's in sandbox mode), or `replay:DIR`.
    pub url: &'a str,
    pub token: &'a str,
    /// A store that signs with OAuth 1.0a: its keys.
    pub oauth: Option<&'a crate::config::UpstreamOAuth>,
    /// The store views named in the configuration (a store whose API lists none).
    pub store_views: &'a [(String, u64, u64)],
    /// Recording and replay of its calls.
    pub recording: &'a crate::config::Recording,
}

/// A store's settings, with the deadline and resilience of the configuration.
pub(crate) fn settings_of(config: &Config, store: Store<'_>) -> Settings {
    Settings {
        kind: store.kind.as_str().to_owned(),
        url: store.url.to_owned(),
        token: crate::config::Secret::new(store.token),
        oauth: store.oauth.map(|oauth| OAuthKeys {
            consumer_key: oauth.consumer_key.clone(),
            consumer_secret: oauth.consumer_secret.clone(),
            token_secret: oauth.token_secret.clone(),
        }),
        store_views: store.store_views.to_vec(),
        default_store: config.default_store.clone(),
        timeout: config.upstream_timeout,
        resilience: resilience::Options {
            failure_threshold: config.circuit_failure_threshold,
            open_for: config.circuit_open,
            max_in_flight: config.upstream_max_in_flight,
        },
        recording: store.recording.clone(),
    }
}

/// Customers' store sessions, kept in the OAuth store (shared by every instance) for a
/// back end that keeps them.
#[derive(Debug)]
struct OAuthSessions(Arc<crate::auth::oauth::OAuth>);

#[async_trait::async_trait]
impl SessionKeeper for OAuthSessions {
    async fn session(&self, customer_id: u64) -> Result<Option<String>, String> {
        self.0
            .store()
            .store_session(customer_id)
            .await
            .map_err(|e| e.to_string())
    }

    async fn keep(&self, customer_id: u64, session: &str) -> Result<(), String> {
        self.0
            .store()
            .put_store_session(customer_id, session)
            .await
            .map_err(|e| e.to_string())
    }
}

/// Builds the state and the service, the back end one of this build's kinds.
pub fn build(config: Config, parts: Parts) -> Result<(Router, AppState), String> {
    build_with(config, parts, &Registry::standard())
}

/// Builds the state and the service, the back end of `config`'s kind from `registry`.
pub fn build_with(
    config: Config,
    parts: Parts,
    registry: &Registry,
) -> Result<(Router, AppState), String> {
    let backend_metrics = BackendMetrics::default();
    let cache = Arc::new(Cache::with_windows(
        config.cache_max_bytes,
        config.cache_ttl,
        config.stale_while_revalidate,
        config.stale_if_error,
    ));
    let in_flight = Arc::new(Semaphore::new(config.max_in_flight));
    let connections = Arc::new(crate::server::Connections::new(
        config.max_connections.unwrap_or_else(|| {
            crate::server::default_max_connections(config.upstream_max_in_flight)
        }),
    ));
    let tokens = Arc::new(TokenIssuer::new(
        parts.token_secret.clone(),
        config.token_ttl,
    ));
    let shared = SharedState::start(&config, &cache, &tokens)?;
    let mut oauth = crate::auth::oauth::OAuth::open(&config, &parts.token_secret)?;
    if config.redis_url.is_some() {
        // Several machines: a nonce used on one instance is refused on every other, and a
        // revocation on one reaches the others' verified credentials at once.
        oauth = oauth
            .with_nonce_guard(Arc::new(crate::shared_state::nonces::SharedNonces::new(
                shared.clone(),
            )))
            .with_revocations(Arc::new(crate::shared_state::nonces::SharedRevocations(
                shared.clone(),
            )));
    }
    let oauth = Arc::new(oauth);
    shared.attach_oauth(oauth.verified());
    let limits = crate::limits::Limits::new(&config, &shared, &parts.token_secret);
    if limits.is_on() {
        // Every hit carries `RateLimit`: its place is in each hit's map already.
        cache.reserve_hit_field(crate::limits::RATELIMIT);
    }
    let backend = registry.build(
        &backend_settings(&config, &parts),
        &Wiring {
            metrics: backend_metrics.clone(),
            sessions: Some(Arc::new(OAuthSessions(oauth.clone()))),
        },
    )?;
    let backend_up = crate::observe::process::BackendUp::default();
    let metrics = Metrics::new(
        backend_metrics,
        cache.clone(),
        {
            let probe = backend.circuit();
            Arc::new(move || probe() as i64)
        },
        {
            let (in_flight, max) = (in_flight.clone(), config.max_in_flight);
            Arc::new(move || (max - in_flight.available_permits()) as i64)
        },
        {
            let connections = connections.clone();
            Arc::new(move || (connections.open() as i64, connections.refused()))
        },
    )
    .with_collector(Box::new(crate::observe::process::ProcessCollector {
        backend_up: backend_up.clone(),
    }))
    .with_shared_state(shared.clone())
    .with_collector(Box::new(crate::observe::process::OAuthSeries(
        oauth.clone(),
    )))
    .with_collector(Box::new(crate::limits::series::LimitSeries(limits.clone())));
    let candidate = dual::Candidate::build(&config, &parts, registry)?;
    let metrics = Arc::new(match &candidate {
        Some(candidate) => candidate.register(metrics),
        None => metrics,
    });
    let shadow = candidate
        .as_ref()
        .and_then(|candidate| candidate.shadow(&config, &parts, shared.clone()));
    // The warm start's own requests refill Admin answers too, with a key of this process
    // alone (`warm_start`).
    let mut admin_digests = parts.admin_digests;
    let warm_up = Arc::new(warm_start::prepare(
        &config,
        &parts.upstream_url,
        &mut admin_digests,
    ));
    let auth = Arc::new(Authenticator::new(
        admin_digests,
        tokens,
        Some(oauth.clone()),
    ));
    // A shared store's schema is brought up to date now, not by the first sign-in (and a
    // database down at start is logged, not fatal: the catalog serves without it). Then the
    // customer revocations kept in it are loaded (retried while the store is down) and read
    // again every few seconds, so that an instance started after Redis lost its data still
    // refuses a deleted customer's tokens.
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        let (oauth, revocations) = (oauth.clone(), auth.revocations().clone());
        runtime.spawn(async move {
            if let Err(error) = oauth.prepare_store().await {
                tracing::error!(%error, "OAuth store not reachable at start; sign-ins get 503 until it is");
            }
            revocations.spawn_sync();
        });
    }
    let app = Arc::new(App {
        backend,
        cache,
        mappings: parts.mappings,
        auth,
        oauth,
        locks: Locks::new(shared.clone()),
        shared,
        metrics,
        in_flight,
        connections,
        uploads: Arc::new(Semaphore::new(config.max_uploads_in_flight)),
        config,
        backend_up,
        limits,
        warm_up,
        shadow,
    });
    if let Some(candidate) = candidate {
        candidate.attach(&app);
    }
    Ok((router(app.clone()), app))
}

fn router(app: AppState) -> Router {
    assemble(app).0
}

/// The path templates the gateway serves (`/api/rest/products/{id}`, `/healthz`, ...), from
/// the same code that builds its router: what the OpenAPI document must list.
pub fn served_routes(app: &AppState) -> Vec<String> {
    assemble(app.clone()).1
}

/// The API under `/api/rest` (without that prefix) with its layers, over `app`: what the
/// gateway nests there, and what the dual run's sides answer with (`dual`).
fn api(app: AppState) -> (Router, Vec<String>) {
    // A silent client is refused within the request's deadline: the wait for the next
    // piece of its body is never longer than the deadline itself (issue 23).
    let timeouts = (
        app.config.upstream_timeout,
        app.config.body_timeout.min(app.config.upstream_timeout),
    );
    // The API's layers go in with one `Router::layer` call (a `ServiceBuilder`, outermost
    // first), not one call per layer: each call boxes every route once more, and each
    // layer clones all the boxes beneath it on every request.
    let (api, api_templates) = resources::routes().into_parts();
    let api = api
        .fallback(any(route_not_found))
        .layer(
            ServiceBuilder::new()
                .layer(from_fn(negotiate))
                .layer(from_fn_with_state(app.clone(), shed_load))
                .layer(CatchPanicLayer::custom(|_panic| {
                    ApiError::internal()
                        .with_cause("a handler panicked")
                        .into_response()
                }))
                .layer(from_fn_with_state(app.auth.clone(), auth::authenticate))
                .layer(from_fn(crate::observe::metrics::tag_user_type))
                .layer(from_fn_with_state(
                    app.clone(),
                    limit_step::after_authentication,
                ))
                .layer(from_fn(move |request: Request, next: Next| {
                    request_deadline(timeouts, request, next)
                })),
        )
        .with_state(app);
    (api, api_templates)
}

fn assemble(app: AppState) -> (Router, Vec<String>) {
    let (api, api_templates) = api(app.clone());
    let (outside, outside_templates) = crate::resources::ops::routes(app.clone())
        .merge(crate::resources::oauth::endpoints::routes(app.clone()))
        .merge(crate::resources::api_docs::routes())
        .merge(crate::resources::media_proxy::routes(&app.config))
        .into_parts();
    let mut templates: Vec<String> = api_templates
        .iter()
        .map(|t| format!("/api/rest{t}"))
        .collect();
    templates.extend(outside_templates);

    let router = Router::new()
        .nest("/api/rest", api)
        .merge(outside)
        .fallback(any({
            let app = app.clone();
            move |request: Request| fallback::outside_api(app.clone(), request)
        }))
        .layer(from_fn_with_state(app.clone(), front));
    // Outermost, so that a browser's preflight is answered before the API refuses OPTIONS,
    // and every answer (cache hits, errors) carries the CORS headers.
    let router = match crate::front::cors::layer(&app.config.cors_origins) {
        Some(cors) => router.layer(cors),
        None => router,
    };
    (router, templates)
}

/// What the accept loop serves ([`crate::server::Serve`]): the router, trimming a trailing
/// slash before routing (`/products/` is `/products`, as in the original: one route and one
/// cache entry; outside the router, since a layer on it would run after routing), and in
/// front of it all a repeat of a cached read answered before routing ([`Early`]).
#[derive(Clone)]
pub struct Service {
    router: NormalizePath<Router>,
    early: Option<Arc<Early>>,
    /// The dual run, when `STOREGATE_SHADOW_SERVE` sends reads to the candidate.
    cutover: Option<Arc<crate::shadow::Shadow>>,
}

/// The service for `router`, built by [`build`] with `app`.
pub fn service(router: Router, app: &AppState) -> Service {
    Service {
        router: NormalizePath::trim_trailing_slash(router),
        early: Early::new(app),
        cutover: app.shadow.clone().filter(|shadow| shadow.serves_any()),
    }
}

impl crate::server::Serve for Service {
    async fn serve(&self, request: Request) -> Response {
        if let Some(shadow) = &self.cutover
            && let Some(class) = shadow.takes(&request)
        {
            // Boxed: a cut-over read holds two gateways' futures, which a hit never needs.
            return Box::pin(
                shadow.serve(class, request, |request| Box::pin(self.serve_here(request))),
            )
            .await;
        }
        self.serve_here(request).await
    }
}

impl Service {
    /// `request` answered by this gateway's own back end.
    async fn serve_here(&self, request: Request) -> Response {
        let request = match &self.early {
            Some(early) if early.may_answer(&request) => match early.answer(request).await {
                Ok(response) => return response,
                Err(request) => request,
            },
            _ => request,
        };
        self.router
            .clone()
            .oneshot(request)
            .await
            .unwrap_or_else(|never| match never {})
    }
}

/// A repeat of a cached read, answered before routing: the front's steps for a hit
/// ([`front_steps`]: request id and clock, the caller, the fast path, metrics and access
/// line), without what routing costs every request on the way to them (the router's
/// lookup, its parameters and matched path in the request's extensions, the route's boxed
/// services cloned and called, the front layer's own): about a sixth of a hit's
/// instructions (`bench/instructions.py`). The answer is the one the front would give after
/// routing, byte for byte.
///
/// Only for what the front after routing would see alike: a GET under `/api/rest/` without
/// a trailing slash (routing sees a trimmed path) and without `Authorization: OAuth` (whose
/// profile is its consumer's), and not when CORS is configured (its layer wraps the
/// router: such a hit is answered by the front after routing, inside it). The route's
/// template, for the access line and the metrics, is what routing would match: the same
/// templates in a router of their own ([`served_routes`]). A miss goes on to routing with
/// what was found (`PreRouted`), so the cache is not looked up twice.
struct Early {
    app: AppState,
    routes: matchit::Router<Arc<str>>,
    /// Unique in the process: whose routes a thread's table of paths holds ([`Early::route`]).
    id: usize,
}

impl Early {
    fn new(app: &AppState) -> Option<Arc<Early>> {
        if !app.cache.enabled() || crate::front::cors::layer(&app.config.cors_origins).is_some() {
            return None;
        }
        let mut routes = matchit::Router::new();
        for template in served_routes(app) {
            // The router took every one of them; a template it would refuse leaves hits
            // to the front after routing.
            let name: Arc<str> = template.as_str().into();
            if routes.insert(template, name).is_err() {
                return None;
            }
        }
        static NEXT_ID: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1);
        Some(Arc::new(Early {
            app: app.clone(),
            routes,
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }))
    }

    /// The route template routing would match for `path`. Worked out once per path and
    /// worker thread (a small table of the paths it saw last), and handed out as the
    /// thread's own copy: the router's lookup was a few hundred instructions of every hit,
    /// and cloning the router's shared template counted a reference every worker counts.
    fn route(&self, path: &str) -> Option<Arc<str>> {
        const SLOTS: usize = 64;
        type Seen = (usize, Box<str>, Option<Arc<str>>);
        thread_local! {
            static SEEN: std::cell::RefCell<Vec<Option<Seen>>> =
                const { std::cell::RefCell::new(Vec::new()) };
        }
        let me = self.id;
        let slot = crate::per_thread::slot::of(me as u64, path, SLOTS);
        let kept = SEEN.try_with(|seen| {
            let seen = seen.try_borrow().ok()?;
            match seen.get(slot)? {
                Some((early, seen_path, route)) if *early == me && **seen_path == *path => {
                    Some(route.clone())
                }
                _ => None,
            }
        });
        if let Ok(Some(route)) = kept {
            return route;
        }
        let route: Option<Arc<str>> = self
            .routes
            .at(path)
            .ok()
            .map(|found| (**found.value).into());
        let _ = SEEN.try_with(|seen| {
            if let Ok(mut seen) = seen.try_borrow_mut() {
                if seen.is_empty() {
                    seen.resize_with(SLOTS, || None);
                }
                seen[slot] = Some((me, path.into(), route.clone()));
            }
        });
        route
    }

    fn may_answer(&self, request: &Request) -> bool {
        let path = request.uri().path();
        request.method() == http::Method::GET
            && path.starts_with("/api/rest/")
            && !path.ends_with('/')
            && crate::auth::oauth::params::oauth_header(request.headers()).is_none()
    }

    /// The answer of a hit, or the request back (with what was found) for routing.
    async fn answer(&self, mut request: Request) -> Result<Response, Request> {
        let app = &self.app;
        let steps = async move {
            let mut observed = telemetry::Observed::begin(&request);
            let resolved = caller::resolve(&app.auth, request.headers(), request.uri().query());
            let verdict = match limits_before_routing(app, &resolved, &request, &observed) {
                limit_step::Step::Skip => None,
                step => step.verdict(app).await,
            };
            if let (Some(verdict), Some(caller)) = (&verdict, resolved.caller())
                && let Some(refused) = limit_step::refusal(caller.format, verdict)
            {
                observed.set_route(self.route(request.uri().path()));
                return Ok(observed.finish(
                    &app.metrics,
                    app.config.access_log,
                    refused,
                    Some(caller.user_type()),
                ));
            }
            match fast_lookup(app, &resolved, &request, &observed).await {
                FastPath::Hit(mut response, user_type) => {
                    if app.limits.is_on() {
                        verdict
                            .as_ref()
                            .unwrap_or(&crate::limits::Verdict::Unlimited)
                            .apply(response.headers_mut());
                    }
                    let route = self.route(request.uri().path());
                    let noted = app.shadow.as_ref().and_then(|shadow| {
                        shadow.note(
                            request.method(),
                            request.uri(),
                            request.headers(),
                            route.as_deref(),
                            resolved.caller().map(|caller| caller.principal),
                        )
                    });
                    observed.set_route(route);
                    observed.set_cache_status("HIT");
                    // No `Content-Length` here, where axum's route would set one: hyper
                    // writes it at the same place, after the other headers.
                    let response = observed.finish(
                        &app.metrics,
                        app.config.access_log,
                        response,
                        Some(user_type),
                    );
                    Ok(shadowed(app, noted, response).await)
                }
                FastPath::Miss(fast_key) => {
                    request.extensions_mut().insert(PreRouted {
                        observed,
                        fast_key,
                        verdict,
                    });
                    Err(request)
                }
            }
        };
        // In the configured profile, as the front after routing runs (no OAuth header here);
        // the default one is what the profile's task-local reads when unset.
        let profile = app.config.profile;
        if profile == crate::context::profile::Profile::default() {
            steps.await
        } else {
            crate::context::profile::scope(profile, steps).await
        }
    }
}

/// A request [`Early`] looked up before routing and did not answer: its clock, id and
/// trace, and the fast-path key the lookup found, for the front after routing.
#[derive(Clone)]
struct PreRouted {
    observed: telemetry::Observed,
    fast_key: Option<Arc<str>>,
    /// The rate limits' verdict, when they counted the request (`limit_step`).
    verdict: Option<crate::limits::Verdict>,
}

/// The front of every request, after routing, in order: request id, clock and trace
/// ([`telemetry::Observed::begin`]); the caller, authenticated and negotiated once
/// ([`caller::resolve`]); the fast path, which answers repeats of cached reads at once
/// ([`fast_path::lookup`]); for the requests it does not answer, the caller's outcomes into
/// the request's extensions and the log span ([`telemetry::trace`]) around the API's
/// layers; last, request metrics and the access line ([`telemetry::Observed::finish`]).
///
/// Steps of one layer rather than a layer each: a layer costs every request a boxed
/// future and a clone of the services beneath it, about a thousand instructions of a
/// cache hit's 26,000 (`bench/instructions.py`). And steps as plain calls in one `async fn`
/// rather than `async fn`s wrapping each other: each would keep its own copy of the request
/// in a future that axum then copies whole into the heap.
async fn front(State(app): State<AppState>, request: Request, next: Next) -> Response {
    // Everything a request does is in one compatibility profile (`profile`): the signed
    // request of an OAuth consumer registered with one is in its consumer's (an app of the
    // original keeps the original's formats), every other in the configured one. Only a
    // request with an `Authorization: OAuth` header waits for the store.
    let profile = match crate::auth::oauth::params::oauth_header(request.headers()) {
        Some(_) => app.oauth.consumer_profile(request.headers()).await,
        None => None,
    }
    .unwrap_or(app.config.profile);
    crate::context::profile::scope(profile, front_steps(app, request, next)).await
}

async fn front_steps(app: AppState, mut request: Request, next: Next) -> Response {
    // Begun before routing and looked up there already (`Early`): not looked up again.
    let (observed, looked_up, verdict) = match request.extensions_mut().remove::<PreRouted>() {
        Some(PreRouted {
            mut observed,
            fast_key,
            verdict,
        }) => {
            observed.routed(&request);
            (observed, Some(FastPath::Miss(fast_key)), Some(verdict))
        }
        None => (telemetry::Observed::begin(&request), None, None),
    };
    let resolved = caller::resolve(&app.auth, request.headers(), request.uri().query());
    let verdict = match verdict {
        Some(verdict) => verdict,
        None => {
            limits_before_routing(&app, &resolved, &request, &observed)
                .verdict(&app)
                .await
        }
    };
    if let (Some(verdict), Some(caller)) = (&verdict, resolved.caller())
        && let Some(refused) = limit_step::refusal(caller.format, verdict)
    {
        return observed.finish(
            &app.metrics,
            app.config.access_log,
            refused,
            Some(caller.user_type()),
        );
    }
    let found = match looked_up {
        Some(found) => found,
        None => fast_lookup(&app, &resolved, &request, &observed).await,
    };
    // The dual run notes a write, or a read it samples, before the request goes on.
    let noted = app.shadow.as_ref().and_then(|shadow| {
        shadow.note(
            request.method(),
            request.uri(),
            request.headers(),
            observed.route(),
            resolved.caller().map(|caller| caller.principal),
        )
    });
    let (mut response, user_type) = match found {
        FastPath::Hit(response, user_type) => (response, Some(user_type)),
        FastPath::Miss(fast_key) => {
            let api_read =
                crate::cache::status::is_api_read(request.method(), request.uri().path());
            resolved.attach(request.extensions_mut());
            if verdict.is_some() {
                request.extensions_mut().insert(limit_step::Decided);
            }
            // Boxed: the rest of a request is a large future, and a hit, which never
            // polls it, would otherwise carry room for it.
            let rest = Box::pin(telemetry::trace(request, observed.request_id(), next));
            let mut response = match fast_key {
                Some(key) => crate::cache::response::with_fast_key(key, rest).await,
                None => rest.await,
            };
            if api_read {
                crate::cache::status::mark_uncached(&mut response);
            }
            (response, None)
        }
    };
    if app.limits.is_on() {
        // A hit's map has the field's place ready: filled, or taken out when nothing
        // counted the request (`limits::Verdict::apply`).
        verdict
            .as_ref()
            .unwrap_or(&crate::limits::Verdict::Unlimited)
            .apply(response.headers_mut());
    }
    let response = observed.finish(&app.metrics, app.config.access_log, response, user_type);
    shadowed(&app, noted, response).await
}

/// The answer, after the dual run saw it (when it noted the request): unchanged. Boxed where
/// it runs, so that a request the dual run did not note (every request without a shadow)
/// carries one pointer for it in its future, not the comparison's start.
async fn shadowed(app: &App, noted: Option<crate::shadow::Noted>, response: Response) -> Response {
    match (noted, &app.shadow) {
        (Some(noted), Some(shadow)) => Box::pin(shadow.after(noted, response)).await,
        _ => response,
    }
}

async fn route_not_found() -> ApiError {
    ApiError::route_not_found()
}

/// No request outlives the upstream deadline by more than a small margin, however many
/// upstream calls it makes: the upstream calls share the deadline (each one's timeout is
/// what is left of it), and the margin is for our own work after the last one.
///
/// Time spent waiting for the client's body is not counted against Magento: while the body
/// is arriving the deadline stays ahead of the stall timeout (a stall is a 408 from the
/// body reader, see `http::client_body`), and once it has arrived the upstream calls get
/// their whole deadline.
async fn request_deadline(
    (upstream_timeout, body_timeout): (Duration, Duration),
    mut request: Request,
    next: Next,
) -> Response {
    const MARGIN: Duration = Duration::from_millis(500);
    let body = std::mem::take(request.body_mut());
    *request.body_mut() = axum::body::Body::new(crate::http::client_body::Watched::new(
        body,
        body_timeout,
        move |progress| {
            let now = tokio::time::Instant::now();
            request::set_deadline(match progress {
                crate::http::client_body::Progress::Waiting => {
                    now + body_timeout + upstream_timeout
                }
                crate::http::client_body::Progress::Done => now + upstream_timeout,
            });
        },
    ));
    let first = tokio::time::Instant::now() + upstream_timeout;
    request::with_deadline(first, async move {
        let work = next.run(request);
        tokio::pin!(work);
        loop {
            let hard = request::deadline().unwrap_or(first) + MARGIN;
            tokio::select! {
                response = &mut work => return response,
                _ = tokio::time::sleep_until(hard) => {
                    let moved = request::deadline()
                        .is_some_and(|d| d + MARGIN > tokio::time::Instant::now());
                    if !moved {
                        return ApiError::gateway_timeout()
                            .with_cause("request deadline passed")
                            .into_response();
                    }
                }
            }
        }
    })
    .await
}

/// Load shedding: past `STOREGATE_MAX_IN_FLIGHT` requests in flight, a request is refused
/// at once with 503 and `Retry-After`, instead of queueing behind the others and making
/// every one of them slow.
async fn shed_load(State(app): State<AppState>, request: Request, next: Next) -> Response {
    let Ok(_permit) = app.in_flight.clone().try_acquire_owned() else {
        app.metrics.shed();
        return ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "The service is overloaded. Try again later.",
        )
        .with_header(http::header::RETRY_AFTER, HeaderValue::from_static("1"))
        .with_cause("too many requests in flight (STOREGATE_MAX_IN_FLIGHT)")
        .into_response();
    };
    next.run(request).await
}

/// The fast path's lookup for a request (both ways in, the hit path and routing, ask it
/// the same question). Not an `async fn`: the future holds the request's parts, which are
/// `Sync`, not the request, whose body is not.
fn fast_lookup<'a>(
    app: &'a AppState,
    resolved: &caller::Resolved,
    request: &'a Request,
    observed: &telemetry::Observed,
) -> impl Future<Output = FastPath> + Send + 'a {
    let (method, uri, headers) = (request.method(), request.uri(), request.headers());
    fast_path::lookup(
        &app.cache,
        resolved.caller(),
        method,
        uri,
        headers,
        observed.started(),
    )
}

/// The rate limits' step before routing for a request, asked the same way from both ways in.
fn limits_before_routing(
    app: &AppState,
    resolved: &caller::Resolved,
    request: &Request,
    observed: &telemetry::Observed,
) -> limit_step::Step {
    let (method, path, headers) = (request.method(), request.uri().path(), request.headers());
    limit_step::before_routing(
        app,
        resolved.caller(),
        method,
        path,
        headers,
        observed.started().into_std(),
    )
}
