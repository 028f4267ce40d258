//! The connection series of `/metrics`, read at scrape time from [`super::Connections`].

use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;

use crate::observe::metrics::{Reader, counter, gauge};

/// `storegate_connections_open` and `storegate_connections_refused_total`.
pub struct ConnectionMetrics(pub Reader<(i64, u64)>);

impl std::fmt::Debug for ConnectionMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectionMetrics").finish_non_exhaustive()
    }
}

impl Collector for ConnectionMetrics {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let (open, refused) = (self.0)();
        gauge(
            &mut encoder,
            "connections_open",
            "Client connections open now",
            open,
        )?;
        counter(
            &mut encoder,
            "connections_refused",
            "Connections closed at once because STOREGATE_MAX_CONNECTIONS were open",
            refused,
        )
    }
}
