//! Fair use: per-client rate limits and sign-in that cannot be brute-forced
//! (docs/limits.md).
//!
//! Why it exists: the gateway is a shop's public edge, and its only limit used to be the
//! global in-flight cap: one app with a bug or one scraper took the whole budget and every
//! other app got 503s, and sign-in took wrong passwords as fast as the store answered.
//!
//! - A **client** is a guest's address (`STOREGATE_TRUSTED_PROXIES` says whose
//!   `X-Forwarded-For` is believed), a customer, an OAuth consumer (all its tokens) or an
//!   admin key ([`client`]). Each has a budget per route class (catalog reads, account
//!   reads, writes), at the rate `STOREGATE_RATE_LIMITS` gives it, or the consumer's own
//!   (`storegate oauth consumer update --rate-limit`). Unset, nothing is counted and a
//!   request pays one branch.
//! - Budgets count in rolling windows ([`window`]), across the fleet in Redis
//!   ([`fleet`]) or in this process ([`ledger`]), handed down in leases and per-thread
//!   chunks so that a repeat request decides without Redis and without a shared write
//!   ([`budgets`]).
//! - Past a limit: 429 with `Retry-After`, `RateLimit-Policy` and `RateLimit`
//!   (draft-ietf-httpapi-ratelimit-headers; the partition key a keyed digest), the API's
//!   error tree; under it, `RateLimit` on every limited answer. `STOREGATE_RATE_LIMIT_MODE=
//!   shadow` only counts.
//! - Failed sign-ins per username and address ([`signin`]), on by default.
//!
//! Where it is called: `front` decides for a caller it resolved before routing (the
//! fast path of cache hits included) and, for signed OAuth calls, once the API's
//! authentication verified them; the sign-in resources around the store's password check.

pub mod budgets;
pub mod client;
pub mod fleet;
pub mod ledger;
pub mod series;
pub mod signin;
pub mod window;

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use ipnet::IpNet;

use crate::auth::Principal;
use crate::config::{ClientKind, Config, Rate, RateLimitMode, RateLimits, RouteClass};
use crate::http::ApiError;
use crate::shared_state::SharedState;
pub use budgets::{Budget, Decision, Quota};
pub use client::Client;
pub use ledger::Counting;

/// `RateLimit-Policy` (draft-ietf-httpapi-ratelimit-headers).
pub const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");
/// `RateLimit`.
pub const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");

/// A signed OAuth call's consumer, as verified (`auth::oauth::authenticate_api` leaves it
/// in the request's extensions).
pub use crate::auth::oauth::SignedConsumer;

/// What the limits said of one request.
#[derive(Debug, Clone)]
pub enum Verdict {
    /// No limit counts it (none configured, or shadow mode).
    Unlimited,
    /// Under the limit(s): the answer's `RateLimit` field (two for a signed customer call:
    /// its app's and the customer's).
    Admitted(HeaderValue, Option<HeaderValue>),
    /// Over one: 429.
    Refused(Quota),
}

impl Verdict {
    /// Writes `RateLimit` into an answer. A cache hit's map has its place ready
    /// (`Cache::reserve_hit_field`, second after the request id's): filled there, without
    /// hashing the name or growing the map; taken out when nothing counted the request.
    pub fn apply(&self, headers: &mut HeaderMap) {
        let (first, second) = match self {
            Verdict::Admitted(first, second) => (Some(first), second.as_ref()),
            _ => (None, None),
        };
        let spare = headers
            .iter_mut()
            .nth(1)
            .filter(|(name, value)| *name == RATELIMIT && value.is_empty());
        match (spare, first) {
            (Some((_, value)), Some(first)) => *value = first.clone(),
            (Some(_), None) => {
                headers.remove(RATELIMIT);
            }
            (None, Some(first)) => {
                headers.append(RATELIMIT, first.clone());
            }
            (None, None) => {}
        }
        if let Some(second) = second {
            headers.append(RATELIMIT, second.clone());
        }
    }
}

/// `Too many requests. Try again in 3 seconds.`, with its headers: the API's 429.
pub fn too_many(quota: &Quota) -> ApiError {
    ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        format!(
            "Too many requests. Try again in {}.",
            seconds(quota.retry_secs)
        ),
    )
    .with_header(
        http::header::RETRY_AFTER,
        HeaderValue::from(quota.retry_secs),
    )
    .with_header(RATELIMIT_POLICY, quota.policy.clone())
    .with_header(RATELIMIT, quota.current.clone())
    .with_cause("rate limit (STOREGATE_RATE_LIMITS)")
}

/// The 429 of a sign-in refused before the store was asked.
pub fn too_many_signins(refused: &signin::TooMany) -> ApiError {
    ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        too_many_signins_text(refused),
    )
    .with_header(
        http::header::RETRY_AFTER,
        HeaderValue::from(refused.retry_secs),
    )
    .with_cause(format!(
        "failed sign-ins of this {} past STOREGATE_SIGNIN_LIMIT",
        refused.by.as_str()
    ))
}

/// What a refused sign-in is told, on the API and on the authorize pages.
pub fn too_many_signins_text(refused: &signin::TooMany) -> String {
    format!(
        "Too many failed sign-ins. Try again in {}.",
        seconds(refused.retry_secs)
    )
}

/// `1 second`, `12 seconds`.
pub fn seconds(n: u64) -> String {
    if n == 1 {
        "1 second".to_owned()
    } else {
        format!("{n} seconds")
    }
}

/// Refusals by client kind and route class, enforced and shadowed (`/metrics`).
#[derive(Debug, Default)]
pub struct Stats {
    refused: [[AtomicU64; 3]; 4],
    shadowed: [[AtomicU64; 3]; 4],
}

impl Stats {
    fn count(&self, shadow: bool, budget: &Budget) {
        let table = if shadow {
            &self.shadowed
        } else {
            &self.refused
        };
        table[budget.client.kind as usize][budget.class as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// `(kind, class, refused, shadowed)` for every pair.
    pub fn rows(&self) -> Vec<(ClientKind, RouteClass, u64, u64)> {
        let mut rows = Vec::new();
        for kind in ClientKind::ALL {
            for class in RouteClass::ALL {
                let (k, c) = (kind as usize, class as usize);
                rows.push((
                    kind,
                    class,
                    self.refused[k][c].load(Ordering::Relaxed),
                    self.shadowed[k][c].load(Ordering::Relaxed),
                ));
            }
        }
        rows
    }
}

/// The limits of one gateway.
#[derive(Debug)]
pub struct Limits {
    settings: RateLimits,
    shadow: bool,
    trusted: Vec<IpNet>,
    budgets: Arc<budgets::Budgets>,
    /// `STOREGATE_RATE_LIMITS` limits someone; off, a request pays this one branch
    /// (consumers' own limits aside: [`Limits::signed`]).
    on: bool,
    /// Nothing is counted at all, consumers' own limits included ([`Limits::none`]).
    counts: bool,
    admin_limited: bool,
    ledger: Arc<ledger::Ledger>,
    pub signin: signin::SignIn,
    pub stats: Stats,
}

impl Limits {
    /// The limits `config` asks for, counted in `shared`'s Redis when it has one. `secret`
    /// keys the digests that name budgets (the token secret, shared by the fleet).
    pub fn new(config: &Config, shared: &SharedState, secret: &[u8]) -> Arc<Limits> {
        let fleet = shared.scripts().map(fleet::Fleet::new);
        let ledger = ledger::Ledger::new(fleet);
        let names = client::Names::new(secret);
        let threads = match config.workers {
            0 => std::thread::available_parallelism().map_or(1, usize::from),
            n => n,
        };
        let shadow = config.rate_limit_mode == RateLimitMode::Shadow;
        // A request waits for Redis at most one call's deadline and a little: past it the
        // call failed anyway, and the request is served (fail open).
        let wait = config.redis_timeout + Duration::from_millis(50);
        Arc::new(Limits {
            settings: config.rate_limits,
            shadow,
            trusted: config.trusted_proxies.clone(),
            budgets: budgets::Budgets::new(ledger.clone(), names.clone(), threads, wait),
            on: !config.rate_limits.is_empty(),
            counts: true,
            admin_limited: config.rate_limits.limits_kind(ClientKind::Admin),
            signin: signin::SignIn::new(config.signin_limit, shadow, ledger.clone(), names),
            ledger,
            stats: Stats::default(),
        })
    }

    /// Limits that count nothing, for a gateway state whose requests are no app's own: the
    /// dual run's comparison reads (`front::dual`), which the app's request was counted for
    /// already.
    pub fn none(config: &Config) -> Arc<Limits> {
        let ledger = ledger::Ledger::with_capacity(None, 1);
        let names = client::Names::new(b"uncounted");
        Arc::new(Limits {
            settings: RateLimits::default(),
            shadow: false,
            trusted: config.trusted_proxies.clone(),
            budgets: budgets::Budgets::new(ledger.clone(), names.clone(), 1, Duration::ZERO),
            on: false,
            counts: false,
            admin_limited: false,
            signin: signin::SignIn::new(None, false, ledger.clone(), names),
            ledger,
            stats: Stats::default(),
        })
    }

    /// Whether `STOREGATE_RATE_LIMITS` limits anyone.
    pub fn is_on(&self) -> bool {
        self.on
    }

    /// Whether admin keys are limited (their key is then looked up per request).
    pub fn limits_admin(&self) -> bool {
        self.admin_limited
    }

    /// Where budgets are counted now.
    pub fn counting(&self) -> Counting {
        self.ledger.counting()
    }

    /// Windows and pools held here (`/metrics`).
    pub fn held(&self) -> (u64, u64) {
        (self.ledger.local_windows(), self.budgets.pools())
    }

    /// Decisions made here because Redis was down.
    pub fn fallbacks(&self) -> u64 {
        self.ledger.fallbacks.load(Ordering::Relaxed)
    }

    /// The client's address for a request from `peer` with `headers`.
    pub fn address(&self, headers: &HeaderMap, peer: Option<IpAddr>) -> Option<IpAddr> {
        client::client_address(headers, peer, &self.trusted)
    }

    /// The budget a caller resolved before routing spends on `method path`, with its
    /// rate; None when no limit counts it. `admin_key` is the admin key's place (looked up
    /// only when [`Limits::limits_admin`]).
    pub fn budget(
        &self,
        principal: Principal,
        admin_key: impl FnOnce() -> Option<usize>,
        headers: &HeaderMap,
        method: &Method,
        path: &str,
    ) -> Option<(Budget, Rate)> {
        if !self.on {
            return None;
        }
        let class = client::class_of(method, path)?;
        let client = match principal {
            Principal::Guest => {
                let peer = crate::context::request::peer().map(|p| p.ip());
                Client::guest(self.address(headers, peer)?)
            }
            Principal::Customer(id) => Client::customer(id),
            Principal::Admin if self.admin_limited => Client::admin(admin_key()?),
            Principal::Admin => return None,
        };
        let rate = self.settings.rate(client.kind, class, None)?;
        Some((Budget { client, class }, rate))
    }

    /// The budgets a signed OAuth call spends: its consumer's (at the consumer's own rate
    /// when it has one) and, for a customer's token, the customer's.
    pub fn signed(
        &self,
        principal: Principal,
        consumer: &SignedConsumer,
        method: &Method,
        path: &str,
    ) -> [Option<(Budget, Rate)>; 2] {
        if !self.counts {
            return [None, None];
        }
        let Some(class) = client::class_of(method, path) else {
            return [None, None];
        };
        let app = Client::consumer(consumer.id);
        let app = self
            .settings
            .rate(app.kind, class, consumer.rate_limit)
            .map(|rate| (Budget { client: app, class }, rate));
        let person = match principal {
            Principal::Customer(id) if self.on => {
                let client = Client::customer(id);
                self.settings
                    .rate(client.kind, class, None)
                    .map(|rate| (Budget { client, class }, rate))
            }
            _ => None,
        };
        [app, person]
    }

    /// The verdict from this thread's own state, when it has one (a repeat request).
    pub fn decide_now(&self, budget: Budget, rate: Rate, now: Instant) -> Option<Verdict> {
        let decision = self.budgets.decide_here(budget, rate, now)?;
        Some(self.verdict(&budget, decision))
    }

    /// The verdict, through this instance's pool and the window when needed.
    pub async fn decide(&self, budget: Budget, rate: Rate) -> Verdict {
        let decision = self.budgets.decide(budget, rate).await;
        self.verdict(&budget, decision)
    }

    /// The verdict of up to two budgets (a signed customer call): refused if either
    /// refuses.
    pub async fn decide_all(&self, budgets: [Option<(Budget, Rate)>; 2]) -> Verdict {
        let mut admitted: Vec<HeaderValue> = Vec::new();
        for (budget, rate) in budgets.into_iter().flatten() {
            let verdict = match self.decide_now(budget, rate, Instant::now()) {
                Some(verdict) => verdict,
                None => self.decide(budget, rate).await,
            };
            match verdict {
                Verdict::Unlimited => {}
                Verdict::Admitted(current, _) => admitted.push(current),
                refused @ Verdict::Refused(_) => return refused,
            }
        }
        let mut quotas = admitted.into_iter();
        match quotas.next() {
            Some(first) => Verdict::Admitted(first, quotas.next()),
            None => Verdict::Unlimited,
        }
    }

    fn verdict(&self, budget: &Budget, decision: Decision) -> Verdict {
        match decision {
            Decision::Admitted(_) if self.shadow => Verdict::Unlimited,
            Decision::Admitted(current) => Verdict::Admitted(current, None),
            Decision::Refused(quota) => {
                self.stats.count(self.shadow, budget);
                if self.shadow {
                    Verdict::Unlimited
                } else {
                    Verdict::Refused(quota)
                }
            }
        }
    }
}
