//! Noise: what differs between two reads of the known-good side.
//!
//! Diffy's idea: read the side known to be right twice; a field that differs between its
//! own two reads (a timestamp, a list in a random order, a counter) cannot be held against
//! the candidate. Such a field's differences are noise, not differences.

use std::collections::BTreeSet;

use super::{Answer, BODY_PATH, Class, Comparison, Difference, Options, compare};

/// The paths that differed between two reads of the known-good side.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Noise {
    /// The two reads' statuses differed: nothing about this comparison can be trusted.
    status: bool,
    paths: BTreeSet<String>,
}

impl Noise {
    /// No noise known (a single read).
    pub fn none() -> Noise {
        Noise::default()
    }

    /// The noise between `first` and `second`, two reads of the known-good side, compared
    /// with the same `options` as the comparison it will be applied to.
    pub fn between(first: Answer<'_>, second: Answer<'_>, options: &Options) -> Noise {
        let comparison = compare(first, second, options);
        let mut noise = Noise {
            status: comparison.status_differs(),
            paths: BTreeSet::new(),
        };
        for d in comparison.differences {
            noise.paths.insert(d.path);
        }
        noise
    }

    /// Whether the known-good side's two reads were alike.
    pub fn is_quiet(&self) -> bool {
        !self.status && self.paths.is_empty()
    }

    /// The noisy paths.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.paths.iter().map(String::as_str)
    }

    /// Whether `difference` is noise: the good side's reads differed in status, or at its
    /// path, or at a path above it (a list whose length changed between reads makes every
    /// field of its items noise).
    pub fn covers(&self, difference: &Difference) -> bool {
        if self.status {
            return true;
        }
        if difference.class == Class::Status {
            return false;
        }
        let path = difference.path.as_str();
        self.paths.iter().any(|noisy| within(path, noisy))
    }

    /// `comparison` split into its real differences and its noise.
    pub fn split(&self, comparison: Comparison) -> (Comparison, Comparison) {
        let (noise, real): (Vec<Difference>, Vec<Difference>) = comparison
            .differences
            .into_iter()
            .partition(|d| self.covers(d));
        (
            Comparison { differences: real },
            Comparison { differences: noise },
        )
    }
}

/// Whether `path` is `above` or under it (`items[].price` is under `items` and
/// `items[]`, not under `item`).
fn within(path: &str, above: &str) -> bool {
    if above == BODY_PATH {
        // The whole body moved between the good side's reads (a list in another order).
        return true;
    }
    match path.strip_prefix(above) {
        Some("") => true,
        Some(rest) => rest.starts_with('.') || rest.starts_with('['),
        None => false,
    }
}
