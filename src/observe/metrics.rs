//! What `/metrics` shows, in the OpenMetrics text format that Prometheus scrapes.
//!
//! Built on `prometheus-client`, the Prometheus project's own Rust client: it gets the
//! exposition format right (escaping, cumulative buckets, `_total`/`_count`/`_sum`, `# EOF`),
//! keeps no global state (every gateway, and so every test, has its own registry), and
//! brings nothing but `parking_lot`, `itoa` and `dtoa`. A hand-written encoder would save a
//! dependency and cost a format bug sooner or later.
//!
//! Three kinds of metric:
//! - recorded on the request path: requests by route, method, status and user type, with
//!   latency ([`crate::observe::telemetry::Observed`]); upstream calls by endpoint, method and outcome, with latency
//!   ([`BackendMetrics`]); shed requests;
//! - read at scrape time from the components that already count them (the cache's
//!   counters and usage, the circuit breaker's state), through a [`Collector`], so the
//!   cache and the client do not depend on this crate;
//! - nothing per customer, per SKU or per raw path: every label has a small, fixed set of
//!   values (route templates, endpoint templates), so the series count stays bounded
//!   whatever clients send.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use http::Method;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::auth::UserType;
use crate::cache::Cache;
use crate::observe::thread_histogram::{ThreadHistogram, ThreadShard};
use crate::shared_state::{RedisStatus, SharedState};

/// Latency buckets in seconds: from a cache hit (~0.1 ms) to the default upstream
/// deadline (5 s) and past it.
const LATENCY_BUCKETS: [f64; 16] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0,
];

fn latency_histogram() -> Histogram {
    Histogram::new(LATENCY_BUCKETS)
}

type LatencyFamily<L> = Family<L, Histogram, fn() -> Histogram>;

fn request_histogram() -> ThreadHistogram {
    ThreadHistogram::new(&LATENCY_BUCKETS)
}

/// The requests' latencies: recorded by every request, so each thread records into a
/// shard of its own (`thread_histogram`).
type RequestFamily = Family<RequestLabels, ThreadHistogram, fn() -> ThreadHistogram>;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    /// The route template (`/api/rest/products/{id}`), or `unmatched`.
    route: &'static str,
    method: &'static str,
    status: u16,
    /// `admin`, `customer`, `guest`, or `none` when no principal was established (a bad
    /// credential, an operational endpoint).
    user_type: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BackendLabels {
    /// The back end's path template (`/api/rest/products/{}`), never the raw path.
    endpoint: String,
    method: &'static str,
    outcome: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RetryLabels {
    /// `retried`, or `budget_exhausted` when the retry budget refused one.
    decision: &'static str,
}

/// How one upstream call ended, as the `outcome` label says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// 2xx.
    Ok,
    /// 4xx: Magento answered; the request was wrong or the record is not there.
    ClientError,
    /// 5xx.
    ServerError,
    Timeout,
    ConnectError,
    /// An answer that could not be read (truncated, broken connection mid-body).
    ProtocolError,
    /// Not sent: the circuit breaker is open.
    CircuitOpen,
    /// Not sent: too many calls already in flight.
    Shed,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::ClientError => "client_error",
            Outcome::ServerError => "server_error",
            Outcome::Timeout => "timeout",
            Outcome::ConnectError => "connect_error",
            Outcome::ProtocolError => "protocol_error",
            Outcome::CircuitOpen => "circuit_open",
            Outcome::Shed => "shed",
        }
    }
}

/// The upstream client's instruments. Cheap to clone (the families are shared).
#[derive(Debug, Clone)]
pub struct BackendMetrics {
    calls: LatencyFamily<BackendLabels>,
    retries: Family<RetryLabels, Counter>,
    circuit_opened: Counter,
}

impl Default for BackendMetrics {
    fn default() -> Self {
        BackendMetrics {
            calls: Family::new_with_constructor(latency_histogram),
            retries: Family::default(),
            circuit_opened: Counter::default(),
        }
    }
}

impl BackendMetrics {
    /// One call (or one call not made), by the endpoint it was for: the path's template
    /// (`backend::shell::paths::template`), never the raw path.
    pub fn call(&self, method: &Method, endpoint: &str, outcome: Outcome, elapsed: Duration) {
        self.calls
            .get_or_create(&BackendLabels {
                endpoint: endpoint.to_owned(),
                method: method_label(method),
                outcome: outcome.as_str(),
            })
            .observe(elapsed.as_secs_f64());
    }

    pub fn retried(&self) {
        self.retries
            .get_or_create(&RetryLabels {
                decision: "retried",
            })
            .inc();
    }

    pub fn retry_refused(&self) {
        self.retries
            .get_or_create(&RetryLabels {
                decision: "budget_exhausted",
            })
            .inc();
    }

    pub fn circuit_opened(&self) {
        self.circuit_opened.inc();
    }
}

/// Everything `/metrics` shows.
#[derive(Debug)]
pub struct Metrics {
    /// Unique in the process: the key of this instance's handles in [`HANDLES`].
    id: u64,
    registry: Registry,
    requests: RequestFamily,
    shed: Counter,
    customer_write_retries: Counter,
    customer_write_conflicts: Counter,
    /// Failed requests' log lines, at most one per cause per interval (`log_limit`).
    failure_lines: crate::observe::log_limit::LogLimit,
}

/// A value read at scrape time.
pub type Reader<T> = Arc<dyn Fn() -> T + Send + Sync>;

impl Metrics {
    /// `upstream` are the instruments the Magento client records into; `cache`, `circuit`,
    /// `in_flight` (API requests being served) and `connections` (open, refused at the cap)
    /// are read at scrape time.
    pub fn new(
        upstream: BackendMetrics,
        cache: Arc<Cache>,
        circuit: Reader<i64>,
        in_flight: Reader<i64>,
        connections: Reader<(i64, u64)>,
    ) -> Metrics {
        let mut registry = Registry::with_prefix("storegate");
        let requests: RequestFamily = Family::new_with_constructor(request_histogram);
        let shed = Counter::default();
        registry.register(
            "http_request_duration_seconds",
            "Requests served, by route template, method, status and user type, with their latency",
            requests.clone(),
        );
        registry.register(
            "http_requests_shed",
            "Requests refused at once with 503 because the gateway had too many in flight",
            shed.clone(),
        );
        registry.register(
            "upstream_call_duration_seconds",
            "Calls to the store back end (Magento 2 or OpenMage), by endpoint template, method and outcome, with their latency",
            upstream.calls.clone(),
        );
        registry.register(
            "upstream_retries",
            "Second tries of idempotent reads, and those the retry budget refused",
            upstream.retries.clone(),
        );
        registry.register(
            "upstream_circuit_opened",
            "Times the circuit breaker opened after repeated upstream failures",
            upstream.circuit_opened.clone(),
        );
        registry.register_collector(Box::new(ScrapeTime {
            cache,
            circuit,
            in_flight,
        }));
        registry.register_collector(Box::new(ConnectionMetrics(connections)));
        let customer_write_retries = Counter::default();
        let customer_write_conflicts = Counter::default();
        registry.register(
            "customer_write_retries",
            "Customer read-modify-writes tried again because another writer changed the customer meanwhile",
            customer_write_retries.clone(),
        );
        registry.register(
            "customer_write_conflicts",
            "Customer writes refused with 409 after every try raced another writer",
            customer_write_conflicts.clone(),
        );
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        Metrics {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            registry,
            requests,
            shed,
            customer_write_retries,
            customer_write_conflicts,
            failure_lines: crate::observe::log_limit::LogLimit::new(),
        }
    }

    /// This gateway's limit on failed requests' log lines.
    pub fn failure_lines(&self) -> &crate::observe::log_limit::LogLimit {
        &self.failure_lines
    }

    /// Adds series read at scrape time by another component (`process_metrics`).
    pub fn with_collector(mut self, collector: Box<dyn Collector>) -> Metrics {
        self.registry.register_collector(collector);
        self
    }

    /// Adds the dual run's candidate back end's calls (`shadow_upstream_call_duration_seconds`,
    /// by endpoint, method and outcome), apart from the serving back end's.
    pub fn with_shadow_backend(mut self, upstream: &BackendMetrics) -> Metrics {
        self.registry.register(
            "shadow_upstream_call_duration_seconds",
            "Calls to the dual run's candidate back end, by endpoint template, method and outcome, with their latency",
            upstream.calls.clone(),
        );
        self
    }

    /// Adds the shared-state series (`redis_up`, ...), read at scrape time.
    pub fn with_shared_state(mut self, shared: Arc<SharedState>) -> Metrics {
        self.registry
            .register_collector(Box::new(SharedSeries { shared }));
        self
    }

    pub fn customer_write_retried(&self) {
        self.customer_write_retries.inc();
    }

    pub fn customer_write_conflicted(&self) {
        self.customer_write_conflicts.inc();
    }

    /// One request served.
    pub fn request(
        &self,
        route: Option<&str>,
        method: &Method,
        status: u16,
        user_type: Option<UserType>,
        elapsed: Duration,
    ) {
        let route = route.unwrap_or("unmatched");
        let method = method_label(method);
        let user_type = user_type.map(UserType::as_str).unwrap_or("none");
        // The series' handle as this thread found it last time: no interning, no hashing of
        // the labels, no lock on the family (a third of what a cache hit's metrics cost).
        let key = HandleKey {
            metrics: self.id,
            route: (route.as_ptr() as usize, route.len()),
            method: method.as_ptr() as usize,
            status,
            user_type: user_type.as_ptr() as usize,
        };
        let seconds = elapsed.as_secs_f64();
        let known = HANDLES
            .try_with(|handles| {
                let handles = handles.try_borrow().ok()?;
                // The route is compared by its text too: the address of a template that is
                // gone may be another's now.
                let (interned, shard) = handles.get(&key)?;
                (*interned == route).then(|| shard.observe(seconds))
            })
            .ok()
            .flatten();
        if known.is_some() {
            return;
        }
        let interned = intern(route);
        let histogram = self.requests.get_or_create_owned(&RequestLabels {
            route: interned,
            method,
            status,
            user_type,
        });
        let kept = HANDLES.try_with(|handles| {
            let mut handles = handles.try_borrow_mut().ok()?;
            let shard = histogram.shard();
            shard.observe(seconds);
            handles.insert(key, (interned, shard));
            Some(())
        });
        if !matches!(kept, Ok(Some(()))) {
            histogram.observe(seconds);
        }
    }

    pub fn shed(&self) {
        self.shed.inc();
    }

    /// The exposition, ready to serve.
    pub fn encode(&self) -> String {
        let mut out = String::with_capacity(16 * 1024);
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

/// Values owned by other components, read when Prometheus scrapes.
struct ScrapeTime {
    cache: Arc<Cache>,
    circuit: Reader<i64>,
    in_flight: Reader<i64>,
}

impl std::fmt::Debug for ScrapeTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScrapeTime").finish_non_exhaustive()
    }
}

pub(crate) fn counter(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: u64,
) -> Result<(), std::fmt::Error> {
    described(encoder, name, help, &ConstCounter::new(value))
}

/// A metric (a constant, or a family of series) under its name and help, unitless.
pub(crate) fn described(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    metric: &impl EncodeMetric,
) -> Result<(), std::fmt::Error> {
    metric.encode(encoder.encode_descriptor(name, help, None, metric.metric_type())?)
}

pub(crate) fn gauge(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: i64,
) -> Result<(), std::fmt::Error> {
    let metric = ConstGauge::new(value);
    metric.encode(encoder.encode_descriptor(name, help, None, metric.metric_type())?)
}

impl Collector for ScrapeTime {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let stats = self.cache.stats();
        let read = |n: &std::sync::atomic::AtomicU64| n.load(Ordering::Relaxed);
        let e = &mut encoder;
        counter(
            e,
            "cache_hits",
            "Reads answered from a fresh cache entry",
            stats.hits.get(),
        )?;
        counter(
            e,
            "cache_misses",
            "Reads that fetched from the upstream",
            stats.misses.get(),
        )?;
        counter(
            e,
            "cache_coalesced_waits",
            "Reads that waited for another caller's fetch of the same key instead of fetching",
            read(&stats.coalesced),
        )?;
        counter(
            e,
            "cache_stale_while_revalidate",
            "Expired entries served at once while one background refresh ran",
            read(&stats.stale_while_revalidate),
        )?;
        counter(
            e,
            "cache_stale_if_error",
            "Expired entries served because the upstream failed or the circuit was open",
            read(&stats.stale_if_error),
        )?;
        counter(
            e,
            "cache_refresh_failures",
            "Background refreshes that failed",
            read(&stats.refresh_failures),
        )?;
        counter(
            e,
            "cache_evictions",
            "Entries evicted to stay within STOREGATE_CACHE_MAX_BYTES",
            read(&stats.evictions),
        )?;
        counter(
            e,
            "cache_invalidations",
            "Invalidations by tag or of everything (writes through the gateway and purges)",
            read(&stats.invalidations),
        )?;
        let (bytes, entries) = self.cache.usage();
        gauge(
            e,
            "cache_weight_bytes",
            "Weighted size of the cache (its bound is STOREGATE_CACHE_MAX_BYTES)",
            i64::try_from(bytes).unwrap_or(i64::MAX),
        )?;
        gauge(
            e,
            "cache_entries",
            "Entries in the cache",
            i64::try_from(entries).unwrap_or(i64::MAX),
        )?;
        gauge(
            e,
            "upstream_circuit_state",
            "Circuit breaker in front of Magento 2: 0 closed, 1 open, 2 half-open (probing)",
            (self.circuit)(),
        )?;
        gauge(
            e,
            "http_requests_in_flight",
            "API requests being served now (bound: STOREGATE_MAX_IN_FLIGHT)",
            (self.in_flight)(),
        )?;
        Ok(())
    }
}

/// The shared-state series: whether Redis answers, and what went through it.
#[derive(Debug)]
struct SharedSeries {
    shared: Arc<SharedState>,
}

impl Collector for SharedSeries {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let snap = self.shared.snapshot();
        let e = &mut encoder;
        gauge(
            e,
            "redis_up",
            "1 when Redis answers, 0 when it does not, -1 when STOREGATE_REDIS_URL is not set",
            match snap.redis {
                RedisStatus::Off => -1,
                RedisStatus::Up => 1,
                RedisStatus::Down => 0,
            },
        )?;
        if snap.redis == RedisStatus::Off {
            return Ok(());
        }
        counter(
            e,
            "redis_errors",
            "Redis calls that failed or passed STOREGATE_REDIS_TIMEOUT_MS",
            snap.errors,
        )?;
        counter(
            e,
            "redis_events_published",
            "Invalidations and revocations sent to the other instances",
            snap.published,
        )?;
        counter(
            e,
            "redis_events_received",
            "Invalidations and revocations received from the other instances",
            snap.received,
        )?;
        counter(
            e,
            "redis_resyncs",
            "Resubscriptions after a gap, each purging this instance's cache",
            snap.resyncs,
        )?;
        if let Some((hits, misses, waits, skipped)) = snap.l2 {
            counter(
                e,
                "shared_cache_hits",
                "Local misses answered by the shared second-level cache",
                hits,
            )?;
            counter(
                e,
                "shared_cache_misses",
                "Local misses the shared second-level cache did not have",
                misses,
            )?;
            counter(
                e,
                "shared_cache_waits",
                "Lookups that waited for another instance's fetch of the same record",
                waits,
            )?;
            counter(
                e,
                "shared_cache_skipped",
                "Lookups not made: Redis down, or this instance's invalidations not yet published",
                skipped,
            )?;
        }
        Ok(())
    }
}

/// Which series of request latencies a request goes to, as one thread saw its labels: by
/// their addresses (the route's text is checked on a hit). The labels are the router's
/// templates and fixed words, so a thread holds as many handles as there are series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct HandleKey {
    metrics: u64,
    route: (usize, usize),
    method: usize,
    status: u16,
    user_type: usize,
}

/// A hasher for [`HandleKey`]: a few integers that no client chooses.
#[derive(Default)]
struct Mix(u64);

impl std::hash::Hasher for Mix {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn write_u16(&mut self, n: u16) {
        self.write_u64(u64::from(n));
    }
}

type Handles = std::collections::HashMap<
    HandleKey,
    (&'static str, ThreadShard),
    std::hash::BuildHasherDefault<Mix>,
>;

thread_local! {
    static HANDLES: std::cell::RefCell<Handles> = std::cell::RefCell::new(Handles::default());
}

/// A route template as a `&'static str`, so that labelling a request allocates nothing.
/// Templates come from the router, not from clients: the set is small and fixed, and each is
/// leaked once.
fn intern(route: &str) -> &'static str {
    use std::collections::HashSet;
    use std::sync::{OnceLock, RwLock};
    static ROUTES: OnceLock<RwLock<HashSet<&'static str>>> = OnceLock::new();
    let routes = ROUTES.get_or_init(Default::default);
    if let Some(found) = routes.read().unwrap_or_else(|e| e.into_inner()).get(route) {
        return found;
    }
    let mut routes = routes.write().unwrap_or_else(|e| e.into_inner());
    if let Some(found) = routes.get(route) {
        return found;
    }
    let leaked: &'static str = Box::leak(route.to_owned().into_boxed_str());
    routes.insert(leaked);
    leaked
}

fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// Middleware inside authentication: hands the caller's user type to the telemetry layer,
/// which records the request.
pub async fn tag_user_type(request: Request, next: Next) -> Response {
    let principal = request
        .extensions()
        .get::<crate::auth::Principal>()
        .copied();
    let mut response = next.run(request).await;
    if let Some(principal) = principal {
        response.extensions_mut().insert(principal.user_type());
        // The caller itself too: the dual run compares a read as the same caller, and an
        // OAuth-signed request's is known only from here on (`shadow::Shadow::after`).
        response.extensions_mut().insert(principal);
    }
    response
}

/// `storegate_connections_open` and `storegate_connections_refused_total`.
pub struct ConnectionMetrics(pub Reader<(i64, u64)>);

impl std::fmt::Debug for ConnectionMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectionMetrics").finish_non_exhaustive()
    }
}

impl Collector for ConnectionMetrics {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let (open, refused) = (self.0)();
        gauge(
            &mut encoder,
            "connections_open",
            "Client connections open now",
            open,
        )?;
        counter(
            &mut encoder,
            "connections_refused",
            "Connections closed at once because STOREGATE_MAX_CONNECTIONS were open",
            refused,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bare_metrics() -> Metrics {
        let cache = Arc::new(Cache::new(
            1 << 20,
            Duration::from_secs(60),
            Duration::from_secs(60),
        ));
        Metrics::new(
            BackendMetrics::default(),
            cache,
            Arc::new(|| 0),
            Arc::new(|| 0),
            Arc::new(|| (0, 0)),
        )
    }

    fn count(metrics: &Metrics, route: &str, status: u16) -> u64 {
        let series = format!(
            "storegate_http_request_duration_seconds_count{{route=\"{route}\",method=\"GET\",status=\"{status}\",user_type=\"guest\"}} "
        );
        metrics
            .encode()
            .lines()
            .find_map(|line| line.strip_prefix(series.as_str()))
            .map_or(0, |n| n.parse().unwrap())
    }

    #[test]
    fn each_request_counts_once_in_its_own_series() {
        // Two instances, one thread, the same labels: each counts its own (the handles a
        // thread keeps are per instance).
        let (a, b) = (bare_metrics(), bare_metrics());
        let observe = |metrics: &Metrics, route: &str, status: u16| {
            metrics.request(
                Some(route),
                &Method::GET,
                status,
                Some(UserType::Guest),
                Duration::from_micros(100),
            );
        };
        for _ in 0..3 {
            observe(&a, "/api/rest/products/{id}", 200);
        }
        observe(&b, "/api/rest/products/{id}", 200);
        observe(&a, "/api/rest/products/{id}", 304);
        // The same text at another address, and other text at the same address.
        let mut text = String::from("/api/rest/products/{id}");
        observe(&a, &text, 200);
        text.replace_range(.., "/api/rest/products/{ix}");
        observe(&a, &text, 200);
        assert_eq!(count(&a, "/api/rest/products/{id}", 200), 4);
        assert_eq!(count(&a, "/api/rest/products/{id}", 304), 1);
        assert_eq!(count(&a, "/api/rest/products/{ix}", 200), 1);
        assert_eq!(count(&b, "/api/rest/products/{id}", 200), 1);
    }

    #[test]
    fn exposition_has_requests_upstream_cache_and_circuit() {
        let cache = Arc::new(Cache::new(
            1 << 20,
            Duration::from_secs(60),
            Duration::from_secs(60),
        ));
        let upstream = BackendMetrics::default();
        let metrics = Metrics::new(
            upstream.clone(),
            cache,
            Arc::new(|| 1), // the breaker is open
            Arc::new(|| 3),
            Arc::new(|| (2, 1)),
        );
        metrics.request(
            Some("/api/rest/products/{id}"),
            &Method::GET,
            200,
            Some(UserType::Guest),
            Duration::from_micros(150),
        );
        upstream.call(
            &Method::GET,
            "/example/{}",
            Outcome::Timeout,
            Duration::from_secs(1),
        );
        upstream.retried();
        let text = metrics.encode();
        assert!(text.contains(
            "storegate_http_request_duration_seconds_count{route=\"/api/rest/products/{id}\",method=\"GET\",status=\"200\",user_type=\"guest\"} 1"
        ), "{text}");
        assert!(text.contains(
            "storegate_upstream_call_duration_seconds_count{endpoint=\"/example/{}\",method=\"GET\",outcome=\"timeout\"} 1"
        ), "{text}");
        assert!(text.contains("storegate_upstream_retries_total{decision=\"retried\"} 1"));
        assert!(text.contains("storegate_cache_hits_total 0"));
        assert!(text.contains("storegate_upstream_circuit_state 1"));
        assert!(text.contains("storegate_http_requests_in_flight 3"));
        assert!(text.ends_with("# EOF\n"));
    }
}
