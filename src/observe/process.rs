//! Series about the binary and the process, read at scrape time: `storegate_build_info`
//! (version and commit), the process's CPU, memory, threads and file descriptors (the
//! Prometheus client libraries' usual `process_*` series, here under the `storegate_`
//! prefix), `storegate_upstream_up`, the upstream's state as the last `/readyz` probe
//! saw it, and the OAuth store's state as the signed calls see it ([`OAuthSeries`]).
//!
//! `prometheus-client` has no process collector (the older `prometheus` crate has one, and
//! would be a second metrics library), so this reads `/proc/self` directly: four small text
//! files, read only when Prometheus scrapes. Elsewhere than Linux the process series are
//! simply absent.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

use crate::observe::build_info;

/// The upstream's state as the last readiness probe saw it: 1 up, 0 down, -1 not probed yet.
#[derive(Debug, Clone)]
pub struct BackendUp(Arc<AtomicI64>);

impl Default for BackendUp {
    fn default() -> Self {
        BackendUp(Arc::new(AtomicI64::new(-1)))
    }
}

impl BackendUp {
    pub fn set(&self, up: bool) {
        self.0.store(i64::from(up), Ordering::Relaxed);
    }
    pub fn get(&self) -> Option<bool> {
        match self.0.load(Ordering::Relaxed) {
            -1 => None,
            n => Some(n == 1),
        }
    }
}

/// The collector registered in the gateway's registry.
#[derive(Debug)]
pub struct ProcessCollector {
    pub backend_up: BackendUp,
}

/// What `/proc/self` says about this process.
#[derive(Debug, Default, PartialEq)]
pub struct Sample {
    pub cpu_seconds: f64,
    pub resident_bytes: u64,
    pub virtual_bytes: u64,
    pub threads: u64,
    pub start_time_seconds: u64,
    pub open_fds: u64,
    pub max_fds: Option<u64>,
}

/// Linux's USER_HZ, the unit of `/proc/<pid>/stat`'s times; 100 on every architecture
/// Linux ships for user space.
const TICKS_PER_SECOND: f64 = 100.0;

impl Sample {
    /// None when `/proc` is not there or not what Linux writes.
    pub fn read() -> Option<Sample> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let boot = std::fs::read_to_string("/proc/stat").ok()?;
        let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
        let open_fds = std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count() as u64);
        Sample::parse(&stat, &status, &boot, &limits, open_fds)
    }

    pub fn parse(
        stat: &str,
        status: &str,
        boot: &str,
        limits: &str,
        open_fds: u64,
    ) -> Option<Sample> {
        // The command name (field 2) may hold spaces and parentheses: fields are counted
        // from after its last `)`, which is field 3 (state).
        let rest = &stat[stat.rfind(')')? + 1..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let field = |n: usize| -> Option<u64> { fields.get(n - 3)?.parse().ok() };
        let ticks = field(14)? + field(15)?;
        let start_ticks = field(22)?;
        let btime: u64 = boot
            .lines()
            .find_map(|l| l.strip_prefix("btime "))?
            .trim()
            .parse()
            .ok()?;
        let kib = |name: &str| -> Option<u64> {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))?
                .split_whitespace()
                .next()?
                .parse::<u64>()
                .ok()
                .map(|k| k * 1024)
        };
        let max_fds = limits
            .lines()
            .find(|l| l.starts_with("Max open files"))
            .and_then(|l| l.split_whitespace().nth(3))
            .and_then(|soft| soft.parse().ok());
        Some(Sample {
            cpu_seconds: ticks as f64 / TICKS_PER_SECOND,
            resident_bytes: kib("VmRSS:").unwrap_or(0),
            virtual_bytes: field(23)?,
            threads: field(20)?,
            start_time_seconds: btime + (start_ticks as f64 / TICKS_PER_SECOND) as u64,
            open_fds,
            max_fds,
        })
    }
}

fn gauge(e: &mut DescriptorEncoder, name: &str, help: &str, value: i64) -> std::fmt::Result {
    let metric = ConstGauge::new(value);
    metric.encode(e.encode_descriptor(name, help, None, metric.metric_type())?)
}

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        let e = &mut encoder;
        let info = ConstGauge::new(1);
        info.encode(
            e.encode_descriptor(
                "build_info",
                "The binary's version and commit; always 1",
                None,
                info.metric_type(),
            )?
            .encode_family(&[
                ("version", build_info::VERSION),
                ("commit", build_info::COMMIT),
            ])?,
        )?;
        if let Some(up) = self.backend_up.get() {
            gauge(
                e,
                "upstream_up",
                "1 when the last /readyz probe reached Magento, 0 when it did not",
                i64::from(up),
            )?;
        }
        if let Some(dropped) = crate::observe::log_writer::dropped_lines() {
            let counter = ConstCounter::new(dropped);
            counter.encode(e.encode_descriptor(
                "log_lines_dropped",
                "Log lines (access lines included) dropped because the log writer could not keep up",
                None,
                counter.metric_type(),
            )?)?;
        }
        let Some(sample) = Sample::read() else {
            return Ok(());
        };
        let cpu = ConstCounter::new(sample.cpu_seconds);
        cpu.encode(e.encode_descriptor(
            "process_cpu_seconds",
            "User and system CPU time spent, in seconds",
            None,
            cpu.metric_type(),
        )?)?;
        gauge(
            e,
            "process_resident_memory_bytes",
            "Resident memory size, in bytes",
            sample.resident_bytes as i64,
        )?;
        gauge(
            e,
            "process_virtual_memory_bytes",
            "Virtual memory size, in bytes",
            sample.virtual_bytes as i64,
        )?;
        gauge(e, "process_threads", "OS threads", sample.threads as i64)?;
        gauge(
            e,
            "process_open_fds",
            "Open file descriptors (connections included)",
            sample.open_fds as i64,
        )?;
        if let Some(max) = sample.max_fds {
            gauge(
                e,
                "process_max_fds",
                "The limit on open file descriptors",
                max as i64,
            )?;
        }
        gauge(
            e,
            "process_start_time_seconds",
            "Start time of the process since the Unix epoch, in seconds",
            sample.start_time_seconds as i64,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_files() {
        let stat = "4242 (storegate (w) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 7 0 12345 104857600 2000 18446744073709551615";
        let status = "Name:\tstoregate\nVmRSS:\t   20480 kB\nThreads:\t7\n";
        let boot = "cpu  1 2 3\nbtime 1700000000\nprocesses 10\n";
        let limits = "Limit                     Soft Limit           Hard Limit           Units\nMax open files            1024                 4096                 files\n";
        let sample = Sample::parse(stat, status, boot, limits, 12).unwrap();
        assert_eq!(
            sample,
            Sample {
                cpu_seconds: 3.0,
                resident_bytes: 20480 * 1024,
                virtual_bytes: 104857600,
                threads: 7,
                start_time_seconds: 1700000000 + 123,
                open_fds: 12,
                max_fds: Some(1024),
            }
        );
        assert_eq!(Sample::parse("garbage", status, boot, limits, 0), None);
    }
}

/// The OAuth store's series, read at scrape time: its state and breaker
/// (`auth::oauth::guard`), signed calls served from verified credentials while it failed,
/// nonces claimed in this process while the shared guard could not be asked.
#[derive(Debug)]
pub struct OAuthSeries(pub Arc<crate::auth::oauth::OAuth>);

impl prometheus_client::collector::Collector for OAuthSeries {
    fn encode(
        &self,
        mut encoder: prometheus_client::encoding::DescriptorEncoder,
    ) -> std::fmt::Result {
        use crate::auth::oauth::guard::StoreState;
        use prometheus_client::encoding::EncodeMetric;
        use prometheus_client::metrics::counter::ConstCounter;
        use prometheus_client::metrics::gauge::ConstGauge;
        let health = self.0.health();
        let state = health.state();
        let gauges = [
            (
                "oauth_store_up",
                "1 when the OAuth store answers in time, 0 while it is degraded or down",
                i64::from(state == StoreState::Up),
            ),
            (
                "oauth_store_state",
                "The OAuth store: 0 up, 1 degraded (reachable, not answering in time: a lock, a hang), 2 down (not reachable); its calls are refused at once while it is not up",
                match state {
                    StoreState::Up => 0,
                    StoreState::Degraded => 1,
                    StoreState::Down => 2,
                },
            ),
        ];
        for (name, help, value) in gauges {
            let gauge = ConstGauge::new(value);
            gauge.encode(encoder.encode_descriptor(name, help, None, gauge.metric_type())?)?;
        }
        let read = |n: &std::sync::atomic::AtomicU64| n.load(Ordering::Relaxed);
        let counters = [
            (
                "oauth_store_fallbacks",
                "Signed calls served from credentials verified before, while the OAuth store failed",
                read(&self.0.verified().fallbacks),
            ),
            (
                "oauth_store_timeouts",
                "OAuth store calls that passed STOREGATE_DATABASE_TIMEOUT_MS",
                read(&health.timeouts),
            ),
            (
                "oauth_store_short_circuited",
                "OAuth store calls refused at once while the store was failing (the breaker open)",
                read(&health.short_circuited),
            ),
            (
                "oauth_store_breaker_opened",
                "Times the OAuth store's breaker opened",
                read(&health.opened),
            ),
            (
                "oauth_nonce_fallbacks",
                "OAuth nonces claimed in this process alone because the shared replay guard (Redis, or the OAuth store) could not be asked",
                self.0.nonce_fallbacks(),
            ),
        ];
        for (name, help, value) in counters {
            let counter = ConstCounter::new(value);
            counter.encode(encoder.encode_descriptor(
                name,
                help,
                None,
                counter.metric_type(),
            )?)?;
        }
        Ok(())
    }
}
