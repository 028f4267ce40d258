//! The dual run's settings (`STOREGATE_SHADOW_*`): a second back end, the candidate, beside
//! the serving one, how often reads are compared with it and which reads it serves
//! (docs/dual-run.md). Parsed here, used by `crate::shadow`.

use std::time::Duration;

use super::keys::env_name;
use super::parse::{number, parse_url, positive};
use super::sections::store_views;
use super::sources::RawValues;
use super::{BackendKind, Config, ConfigError, REPLAY_SCHEME, Secret, Upstream, UpstreamOAuth};

/// The reads a route serves, as `STOREGATE_SHADOW_SERVE` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RouteClass {
    Products,
    Images,
    StockItems,
    Customers,
    Addresses,
    Orders,
}

impl RouteClass {
    pub const ALL: [RouteClass; 6] = [
        RouteClass::Products,
        RouteClass::Images,
        RouteClass::StockItems,
        RouteClass::Customers,
        RouteClass::Addresses,
        RouteClass::Orders,
    ];

    pub fn name(self) -> &'static str {
        match self {
            RouteClass::Products => "products",
            RouteClass::Images => "images",
            RouteClass::StockItems => "stock_items",
            RouteClass::Customers => "customers",
            RouteClass::Addresses => "addresses",
            RouteClass::Orders => "orders",
        }
    }

    pub fn parse(text: &str) -> Option<RouteClass> {
        RouteClass::ALL.into_iter().find(|c| c.name() == text)
    }

    /// Whether the class's values are a person's (customers, their addresses, orders):
    /// never shown in a report, only digested.
    pub fn is_personal(self) -> bool {
        matches!(
            self,
            RouteClass::Customers | RouteClass::Addresses | RouteClass::Orders
        )
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The share of each class's reads served from the candidate, in percent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServeShares([u8; 6]);

impl ServeShares {
    pub fn get(&self, class: RouteClass) -> u8 {
        self.0[class.index()]
    }

    /// Whether any class is served from the candidate at all.
    pub fn any(&self) -> bool {
        self.0.iter().any(|&p| p > 0)
    }

    /// `products=100,stock_items=25`; `Err` says what is wrong with which part.
    pub fn parse(text: &str) -> Result<ServeShares, String> {
        let mut shares = ServeShares::default();
        let mut seen = [false; 6];
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, share) = part
                .split_once('=')
                .ok_or_else(|| format!("{part:?} is not class=percent"))?;
            let class = RouteClass::parse(name.trim()).ok_or_else(|| {
                format!(
                    "unknown route class {:?} (known: {})",
                    name.trim(),
                    RouteClass::ALL.map(RouteClass::name).join(", ")
                )
            })?;
            let share: u8 = share
                .trim()
                .parse()
                .ok()
                .filter(|p| *p <= 100)
                .ok_or_else(|| {
                    format!(
                        "{}: {:?} is not a percentage from 0 to 100",
                        class.name(),
                        share.trim()
                    )
                })?;
            if std::mem::replace(&mut seen[class.index()], true) {
                return Err(format!("{} is named twice", class.name()));
            }
            shares.0[class.index()] = share;
        }
        Ok(shares)
    }
}

/// The candidate back end and the dual run's settings.
#[derive(Debug, Clone)]
pub struct Shadow {
    /// `STOREGATE_SHADOW_BACKEND`.
    pub backend: BackendKind,
    /// `STOREGATE_SHADOW_UPSTREAM_URL` and its credentials.
    pub upstream: Upstream,
    /// `STOREGATE_SHADOW_OPENMAGE_STORE_VIEWS`.
    pub openmage_store_views: Vec<(String, u64, u64)>,
    /// `STOREGATE_SHADOW_SAMPLE`: the share of reads compared, 0 to 1.
    pub sample: f64,
    /// `STOREGATE_SHADOW_MAX_IN_FLIGHT`: comparisons under way at once; a read sampled past
    /// it is skipped.
    pub max_in_flight: usize,
    /// `STOREGATE_SHADOW_RECHECK_SECS`: when a difference is looked at again.
    pub recheck: Duration,
    /// `STOREGATE_SHADOW_MIN_COMPARED`: comparisons a route needs for a `ready`.
    pub min_compared: u64,
    /// `STOREGATE_SHADOW_SERVE`.
    pub serve: ServeShares,
}

pub const DEFAULT_SAMPLE: f64 = 0.01;
pub const DEFAULT_MAX_IN_FLIGHT: usize = 32;
pub const DEFAULT_RECHECK: Duration = Duration::from_secs(10);
pub const DEFAULT_MIN_COMPARED: u64 = 100;

/// Every key of this section but the URL: read only with the URL.
const SETTINGS: [&str; 11] = [
    "shadow_backend",
    "shadow_upstream_token",
    "shadow_upstream_token_secret",
    "shadow_upstream_consumer_key",
    "shadow_upstream_consumer_secret",
    "shadow_openmage_store_views",
    "shadow_sample",
    "shadow_max_in_flight",
    "shadow_recheck_secs",
    "shadow_min_compared",
    "shadow_serve",
];

/// The OAuth 1.0a keys of an OpenMage candidate besides its access token.
const OAUTH_KEYS: [&str; 3] = [
    "shadow_upstream_consumer_key",
    "shadow_upstream_consumer_secret",
    "shadow_upstream_token_secret",
];

pub(super) fn shadow(raw: &RawValues, config: &mut Config) -> Result<(), ConfigError> {
    let given = |key: &str| raw.get(key).filter(|r| !r.value.trim().is_empty());
    let url = match raw.get("shadow_upstream_url") {
        Some(r) if r.value.trim().is_empty() => {
            return Err(r.fail("an http:// or https:// URL, or replay:DIR (unset it: no shadow)"));
        }
        Some(r) => parse_url(r)?,
        None => {
            // A setting of the shadow without a candidate is a candidate that went missing.
            if let Some(r) = SETTINGS.iter().find_map(|key| given(key)) {
                return Err(ConfigError(format!(
                    "{} is read only with STOREGATE_SHADOW_UPSTREAM_URL (the candidate back end): \
                     set it, or unset {}",
                    r.origin, r.origin
                )));
            }
            return Ok(());
        }
    };
    let backend = match raw.get("shadow_backend") {
        Some(r) => BackendKind::parse(&r.value).ok_or_else(|| r.fail("magento2 or openmage"))?,
        None => BackendKind::Magento2,
    };
    let replaying = url.starts_with(REPLAY_SCHEME);
    let secret = |key: &str| given(key).map(|r| Secret::new(r.value.trim()));
    let token = secret("shadow_upstream_token");
    let oauth = match backend {
        BackendKind::Magento2 => {
            if let Some(r) = OAUTH_KEYS.iter().find_map(|key| given(key)) {
                return Err(ConfigError(format!(
                    "{} is read only with STOREGATE_SHADOW_BACKEND=openmage (an OpenMage \
                     candidate's OAuth credentials)",
                    r.origin
                )));
            }
            if token.is_none() && !replaying {
                return Err(ConfigError(
                    "missing STOREGATE_SHADOW_UPSTREAM_TOKEN: required with \
                     STOREGATE_SHADOW_UPSTREAM_URL (the candidate Magento 2's integration token)"
                        .into(),
                ));
            }
            None
        }
        // OpenMage: signed with OAuth 1.0a.
        _ => {
            let mut missing: Vec<String> = OAUTH_KEYS
                .iter()
                .filter(|key| given(key).is_none())
                .map(|key| env_name(key))
                .collect();
            if token.is_none() {
                missing.insert(0, env_name("shadow_upstream_token"));
            }
            let none_given = missing.len() == OAUTH_KEYS.len() + 1;
            if replaying && none_given {
                None
            } else if !missing.is_empty() {
                return Err(ConfigError(format!(
                    "missing {}: required with STOREGATE_SHADOW_BACKEND=openmage (the OAuth \
                     1.0a consumer and admin access token the candidate's calls are signed with)",
                    missing.join(", ")
                )));
            } else {
                let secret = |key: &str| Secret::new(given(key).map_or("", |r| r.value.trim()));
                Some(UpstreamOAuth {
                    consumer_key: secret(OAUTH_KEYS[0]),
                    consumer_secret: secret(OAUTH_KEYS[1]),
                    token_secret: secret(OAUTH_KEYS[2]),
                })
            }
        }
    };
    let openmage_store_views = match raw.get("shadow_openmage_store_views") {
        Some(r) if backend != BackendKind::OpenMage => {
            return Err(ConfigError(format!(
                "{} is read only with STOREGATE_SHADOW_BACKEND=openmage",
                r.origin
            )));
        }
        Some(r) => store_views(&r.value)
            .ok_or_else(|| r.fail("code=id pairs such as default=1,de=2 (de=2@3: website 3)"))?,
        None => Vec::new(),
    };
    let sample = match raw.get("shadow_sample") {
        Some(r) => r
            .value
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|s| (0.0..=1.0).contains(s))
            .ok_or_else(|| r.fail("a share of reads from 0 to 1, such as 0.01"))?,
        None => DEFAULT_SAMPLE,
    };
    let max_in_flight = match raw.get("shadow_max_in_flight") {
        Some(r) => positive(r, "a number of comparisons above 0")? as usize,
        None => DEFAULT_MAX_IN_FLIGHT,
    };
    let recheck = match raw.get("shadow_recheck_secs") {
        Some(r) => Duration::from_secs(number(r, "a number of seconds")?),
        None => DEFAULT_RECHECK,
    };
    let min_compared = match raw.get("shadow_min_compared") {
        Some(r) => positive(r, "a number of comparisons above 0")?,
        None => DEFAULT_MIN_COMPARED,
    };
    let serve = match raw.get("shadow_serve") {
        Some(r) => ServeShares::parse(&r.value).map_err(|why| {
            ConfigError(format!(
                "invalid {}: {why}; expected class=percent pairs such as products=100,stock_items=25",
                r.origin
            ))
        })?,
        None => ServeShares::default(),
    };
    config.shadow = Some(Shadow {
        backend,
        upstream: Upstream {
            url,
            token: token.unwrap_or_else(|| Secret::new("")),
            oauth,
        },
        openmage_store_views,
        sample,
        max_in_flight,
        recheck,
        min_compared,
        serve,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tests::from_env;

    const CANDIDATE: [(&str, &str); 2] = [
        ("STOREGATE_SHADOW_UPSTREAM_URL", "http://m2.internal"),
        ("STOREGATE_SHADOW_UPSTREAM_TOKEN", "cand-token-123"),
    ];

    fn with(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
        let mut pairs = CANDIDATE.to_vec();
        pairs.extend_from_slice(extra);
        pairs
    }

    #[test]
    fn unset_is_no_shadow_and_the_defaults_are_the_contracts() {
        assert!(from_env(&[]).unwrap().shadow.is_none());
        let c = from_env(&CANDIDATE).unwrap();
        let s = c.shadow.unwrap();
        assert_eq!(s.backend, BackendKind::Magento2);
        assert_eq!(s.upstream.url, "http://m2.internal");
        assert_eq!(s.upstream.token.expose(), "cand-token-123");
        assert_eq!(s.sample, 0.01);
        assert_eq!(s.max_in_flight, DEFAULT_MAX_IN_FLIGHT);
        assert_eq!(s.recheck, Duration::from_secs(10));
        assert_eq!(s.min_compared, 100);
        assert!(!s.serve.any());
    }

    #[test]
    fn settings_are_read() {
        let c = from_env(&with(&[
            ("STOREGATE_SHADOW_SAMPLE", "1"),
            ("STOREGATE_SHADOW_MAX_IN_FLIGHT", "4"),
            ("STOREGATE_SHADOW_RECHECK_SECS", "2"),
            ("STOREGATE_SHADOW_MIN_COMPARED", "5"),
            ("STOREGATE_SHADOW_SERVE", "products=100, stock_items=25"),
        ]))
        .unwrap();
        let s = c.shadow.unwrap();
        assert_eq!(s.sample, 1.0);
        assert_eq!(s.max_in_flight, 4);
        assert_eq!(s.recheck, Duration::from_secs(2));
        assert_eq!(s.min_compared, 5);
        assert_eq!(s.serve.get(RouteClass::Products), 100);
        assert_eq!(s.serve.get(RouteClass::StockItems), 25);
        assert_eq!(s.serve.get(RouteClass::Orders), 0);
        assert!(s.serve.any());
    }

    #[test]
    fn an_openmage_candidate_needs_its_four_credentials() {
        let e = from_env(&with(&[("STOREGATE_SHADOW_BACKEND", "openmage")])).unwrap_err();
        for key in [
            "STOREGATE_SHADOW_UPSTREAM_CONSUMER_KEY",
            "STOREGATE_SHADOW_UPSTREAM_CONSUMER_SECRET",
            "STOREGATE_SHADOW_UPSTREAM_TOKEN_SECRET",
        ] {
            assert!(e.0.contains(key), "{e}");
        }
        assert!(!e.0.contains("cand-token-123"), "{e}");
        let c = from_env(&with(&[
            ("STOREGATE_SHADOW_BACKEND", "openmage"),
            ("STOREGATE_SHADOW_UPSTREAM_CONSUMER_KEY", "ck"),
            ("STOREGATE_SHADOW_UPSTREAM_CONSUMER_SECRET", "cs"),
            ("STOREGATE_SHADOW_UPSTREAM_TOKEN_SECRET", "ts"),
            ("STOREGATE_SHADOW_OPENMAGE_STORE_VIEWS", "default=1,de=2"),
        ]))
        .unwrap();
        let s = c.shadow.unwrap();
        assert_eq!(s.backend, BackendKind::OpenMage);
        assert_eq!(s.openmage_store_views.len(), 2);
        assert_eq!(s.upstream.oauth.unwrap().consumer_secret.expose(), "cs");
        // Replaying cassettes needs none.
        let c = from_env(&[
            ("STOREGATE_SHADOW_UPSTREAM_URL", "replay:/tmp/x"),
            ("STOREGATE_SHADOW_BACKEND", "openmage"),
        ])
        .unwrap();
        assert!(c.shadow.unwrap().upstream.oauth.is_none());
    }

    #[test]
    fn bad_settings_stop_the_start_naming_the_setting() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (
                &[("STOREGATE_SHADOW_BACKEND", "magento3")],
                "STOREGATE_SHADOW_BACKEND",
            ),
            (
                &[("STOREGATE_SHADOW_SAMPLE", "1.5")],
                "STOREGATE_SHADOW_SAMPLE",
            ),
            (
                &[("STOREGATE_SHADOW_SAMPLE", "-0.1")],
                "STOREGATE_SHADOW_SAMPLE",
            ),
            (
                &[("STOREGATE_SHADOW_MAX_IN_FLIGHT", "0")],
                "STOREGATE_SHADOW_MAX_IN_FLIGHT",
            ),
            (
                &[("STOREGATE_SHADOW_RECHECK_SECS", "soon")],
                "STOREGATE_SHADOW_RECHECK_SECS",
            ),
            (
                &[("STOREGATE_SHADOW_MIN_COMPARED", "0")],
                "STOREGATE_SHADOW_MIN_COMPARED",
            ),
            (
                &[("STOREGATE_SHADOW_SERVE", "widgets=5")],
                "STOREGATE_SHADOW_SERVE",
            ),
            (
                &[("STOREGATE_SHADOW_SERVE", "products=101")],
                "STOREGATE_SHADOW_SERVE",
            ),
            (
                &[("STOREGATE_SHADOW_SERVE", "products=-1")],
                "STOREGATE_SHADOW_SERVE",
            ),
            (
                &[("STOREGATE_SHADOW_SERVE", "products")],
                "STOREGATE_SHADOW_SERVE",
            ),
            (
                &[("STOREGATE_SHADOW_SERVE", "products=5,products=6")],
                "STOREGATE_SHADOW_SERVE",
            ),
            (
                &[("STOREGATE_SHADOW_UPSTREAM_CONSUMER_KEY", "ck")],
                "STOREGATE_SHADOW_UPSTREAM_CONSUMER_KEY",
            ),
            (
                &[("STOREGATE_SHADOW_OPENMAGE_STORE_VIEWS", "default=1")],
                "STOREGATE_SHADOW_OPENMAGE_STORE_VIEWS",
            ),
        ];
        for (extra, key) in cases {
            let e = from_env(&with(extra)).unwrap_err();
            assert!(e.0.contains(key), "{extra:?}: {e}");
        }
        // A candidate URL without its token; a token, or any setting, without a URL.
        let e = from_env(&[("STOREGATE_SHADOW_UPSTREAM_URL", "http://m2")]).unwrap_err();
        assert!(e.0.contains("STOREGATE_SHADOW_UPSTREAM_TOKEN"), "{e}");
        for key in ["STOREGATE_SHADOW_UPSTREAM_TOKEN", "STOREGATE_SHADOW_SAMPLE"] {
            let e = from_env(&[(key, "1")]).unwrap_err();
            assert!(
                e.0.contains(key) && e.0.contains("STOREGATE_SHADOW_UPSTREAM_URL"),
                "{e}"
            );
            assert!(!e.0.contains("\"1\""), "{e}");
        }
        let e = from_env(&[("STOREGATE_SHADOW_UPSTREAM_URL", "ftp://x")]).unwrap_err();
        assert!(e.0.contains("STOREGATE_SHADOW_UPSTREAM_URL"), "{e}");
    }
}
