//! Configuration: an optional TOML file, overridden by `STOREGATE_*` environment variables.
//!
//! Every key has one name in the file (`upstream_timeout_ms`) and one in the environment
//! (`STOREGATE_UPSTREAM_TIMEOUT_MS`). A bad value stops the start with one line that names
//! the key and says what was expected; the offending value is echoed only for keys that are
//! not secrets. Secrets are held in [`Secret`], whose `Debug` never shows them.
//!
//! Reading goes through a lookup function rather than `std::env` directly, so tests build
//! configurations without touching the process environment.

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

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

/// Where the gateway's Magento 2 lives.
#[derive(Debug, Clone)]
pub struct Upstream {
    /// Base URL without a trailing slash; calls go to `{url}/rest/{scope}/V1/...`. Or
    /// `replay:DIR`: answers come from the cassettes in DIR (`crate::upstream::recording`).
    pub url: String,
    /// Empty when replaying without a real store behind.
    pub token: Secret,
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
/// `crate::upstream::recording` (which owns their meaning; see the README's "Recording and replaying").
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
    /// None: start the embedded sandbox and use it.
    pub upstream: Option<Upstream>,
    /// Store view code used for reads that name no store.
    pub default_store: String,
    pub admin_key: Option<Secret>,
    pub admin_key_sha256: Vec<[u8; 32]>,
    pub token_secret: Option<Secret>,
    pub token_ttl: Duration,
    /// None: the default folder if it exists, else the mappings built into the binary.
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
    /// Cassettes: recording and replaying upstream traffic.
    pub recording: Recording,
    /// Folder of the embedded database (OAuth consumers, tokens, nonces); created on start.
    pub data_dir: PathBuf,
    /// Lifetime of OAuth access tokens; None: they never expire (as in the original).
    pub oauth_token_ttl: Option<Duration>,
    /// Peers whose `X-Forwarded-Proto` / `X-Forwarded-Host` are believed (OAuth base strings).
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// `redis://` or `rediss://` URL of the Redis that instances share state through
    /// (`src/shared_state/`); None keeps everything in this process. A secret: it may hold
    /// a password.
    pub redis_url: Option<Secret>,
    /// Deadline for one Redis call; past it the call counts as failed.
    pub redis_timeout: Duration,
    /// Keep upstream records in Redis too, as a second cache level shared by instances.
    pub shared_cache: bool,
    /// SPEC.md's answers, or the original's where they differ (`crate::profile`).
    pub profile: crate::profile::Profile,
    /// Where OAuth consumers and tokens live (`crate::oauth::database`): None, the SQLite
    /// file in `data_dir`. A secret: it may hold a password.
    pub database_url: Option<Secret>,
    /// `STOREGATE_SANDBOX`: Some(true) asks for the embedded sandbox whatever else is set,
    /// Some(false) refuses to start without an upstream URL (`crate::start_checks`).
    pub sandbox: Option<bool>,
    /// Not a variable: how long verified OAuth credentials stay fresh, instead of
    /// `oauth::verified`'s defaults (tests shorten it to see the store-failure fallback).
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
            body_timeout: Duration::from_secs(10),
            max_connections: None,
            drain_timeout: Duration::from_secs(10),
            max_uploads_in_flight: 2,
            recording: Recording::default(),
            data_dir: PathBuf::from("data"),
            oauth_token_ttl: None,
            trusted_proxies: Vec::new(),
            redis_url: None,
            redis_timeout: Duration::from_millis(250),
            shared_cache: false,
            profile: crate::profile::Profile::Spec,
            database_url: None,
            sandbox: None,
            oauth_cache_fresh: None,
        }
    }
}

/// The exit status of a start refused for its configuration: a bad or unknown variable, a
/// bad configuration or mapping file, a bad command line (clap uses 2 for those too).
pub const EXIT_CONFIG: u8 = 2;

/// `--help`'s list of variables: every key, its default and meaning, from [`KEYS`].
pub fn variables_help() -> String {
    let width = KEYS
        .iter()
        .map(|k| env_name(k.name).len())
        .max()
        .unwrap_or(0);
    let mut text = String::from(
        "Environment variables (override the --config file, whose keys are the same names in \
         lower case without STOREGATE_; an unknown STOREGATE_* variable stops the start):\n",
    );
    for k in KEYS {
        text.push_str(&format!(
            "  {:width$}  {} [default: {}]\n",
            env_name(k.name),
            k.meaning,
            k.default
        ));
    }
    text.push_str(&format!(
        "\nExit status: 0 stopped on a signal; {EXIT_CONFIG} configuration refused (one line on \
         stderr names the key); 1 any other failure (such as an address already in use)."
    ));
    text
}

/// A configuration problem, displayed as one line naming the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// One configuration key. The file key is `name`; the variable is `STOREGATE_` + `NAME`.
/// `--help` lists every row with its default, and a `STOREGATE_*` variable that is not a row
/// stops the start (with a suggestion), so adding a key is adding a row here.
#[derive(Debug, Clone, Copy)]
pub struct Key {
    pub name: &'static str,
    /// Never echoed in an error.
    pub secret: bool,
    /// The default, as `--help` shows it.
    pub default: &'static str,
    pub meaning: &'static str,
}

const fn key(name: &'static str, default: &'static str, meaning: &'static str) -> Key {
    Key {
        name,
        secret: false,
        default,
        meaning,
    }
}

const fn secret(name: &'static str, default: &'static str, meaning: &'static str) -> Key {
    Key {
        name,
        secret: true,
        default,
        meaning,
    }
}

/// Every key the gateway knows. Rows marked "(read by ...)" belong to features that parse
/// their own value elsewhere; they are here so the unknown-variable check and `--help` know
/// them.
pub const KEYS: &[Key] = &[
    key(
        "listen",
        "127.0.0.1:8080",
        "address to serve on (`localhost:PORT` accepted)",
    ),
    key(
        "public_url",
        "http://<listen address>",
        "base URL clients reach the gateway at; media and storefront URLs in sandbox mode",
    ),
    key(
        "upstream_url",
        "unset: the embedded sandbox",
        "Magento 2 base URL",
    ),
    secret(
        "upstream_token",
        "required with a URL",
        "Magento 2 integration access token (Bearer)",
    ),
    key(
        "default_store",
        "default",
        "store view code used for reads that name no store",
    ),
    secret(
        "admin_key",
        "sandbox mode: generated, printed",
        "an admin API key, plain (development)",
    ),
    key(
        "admin_key_sha256",
        "none",
        "comma-separated SHA-256 hex digests of admin API keys (production)",
    ),
    secret(
        "token_secret",
        "random per process, with a warning",
        "key that signs customer tokens; share it between instances",
    ),
    key("token_ttl_secs", "3600", "lifetime of a customer token"),
    key(
        "mappings",
        "mappings/magento2 if present, else built in",
        "folder of mapping files",
    ),
    key(
        "upstream_timeout_ms",
        "5000",
        "deadline for one upstream call (and, shared, for one request)",
    ),
    key(
        "cache_ttl_secs",
        "60",
        "freshness of cached product and image reads (0: cache off)",
    ),
    key("cache_max_bytes", "256MiB", "cache capacity, by weight"),
    key(
        "stale_if_error_secs",
        "300",
        "how long past its TTL an entry may be served while the upstream fails",
    ),
    key(
        "stale_while_revalidate_secs",
        "10",
        "how long past its TTL an entry is served while one refresh runs",
    ),
    key(
        "body_limit_bytes",
        "1MiB",
        "largest request body, except images",
    ),
    key(
        "image_body_limit_bytes",
        "16MiB",
        "largest image upload body",
    ),
    key(
        "log_format",
        "text",
        "`text` or `json` (JSON: every line on stderr and stdout is a JSON object)",
    ),
    key(
        "access_log",
        "on",
        "`on` or `off`: one info line per request (target storegate::access)",
    ),
    key(
        "cors_origins",
        "off",
        "origins allowed to call the API from a browser: comma-separated, or `*`",
    ),
    key(
        "sandbox_listen",
        "127.0.0.1:0",
        "embedded sandbox only: its address (port 0: any free port)",
    ),
    key(
        "sandbox_latency_ms",
        "0",
        "embedded sandbox only: delay added to every answer",
    ),
    key(
        "sandbox_products",
        "0",
        "embedded sandbox only: extra generated products",
    ),
    key(
        "max_in_flight",
        "1024",
        "API requests served at once; more get 503 at once",
    ),
    key(
        "workers",
        "0",
        "serving threads, each with its own socket (0: one per core)",
    ),
    key(
        "upstream_max_in_flight",
        "256",
        "upstream calls in flight at once; more are not sent",
    ),
    key(
        "circuit_failure_threshold",
        "5",
        "consecutive upstream failures that open the circuit (0: never)",
    ),
    key(
        "circuit_open_ms",
        "5000",
        "how long the circuit stays open before one probe call",
    ),
    // Read by the features of other modules (DESIGN.md's "more configuration"); the rows
    // are here so that --help and the unknown-name check know them.
    secret(
        "database_url",
        "sqlite:// in STOREGATE_DATA_DIR",
        "OAuth store shared by instances: sqlite://PATH or mysql://user:pw@host/db (a secret)",
    ),
    key(
        "sandbox",
        "unset: only when no production setting is",
        "`1`: start the embedded sandbox on purpose; `0`: never (no upstream URL: refuse)",
    ),
    key(
        "data_dir",
        "data",
        "folder of the embedded database: OAuth consumers, tokens, nonces",
    ),
    key(
        "oauth_token_ttl_secs",
        "unset: never expire",
        "lifetime of OAuth access tokens (0: never expire)",
    ),
    key(
        "trusted_proxies",
        "none",
        "addresses or CIDR blocks whose X-Forwarded-Proto/-Host are believed",
    ),
    key(
        "profile",
        "spec",
        "`spec`, or `original` for the original's behaviour where it differs",
    ),
    secret(
        "redis_url",
        "unset: in-process",
        "Redis shared by several instances: redis:// or rediss:// (a secret)",
    ),
    key("redis_timeout_ms", "250", "deadline for one Redis call"),
    key(
        "shared_cache",
        "0",
        "`1`: a second-level cache of upstream records in Redis (needs STOREGATE_REDIS_URL)",
    ),
    key(
        "record_dir",
        "off",
        "record every upstream exchange, scrubbed, into cassettes there (read by recording)",
    ),
    key(
        "record_mask_pii",
        "false",
        "replace e-mails, names and telephones by consistent fakes (read by recording)",
    ),
    secret(
        "record_mask_key",
        "a built-in key",
        "key of the fakes' keyed hash (read by recording)",
    ),
    key(
        "replay_mode",
        "strict",
        "with replay:DIR: strict, record-missing or passthrough (read by recording)",
    ),
    key(
        "replay_upstream_url",
        "none",
        "the real store behind record-missing and passthrough (read by recording)",
    ),
    key(
        "replay_ignore",
        "none",
        "query:NAME and body:JSON.PATH left out of matching (read by recording)",
    ),
    key(
        "scrub_headers",
        "none",
        "header names never written to a cassette (read by recording)",
    ),
    key(
        "scrub_json_paths",
        "none",
        "body fields never written to a cassette (read by recording)",
    ),
    key(
        "scrub_patterns",
        "none",
        "regular expressions scrubbed from every text (read by recording)",
    ),
    key(
        "header_timeout_secs",
        "10",
        "a request head must be complete this long after its first byte (read by the listener)",
    ),
    key(
        "idle_timeout_secs",
        "75",
        "an idle keep-alive connection is closed after this long (read by the listener)",
    ),
    key(
        "body_timeout_secs",
        "10",
        "longest wait for the next byte of a request body (read by the listener)",
    ),
    key(
        "max_connections",
        "from ulimit -n, at most 10000",
        "open connections at most (read by the listener)",
    ),
    key(
        "max_uploads_in_flight",
        "2",
        "image uploads whose body is read at once (read by the listener)",
    ),
    key(
        "drain_timeout_secs",
        "10",
        "on SIGTERM, how long requests in flight may finish (read by the listener)",
    ),
];

/// Keys whose file form is an array of strings that may hold commas (regular expressions):
/// their items are joined with newlines, and the environment's value is one item a line.
const LINE_LISTS: &[&str] = &["scrub_patterns"];

fn env_name(key: &str) -> String {
    format!("STOREGATE_{}", key.to_ascii_uppercase())
}

/// Where a raw value came from, so the error names what the user typed.
struct Raw {
    value: String,
    origin: String,
    secret: bool,
}

impl Raw {
    fn fail(&self, expected: &str) -> ConfigError {
        if self.secret {
            ConfigError(format!("invalid {}: expected {expected}", self.origin))
        } else {
            ConfigError(format!(
                "invalid {}: expected {expected}, got {:?}",
                self.origin, self.value
            ))
        }
    }
}

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
        let mut raw: BTreeMap<&'static str, Raw> = BTreeMap::new();
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).map_err(|e| {
                ConfigError(format!("cannot read config file {}: {e}", path.display()))
            })?;
            let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
                ConfigError(format!(
                    "config file {}: {}",
                    path.display(),
                    e.message().trim()
                ))
            })?;
            for (key, value) in table {
                let Some(known) = KEYS.iter().find(|k| k.name == key) else {
                    let hint = suggestion(&key, KEYS.iter().map(|k| k.name.to_owned()))
                        .map(|name| format!("; did you mean {name:?}?"))
                        .unwrap_or_default();
                    return Err(ConfigError(format!(
                        "config file {}: unknown key {key:?}{hint}",
                        path.display()
                    )));
                };
                let (known, secret) = (known.name, known.secret);
                let value = match value {
                    toml::Value::String(s) => s,
                    toml::Value::Integer(i) => i.to_string(),
                    toml::Value::Array(items) => items
                        .iter()
                        .map(|v| {
                            v.as_str()
                                .map(str::to_owned)
                                .unwrap_or_else(|| v.to_string())
                        })
                        .collect::<Vec<_>>()
                        .join(if LINE_LISTS.contains(&known) {
                            "\n"
                        } else {
                            ","
                        }),
                    other => other.to_string(),
                };
                raw.insert(
                    known,
                    Raw {
                        value,
                        origin: format!("{key} in {}", path.display()),
                        secret,
                    },
                );
            }
        }
        for key in KEYS {
            let name = env_name(key.name);
            if let Some(value) = lookup(&name) {
                raw.insert(
                    key.name,
                    Raw {
                        value,
                        origin: name,
                        secret: key.secret,
                    },
                );
            }
        }

        let mut config = Config::default();
        if let Some(r) = raw.get("listen") {
            config.listen = parse_listen(&r.value)
                .ok_or_else(|| r.fail("an address such as 127.0.0.1:8080 or localhost:8080"))?;
        }
        if let Some(r) = raw.get("sandbox_listen") {
            config.sandbox_listen = parse_listen(&r.value)
                .ok_or_else(|| r.fail("an address such as 127.0.0.1:8081 or localhost:8081"))?;
        }
        if let Some(r) = raw.get("public_url") {
            config.public_url = Some(parse_url(r)?);
        }
        // Set but empty is a mistake (a shell variable that did not expand), not a request
        // for the demo sandbox: only an unset URL starts it.
        let url = match raw.get("upstream_url") {
            Some(r) if r.value.trim().is_empty() => {
                return Err(r.fail("an http:// or https:// URL (unset it to use the sandbox)"));
            }
            Some(r) => Some(parse_url(r)?),
            None => None,
        };
        let token = raw
            .get("upstream_token")
            .filter(|r| !r.value.trim().is_empty())
            .map(|r| Secret::new(r.value.trim()));
        config.upstream = match (url, token) {
            (Some(url), Some(token)) => Some(Upstream { url, token }),
            // Cassettes hold no token; one is needed only to forward (record-missing).
            (Some(url), None) if url.starts_with(REPLAY_SCHEME) => Some(Upstream {
                url,
                token: Secret::new(""),
            }),
            (Some(_), None) => {
                return Err(ConfigError(
                    "missing STOREGATE_UPSTREAM_TOKEN: required when STOREGATE_UPSTREAM_URL is set"
                        .into(),
                ));
            }
            (None, _) => None,
        };
        if let Some(r) = raw.get("default_store") {
            let code = r.value.trim();
            if code.is_empty()
                || !code.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                || code == "all"
            {
                return Err(r.fail("a store view code such as default"));
            }
            config.default_store = code.to_owned();
        }
        if let Some(r) = raw.get("admin_key") {
            if r.value.trim().is_empty() {
                return Err(r.fail("a non-empty key"));
            }
            config.admin_key = Some(Secret::new(r.value.trim()));
        }
        if let Some(r) = raw.get("admin_key_sha256") {
            for digest in r.value.split(',').map(str::trim).filter(|d| !d.is_empty()) {
                config
                    .admin_key_sha256
                    .push(parse_sha256(digest).ok_or_else(|| {
                        r.fail("comma-separated SHA-256 digests, 64 hex digits each")
                    })?);
            }
        }
        if let Some(r) = raw.get("token_secret") {
            if r.value.is_empty() {
                return Err(r.fail("a non-empty secret"));
            }
            config.token_secret = Some(Secret::new(r.value.clone()));
        }
        if let Some(r) = raw.get("token_ttl_secs") {
            config.token_ttl = Duration::from_secs(positive(r, "a number of seconds above 0")?);
        }
        if let Some(r) = raw.get("mappings") {
            if r.value.trim().is_empty() {
                return Err(r.fail("a folder of mapping files"));
            }
            config.mappings = Some(PathBuf::from(r.value.trim()));
        }
        if let Some(r) = raw.get("upstream_timeout_ms") {
            config.upstream_timeout =
                Duration::from_millis(positive(r, "a number of milliseconds above 0")?);
        }
        if let Some(r) = raw.get("cache_ttl_secs") {
            config.cache_ttl =
                Duration::from_secs(number(r, "a number of seconds (0 turns the cache off)")?);
        }
        if let Some(r) = raw.get("cache_max_bytes") {
            config.cache_max_bytes = parse_bytes(&r.value)
                .ok_or_else(|| r.fail("a size such as 268435456 or 256MiB"))?;
        }
        if let Some(r) = raw.get("stale_if_error_secs") {
            config.stale_if_error = Duration::from_secs(number(r, "a number of seconds")?);
        }
        if let Some(r) = raw.get("body_limit_bytes") {
            config.body_limit = parse_bytes(&r.value)
                .filter(|&b| b > 0)
                .ok_or_else(|| r.fail("a size such as 1MiB"))?
                as usize;
        }
        if let Some(r) = raw.get("image_body_limit_bytes") {
            config.image_body_limit = parse_bytes(&r.value)
                .filter(|&b| b > 0)
                .ok_or_else(|| r.fail("a size such as 16MiB"))?
                as usize;
        }
        if let Some(r) = raw.get("log_format") {
            config.log_format = match r.value.trim().to_ascii_lowercase().as_str() {
                "text" | "" => LogFormat::Text,
                "json" => LogFormat::Json,
                _ => return Err(r.fail("text or json")),
            };
        }
        if let Some(r) = raw.get("access_log") {
            config.access_log = match r.value.trim().to_ascii_lowercase().as_str() {
                "on" | "1" | "true" => true,
                "off" | "0" | "false" => false,
                _ => return Err(r.fail("on or off")),
            };
        }
        if let Some(r) = raw.get("cors_origins") {
            config.cors_origins = parse_origins(&r.value).map_err(|why| r.fail(why))?;
        }
        if let Some(r) = raw.get("profile") {
            config.profile = crate::profile::Profile::parse(&r.value)
                .ok_or_else(|| r.fail("spec or original"))?;
        }
        if let Some(r) = raw.get("sandbox_latency_ms") {
            config.sandbox_latency = Duration::from_millis(number(r, "a number of milliseconds")?);
        }
        if let Some(r) = raw.get("sandbox_products") {
            config.sandbox_products = number(r, "a number of products")? as usize;
        }
        if let Some(r) = raw.get("stale_while_revalidate_secs") {
            config.stale_while_revalidate = Duration::from_secs(number(r, "a number of seconds")?);
        }
        if let Some(r) = raw.get("max_in_flight") {
            config.max_in_flight = positive(r, "a number of requests above 0")? as usize;
        }
        if let Some(r) = raw.get("workers") {
            config.workers = number(r, "a number of threads (0: one per core)")? as usize;
        }
        if let Some(r) = raw.get("upstream_max_in_flight") {
            config.upstream_max_in_flight = positive(r, "a number of calls above 0")? as usize;
        }
        if let Some(r) = raw.get("circuit_failure_threshold") {
            config.circuit_failure_threshold = u32::try_from(number(
                r,
                "a number of failures (0 never opens the circuit)",
            )?)
            .map_err(|_| r.fail("a number of failures (0 never opens the circuit)"))?;
        }
        if let Some(r) = raw.get("circuit_open_ms") {
            config.circuit_open =
                Duration::from_millis(positive(r, "a number of milliseconds above 0")?);
        }
        if let Some(r) = raw.get("header_timeout_secs") {
            config.header_timeout =
                Duration::from_secs(positive(r, "a number of seconds above 0")?);
        }
        if let Some(r) = raw.get("idle_timeout_secs") {
            config.idle_timeout = Duration::from_secs(positive(r, "a number of seconds above 0")?);
        }
        if let Some(r) = raw.get("body_timeout_secs") {
            config.body_timeout = Duration::from_secs(positive(r, "a number of seconds above 0")?);
        }
        if let Some(r) = raw.get("max_connections") {
            config.max_connections = Some(positive(r, "a number of connections above 0")? as usize);
        }
        if let Some(r) = raw.get("drain_timeout_secs") {
            config.drain_timeout = Duration::from_secs(number(r, "a number of seconds")?);
        }
        if let Some(r) = raw.get("max_uploads_in_flight") {
            config.max_uploads_in_flight = positive(r, "a number of uploads above 0")? as usize;
        }
        config.recording = recording(&raw)?;
        if let Some(r) = raw.get("data_dir") {
            if r.value.trim().is_empty() {
                return Err(r.fail("a folder"));
            }
            config.data_dir = PathBuf::from(r.value.trim());
        }
        if let Some(r) = raw.get("oauth_token_ttl_secs") {
            config.oauth_token_ttl = match number(r, "a number of seconds (0: never expire)")? {
                0 => None,
                secs => Some(Duration::from_secs(secs)),
            };
        }
        if let Some(r) = raw.get("trusted_proxies") {
            config.trusted_proxies = parse_proxies(r)?;
        }
        if let Some(r) = raw.get("redis_url")
            && !r.value.trim().is_empty()
        {
            config.redis_url = Some(parse_redis_url(r)?);
        }
        if let Some(r) = raw.get("database_url")
            && !r.value.trim().is_empty()
        {
            crate::oauth::database::Location::parse(r.value.trim()).map_err(|why| r.fail(why))?;
            config.database_url = Some(Secret::new(r.value.trim()));
        }
        if let Some(r) = raw.get("sandbox") {
            config.sandbox = match r.value.trim().to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => Some(true),
                "0" | "false" | "no" | "off" => Some(false),
                "" => None,
                _ => return Err(r.fail("1 or 0")),
            };
        }
        if let Some(r) = raw.get("redis_timeout_ms") {
            config.redis_timeout =
                Duration::from_millis(positive(r, "a number of milliseconds above 0")?);
        }
        if let Some(r) = raw.get("shared_cache") {
            config.shared_cache = match r.value.trim().to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => true,
                "0" | "false" | "no" | "off" | "" => false,
                _ => return Err(r.fail("1 or 0")),
            };
            if config.shared_cache && config.redis_url.is_none() {
                return Err(ConfigError(format!(
                    "{} needs STOREGATE_REDIS_URL: the second-level cache lives in Redis",
                    r.origin
                )));
            }
        }
        Ok(config)
    }
}

fn recording(raw: &BTreeMap<&'static str, Raw>) -> Result<Recording, ConfigError> {
    let text = |key: &str| {
        raw.get(key)
            .map(|r| r.value.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let list = |key: &str, separator: char| -> Vec<String> {
        raw.get(key)
            .map(|r| {
                r.value
                    .split(separator)
                    .map(str::trim)
                    .filter(|v| !v.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let mask_pii = match raw.get("record_mask_pii") {
        None => false,
        Some(r) => match r.value.trim().to_ascii_lowercase().as_str() {
            "" | "0" | "false" | "no" | "off" => false,
            "1" | "true" | "yes" | "on" => true,
            _ => return Err(r.fail("true or false")),
        },
    };
    Ok(Recording {
        record_dir: text("record_dir").map(PathBuf::from),
        replay_mode: text("replay_mode"),
        replay_upstream_url: match raw.get("replay_upstream_url") {
            Some(r) if !r.value.trim().is_empty() => Some(parse_url(r)?),
            _ => None,
        },
        replay_ignore: list("replay_ignore", ','),
        scrub_headers: list("scrub_headers", ','),
        scrub_json_paths: list("scrub_json_paths", ','),
        scrub_patterns: list("scrub_patterns", '\n'),
        mask_pii,
        mask_key: raw
            .get("record_mask_key")
            .filter(|r| !r.value.is_empty())
            .map(|r| Secret::new(r.value.clone())),
    })
}

/// `STOREGATE_*` names that are not the gateway's configuration: the test suite's switches.
const NOT_CONFIGURATION: &[&str] = &["STOREGATE_RERECORD"];

/// Checks the names of the `STOREGATE_*` variables: one that is not a key stops the start,
/// with the nearest key as a suggestion. A typo in `STOREGATE_UPSTREAM_URL` would otherwise
/// start the demo sandbox in silence.
pub fn check_names(names: impl IntoIterator<Item = String>) -> Result<(), ConfigError> {
    let mut unknown: Vec<String> = names
        .into_iter()
        .filter(|name| name.starts_with("STOREGATE_"))
        .filter(|name| !NOT_CONFIGURATION.contains(&name.as_str()))
        .filter(|name| !KEYS.iter().any(|k| env_name(k.name) == *name))
        .collect();
    unknown.sort();
    let Some(name) = unknown.first() else {
        return Ok(());
    };
    let hint = suggestion(name, KEYS.iter().map(|k| env_name(k.name)))
        .map(|known| format!("; did you mean {known}?"))
        .unwrap_or_else(|| "; `storegate --help` lists the variables".to_owned());
    Err(ConfigError(format!("unknown variable {name}{hint}")))
}

/// The known name closest to `name`, if one is close enough to be a typo of it.
fn suggestion(name: &str, known: impl Iterator<Item = String>) -> Option<String> {
    known
        .map(|k| (strsim::normalized_damerau_levenshtein(name, &k), k))
        .filter(|(score, _)| *score >= 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}

/// `127.0.0.1:8080`, `[::1]:8080`, `0.0.0.0:8080`, or `localhost:8080` (loopback, IPv4).
pub fn parse_listen(text: &str) -> Option<SocketAddr> {
    let text = text.trim();
    if let Ok(addr) = text.parse() {
        return Some(addr);
    }
    let port = text.strip_prefix("localhost:")?.parse::<u16>().ok()?;
    Some(SocketAddr::from(([127, 0, 0, 1], port)))
}

/// `*`, or a comma-separated list of origins (`scheme://host[:port]`, no path).
fn parse_origins(text: &str) -> Result<CorsOrigins, &'static str> {
    let text = text.trim();
    match text.to_ascii_lowercase().as_str() {
        "" | "off" | "none" => return Ok(CorsOrigins::Off),
        "*" => return Ok(CorsOrigins::Any),
        _ => {}
    }
    let expected = "`*` or comma-separated origins such as https://app.example";
    let mut origins = Vec::new();
    for origin in text.split(',').map(str::trim).filter(|o| !o.is_empty()) {
        let origin = origin.trim_end_matches('/');
        let url = reqwest::Url::parse(origin).map_err(|_| expected)?;
        if !matches!(url.scheme(), "http" | "https")
            || url.host_str().is_none()
            || url.path() != "/"
            || url.query().is_some()
            || http::HeaderValue::from_str(origin).is_err()
        {
            return Err(expected);
        }
        origins.push(origin.to_owned());
    }
    Ok(CorsOrigins::List(origins))
}

/// `10.0.0.1, 192.168.0.0/16, ::1`: addresses or CIDR blocks.
fn parse_proxies(r: &Raw) -> Result<Vec<ipnet::IpNet>, ConfigError> {
    let expected = "comma-separated IP addresses or CIDR blocks such as 10.0.0.0/8";
    r.value
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(|item| {
            item.parse::<ipnet::IpNet>()
                .or_else(|_| item.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                .map_err(|_| r.fail(expected))
        })
        .collect()
}

/// `redis://[user:password@]host[:port][/db]` or `rediss://` for TLS. Checked here so that a
/// typo stops the start; the message never quotes the value (it may hold a password).
fn parse_redis_url(r: &Raw) -> Result<Secret, ConfigError> {
    let expected = "a redis:// or rediss:// URL such as redis://:password@127.0.0.1:6379/0";
    let text = r.value.trim();
    let url = reqwest::Url::parse(text).map_err(|_| r.fail(expected))?;
    if !matches!(url.scheme(), "redis" | "rediss") || url.host_str().is_none_or(str::is_empty) {
        return Err(r.fail(expected));
    }
    let db = url.path().trim_start_matches('/');
    if !db.is_empty() && db.parse::<u32>().is_err() {
        return Err(r.fail(expected));
    }
    Ok(Secret::new(text))
}

fn number(r: &Raw, expected: &str) -> Result<u64, ConfigError> {
    r.value.trim().parse::<u64>().map_err(|_| r.fail(expected))
}

fn positive(r: &Raw, expected: &str) -> Result<u64, ConfigError> {
    match number(r, expected)? {
        0 => Err(r.fail(expected)),
        n => Ok(n),
    }
}

fn parse_url(r: &Raw) -> Result<String, ConfigError> {
    let text = r.value.trim().trim_end_matches('/');
    if let Some(dir) = text.strip_prefix(REPLAY_SCHEME) {
        if dir.is_empty() {
            return Err(r.fail("replay:DIR with a cassette folder"));
        }
        return Ok(text.to_owned());
    }
    let url = reqwest::Url::parse(text).map_err(|_| r.fail("an http:// or https:// URL"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(r.fail("an http:// or https:// URL"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(r.fail("a base URL without query or fragment"));
    }
    Ok(text.to_owned())
}

fn parse_sha256(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(i * 2..i * 2 + 2)?, 16).ok()?;
    }
    Some(out)
}

/// `268435456`, `256MiB`, `256 MB`, `1GiB`, `512k`.
pub fn parse_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let n: u64 = digits.parse().ok()?;
    let factor: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1024,
        "m" | "mb" | "mib" => 1024 * 1024,
        "g" | "gb" | "gib" => 1024 * 1024 * 1024,
        _ => return None,
    };
    n.checked_mul(factor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn from_env(pairs: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_sources(None, &|name| map.get(name).cloned())
    }

    #[test]
    fn redis_url_is_checked_and_never_echoed() {
        let c = from_env(&[(
            "STOREGATE_REDIS_URL",
            "rediss://:hunter2@cache.internal:6380/3",
        )])
        .unwrap();
        assert_eq!(
            c.redis_url.as_ref().map(Secret::expose),
            Some("rediss://:hunter2@cache.internal:6380/3")
        );
        assert!(!format!("{c:?}").contains("hunter2"));
        for bad in [
            "http://:hunter2@host:6379",
            "redis://:hunter2@/0",
            "redis://:hunter2@host/x",
            "hunter2",
        ] {
            let e = from_env(&[("STOREGATE_REDIS_URL", bad)]).unwrap_err();
            assert!(e.0.contains("STOREGATE_REDIS_URL"), "{e}");
            assert!(!e.0.contains("hunter2"), "{e}");
        }
        let e = from_env(&[("STOREGATE_SHARED_CACHE", "1")]).unwrap_err();
        assert!(e.0.contains("STOREGATE_REDIS_URL"), "{e}");
        let c = from_env(&[
            ("STOREGATE_SHARED_CACHE", "1"),
            ("STOREGATE_REDIS_URL", "redis://127.0.0.1"),
        ])
        .unwrap();
        assert!(c.shared_cache);
        assert!(from_env(&[]).unwrap().redis_url.is_none());
    }

    #[test]
    fn defaults_match_the_contract() {
        let c = from_env(&[]).unwrap();
        assert_eq!(c.listen.to_string(), "127.0.0.1:8080");
        assert!(c.upstream.is_none());
        assert_eq!(c.upstream_timeout, Duration::from_millis(5000));
        assert_eq!(c.cache_ttl, Duration::from_secs(60));
        assert_eq!(c.cache_max_bytes, 256 * 1024 * 1024);
        assert_eq!(c.stale_if_error, Duration::from_secs(300));
        assert_eq!(c.stale_while_revalidate, Duration::from_secs(10));
        assert_eq!(c.max_in_flight, 1024);
        assert_eq!(c.upstream_max_in_flight, 256);
        assert_eq!(c.circuit_failure_threshold, 5);
        assert_eq!(c.circuit_open, Duration::from_millis(5000));
    }

    #[test]
    fn the_profile_is_spec_or_original_and_nothing_else() {
        assert_eq!(
            from_env(&[]).unwrap().profile,
            crate::profile::Profile::Spec
        );
        let c = from_env(&[("STOREGATE_PROFILE", "original")]).unwrap();
        assert_eq!(c.profile, crate::profile::Profile::Original);
        let e = from_env(&[("STOREGATE_PROFILE", "magento1")]).unwrap_err();
        assert!(e.0.contains("STOREGATE_PROFILE"), "{e}");
        assert!(e.0.contains("spec or original"), "{e}");
        assert!(!e.0.contains('\n'), "{e}");
    }

    #[test]
    fn resilience_keys() {
        let c = from_env(&[
            ("STOREGATE_STALE_WHILE_REVALIDATE_SECS", "0"),
            ("STOREGATE_MAX_IN_FLIGHT", "64"),
            ("STOREGATE_UPSTREAM_MAX_IN_FLIGHT", "8"),
            ("STOREGATE_CIRCUIT_FAILURE_THRESHOLD", "0"),
            ("STOREGATE_CIRCUIT_OPEN_MS", "250"),
        ])
        .unwrap();
        assert_eq!(c.stale_while_revalidate, Duration::ZERO);
        assert_eq!((c.max_in_flight, c.upstream_max_in_flight), (64, 8));
        assert_eq!(c.circuit_failure_threshold, 0);
        assert_eq!(c.circuit_open, Duration::from_millis(250));
        let e = from_env(&[("STOREGATE_MAX_IN_FLIGHT", "0")]).unwrap_err();
        assert!(e.0.contains("STOREGATE_MAX_IN_FLIGHT"), "{e}");
        let e = from_env(&[("STOREGATE_CIRCUIT_OPEN_MS", "soon")]).unwrap_err();
        assert!(e.0.contains("STOREGATE_CIRCUIT_OPEN_MS"), "{e}");
    }

    #[test]
    fn bad_values_name_the_key_and_hide_secrets() {
        let e = from_env(&[("STOREGATE_UPSTREAM_TIMEOUT_MS", "soon")]).unwrap_err();
        assert_eq!(
            e.0,
            "invalid STOREGATE_UPSTREAM_TIMEOUT_MS: expected a number of milliseconds above 0, got \"soon\""
        );
        let e = from_env(&[("STOREGATE_UPSTREAM_URL", "http://m2.test")]).unwrap_err();
        assert!(e.0.contains("STOREGATE_UPSTREAM_TOKEN"));
        let e = from_env(&[("STOREGATE_ADMIN_KEY", "  ")]).unwrap_err();
        assert!(e.0.starts_with("invalid STOREGATE_ADMIN_KEY"));
        let e = from_env(&[("STOREGATE_ADMIN_KEY_SHA256", "abc")]).unwrap_err();
        assert!(e.0.contains("STOREGATE_ADMIN_KEY_SHA256"));
        let e = from_env(&[("STOREGATE_LISTEN", "nowhere")]).unwrap_err();
        assert!(e.0.contains("STOREGATE_LISTEN"));
        let e = from_env(&[
            ("STOREGATE_UPSTREAM_URL", "ftp://x"),
            ("STOREGATE_UPSTREAM_TOKEN", "t"),
        ])
        .unwrap_err();
        assert!(e.0.contains("STOREGATE_UPSTREAM_URL"));
    }

    #[test]
    fn connection_limits() {
        let c = from_env(&[]).unwrap();
        assert_eq!(c.header_timeout, Duration::from_secs(10));
        assert_eq!(c.idle_timeout, Duration::from_secs(75));
        assert_eq!(c.body_timeout, Duration::from_secs(10));
        assert_eq!(c.drain_timeout, Duration::from_secs(10));
        assert_eq!((c.max_connections, c.max_uploads_in_flight), (None, 2));
        let c = from_env(&[
            ("STOREGATE_HEADER_TIMEOUT_SECS", "3"),
            ("STOREGATE_IDLE_TIMEOUT_SECS", "4"),
            ("STOREGATE_BODY_TIMEOUT_SECS", "5"),
            ("STOREGATE_MAX_CONNECTIONS", "100"),
            ("STOREGATE_DRAIN_TIMEOUT_SECS", "0"),
            ("STOREGATE_MAX_UPLOADS_IN_FLIGHT", "1"),
        ])
        .unwrap();
        assert_eq!(c.header_timeout, Duration::from_secs(3));
        assert_eq!(c.idle_timeout, Duration::from_secs(4));
        assert_eq!(c.body_timeout, Duration::from_secs(5));
        assert_eq!(c.drain_timeout, Duration::ZERO);
        assert_eq!((c.max_connections, c.max_uploads_in_flight), (Some(100), 1));
        for key in ["STOREGATE_HEADER_TIMEOUT_SECS", "STOREGATE_MAX_CONNECTIONS"] {
            let e = from_env(&[(key, "0")]).unwrap_err();
            assert!(e.0.starts_with(&format!("invalid {key}")), "{e}");
        }
    }

    #[test]
    fn unknown_variables_stop_the_start_with_a_suggestion() {
        let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            check_names(names(&["STOREGATE_UPSTRAEM_URL", "PATH"]))
                .unwrap_err()
                .0,
            "unknown variable STOREGATE_UPSTRAEM_URL; did you mean STOREGATE_UPSTREAM_URL?"
        );
        assert_eq!(
            check_names(names(&["STOREGATE_CACHE_TTL"])).unwrap_err().0,
            "unknown variable STOREGATE_CACHE_TTL; did you mean STOREGATE_CACHE_TTL_SECS?"
        );
        let e = check_names(names(&["STOREGATE_SOMETHING_ELSE_ENTIRELY"])).unwrap_err();
        assert!(
            e.0.ends_with("`storegate --help` lists the variables"),
            "{e}"
        );
        // Every key, and the names other features read, pass; other prefixes are not ours.
        let all: Vec<String> = KEYS.iter().map(|k| env_name(k.name)).collect();
        check_names(all).unwrap();
        for name in [
            "STOREGATE_DATA_DIR",
            "STOREGATE_PROFILE",
            "STOREGATE_REDIS_URL",
            "STOREGATE_SHARED_CACHE",
            "STOREGATE_RECORD_DIR",
            "STOREGATE_PUBLIC_URL",
            "STOREGATE_SANDBOX_LISTEN",
            "STOREGATE_CORS_ORIGINS",
            "STOREGATE_ACCESS_LOG",
            "STOREGATE_TRUSTED_PROXIES",
            "STOREGATE_OAUTH_TOKEN_TTL_SECS",
            "STOREGATEWAY_X",
            "RUST_LOG",
        ] {
            check_names(vec![name.to_owned()]).unwrap();
        }
        // The file's keys get the same help.
        let dir = std::env::temp_dir().join(format!("storegate-keys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("storegate.toml");
        std::fs::write(&path, "upstream_ulr = \"http://x\"\n").unwrap();
        let e = Config::from_sources(Some(&path), &|_| None).unwrap_err();
        assert!(
            e.0.ends_with("unknown key \"upstream_ulr\"; did you mean \"upstream_url\"?"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_set_but_empty_upstream_url_is_an_error_not_the_sandbox() {
        let e = from_env(&[("STOREGATE_UPSTREAM_URL", " ")]).unwrap_err();
        assert!(e.0.starts_with("invalid STOREGATE_UPSTREAM_URL"), "{e}");
        assert!(e.0.contains("unset it to use the sandbox"), "{e}");
    }

    #[test]
    fn listen_addresses() {
        let c = from_env(&[
            ("STOREGATE_LISTEN", "localhost:9090"),
            ("STOREGATE_SANDBOX_LISTEN", "[::1]:9091"),
        ])
        .unwrap();
        assert_eq!(c.listen.to_string(), "127.0.0.1:9090");
        assert_eq!(c.sandbox_listen.to_string(), "[::1]:9091");
        assert_eq!(from_env(&[]).unwrap().sandbox_listen.port(), 0);
        for bad in ["localhost", "localhost:http", "example.com:80", ":80"] {
            let e = from_env(&[("STOREGATE_LISTEN", bad)]).unwrap_err();
            assert!(e.0.contains("localhost:8080"), "{bad}: {e}");
        }
    }

    #[test]
    fn public_url_cors_and_access_log() {
        let c = from_env(&[
            ("STOREGATE_PUBLIC_URL", "http://192.168.1.20:8080/"),
            (
                "STOREGATE_CORS_ORIGINS",
                "https://app.example, http://localhost:3000",
            ),
            ("STOREGATE_ACCESS_LOG", "off"),
        ])
        .unwrap();
        assert_eq!(c.public_url.as_deref(), Some("http://192.168.1.20:8080"));
        assert_eq!(
            c.cors_origins,
            CorsOrigins::List(vec![
                "https://app.example".into(),
                "http://localhost:3000".into()
            ])
        );
        assert!(!c.access_log);
        let d = from_env(&[]).unwrap();
        assert!(d.access_log && d.public_url.is_none());
        assert_eq!(d.cors_origins, CorsOrigins::Off);
        assert_eq!(
            from_env(&[("STOREGATE_CORS_ORIGINS", "*")])
                .unwrap()
                .cors_origins,
            CorsOrigins::Any
        );
        for bad in ["app.example", "https://app.example/path", "ftp://x"] {
            let e = from_env(&[("STOREGATE_CORS_ORIGINS", bad)]).unwrap_err();
            assert!(
                e.0.starts_with("invalid STOREGATE_CORS_ORIGINS"),
                "{bad}: {e}"
            );
        }
        assert!(from_env(&[("STOREGATE_PUBLIC_URL", "phone")]).is_err());
        assert!(from_env(&[("STOREGATE_ACCESS_LOG", "maybe")]).is_err());
    }

    #[test]
    fn help_lists_every_key_with_its_default() {
        let help = variables_help();
        for key in KEYS {
            let line = help
                .lines()
                .find(|l| {
                    l.trim_start()
                        .starts_with(&format!("{} ", env_name(key.name)))
                })
                .unwrap_or_else(|| panic!("{} missing from:\n{help}", key.name));
            assert!(
                line.contains(&format!("[default: {}]", key.default)),
                "{line}"
            );
        }
        assert!(help.contains(&format!("{EXIT_CONFIG} configuration refused")));
    }

    #[test]
    fn oauth_keys() {
        let c = from_env(&[]).unwrap();
        assert_eq!(c.data_dir, PathBuf::from("data"));
        assert_eq!(c.oauth_token_ttl, None);
        assert!(c.trusted_proxies.is_empty());
        let c = from_env(&[
            ("STOREGATE_DATA_DIR", "/var/lib/storegate"),
            ("STOREGATE_OAUTH_TOKEN_TTL_SECS", "86400"),
            ("STOREGATE_TRUSTED_PROXIES", "10.0.0.0/8, 192.0.2.7,::1"),
        ])
        .unwrap();
        assert_eq!(c.data_dir, PathBuf::from("/var/lib/storegate"));
        assert_eq!(c.oauth_token_ttl, Some(Duration::from_secs(86400)));
        let proxies: Vec<String> = c.trusted_proxies.iter().map(|n| n.to_string()).collect();
        assert_eq!(proxies, ["10.0.0.0/8", "192.0.2.7/32", "::1/128"]);
        assert_eq!(
            from_env(&[("STOREGATE_OAUTH_TOKEN_TTL_SECS", "0")])
                .unwrap()
                .oauth_token_ttl,
            None
        );
        let e = from_env(&[("STOREGATE_TRUSTED_PROXIES", "10.0.0.0/33")]).unwrap_err();
        assert!(e.0.starts_with("invalid STOREGATE_TRUSTED_PROXIES"), "{e}");
        let e = from_env(&[("STOREGATE_OAUTH_TOKEN_TTL_SECS", "a day")]).unwrap_err();
        assert!(
            e.0.starts_with("invalid STOREGATE_OAUTH_TOKEN_TTL_SECS"),
            "{e}"
        );
    }

    #[test]
    fn workers() {
        assert_eq!(from_env(&[]).unwrap().workers, 0);
        assert_eq!(from_env(&[("STOREGATE_WORKERS", "4")]).unwrap().workers, 4);
        let e = from_env(&[("STOREGATE_WORKERS", "many")]).unwrap_err();
        assert!(e.0.starts_with("invalid STOREGATE_WORKERS"), "{e}");
    }

    #[test]
    fn sizes_and_upstream() {
        let c = from_env(&[
            ("STOREGATE_CACHE_MAX_BYTES", "64MiB"),
            ("STOREGATE_UPSTREAM_URL", "https://shop.example/"),
            ("STOREGATE_UPSTREAM_TOKEN", "tok"),
            ("STOREGATE_ADMIN_KEY_SHA256", &"ab".repeat(32)),
        ])
        .unwrap();
        assert_eq!(c.cache_max_bytes, 64 * 1024 * 1024);
        let upstream = c.upstream.unwrap();
        assert_eq!(upstream.url, "https://shop.example");
        assert_eq!(format!("{:?}", upstream.token), "Secret([redacted])");
        assert_eq!(c.admin_key_sha256, vec![[0xab; 32]]);
        assert_eq!(parse_bytes("512k"), Some(512 * 1024));
        assert_eq!(parse_bytes("12 parsecs"), None);
    }

    #[test]
    fn file_then_environment() {
        let dir = std::env::temp_dir().join(format!("storegate-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("storegate.toml");
        std::fs::write(&path, "listen = \"127.0.0.1:9999\"\ncache_ttl_secs = 5\n").unwrap();
        let c = Config::from_sources(Some(&path), &|name| {
            (name == "STOREGATE_CACHE_TTL_SECS").then(|| "7".to_owned())
        })
        .unwrap();
        assert_eq!(c.listen.port(), 9999);
        assert_eq!(c.cache_ttl, Duration::from_secs(7));
        std::fs::write(&path, "bogus = 1\n").unwrap();
        let e = Config::from_sources(Some(&path), &|_| None).unwrap_err();
        assert!(e.0.contains("unknown key \"bogus\""));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn recording_and_replay_keys() {
        // Replay needs no token: the cassettes hold none.
        let c = from_env(&[
            (
                "STOREGATE_UPSTREAM_URL",
                "replay:fixtures/cassettes/session/",
            ),
            ("STOREGATE_REPLAY_MODE", "record-missing"),
            (
                "STOREGATE_REPLAY_IGNORE",
                "query:page, body:product.updated_at",
            ),
            ("STOREGATE_SCRUB_PATTERNS", "card-[0-9]{4,6}\nsecret,[a-z]+"),
            ("STOREGATE_RECORD_MASK_PII", "true"),
            ("STOREGATE_RECORD_MASK_KEY", "k"),
        ])
        .unwrap();
        let upstream = c.upstream.unwrap();
        assert_eq!(
            upstream.replay_dir(),
            Some(Path::new("fixtures/cassettes/session"))
        );
        assert_eq!(c.recording.replay_mode.as_deref(), Some("record-missing"));
        assert_eq!(
            c.recording.replay_ignore,
            ["query:page", "body:product.updated_at"]
        );
        assert_eq!(
            c.recording.scrub_patterns,
            ["card-[0-9]{4,6}", "secret,[a-z]+"]
        );
        assert!(c.recording.mask_pii);
        assert!(from_env(&[("STOREGATE_RECORD_MASK_PII", "maybe")]).is_err());
        assert!(from_env(&[("STOREGATE_UPSTREAM_URL", "replay:")]).is_err());
        // A real store still needs its token.
        assert!(from_env(&[("STOREGATE_UPSTREAM_URL", "https://shop.example")]).is_err());

        // In the file, patterns are an array whose items may hold commas.
        let dir = std::env::temp_dir().join(format!("storegate-rec-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("storegate.toml");
        std::fs::write(
            &path,
            "record_dir = \"cassettes\"\nscrub_patterns = [\"a{1,2}\", \"b\"]\nscrub_headers = [\"X-A\", \"X-B\"]\n",
        )
        .unwrap();
        let c = Config::from_sources(Some(&path), &|_| None).unwrap();
        assert_eq!(c.recording.record_dir, Some(PathBuf::from("cassettes")));
        assert_eq!(c.recording.scrub_patterns, ["a{1,2}", "b"]);
        assert_eq!(c.recording.scrub_headers, ["X-A", "X-B"]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
