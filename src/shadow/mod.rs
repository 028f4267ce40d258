//! The dual run (issue 31, docs/dual-run.md): a second back end, the candidate, beside the
//! serving one; a share of the reads rendered a second time through it and compared field
//! by field; and, per route class, a share of the reads served from it.
//!
//! Why: a shop moving from OpenMage to Magento 2 (or between two Magento 2 stores) must know
//! which differences its apps would see, per route, before an app is pointed at the new
//! store. Diffy and GitHub Scientist are the anchors: the app only ever gets the serving
//! back end's answer, byte for byte, and never waits for the candidate (the comparison runs
//! after the answer, in a task of its own, under [`crate::config::shadow::Shadow::max_in_flight`]
//! and a deadline); writes never reach the candidate; noise is told apart by reading the
//! serving back end twice, lag by looking again after the recheck interval.
//!
//! How a read is rendered "as the gateway would if the candidate served": the front hands
//! the same request (forced to JSON, the caller it already authenticated carried over) to
//! a second instance of the gateway's own API stack, built over the candidate back end
//! with no cache ([`Side`]; `front::dual` builds them). Nothing is rendered twice by hand,
//! so the candidate's answer goes through the same mappings, policy, profile and errors.
//!
//! - [`routes`]: which reads are compared and served (route classes), and their names.
//! - `run`: one comparison: the reads, the engine (`crate::compare`), noise, the recheck.
//! - [`tally`]: the counts, this process's and the fleet's (Redis).
//! - [`report`]: the report an operator reads (`GET /api/rest/shadow/report`).
//! - `cutover`: the reads served from the candidate (`STOREGATE_SHADOW_SERVE`), and the
//!   serving back end answering them when the candidate fails.
//!
//! A floor above `shared_state` and `observe` (it counts through them) and below `app`,
//! which holds it; it knows no resource and no back end: the front gives it the sides.

mod cutover;
pub mod report;
pub mod routes;
mod run;
mod series;
pub mod tally;

use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::extract::Request;
use axum::response::Response;
use futures_util::future::BoxFuture;
use hmac::{Hmac, Mac};
use http::{HeaderMap, Method, Uri};
use sha2::Sha256;
use tokio::sync::Semaphore;

use crate::auth::Principal;
use crate::compare::{Options, Treatment};
use crate::config::shadow::RouteClass;
use crate::context::profile::Profile;
use crate::shared_state::SharedState;
pub use series::Series;
use series::{ComparisonLabels, ServedLabels};
use tally::{Outcome, Tally, field};

/// Answers an API request as one side of the comparison would: the front's own API stack
/// over one back end. The request carries its caller and format in its extensions.
pub trait Side: Send + Sync + 'static {
    fn answer(&self, request: Request) -> BoxFuture<'static, Response>;
}

/// The sides the front builds once the gateway's state is there.
pub struct Sides {
    /// The serving back end, read without a cache: the noise read, and the known-good
    /// side when the app's own answer cannot be read (XML, compressed, a 304).
    pub serving_fresh: Arc<dyn Side>,
    /// The candidate, read without a cache.
    pub candidate_fresh: Arc<dyn Side>,
    /// The whole gateway over the candidate, with a cache of its own: the reads
    /// `STOREGATE_SHADOW_SERVE` sends there. None without that setting.
    pub candidate_service: Option<Arc<dyn Side>>,
}

/// Which back end gave the app its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Serving,
    /// A read `STOREGATE_SHADOW_SERVE` sent to the candidate: the serving back end is its
    /// comparison side.
    Candidate,
}

/// The dual run of one gateway. Cheap to clone; every clone shares the counts.
#[derive(Clone)]
pub struct Shadow {
    inner: Arc<Inner>,
    role: Role,
}

impl std::fmt::Debug for Shadow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shadow")
            .field("role", &self.role)
            .field("sample", &self.inner.settings.sample)
            .finish_non_exhaustive()
    }
}

struct Inner {
    settings: crate::config::shadow::Shadow,
    /// `sample` as a share of `u64`'s range: a read is compared when a draw is below it.
    threshold: u64,
    /// How long one pass of a comparison may take (the request deadline and a margin).
    deadline: Duration,
    in_flight: Arc<Semaphore>,
    /// Comparisons waiting for their recheck, and how many may wait.
    waiting: AtomicUsize,
    max_waiting: usize,
    tally: Arc<Tally>,
    series: Series,
    sides: OnceLock<Sides>,
    plain: Options,
    personal: Options,
    serving_kind: &'static str,
}

impl Shadow {
    /// The dual run of `settings`; `token_secret` keys the digests of personal values (every
    /// instance of a fleet shares it, so their digests agree), `upstream_timeout` bounds a
    /// comparison's pass.
    pub fn new(
        settings: &crate::config::shadow::Shadow,
        serving_kind: crate::config::BackendKind,
        shared: Arc<SharedState>,
        series: Series,
        token_secret: &[u8],
        upstream_timeout: Duration,
    ) -> Shadow {
        let digest_key = {
            let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(token_secret)
                .expect("HMAC takes a key of any length");
            mac.update(b"storegate shadow report digest v1");
            mac.finalize().into_bytes()
        };
        let digest = move |value: &serde_json::Value| {
            let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&digest_key)
                .expect("HMAC takes a key of any length");
            mac.update(value.to_string().as_bytes());
            let bytes = mac.finalize().into_bytes();
            bytes[..8].iter().map(|b| format!("{b:02x}")).collect()
        };
        let plain = Options::default().digest_with(digest);
        let personal = Options::default()
            .digest_with(digest)
            .everything(Treatment::Digest);
        let tally = Arc::new(Tally::new(shared));
        tally.start_flushing();
        let threshold = if settings.sample >= 1.0 {
            u64::MAX
        } else {
            (settings.sample * u64::MAX as f64) as u64
        };
        Shadow {
            inner: Arc::new(Inner {
                settings: settings.clone(),
                threshold,
                deadline: upstream_timeout + Duration::from_millis(500),
                in_flight: Arc::new(Semaphore::new(settings.max_in_flight)),
                waiting: AtomicUsize::new(0),
                max_waiting: settings.max_in_flight.saturating_mul(16),
                tally,
                series,
                sides: OnceLock::new(),
                plain,
                personal,
                serving_kind: serving_kind.as_str(),
            }),
            role: Role::Serving,
        }
    }

    /// The same dual run, for the gateway over the candidate (reads it serves).
    pub fn as_candidate(&self) -> Shadow {
        Shadow {
            inner: self.inner.clone(),
            role: Role::Candidate,
        }
    }

    /// Gives the dual run its sides (once; the front builds them after the state).
    pub fn set_sides(&self, sides: Sides) {
        let _ = self.inner.sides.set(sides);
    }

    pub fn settings(&self) -> &crate::config::shadow::Shadow {
        &self.inner.settings
    }

    /// Whether `STOREGATE_SHADOW_SERVE` sends any reads to the candidate, from the gateway
    /// over the serving back end (the one over the candidate sends none anywhere).
    pub fn serves_any(&self) -> bool {
        self.role == Role::Serving && self.inner.settings.serve.any()
    }

    /// What the front notes of a request before it is answered: a write (counted as not
    /// compared), a read sampled for comparison, or nothing (most reads). `template` is the
    /// route routing matched; `principal` the caller when already known (an OAuth-signed
    /// request's is known only after; the answer's extensions have it then).
    pub fn note(
        &self,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
        template: Option<&str>,
        principal: Option<Principal>,
    ) -> Option<Noted> {
        let template = template?;
        let write = routes::is_write(method);
        if !write && (*method != Method::GET || !self.sampled()) {
            return None;
        }
        let class = routes::class_of(template)?;
        let read = (!write).then(|| run::Read::of(uri, headers, class));
        Some(Noted(Box::new(NotedRequest {
            route: routes::route_name(method, template),
            principal,
            read,
            profile: Profile::current(),
        })))
    }

    /// The answer of a noted request, on its way to the app: a write is counted; a sampled
    /// read's comparison is started (in a task of its own; the answer never waits for
    /// it). The answer comes back unchanged.
    pub async fn after(&self, noted: Noted, response: Response) -> Response {
        let NotedRequest {
            route,
            principal,
            read,
            profile,
        } = *noted.0;
        let principal = principal.or_else(|| response.extensions().get::<Principal>().copied());
        let user_type = principal.map_or("none", |p| p.user_type().as_str());
        let Some(read) = read else {
            self.count(&route, user_type, Outcome::NotCompared);
            return response;
        };
        // A request refused before it had a caller (a bad credential) is no read.
        let Some(principal) = principal else {
            return response;
        };
        if response.status().is_server_error() {
            // The app's own answer failed: nothing to hold against the candidate.
            self.count(&route, user_type, Outcome::Error);
            return response;
        }
        let Ok(permit) = self.inner.in_flight.clone().try_acquire_owned() else {
            self.count(&route, user_type, Outcome::Skipped);
            return response;
        };
        let (response, seen) = run::capture(response).await;
        let job = run::Job {
            shadow: self.clone(),
            route,
            principal,
            read,
            seen,
        };
        tokio::spawn(crate::context::profile::scope(profile, job.run(permit)));
        response
    }

    /// One outcome of `route` for `user_type`, in the tally and the metrics.
    fn count(&self, route: &str, user_type: &'static str, outcome: Outcome) {
        self.inner
            .tally
            .add(field(&["o", route, user_type, outcome.name()]), 1);
        self.inner
            .series
            .comparisons
            .get_or_create(&ComparisonLabels {
                route: route.to_owned(),
                user_type,
                outcome: outcome.name(),
            })
            .inc();
    }

    /// A draw of this thread's generator against the sample rate.
    fn sampled(&self) -> bool {
        let threshold = self.inner.threshold;
        threshold == u64::MAX || (threshold != 0 && next_random() < threshold)
    }

    /// The report (JSON, rendered by the endpoint in the negotiated format).
    pub async fn report(&self) -> serde_json::Value {
        let snapshot = self.inner.tally.snapshot().await;
        report::build(&snapshot, &self.inner.settings, self.inner.serving_kind)
    }

    /// Starts a new count (the fleet's, with Redis).
    pub async fn reset(&self) -> Result<(), crate::shared_state::SharedError> {
        self.inner.tally.reset().await
    }

    fn options(&self, class: RouteClass) -> &Options {
        if class.is_personal() {
            &self.inner.personal
        } else {
            &self.inner.plain
        }
    }
}

/// A request the dual run noted ([`Shadow::note`]); boxed, so that a request's future
/// carries one pointer for it.
pub struct Noted(Box<NotedRequest>);

struct NotedRequest {
    route: String,
    principal: Option<Principal>,
    /// Some: a sampled read; None: a write.
    read: Option<run::Read>,
    profile: Profile,
}

/// A fast generator per thread (xorshift64*), seeded from the system's: sampling must
/// cost a read next to nothing, and needs no cryptographic quality.
fn next_random() -> u64 {
    thread_local! {
        static STATE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }
    STATE.with(|state| {
        let mut x = state.get();
        if x == 0 {
            let mut seed = [0u8; 8];
            let _ = getrandom::fill(&mut seed);
            x = u64::from_le_bytes(seed) | 1;
        }
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        state.set(x);
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    })
}
