//! A production start cannot go wrong silently.
//!
//! Without `STOREGATE_UPSTREAM_URL` the gateway starts the embedded demo sandbox: right for
//! a first `cargo run`, wrong for a deployment that lost its URL (an unexported variable, a
//! misspelt prefix such as `STOREGTE_UPSTREAM_URL`, which the `STOREGATE_*` name check
//! cannot see). Such a deployment would answer with demo products and demo customers while
//! looking healthy. So the sandbox starts only when nothing says "production": no admin key
//! digest, Redis URL, database URL or token secret, or when `STOREGATE_SANDBOX=1` asks for
//! it explicitly. Otherwise the start is refused (exit 2, one line naming what was seen).

use super::{BackendKind, Config};

/// Whether this configuration may serve, and with the sandbox or not: Ok(true) to start
/// the sandbox, Ok(false) for the configured upstream, Err(one line) to refuse.
/// `env_names` are the process's variable names (for a misspelt URL variable).
pub fn sandbox_allowed(
    config: &Config,
    env_names: impl IntoIterator<Item = String>,
) -> Result<bool, String> {
    if config.upstream.is_none() && config.backend == BackendKind::OpenMage {
        return Err(format!(
            "STOREGATE_BACKEND=openmage needs STOREGATE_UPSTREAM_URL (the OpenMage store, or \
             replay:DIR): the embedded sandbox is a Magento 2{}",
            misspelt_hint(env_names)
        ));
    }
    match (config.upstream.is_some(), config.sandbox) {
        (true, Some(true)) => Err("STOREGATE_SANDBOX=1 asks for the embedded sandbox but \
             STOREGATE_UPSTREAM_URL is set: unset one of them"
            .into()),
        (true, _) => Ok(false),
        (false, Some(true)) => Ok(true),
        (false, Some(false)) => Err(format!(
            "STOREGATE_UPSTREAM_URL is not set and STOREGATE_SANDBOX=0 forbids the embedded \
             sandbox: set STOREGATE_UPSTREAM_URL and STOREGATE_UPSTREAM_TOKEN{}",
            misspelt_hint(env_names)
        )),
        (false, None) => {
            let seen = production_settings(config);
            if seen.is_empty() {
                return Ok(true);
            }
            Err(format!(
                "STOREGATE_UPSTREAM_URL is not set but production settings are ({}): refusing \
                 to serve the demo sandbox; set STOREGATE_UPSTREAM_URL and \
                 STOREGATE_UPSTREAM_TOKEN, or STOREGATE_SANDBOX=1 to run the sandbox on \
                 purpose{}",
                seen.join(", "),
                misspelt_hint(env_names)
            ))
        }
    }
}

/// The settings that only a production deployment has, by variable name.
pub fn production_settings(config: &Config) -> Vec<&'static str> {
    let mut seen = Vec::new();
    if !config.admin_key_sha256.is_empty() {
        seen.push("STOREGATE_ADMIN_KEY_SHA256");
    }
    if config.redis_url.is_some() {
        seen.push("STOREGATE_REDIS_URL");
    }
    if config.database_url.is_some() {
        seen.push("STOREGATE_DATABASE_URL");
    }
    if config.token_secret.is_some() {
        seen.push("STOREGATE_TOKEN_SECRET");
    }
    seen
}

/// `; STOREGTE_UPSTREAM_URL is set: a misspelling of STOREGATE_UPSTREAM_URL?` when a
/// variable of the environment looks like the URL's name without being it.
fn misspelt_hint(env_names: impl IntoIterator<Item = String>) -> String {
    const WANTED: &str = "STOREGATE_UPSTREAM_URL";
    env_names
        .into_iter()
        .filter(|name| name != WANTED)
        .find(|name| {
            let upper = name.to_ascii_uppercase();
            upper.ends_with("UPSTREAM_URL")
                || strsim::normalized_damerau_levenshtein(&upper, WANTED) >= 0.8
        })
        .map(|name| format!("; {name} is set: a misspelling of {WANTED}?"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Secret;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn nothing_set_is_the_sandbox() {
        assert_eq!(sandbox_allowed(&Config::default(), names(&[])), Ok(true));
    }

    #[test]
    fn a_production_setting_without_an_upstream_refuses() {
        let config = Config {
            admin_key_sha256: vec![[0; 32]],
            token_secret: Some(Secret::new("s")),
            ..Config::default()
        };
        let error =
            sandbox_allowed(&config, names(&["PATH", "STOREGTE_UPSTREAM_URL"])).unwrap_err();
        assert!(
            error.contains("STOREGATE_ADMIN_KEY_SHA256, STOREGATE_TOKEN_SECRET"),
            "{error}"
        );
        assert!(error.contains("STOREGTE_UPSTREAM_URL is set"), "{error}");
        assert!(!error.contains('\n'));
        for config in [
            Config {
                redis_url: Some(Secret::new("redis://127.0.0.1")),
                ..Config::default()
            },
            Config {
                database_url: Some(Secret::new("mysql://h/d")),
                ..Config::default()
            },
        ] {
            assert!(sandbox_allowed(&config, names(&[])).is_err());
        }
    }

    #[test]
    fn the_switch_decides_explicitly() {
        let production = Config {
            token_secret: Some(Secret::new("s")),
            sandbox: Some(true),
            ..Config::default()
        };
        assert_eq!(sandbox_allowed(&production, names(&[])), Ok(true));
        let never = Config {
            sandbox: Some(false),
            ..Config::default()
        };
        assert!(sandbox_allowed(&never, names(&[])).is_err());
        let both = Config {
            sandbox: Some(true),
            upstream: Some(crate::config::Upstream {
                url: "https://shop.example".into(),
                token: Secret::new("t"),
                oauth: None,
            }),
            ..Config::default()
        };
        assert!(sandbox_allowed(&both, names(&[])).is_err());
    }

    #[test]
    fn openmage_never_falls_back_to_the_sandbox() {
        for sandbox in [None, Some(true)] {
            let config = Config {
                backend: BackendKind::OpenMage,
                sandbox,
                ..Config::default()
            };
            let error = sandbox_allowed(&config, names(&["STOREGATE_UPSTREM_URL"])).unwrap_err();
            assert!(
                error.starts_with("STOREGATE_BACKEND=openmage needs STOREGATE_UPSTREAM_URL"),
                "{error}"
            );
            assert!(error.contains("STOREGATE_UPSTREM_URL is set"), "{error}");
        }
    }
}
