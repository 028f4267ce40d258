//! Configuration: an optional TOML file, overridden by `STOREGATE_*` environment variables.
//!
//! Every key has one name in the file (`upstream_timeout_ms`) and one in the environment
//! (`STOREGATE_UPSTREAM_TIMEOUT_MS`). A bad value stops the start with one line that names
//! the key and says what was expected; the offending value is echoed only for keys that are
//! not secrets. Secrets are held in [`Secret`], whose `Debug` never shows them.
//!
//! Reading goes through a lookup function rather than `std::env` directly, so tests build
//! configurations without touching the process environment.
//!
//! - [`keys`]: every key, its default and meaning; unknown names refused.
//! - `sources`: the file and the environment read into raw values with their origins.
//! - `sections`: the raw values checked and set, one function a section.
//! - `parse`: the value parsers they share.
//! - [`shadow`]: the dual run's candidate back end and its settings.
//! - [`start_checks`]: a production start cannot go wrong silently (no demo sandbox by
//!   accident).

pub mod keys;
mod parse;
pub mod rate_limits;
mod sections;
pub mod shadow;
mod sources;
pub mod start_checks;

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use keys::{KEYS, Key, check_names, variables_help};
pub use parse::{parse_bytes, parse_listen};
pub use rate_limits::{ClientKind, Rate, RateLimitMode, RateLimits, RouteClass};

/// A value that must never be logged or echoed.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

/// Which browser origins may call the API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CorsOrigins {
    /// No CORS headers: browsers on other origins cannot read the API's answers.
    Off,
    /// `*`: any origin (the API's credentials are bearer tokens, never cookies).
    Any,
    /// These origins exactly (`https://app.example`).
    List(Vec<String>),
}

/// The names `STOREGATE_BACKEND` takes: the kinds of `crate::backend::registry` (a test
/// there keeps the two lists the same).
pub const BACKEND_KINDS: &[&str] = &["magento2", "openmage"];

/// Which kind of store the gateway fronts (`STOREGATE_BACKEND`): a kind's name, one of
/// [`BACKEND_KINDS`] when read from the configuration (`crate::backend::registry` builds it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackendKind(&'static str);

#[allow(non_upper_case_globals)]
impl BackendKind {
    /// Magento 2 through its REST API, with an integration token (Bearer).
    pub const Magento2: BackendKind = BackendKind("magento2");
    /// OpenMage (Magento 1.9) through its own REST API, `/api/rest/...`, every call signed
    /// with OAuth 1.0a (`crate::backend::openmage`).
    pub const OpenMage: BackendKind = BackendKind("openmage");

    /// One of [`BACKEND_KINDS`], as the variable takes it (empty: Magento 2).
    pub fn parse(text: &str) -> Option<BackendKind> {
        let text = text.trim().to_ascii_lowercase();
        if text.is_empty() {
            return Some(BackendKind::Magento2);
        }
        BACKEND_KINDS
            .iter()
            .find(|name| **name == text)
            .map(|name| BackendKind(name))
    }

    /// A kind by name, whichever registry knows it (a kind added by a program that embeds the
    /// gateway, or a test's).
    pub const fn named(name: &'static str) -> BackendKind {
        BackendKind(name)
    }

    pub fn as_str(self) -> &'static str {
        self.0
    }

    /// The folder of mapping files used when `STOREGATE_MAPPINGS` is not set
    /// (`mappings/<kind>`).
    pub fn default_mappings(self) -> std::path::PathBuf {
        Path::new("mappings").join(self.0)
    }
}

impl Default for BackendKind {
    fn default() -> Self {
        BackendKind::Magento2
    }
}

/// Where the gateway's store lives.
#[derive(Debug, Clone)]
pub struct Upstream {
    /// Base URL without a trailing slash; calls go to the store's REST API under it (Magento 2)
    /// or `{url}/api/rest/...` (OpenMage). Or `replay:DIR`: answers come from the cassettes
    /// in DIR (`crate::backend::recording`).
    pub url: String,
    /// Magento 2: the integration token. OpenMage: the admin OAuth access token. Empty when
    /// replaying without a real store behind.
    pub token: Secret,
    /// OpenMage only: the rest of the OAuth 1.0a credentials the calls are signed with.
    /// None for Magento 2, and when replaying OpenMage cassettes without a store behind.
    pub oauth: Option<UpstreamOAuth>,
}

/// An OpenMage store's OAuth 1.0a credentials besides the access token
/// ([`Upstream::token`]): the consumer the gateway is registered as, and the token's secret.
#[derive(Debug, Clone)]
pub struct UpstreamOAuth {
    pub consumer_key: Secret,
    pub consumer_secret: Secret,
    pub token_secret: Secret,
}

impl Upstream {
    /// The cassette folder of `replay:DIR`.
    pub fn replay_dir(&self) -> Option<&Path> {
        self.url.strip_prefix(REPLAY_SCHEME).map(Path::new)
    }
}

/// `STOREGATE_UPSTREAM_URL=replay:DIR`.
pub const REPLAY_SCHEME: &str = "replay:";

/// Recording and replaying upstream traffic: the raw settings, checked and compiled by
/// `crate::backend::recording` (which owns their meaning; see docs/recording.md).
#[derive(Debug, Clone, Default)]
pub struct Recording {
    /// `STOREGATE_RECORD_DIR`: write every upstream exchange to cassettes here.
    pub record_dir: Option<PathBuf>,
    /// `STOREGATE_REPLAY_MODE`: `strict`, `record-missing` or `passthrough`.
    pub replay_mode: Option<String>,
    /// `STOREGATE_REPLAY_UPSTREAM_URL`: the real store behind `record-missing` and
    /// `passthrough`.
    pub replay_upstream_url: Option<String>,
    /// `STOREGATE_REPLAY_IGNORE`: `query:NAME` and `body:JSON.PATH` left out of matching.
    pub replay_ignore: Vec<String>,
    /// `STOREGATE_SCRUB_HEADERS`: more header names whose values never reach a cassette.
    pub scrub_headers: Vec<String>,
    /// `STOREGATE_SCRUB_JSON_PATHS`: more body fields whose values never reach a cassette.
    pub scrub_json_paths: Vec<String>,
    /// `STOREGATE_SCRUB_PATTERNS`: regular expressions, one per line.
    pub scrub_patterns: Vec<String>,
    /// `STOREGATE_RECORD_MASK_PII`: replace e-mails, names and telephones by fakes.
    pub mask_pii: bool,
    /// `STOREGATE_RECORD_MASK_KEY`: the key of the fakes' keyed hash.
    pub mask_key: Option<Secret>,
    /// `STOREGATE_REPLAY_LATENCY`: delays of replayed answers (`fixed:200ms`, ...).
    pub replay_latency: Option<String>,
    /// `STOREGATE_REPLAY_SEED`: the seed of replay's random delays and faults.
    pub replay_seed: Option<u64>,
    /// `STOREGATE_REPLAY_FAULTS`: faults with a probability (`maintenance@0.3`, ...).
    pub replay_faults: Option<String>,
    /// `STOREGATE_REPLAY_MAX_AGE`: how old a replayed answer may be (`30d`).
    pub replay_max_age: Option<String>,
    /// `STOREGATE_REPLAY_STALE`: `warn`, `error` or `record` past that age.
    pub replay_stale: Option<String>,
}

/// `STOREGATE_WARM_START`: after a restart, refill the answers that were hot before, from
/// the record of their keys in the data folder (`front::warm_start`), within a bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WarmStart {
    /// `off`: start cold (the lookups every request reads are still loaded first).
    pub enabled: bool,
    /// Answers refilled at most (the record keeps this many keys).
    pub max_keys: usize,
    /// Ready after this long at most, however far the refill got.
    pub max_time: Duration,
}

impl Default for WarmStart {
    fn default() -> WarmStart {
        WarmStart {
            enabled: true,
            max_keys: 5_000,
            max_time: Duration::from_secs(30),
        }
    }
}

impl WarmStart {
    /// `on`, `off`, or `keys=N,secs=S` (either, or both; on with those bounds).
    pub fn parse(text: &str) -> Option<WarmStart> {
        let text = text.trim().to_ascii_lowercase();
        match text.as_str() {
            "on" | "true" | "1" => return Some(WarmStart::default()),
            "off" | "false" | "0" => {
                return Some(WarmStart {
                    enabled: false,
                    ..WarmStart::default()
                });
            }
            _ => {}
        }
        let mut warm = WarmStart::default();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, value) = part.split_once('=')?;
            let value: u64 = value.trim().parse().ok().filter(|&v| v > 0)?;
            match name.trim() {
                "keys" if value <= 1_000_000 => warm.max_keys = value as usize,
                "secs" if value <= 3_600 => warm.max_time = Duration::from_secs(value),
                _ => return None,
            }
        }
        Some(warm)
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    pub listen: SocketAddr,
    /// The base URL clients reach the gateway at (`http://phone-visible-host:8080`), without
    /// `/api/rest`. None: `http://<listen address>`.
    pub public_url: Option<String>,
    /// Where the embedded sandbox listens (port 0: any free port).
    pub sandbox_listen: SocketAddr,
    /// One info line per request under the target `storegate::access`.
    pub access_log: bool,
    /// Browser origins allowed to call the API (CORS); empty: CORS off.
    pub cors_origins: CorsOrigins,
    /// Not a key: the embedded sandbox's base URL, set by the binary in sandbox mode, so the
    /// gateway serves the sandbox's `/media/...` files under its own address.
    pub sandbox_media: Option<String>,
    /// Which kind of store [`Config::upstream`] is.
    pub backend: BackendKind,
    /// OpenMage: the store views (code, id, website id); empty: the default store as 1 on
    /// website 1.
    pub openmage_store_views: Vec<(String, u64, u64)>,
    /// None: start the embedded sandbox and use it.
    pub upstream: Option<Upstream>,
    /// Store view code used for reads that name no store.
    pub default_store: String,
    pub admin_key: Option<Secret>,
    pub admin_key_sha256: Vec<[u8; 32]>,
    pub token_secret: Option<Secret>,
    pub token_ttl: Duration,
    /// None: the back end's default folder ([`BackendKind::default_mappings`]) if it exists,
    /// else the mappings built into the binary.
    pub mappings: Option<PathBuf>,
    pub upstream_timeout: Duration,
    /// Zero turns the read cache off (the benchmark's miss path).
    pub cache_ttl: Duration,
    pub cache_max_bytes: u64,
    pub stale_if_error: Duration,
    pub body_limit: usize,
    pub image_body_limit: usize,
    pub log_format: LogFormat,
    pub sandbox_latency: Duration,
    pub sandbox_products: usize,
    /// Stale-while-revalidate window after an entry's TTL.
    pub stale_while_revalidate: Duration,
    /// API requests served at once; more are refused at once with 503 (load shedding).
    pub max_in_flight: usize,
    /// Serving threads of the binary, each with its own runtime and listening socket; 0
    /// means one per core.
    pub workers: usize,
    /// Upstream calls in flight at once; more are refused at once (503 or stale data).
    pub upstream_max_in_flight: usize,
    /// Consecutive upstream failures that open the circuit breaker; 0 never opens it.
    pub circuit_failure_threshold: u32,
    /// How long the circuit stays open before one probe call.
    pub circuit_open: Duration,
    /// A request head must be complete this long after its first byte (after the accept,
    /// for a new connection).
    pub header_timeout: Duration,
    /// A keep-alive connection with nothing in flight is closed after this long.
    pub idle_timeout: Duration,
    /// Longest wait for the next piece of a request body; past it the request is a 408.
    pub body_timeout: Duration,
    /// Open connections at most; more are closed at once. None: derived from the
    /// descriptor limit (`server::default_max_connections`).
    pub max_connections: Option<usize>,
    /// On shutdown, how long requests in flight may take to finish.
    pub drain_timeout: Duration,
    /// Image uploads (create, update) whose bodies are read at once; more wait.
    pub max_uploads_in_flight: usize,
    /// `STOREGATE_WARM_START`: refill the previous hot answers at start (`front::warm_start`).
    pub warm_start: WarmStart,
    /// Cassettes: recording and replaying upstream traffic.
    pub recording: Recording,
    /// Folder of the embedded database (OAuth consumers, tokens, nonces); created on start.
    pub data_dir: PathBuf,
    /// Lifetime of OAuth access tokens; None: they never expire (as in the original).
    pub oauth_token_ttl: Option<Duration>,
    /// Peers whose `X-Forwarded-For` (the client's address, for rate limits) and
    /// `X-Forwarded-Proto` / `X-Forwarded-Host` (OAuth base strings) are believed.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// `STOREGATE_RATE_LIMITS`: per client and route class; empty, nothing is limited
    /// (`crate::limits`).
    pub rate_limits: RateLimits,
    /// `STOREGATE_SIGNIN_LIMIT`: failed sign-ins per username and per address; None: off.
    pub signin_limit: Option<Rate>,
    /// `STOREGATE_RATE_LIMIT_MODE`: refuse past a limit, or only count (shadow).
    pub rate_limit_mode: RateLimitMode,
    /// `redis://` or `rediss://` URL of the Redis that instances share state through
    /// (`src/shared_state/`); None keeps everything in this process. A secret: it may hold
    /// a password.
    pub redis_url: Option<Secret>,
    /// Deadline for one Redis call; past it the call counts as failed.
    pub redis_timeout: Duration,
    /// Keep upstream records in Redis too, as a second cache level shared by instances.
    pub shared_cache: bool,
    /// SPEC.md's answers, or the original's where they differ (`crate::context::profile`).
    pub profile: crate::context::profile::Profile,
    /// Where OAuth consumers and tokens live (`crate::auth::oauth::database`): None, the
    /// SQLite file in `data_dir`. A secret: it may hold a password.
    pub database_url: Option<Secret>,
    /// Deadline for one OAuth store call (`STOREGATE_DATABASE_TIMEOUT_MS`); past it the store
    /// counts as degraded and its breaker opens (`crate::auth::oauth::guard`).
    pub database_timeout: Duration,
    /// `STOREGATE_SANDBOX`: Some(true) asks for the embedded sandbox whatever else is set,
    /// Some(false) refuses to start without an upstream URL (`start_checks`).
    pub sandbox: Option<bool>,
    /// The dual run: a candidate back end compared with the serving one, and the reads it
    /// serves (`STOREGATE_SHADOW_*`); None: no shadow.
    pub shadow: Option<shadow::Shadow>,
    /// Not a variable: how long verified OAuth credentials stay fresh, instead of
    /// `auth::oauth::verified`'s defaults (tests shorten it to see the store-failure
    /// fallback).
    pub oauth_cache_fresh: Option<Duration>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            public_url: None,
            sandbox_listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            access_log: true,
            cors_origins: CorsOrigins::Off,
            sandbox_media: None,
            backend: BackendKind::Magento2,
            openmage_store_views: Vec::new(),
            upstream: None,
            default_store: "default".to_owned(),
            admin_key: None,
            admin_key_sha256: Vec::new(),
            token_secret: None,
            token_ttl: Duration::from_secs(3600),
            mappings: None,
            upstream_timeout: Duration::from_millis(5000),
            cache_ttl: Duration::from_secs(60),
            cache_max_bytes: 256 * 1024 * 1024,
            stale_if_error: Duration::from_secs(300),
            body_limit: 1024 * 1024,
            image_body_limit: 16 * 1024 * 1024,
            log_format: LogFormat::Text,
            sandbox_latency: Duration::ZERO,
            sandbox_products: 0,
            stale_while_revalidate: Duration::from_secs(10),
            max_in_flight: 1024,
            workers: 0,
            upstream_max_in_flight: 256,
            circuit_failure_threshold: 5,
            circuit_open: Duration::from_millis(5000),
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(75),
            // The request deadline's default (`upstream_timeout`), which caps it anyway.
            body_timeout: Duration::from_secs(5),
            max_connections: None,
            drain_timeout: Duration::from_secs(10),
            max_uploads_in_flight: 2,
            warm_start: WarmStart::default(),
            recording: Recording::default(),
            data_dir: PathBuf::from("data"),
            oauth_token_ttl: None,
            trusted_proxies: Vec::new(),
            rate_limits: RateLimits::default(),
            signin_limit: Some(rate_limits::DEFAULT_SIGNIN_LIMIT),
            rate_limit_mode: RateLimitMode::Enforce,
            redis_url: None,
            redis_timeout: Duration::from_millis(250),
            shared_cache: false,
            profile: crate::context::profile::Profile::Spec,
            database_url: None,
            database_timeout: Duration::from_millis(500),
            sandbox: None,
            shadow: None,
            oauth_cache_fresh: None,
        }
    }
}

/// The exit status of a start refused for its configuration: a bad or unknown variable, a
/// bad configuration or mapping file, a bad command line (clap uses 2 for those too).
pub const EXIT_CONFIG: u8 = 2;

/// A configuration problem, displayed as one line naming the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

impl Config {
    /// Reads the process environment and, when given, a TOML file.
    pub fn load(file: Option<&Path>) -> Result<Config, ConfigError> {
        check_names(std::env::vars_os().filter_map(|(name, _)| name.into_string().ok()))?;
        Config::from_sources(file, &|name| std::env::var(name).ok())
    }

    /// Reads a TOML file (if any) and then overrides from `lookup(env var name)`.
    pub fn from_sources(
        file: Option<&Path>,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let raw = sources::collect(file, lookup)?;
        let mut config = Config::default();
        sections::serving(&raw, &mut config)?;
        sections::upstream(&raw, &mut config)?;
        sections::credentials(&raw, &mut config)?;
        sections::caching(&raw, &mut config)?;
        rate_limits::section(&raw, &mut config)?;
        shadow::shadow(&raw, &mut config)?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests;
