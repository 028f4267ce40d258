//! What the gateway tells its operators: the request id, log span and access log of every
//! request ([`telemetry`]), the Prometheus instruments ([`metrics`]) and the series read at
//! scrape time (the process's in [`process`]), and what
//! the binary is ([`build_info`]).

pub mod access_log;
pub mod build_info;
pub mod hex;
pub mod log_limit;
pub mod log_writer;
pub mod metrics;
pub mod process;
pub mod telemetry;
pub mod thread_histogram;
