//! The configuration's rules, through `Config::from_sources`.

use super::keys::env_name;
use super::*;
use std::collections::HashMap;

/// The configuration these variables (and nothing else) give.
pub(super) fn from_env(pairs: &[(&str, &str)]) -> Result<Config, ConfigError> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Config::from_sources(None, &|name| map.get(name).cloned())
}

/// The configuration one variable gives.
fn with(key: &str, value: &str) -> Config {
    from_env(&[(key, value)]).unwrap()
}

/// Why one variable's value stops the start.
fn refused(key: &str, value: &str) -> ConfigError {
    from_env(&[(key, value)]).unwrap_err()
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
        let e = refused("STOREGATE_REDIS_URL", bad);
        assert!(e.0.contains("STOREGATE_REDIS_URL"), "{e}");
        assert!(!e.0.contains("hunter2"), "{e}");
    }
    let e = refused("STOREGATE_SHARED_CACHE", "1");
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
        crate::context::profile::Profile::Spec
    );
    let c = with("STOREGATE_PROFILE", "original");
    assert_eq!(c.profile, crate::context::profile::Profile::Original);
    let e = refused("STOREGATE_PROFILE", "magento1");
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
    let e = refused("STOREGATE_MAX_IN_FLIGHT", "0");
    assert!(e.0.contains("STOREGATE_MAX_IN_FLIGHT"), "{e}");
    let e = refused("STOREGATE_CIRCUIT_OPEN_MS", "soon");
    assert!(e.0.contains("STOREGATE_CIRCUIT_OPEN_MS"), "{e}");
}

#[test]
fn bad_values_name_the_key_and_hide_secrets() {
    let e = refused("STOREGATE_UPSTREAM_TIMEOUT_MS", "soon");
    assert_eq!(
        e.0,
        "invalid STOREGATE_UPSTREAM_TIMEOUT_MS: expected a number of milliseconds above 0, got \"soon\""
    );
    let e = refused("STOREGATE_UPSTREAM_URL", "http://m2.test");
    assert!(e.0.contains("STOREGATE_UPSTREAM_TOKEN"));
    let e = refused("STOREGATE_ADMIN_KEY", "  ");
    assert!(e.0.starts_with("invalid STOREGATE_ADMIN_KEY"));
    let e = from_env(&[("STOREGATE_ADMIN_KEY_SHA256", "abc")]).unwrap_err();
    assert!(e.0.contains("STOREGATE_ADMIN_KEY_SHA256"));
    let e = refused("STOREGATE_LISTEN", "nowhere");
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
    assert_eq!(c.body_timeout, Duration::from_secs(5));
    assert_eq!(c.drain_timeout, Duration::from_secs(10));
    assert_eq!((c.max_connections, c.max_uploads_in_flight), (None, 2));
    let c = from_env(&[
        ("STOREGATE_HEADER_TIMEOUT_SECS", "3"),
        ("STOREGATE_IDLE_TIMEOUT_SECS", "4"),
        ("STOREGATE_BODY_TIMEOUT_SECS", "7"),
        ("STOREGATE_MAX_CONNECTIONS", "100"),
        ("STOREGATE_DRAIN_TIMEOUT_SECS", "0"),
        ("STOREGATE_MAX_UPLOADS_IN_FLIGHT", "1"),
    ])
    .unwrap();
    assert_eq!(c.header_timeout, Duration::from_secs(3));
    assert_eq!(c.idle_timeout, Duration::from_secs(4));
    assert_eq!(c.body_timeout, Duration::from_secs(7));
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
    let e = refused("STOREGATE_UPSTREAM_URL", " ");
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
        let e = refused("STOREGATE_LISTEN", bad);
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
        with("STOREGATE_CORS_ORIGINS", "*").cors_origins,
        CorsOrigins::Any
    );
    for bad in ["app.example", "https://app.example/path", "ftp://x"] {
        let e = refused("STOREGATE_CORS_ORIGINS", bad);
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
        with("STOREGATE_OAUTH_TOKEN_TTL_SECS", "0").oauth_token_ttl,
        None
    );
    let e = refused("STOREGATE_TRUSTED_PROXIES", "10.0.0.0/33");
    assert!(e.0.starts_with("invalid STOREGATE_TRUSTED_PROXIES"), "{e}");
    let e = refused("STOREGATE_OAUTH_TOKEN_TTL_SECS", "a day");
    assert!(
        e.0.starts_with("invalid STOREGATE_OAUTH_TOKEN_TTL_SECS"),
        "{e}"
    );
}

#[test]
fn the_database_timeout_is_milliseconds_below_the_apis_deadline() {
    assert_eq!(
        from_env(&[]).unwrap().database_timeout,
        Duration::from_millis(500)
    );
    let c = with("STOREGATE_DATABASE_TIMEOUT_MS", "250");
    assert_eq!(c.database_timeout, Duration::from_millis(250));
    for bad in ["0", "soon", "-1"] {
        let e = refused("STOREGATE_DATABASE_TIMEOUT_MS", bad);
        assert!(
            e.0.starts_with("invalid STOREGATE_DATABASE_TIMEOUT_MS"),
            "{bad}: {e}"
        );
    }
    // As long as the API's own deadline, it would leave no time for the answer.
    let e = from_env(&[
        ("STOREGATE_UPSTREAM_TIMEOUT_MS", "2000"),
        ("STOREGATE_DATABASE_TIMEOUT_MS", "2000"),
    ])
    .unwrap_err();
    assert!(
        e.0.starts_with("invalid STOREGATE_DATABASE_TIMEOUT_MS")
            && e.0.contains("below STOREGATE_UPSTREAM_TIMEOUT_MS (2000)"),
        "{e}"
    );
}

#[test]
fn workers() {
    assert_eq!(from_env(&[]).unwrap().workers, 0);
    assert_eq!(with("STOREGATE_WORKERS", "4").workers, 4);
    let e = refused("STOREGATE_WORKERS", "many");
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
    // The bench's settings are kept as written (recording::check reads them); the seed is a
    // number here already, and its error names the key.
    let c = from_env(&[
        ("STOREGATE_REPLAY_LATENCY", "fixed:200ms"),
        (
            "STOREGATE_REPLAY_FAULTS",
            "GET /api/rest/products/{}=maintenance@0.3",
        ),
        ("STOREGATE_REPLAY_SEED", "42"),
        ("STOREGATE_REPLAY_MAX_AGE", "30d"),
        ("STOREGATE_REPLAY_STALE", "record"),
    ])
    .unwrap();
    assert_eq!(c.recording.replay_latency.as_deref(), Some("fixed:200ms"));
    assert_eq!(
        c.recording.replay_faults.as_deref(),
        Some("GET /api/rest/products/{}=maintenance@0.3")
    );
    assert_eq!(c.recording.replay_seed, Some(42));
    assert_eq!(c.recording.replay_max_age.as_deref(), Some("30d"));
    assert_eq!(c.recording.replay_stale.as_deref(), Some("record"));
    let error = refused("STOREGATE_REPLAY_SEED", "often");
    assert!(
        error.to_string().contains("STOREGATE_REPLAY_SEED"),
        "{error}"
    );
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

#[test]
fn the_backend_is_magento2_or_openmage_and_nothing_else() {
    assert_eq!(from_env(&[]).unwrap().backend, BackendKind::Magento2);
    assert_eq!(
        with("STOREGATE_BACKEND", "magento2").backend,
        BackendKind::Magento2
    );
    assert_eq!(
        with("STOREGATE_BACKEND", " OpenMage ").backend,
        BackendKind::OpenMage
    );
    for bad in ["magento1", "m1", "openmage,magento2"] {
        let e = refused("STOREGATE_BACKEND", bad);
        assert_eq!(
            e.0,
            format!("invalid STOREGATE_BACKEND: expected magento2 or openmage, got {bad:?}")
        );
    }
    check_names(vec!["STOREGATE_BACKEND".to_owned()]).unwrap();
}

/// The seeded store's credentials of docs/openmage (not secrets of anything real).
const OPENMAGE: &[(&str, &str)] = &[
    ("STOREGATE_BACKEND", "openmage"),
    ("STOREGATE_UPSTREAM_URL", "http://127.0.0.1/"),
    (
        "STOREGATE_UPSTREAM_TOKEN",
        "token-tttttttttttttttttttttttttt",
    ),
    (
        "STOREGATE_UPSTREAM_CONSUMER_KEY",
        "consumer-key-kkkkkkkkkkkkkkkkkkk",
    ),
    (
        "STOREGATE_UPSTREAM_CONSUMER_SECRET",
        "consumer-secret-sssssssssssssss",
    ),
    (
        "STOREGATE_UPSTREAM_TOKEN_SECRET",
        "token-secret-xxxxxxxxxxxxxxxxxx",
    ),
];

#[test]
fn openmage_takes_four_oauth_credentials_and_hides_them() {
    let c = from_env(OPENMAGE).unwrap();
    let upstream = c.upstream.as_ref().unwrap();
    assert_eq!(upstream.url, "http://127.0.0.1");
    assert_eq!(upstream.token.expose(), "token-tttttttttttttttttttttttttt");
    let oauth = upstream.oauth.as_ref().unwrap();
    assert_eq!(
        oauth.consumer_key.expose(),
        "consumer-key-kkkkkkkkkkkkkkkkkkk"
    );
    assert_eq!(
        oauth.consumer_secret.expose(),
        "consumer-secret-sssssssssssssss"
    );
    assert_eq!(
        oauth.token_secret.expose(),
        "token-secret-xxxxxxxxxxxxxxxxxx"
    );
    let shown = format!("{c:?}");
    for (_, value) in &OPENMAGE[2..] {
        assert!(!shown.contains(value), "{value} in {shown}");
    }
    // Every one of the four is required with a store URL; the error names what is
    // missing, in one line, and echoes none of the others.
    for left_out in 2..OPENMAGE.len() {
        let pairs: Vec<(&str, &str)> = OPENMAGE
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != left_out)
            .map(|(_, pair)| *pair)
            .collect();
        let e = from_env(&pairs).unwrap_err();
        let name = OPENMAGE[left_out].0;
        assert!(e.0.starts_with(&format!("missing {name}: required")), "{e}");
        assert!(e.0.contains("STOREGATE_BACKEND=openmage"), "{e}");
        assert!(!e.0.contains('\n'), "{e}");
        for (_, value) in &OPENMAGE[2..] {
            assert!(!e.0.contains(value), "{e}");
        }
        // Set but empty is missing too.
        let mut blank = OPENMAGE.to_vec();
        blank[left_out].1 = "  ";
        let e = from_env(&blank).unwrap_err();
        assert!(e.0.starts_with(&format!("missing {name}")), "{e}");
    }
    let e = from_env(&OPENMAGE[..2]).unwrap_err();
    assert!(
        e.0.starts_with(
            "missing STOREGATE_UPSTREAM_TOKEN, STOREGATE_UPSTREAM_CONSUMER_KEY, \
             STOREGATE_UPSTREAM_CONSUMER_SECRET, STOREGATE_UPSTREAM_TOKEN_SECRET: required"
        ),
        "{e}"
    );
}

#[test]
fn openmage_replay_needs_no_credentials_but_all_or_none() {
    let c = from_env(&[
        ("STOREGATE_BACKEND", "openmage"),
        ("STOREGATE_UPSTREAM_URL", "replay:cassettes/openmage"),
    ])
    .unwrap();
    let upstream = c.upstream.unwrap();
    assert!(upstream.oauth.is_none());
    assert_eq!(upstream.token.expose(), "");
    let mut replaying = OPENMAGE.to_vec();
    replaying[1].1 = "replay:cassettes/openmage";
    assert!(
        from_env(&replaying)
            .unwrap()
            .upstream
            .unwrap()
            .oauth
            .is_some()
    );
    let e = from_env(&replaying[..3]).unwrap_err();
    assert!(
        e.0.starts_with("missing STOREGATE_UPSTREAM_CONSUMER_KEY"),
        "{e}"
    );
    assert!(e.0.contains("set all of them or none"), "{e}");
}

#[test]
fn oauth_credentials_with_magento2_are_a_back_end_named_wrong() {
    for key in [
        "STOREGATE_UPSTREAM_CONSUMER_KEY",
        "STOREGATE_UPSTREAM_CONSUMER_SECRET",
        "STOREGATE_UPSTREAM_TOKEN_SECRET",
    ] {
        let e = from_env(&[
            ("STOREGATE_UPSTREAM_URL", "https://shop.example"),
            ("STOREGATE_UPSTREAM_TOKEN", "t"),
            (key, "value-not-to-echo"),
        ])
        .unwrap_err();
        assert!(
            e.0.starts_with(&format!(
                "{key} is read only with STOREGATE_BACKEND=openmage"
            )),
            "{e}"
        );
        assert!(!e.0.contains("value-not-to-echo"), "{e}");
        check_names(vec![key.to_owned()]).unwrap();
    }
    // Magento 2 keeps its token alone, and no OAuth part.
    let c = from_env(&[
        ("STOREGATE_UPSTREAM_URL", "https://shop.example"),
        ("STOREGATE_UPSTREAM_TOKEN", "t"),
    ])
    .unwrap();
    assert!(c.upstream.unwrap().oauth.is_none());
}

#[test]
fn the_default_mappings_follow_the_backend() {
    assert_eq!(
        from_env(&[]).unwrap().backend.default_mappings(),
        Path::new("mappings/magento2")
    );
    let c = from_env(OPENMAGE).unwrap();
    assert_eq!(c.backend.default_mappings(), Path::new("mappings/openmage"));
    // Only the default changes: a folder set is the folder used.
    assert_eq!(c.mappings, None);
    let mut with_folder = OPENMAGE.to_vec();
    with_folder.push(("STOREGATE_MAPPINGS", "/etc/storegate/mappings"));
    assert_eq!(
        from_env(&with_folder).unwrap().mappings,
        Some(PathBuf::from("/etc/storegate/mappings"))
    );
    // The folder is in the repository, so the default names something real.
    assert!(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("mappings/openmage/README.md")
            .is_file()
    );
}

#[test]
fn openmage_store_views_are_code_id_pairs() {
    let config = with("STOREGATE_OPENMAGE_STORE_VIEWS", "default=1, de=2@3");
    assert_eq!(
        config.openmage_store_views,
        [("default".to_owned(), 1, 1), ("de".to_owned(), 2, 3)]
    );
    for wrong in [
        "de", "de=x", "=2", "admin=1", "a=1,b=1", "a=1,a=2", "de=0", " , ",
    ] {
        let e = refused("STOREGATE_OPENMAGE_STORE_VIEWS", wrong);
        assert!(
            e.0.contains("STOREGATE_OPENMAGE_STORE_VIEWS"),
            "{wrong}: {}",
            e.0
        );
    }
}
