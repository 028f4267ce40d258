//! The limits' series in `/metrics`, read at scrape time: refusals by route class and kind
//! of client (and those shadow mode let through), sign-ins refused, whether budgets are
//! counted across the fleet, and what this instance holds.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, MetricEncoder};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

use super::{Counting, Limits};

/// A counter family's descriptor: its series follow, one per label set.
fn counter_family<'s>(
    encoder: &'s mut DescriptorEncoder<'_>,
    name: &'s str,
    help: &str,
) -> Result<MetricEncoder<'s>, std::fmt::Error> {
    encoder.encode_descriptor(name, help, None, MetricType::Counter)
}

/// The collector `front::build` registers.
#[derive(Debug)]
pub struct LimitSeries(pub Arc<Limits>);

impl Collector for LimitSeries {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        let limits = &self.0;
        let rows = limits.stats.rows();
        for (name, help, shadowed) in [
            (
                "rate_limited",
                "Requests refused with 429 past a client's rate limit, by route class and kind of client",
                false,
            ),
            (
                "rate_limited_shadow",
                "Requests shadow mode served that a rate limit would have refused, by route class and kind of client",
                true,
            ),
        ] {
            let mut family = counter_family(&mut encoder, name, help)?;
            for (kind, class, refused, shadow) in &rows {
                let value = if shadowed { *shadow } else { *refused };
                ConstCounter::new(value).encode(
                    family
                        .encode_family(&[("class", class.as_str()), ("client", kind.as_str())])?,
                )?;
            }
        }
        let signin = &limits.signin.stats;
        let read = |n: &std::sync::atomic::AtomicU64| n.load(Ordering::Relaxed);
        for (name, help, username, address) in [
            (
                "signin_limited",
                "Sign-ins refused with 429 before the store was asked, past the failed sign-ins of a username or an address",
                read(&signin.by_username),
                read(&signin.by_address),
            ),
            (
                "signin_limited_shadow",
                "Sign-ins shadow mode let through that the failed sign-in limit would have refused",
                read(&signin.shadow_by_username),
                read(&signin.shadow_by_address),
            ),
        ] {
            let mut family = counter_family(&mut encoder, name, help)?;
            ConstCounter::new(username).encode(family.encode_family(&[("by", "username")])?)?;
            ConstCounter::new(address).encode(family.encode_family(&[("by", "address")])?)?;
        }
        let fleet = ConstGauge::new(match limits.counting() {
            Counting::Fleet => 1,
            Counting::Degraded => 0,
            Counting::Instance => -1,
        });
        fleet.encode(encoder.encode_descriptor(
            "rate_limit_fleet",
            "1 when limits are counted across the fleet in Redis, 0 while Redis is down (each instance counts alone), -1 without Redis",
            None,
            fleet.metric_type(),
        )?)?;
        let fallbacks = ConstCounter::new(limits.fallbacks());
        fallbacks.encode(encoder.encode_descriptor(
            "rate_limit_fallbacks",
            "Limit decisions made by this instance alone because Redis did not answer",
            None,
            fallbacks.metric_type(),
        )?)?;
        let (windows, pools) = limits.held();
        for (name, help, value) in [
            (
                "rate_limit_windows",
                "Rolling windows this instance keeps (no Redis, or Redis down); bounded",
                windows,
            ),
            (
                "rate_limit_pools",
                "Budgets this instance holds a share of; bounded",
                pools,
            ),
        ] {
            let gauge = ConstGauge::new(i64::try_from(value).unwrap_or(i64::MAX));
            gauge.encode(encoder.encode_descriptor(name, help, None, gauge.metric_type())?)?;
        }
        Ok(())
    }
}
