//! The back ends the gateway can run, by kind, and how one is built.
//!
//! A kind is one line of [`STANDARD`]: its name (what `STOREGATE_BACKEND` takes), the
//! function that builds it from its settings, how its traffic looks to the recorder, and
//! its mapping files built into the binary. The wiring (`front`) asks a [`Registry`] for
//! the configured back end; nothing else names a kind, so two back ends can live in one
//! process (a serving one and a candidate beside it), and a third kind is a folder under
//! `backend/` plus one line here (docs/architecture.md, "Adding a back end").

use std::sync::Arc;
use std::time::Duration;

use crate::backend::port::{Backend, SessionKeeper, WireShape};
use crate::backend::shell::resilience;
use crate::config::{Recording, Secret};
use crate::observe::metrics::UpstreamMetrics;

/// What a back end is built from: where its store is and how to reach it.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The kind's name (`magento2`).
    pub kind: String,
    /// The store's base URL, or `replay:DIR`.
    pub url: String,
    /// The credential the gateway's calls carry (an integration token, an access token).
    pub token: Secret,
    /// A store that signs with OAuth 1.0a: its consumer and the token's secret.
    pub oauth: Option<OAuthKeys>,
    /// The store views the operator named, as `(code, id, website id)`, for a store whose
    /// API lists none.
    pub store_views: Vec<(String, u64, u64)>,
    /// The store view reads default to.
    pub default_store: String,
    /// The deadline of one call.
    pub timeout: Duration,
    /// The breaker, the retry budget, the bound on calls in flight.
    pub resilience: resilience::Options,
    /// Recording and replay of its traffic.
    pub recording: Recording,
}

/// An OAuth 1.0a consumer and the secret of the access token the calls are signed with.
#[derive(Debug, Clone)]
pub struct OAuthKeys {
    pub consumer_key: Secret,
    pub consumer_secret: Secret,
    pub token_secret: Secret,
}

/// What the gateway hands a back end it builds.
#[derive(Debug, Clone)]
pub struct Wiring {
    /// Where its calls are counted.
    pub metrics: UpstreamMetrics,
    /// Where it may keep customers' store sessions.
    pub sessions: Option<Arc<dyn SessionKeeper>>,
}

/// Builds a back end of one kind.
pub type Build = fn(&Settings, &Wiring) -> Result<Arc<dyn Backend>, String>;

/// One kind of back end.
#[derive(Clone, Copy)]
pub struct Kind {
    pub name: &'static str,
    pub build: Build,
    /// How its traffic looks to the recorder (none for a back end that makes no HTTP calls).
    pub wire: Option<&'static dyn WireShape>,
    /// Its mapping files, built into the binary (`file name`, `text`).
    pub mappings: &'static [(&'static str, &'static str)],
}

impl std::fmt::Debug for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kind").field("name", &self.name).finish()
    }
}

/// The mapping files of a folder under `mappings/`, by name, with their text, built into the
/// binary: every file the gateway needs (each folder has every one of them).
#[macro_export]
macro_rules! embed_mappings {
    ($folder:literal) => {
        $crate::embed_mappings!(
            $folder;
            "product.toml",
            "customer.toml",
            "address.toml",
            "order.toml",
            "order_address.toml",
            "order_item.toml",
            "order_comment.toml",
            "stock_item.toml",
            "image.toml"
        )
    };
    ($folder:literal; $($name:literal),+) => {
        &[$((
            $name,
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/mappings/", $folder, "/", $name)),
        )),+]
    };
}

/// The kinds this build knows, one line each.
pub static STANDARD: &[Kind] = &[
    crate::backend::magento2::KIND,
    crate::backend::openmage::KIND,
];

/// The kinds a gateway may build.
#[derive(Debug, Clone)]
pub struct Registry {
    kinds: Vec<Kind>,
}

impl Default for Registry {
    fn default() -> Self {
        Registry::standard()
    }
}

impl Registry {
    /// The kinds of this build.
    pub fn standard() -> Registry {
        Registry {
            kinds: STANDARD.to_vec(),
        }
    }

    /// The same registry with one more kind (or another build for a kind's name).
    pub fn with(mut self, kind: Kind) -> Registry {
        self.kinds.retain(|k| k.name != kind.name);
        self.kinds.push(kind);
        self
    }

    /// The kind named so.
    pub fn kind(&self, name: &str) -> Option<&Kind> {
        self.kinds.iter().find(|k| k.name == name)
    }

    /// Builds the back end `settings` describe.
    pub fn build(&self, settings: &Settings, wiring: &Wiring) -> Result<Arc<dyn Backend>, String> {
        let kind = self.kind(&settings.kind).ok_or_else(|| {
            let known: Vec<&str> = self.kinds.iter().map(|k| k.name).collect();
            format!(
                "invalid STOREGATE_BACKEND: no back end {:?} in this build (known: {})",
                settings.kind,
                known.join(", ")
            )
        })?;
        (kind.build)(settings, wiring)
    }
}

/// How every known store's traffic looks to the recorder.
pub fn wires() -> impl Iterator<Item = &'static dyn WireShape> {
    STANDARD.iter().filter_map(|k| k.wire)
}

/// The mapping files built in for a kind (none for a kind this build does not know).
pub fn builtin_mappings(name: &str) -> &'static [(&'static str, &'static str)] {
    STANDARD
        .iter()
        .find(|k| k.name == name)
        .map_or(&[], |k| k.mappings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_the_configuration_takes_is_registered() {
        let names: Vec<&str> = STANDARD.iter().map(|k| k.name).collect();
        assert_eq!(names, crate::config::BACKEND_KINDS);
        for kind in STANDARD {
            assert!(!kind.mappings.is_empty(), "{} has mappings", kind.name);
            assert_eq!(kind.wire.map(|w| w.kind()), Some(kind.name));
        }
    }
}
