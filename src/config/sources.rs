//! Where the keys' values come from: a TOML file, then `STOREGATE_*` variables (read
//! through a lookup, so tests need not touch the process environment), each remembered
//! with its origin so that an error names what the user typed.

use std::collections::BTreeMap;
use std::path::Path;

use super::ConfigError;
use super::keys::{KEYS, LINE_LISTS, env_name, suggestion};

/// The raw values by key name.
pub(super) type RawValues = BTreeMap<&'static str, Raw>;

pub(super) struct Raw {
    pub(super) value: String,
    pub(super) origin: String,
    pub(super) secret: bool,
}

impl Raw {
    pub(super) fn fail(&self, expected: &str) -> ConfigError {
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

/// Reads a TOML file (if any) and then overrides from `lookup(env var name)`.
pub(super) fn collect(
    file: Option<&Path>,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<RawValues, ConfigError> {
    let mut raw: BTreeMap<&'static str, Raw> = BTreeMap::new();
    if let Some(path) = file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError(format!("cannot read config file {}: {e}", path.display())))?;
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
    Ok(raw)
}
