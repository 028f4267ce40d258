//! The back ends the gateway can run, by kind, and how one is built.
//!
//! A kind is one line of [`STANDARD`]: its name (what `STOREGATE_BACKEND` takes), the
//! function that builds it from its settings, and its mapping files built into the binary;
//! and one line of [`WIRES`]: how its traffic looks to the recorder. The wiring (`front`) asks a [`Registry`] for
//! the configured back end; nothing else names a kind, so two back ends can live in one
//! process (a serving one and a candidate beside it), and a third kind is a folder under
//! `backend/` plus its lines here (docs/architecture.md, "Adding a back end").

use std::sync::Arc;

pub use crate::backend::kind::{Build, Kind, OAuthKeys, Settings, Wiring};
use crate::backend::port::Backend;
use crate::backend::recording::Wires;

/// The mapping files of a folder under `mappings/`, by name, with their text, built into the
/// binary: every file the gateway needs (each folder has every one of them).
macro_rules! embed_mappings {
    ($folder:literal) => {
        embed_mappings!(
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

/// The kinds this build knows, one line each: the name `STOREGATE_BACKEND` takes, the
/// adapter's build, the mapping folder built in.
pub static STANDARD: &[Kind] = &[
    Kind {
        name: "magento2",
        build: crate::backend::magento2::build,
        mappings: embed_mappings!("magento2"),
    },
    Kind {
        name: "openmage",
        build: crate::backend::openmage::build,
        mappings: embed_mappings!("openmage"),
    },
];

/// How each kind's traffic looks to the recorder, one line each (for what reads any
/// store's cassettes: `storegate replay`, a HAR import).
pub const WIRES: Wires = Wires(&[
    &crate::backend::magento2::WIRE,
    &crate::backend::openmage::endpoint::WIRE,
]);

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
        let wires: Vec<&str> = WIRES.0.iter().map(|w| w.kind()).collect();
        assert_eq!(wires, names, "a wire for every kind, in order");
        for kind in STANDARD {
            assert!(!kind.mappings.is_empty(), "{} has mappings", kind.name);
        }
    }
}
