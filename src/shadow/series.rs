//! The dual run's series in `/metrics`: `storegate_shadow_comparisons_total{route,user_type,
//! outcome}` and `storegate_shadow_served_total{class,outcome}`, this instance's (the report
//! has the fleet's).

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;

use crate::observe::metrics::described;

/// `storegate_shadow_comparisons_total{route,user_type,outcome}` and
/// `storegate_shadow_served_total{class,outcome}`, this instance's.
#[derive(Clone, Default)]
pub struct Series {
    pub(super) comparisons: Family<ComparisonLabels, Counter>,
    pub(super) served: Family<ServedLabels, Counter>,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct ComparisonLabels {
    /// The report's name of the route (`GET /products/:id`): a small fixed set.
    pub(super) route: String,
    pub(super) user_type: &'static str,
    pub(super) outcome: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct ServedLabels {
    pub(super) class: &'static str,
    /// `candidate`, or `fallback` (the candidate failed, the serving back end answered).
    pub(super) outcome: &'static str,
}

impl std::fmt::Debug for Series {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Series")
    }
}

impl Collector for Series {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        described(
            &mut encoder,
            "shadow_comparisons",
            "Reads of the dual run by route, user type and outcome (matched, differed, noise, lag, error, timeout, not_compared, skipped)",
            &self.comparisons,
        )?;
        described(
            &mut encoder,
            "shadow_served",
            "Reads STOREGATE_SHADOW_SERVE sent to the candidate, by route class: served by it, or by the serving back end after it failed",
            &self.served,
        )
    }
}
