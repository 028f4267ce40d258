//! Every configuration key: its name in the file and the environment, its default, its
//! meaning and whether it is a secret ([`KEYS`]), `--help`'s list made from them, and the
//! check that refuses unknown `STOREGATE_*` variables with a "did you mean".

use super::{ConfigError, EXIT_CONFIG};

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
        "backend",
        "magento2",
        "`magento2`, or `openmage`: an OpenMage / Magento 1.9 store through its REST API",
    ),
    key(
        "openmage_store_views",
        "STOREGATE_DEFAULT_STORE=1",
        "openmage only: the store views as code=id pairs (`default=1,de=2`; `de=2@3` for website 3, else website 1): the store's REST API lists none",
    ),
    key(
        "upstream_url",
        "unset: the embedded sandbox",
        "the store's base URL (Magento 2, or OpenMage with STOREGATE_BACKEND=openmage)",
    ),
    secret(
        "upstream_token",
        "required with a URL",
        "Magento 2 integration access token (Bearer); openmage: the admin OAuth access token",
    ),
    secret(
        "upstream_consumer_key",
        "required with openmage and a URL",
        "openmage only: the key of the OAuth consumer the gateway signs its calls as",
    ),
    secret(
        "upstream_consumer_secret",
        "required with openmage and a URL",
        "openmage only: that consumer's secret",
    ),
    secret(
        "upstream_token_secret",
        "required with openmage and a URL",
        "openmage only: the secret of the access token STOREGATE_UPSTREAM_TOKEN",
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
        "mappings/<backend> if present, else built in",
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
        "database_timeout_ms",
        "500",
        "deadline for one OAuth store call; past it the store counts as degraded and its calls are refused at once until a probe succeeds",
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
        "addresses or CIDR blocks whose X-Forwarded-For/-Proto/-Host are believed",
    ),
    key(
        "rate_limits",
        "off",
        "per client and route class, e.g. guest=300/60s,customer=600/60s,consumer=6000/60s,admin=off,writes=60/60s (docs/limits.md)",
    ),
    key(
        "signin_limit",
        "10/300s",
        "failed sign-ins per username and per address before 429 (`off`: no limit)",
    ),
    key(
        "rate_limit_mode",
        "enforce",
        "`enforce`, or `shadow`: count what would be refused (429) without refusing",
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
        "shadow_backend",
        "magento2",
        "the dual run's candidate: `magento2` or `openmage` (docs/dual-run.md)",
    ),
    key(
        "shadow_upstream_url",
        "unset: no shadow",
        "the candidate's base URL (or replay:DIR); reads are compared with it",
    ),
    secret(
        "shadow_upstream_token",
        "required with a candidate URL",
        "the candidate's integration token (magento2) or admin OAuth access token (openmage)",
    ),
    secret(
        "shadow_upstream_token_secret",
        "required with an openmage candidate",
        "openmage candidate: the secret of STOREGATE_SHADOW_UPSTREAM_TOKEN",
    ),
    secret(
        "shadow_upstream_consumer_key",
        "required with an openmage candidate",
        "openmage candidate: the OAuth consumer's key",
    ),
    secret(
        "shadow_upstream_consumer_secret",
        "required with an openmage candidate",
        "openmage candidate: the OAuth consumer's secret",
    ),
    key(
        "shadow_openmage_store_views",
        "the default store as id 1",
        "openmage candidate: its store views as code=id pairs",
    ),
    key(
        "shadow_sample",
        "0.01",
        "share of reads (0 to 1) rendered again through the candidate and compared",
    ),
    key(
        "shadow_max_in_flight",
        "32",
        "comparisons under way at once; a read sampled past it is skipped",
    ),
    key(
        "shadow_recheck_secs",
        "10",
        "a difference is looked at again after this long: gone is `lag`, still there `differed`",
    ),
    key(
        "shadow_min_compared",
        "100",
        "comparisons a route needs before its verdict can be `ready`",
    ),
    key(
        "shadow_serve",
        "none",
        "reads served from the candidate per route class, in percent (`products=100,stock_items=25`)",
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
        "the real store behind record-missing, passthrough, STOREGATE_REPLAY_STALE=record and `storegate cassette drift` (read by recording)",
    ),
    key(
        "replay_ignore",
        "none",
        "query:NAME and body:JSON.PATH left out of matching (read by recording)",
    ),
    key(
        "replay_latency",
        "none",
        "delays of replayed answers: fixed:200ms, uniform:100ms..300ms, lognormal:median=150ms,p99=900ms, recorded, recorded*2; ENDPOINT=... for one (read by recording)",
    ),
    key(
        "replay_seed",
        "random, logged",
        "seed of replay's random delays and faults: the same seed draws the same again (read by recording)",
    ),
    key(
        "replay_faults",
        "none",
        "faults with a probability, e.g. GET /api/rest/products/{}=maintenance@0.3; reset@0.01 (read by recording)",
    ),
    key(
        "replay_max_age",
        "none",
        "how old a replayed answer may be, e.g. 30d (read by recording)",
    ),
    key(
        "replay_stale",
        "warn",
        "past STOREGATE_REPLAY_MAX_AGE: warn, error (refuse) or record (again from STOREGATE_REPLAY_UPSTREAM_URL) (read by recording)",
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
        "5",
        "longest wait for the next byte of a request body, at most the request deadline (read by the listener)",
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
    key(
        "warm_start",
        "on (keys=5000,secs=30)",
        "refill the answers that were hot before a restart, before /readyz says ready: on, off, or keys=N,secs=S (read by the warm start)",
    ),
];

/// Keys whose file form is an array of strings that may hold commas (regular expressions):
/// their items are joined with newlines, and the environment's value is one item a line.
pub(super) const LINE_LISTS: &[&str] = &["scrub_patterns"];

pub(super) fn env_name(key: &str) -> String {
    format!("STOREGATE_{}", key.to_ascii_uppercase())
}

/// Where a raw value came from, so the error names what the user typed.
/// `STOREGATE_*` names that are not the gateway's configuration: the test suite's switches.
const NOT_CONFIGURATION: &[&str] = &[
    "STOREGATE_RERECORD",
    "STOREGATE_TEST_OPENMAGE_URL",
    "STOREGATE_TEST_OPENMAGE_WRITES",
    "STOREGATE_TEST_OPENMAGE_RECORD",
    "STOREGATE_TEST_OPENMAGE_RESET",
];

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
pub(super) fn suggestion(name: &str, known: impl Iterator<Item = String>) -> Option<String> {
    known
        .map(|k| (strsim::normalized_damerau_levenshtein(name, &k), k))
        .filter(|(score, _)| *score >= 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}
