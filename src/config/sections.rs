//! The keys' values read into a [`Config`], one function a section of the configuration
//! (serving, the back end, credentials, caching). Each checks what its keys need together
//! (a URL with its token; a shared cache with Redis).

use std::path::PathBuf;
use std::time::Duration;

use super::keys::env_name;
use super::parse::{
    number, parse_bytes, parse_listen, parse_origins, parse_proxies, parse_redis_url, parse_sha256,
    parse_url, positive,
};
use super::sources::RawValues;
use super::{
    BACKEND_KINDS, BackendKind, Config, ConfigError, LogFormat, REPLAY_SCHEME, Recording, Secret,
    Upstream, UpstreamOAuth,
};

/// Where and how the gateway serves: addresses, limits, timeouts, formats, logs.
pub(super) fn serving(raw: &RawValues, config: &mut Config) -> Result<(), ConfigError> {
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
    if let Some(r) = raw.get("mappings") {
        if r.value.trim().is_empty() {
            return Err(r.fail("a folder of mapping files"));
        }
        config.mappings = Some(PathBuf::from(r.value.trim()));
    }
    if let Some(r) = raw.get("body_limit_bytes") {
        config.body_limit = parse_bytes(&r.value)
            .filter(|&b| b > 0)
            .ok_or_else(|| r.fail("a size such as 1MiB"))? as usize;
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
        config.profile = crate::context::profile::Profile::parse(&r.value)
            .ok_or_else(|| r.fail("spec or original"))?;
    }
    if let Some(r) = raw.get("sandbox_latency_ms") {
        config.sandbox_latency = Duration::from_millis(number(r, "a number of milliseconds")?);
    }
    if let Some(r) = raw.get("sandbox_products") {
        config.sandbox_products = number(r, "a number of products")? as usize;
    }
    if let Some(r) = raw.get("max_in_flight") {
        config.max_in_flight = positive(r, "a number of requests above 0")? as usize;
    }
    if let Some(r) = raw.get("workers") {
        config.workers = number(r, "a number of threads (0: one per core)")? as usize;
    }
    if let Some(r) = raw.get("header_timeout_secs") {
        config.header_timeout = Duration::from_secs(positive(r, "a number of seconds above 0")?);
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
    if let Some(r) = raw.get("warm_start") {
        config.warm_start = super::WarmStart::parse(&r.value)
            .ok_or_else(|| r.fail("on, off, or keys=N,secs=S (N up to 1000000, S up to 3600)"))?;
    }
    Ok(())
}

/// The back end: its kind, URL and credentials, the store view, the resilience settings,
/// recording and replay.
pub(super) fn upstream(raw: &RawValues, config: &mut Config) -> Result<(), ConfigError> {
    if let Some(r) = raw.get("backend") {
        config.backend =
            BackendKind::parse(&r.value).ok_or_else(|| r.fail(&BACKEND_KINDS.join(" or ")))?;
    }
    if let Some(r) = raw.get("openmage_store_views") {
        config.openmage_store_views = store_views(&r.value)
            .ok_or_else(|| r.fail("code=id pairs such as default=1,de=2 (de=2@3: website 3)"))?;
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
    let secret = |key: &str| {
        raw.get(key)
            .filter(|r| !r.value.trim().is_empty())
            .map(|r| Secret::new(r.value.trim()))
    };
    let token = secret("upstream_token");
    let oauth = upstream_oauth(raw, config.backend, url.as_deref(), token.is_some())?;
    config.upstream = match (url, token) {
        (Some(url), Some(token)) => Some(Upstream { url, token, oauth }),
        // Cassettes hold no token; one is needed only to forward (record-missing).
        (Some(url), None) if url.starts_with(REPLAY_SCHEME) => Some(Upstream {
            url,
            token: Secret::new(""),
            oauth,
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
    if let Some(r) = raw.get("upstream_timeout_ms") {
        config.upstream_timeout =
            Duration::from_millis(positive(r, "a number of milliseconds above 0")?);
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
    config.recording = recording(raw)?;
    Ok(())
}

/// `default=1,de=2@3`: store view codes with their ids (and websites, 1 unless named).
pub(super) fn store_views(text: &str) -> Option<Vec<(String, u64, u64)>> {
    let mut views = Vec::new();
    for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (code, rest) = pair.split_once('=')?;
        let code = code.trim();
        let (id, website) = match rest.split_once('@') {
            Some((id, website)) => (id.trim().parse().ok()?, website.trim().parse().ok()?),
            None => (rest.trim().parse().ok()?, 1),
        };
        let valid = !code.is_empty()
            && code.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && code != "admin"
            && id > 0;
        if !valid || views.iter().any(|(c, i, _)| c == code || *i == id) {
            return None;
        }
        views.push((code.to_owned(), id, website));
    }
    (!views.is_empty()).then_some(views)
}

/// The OAuth 1.0a keys of an OpenMage store (`STOREGATE_UPSTREAM_CONSUMER_KEY`,
/// `_CONSUMER_SECRET`, `_TOKEN_SECRET`; the access token is `STOREGATE_UPSTREAM_TOKEN`).
/// Magento 2 has no use for them: set there, they are a back end named wrong, refused
/// rather than ignored (the token would go out as a Bearer token and every call fail).
/// With OpenMage and a store URL the four are required; replaying cassettes needs none,
/// but one set needs the others (forwarding what is missing signs with all four).
fn upstream_oauth(
    raw: &RawValues,
    backend: BackendKind,
    url: Option<&str>,
    has_token: bool,
) -> Result<Option<UpstreamOAuth>, ConfigError> {
    const KEYS: [&str; 3] = [
        "upstream_consumer_key",
        "upstream_consumer_secret",
        "upstream_token_secret",
    ];
    let given = |key: &str| raw.get(key).filter(|r| !r.value.trim().is_empty());
    if backend == BackendKind::Magento2 {
        if let Some(r) = KEYS.iter().find_map(|key| given(key)) {
            return Err(ConfigError(format!(
                "{} is read only with STOREGATE_BACKEND=openmage (an OpenMage store's OAuth \
                 credentials): set STOREGATE_BACKEND=openmage, or unset it for Magento 2",
                r.origin
            )));
        }
        return Ok(None);
    }
    let Some(url) = url else {
        return Ok(None);
    };
    let replaying = url.starts_with(REPLAY_SCHEME);
    let mut missing: Vec<String> = KEYS
        .iter()
        .filter(|key| given(key).is_none())
        .map(|key| env_name(key))
        .collect();
    if replaying && missing.len() == KEYS.len() && !has_token {
        return Ok(None);
    }
    if !has_token {
        missing.insert(0, env_name("upstream_token"));
    }
    if !missing.is_empty() {
        let when = if replaying {
            "the four OAuth credentials go together (STOREGATE_UPSTREAM_TOKEN and the \
             consumer's key and secret, the token's secret): set all of them or none"
        } else {
            "required with STOREGATE_BACKEND=openmage when STOREGATE_UPSTREAM_URL is set \
             (the OAuth 1.0a consumer and admin access token the calls are signed with)"
        };
        return Err(ConfigError(format!(
            "missing {}: {when}",
            missing.join(", ")
        )));
    }
    let secret = |key: &str| Secret::new(given(key).map_or("", |r| r.value.trim()));
    Ok(Some(UpstreamOAuth {
        consumer_key: secret(KEYS[0]),
        consumer_secret: secret(KEYS[1]),
        token_secret: secret(KEYS[2]),
    }))
}

/// Who may call: admin keys, customer tokens, the OAuth provider's settings and store.
pub(super) fn credentials(raw: &RawValues, config: &mut Config) -> Result<(), ConfigError> {
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
    Ok(())
}

/// The cache and what instances share: freshness, size, staleness, Redis.
pub(super) fn caching(raw: &RawValues, config: &mut Config) -> Result<(), ConfigError> {
    if let Some(r) = raw.get("cache_ttl_secs") {
        config.cache_ttl =
            Duration::from_secs(number(r, "a number of seconds (0 turns the cache off)")?);
    }
    if let Some(r) = raw.get("cache_max_bytes") {
        config.cache_max_bytes =
            parse_bytes(&r.value).ok_or_else(|| r.fail("a size such as 268435456 or 256MiB"))?;
    }
    if let Some(r) = raw.get("stale_if_error_secs") {
        config.stale_if_error = Duration::from_secs(number(r, "a number of seconds")?);
    }
    if let Some(r) = raw.get("stale_while_revalidate_secs") {
        config.stale_while_revalidate = Duration::from_secs(number(r, "a number of seconds")?);
    }
    if let Some(r) = raw.get("redis_url")
        && !r.value.trim().is_empty()
    {
        config.redis_url = Some(parse_redis_url(r)?);
    }
    if let Some(r) = raw.get("database_url")
        && !r.value.trim().is_empty()
    {
        crate::auth::oauth::database::Location::parse(r.value.trim()).map_err(|why| r.fail(why))?;
        config.database_url = Some(Secret::new(r.value.trim()));
    }
    if let Some(r) = raw.get("database_timeout_ms") {
        config.database_timeout =
            Duration::from_millis(positive(r, "a number of milliseconds above 0")?);
        // The store's calls run inside the API's deadline: one that may use all of it
        // leaves nothing for the answer (a verified token's fallback, the 503).
        if config.database_timeout >= config.upstream_timeout {
            return Err(r.fail(&format!(
                "a number of milliseconds below STOREGATE_UPSTREAM_TIMEOUT_MS ({})",
                config.upstream_timeout.as_millis()
            )));
        }
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
    Ok(())
}

fn recording(raw: &RawValues) -> Result<Recording, ConfigError> {
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
        // Checked and compiled by `recording::check` (the start refuses a bad one).
        replay_latency: text("replay_latency"),
        replay_seed: match raw.get("replay_seed") {
            Some(r) if !r.value.trim().is_empty() => Some(
                r.value
                    .trim()
                    .parse::<u64>()
                    .map_err(|_| r.fail("a whole number from 0 to 18446744073709551615"))?,
            ),
            _ => None,
        },
        replay_faults: text("replay_faults"),
        replay_max_age: text("replay_max_age"),
        replay_stale: text("replay_stale"),
    })
}
