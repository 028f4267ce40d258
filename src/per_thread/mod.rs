//! Numbers that every request updates, kept so that no request writes a cache line another
//! worker also writes.
//!
//! With one worker thread per core, a counter every request increments is a cache line
//! moving between the cores on every request. A cache hit is short (about 20,000
//! instructions), so each such line cost it more than its instructions show: `perf
//! annotate` put the request id's counter, the cache's hit counter and the request
//! histogram's lock among the hottest instructions of a hit, while a single worker served
//! hits in less time each (issue 23; docs/benchmarks.md). The ground floor: it imports
//! nothing of the gateway.
//!
//! - [`sequence`]: numbers unique in the process, handed out per thread in blocks.
//! - [`counter`]: a counter kept in stripes, one line per thread, summed when read.
//! - [`slot`]: where a text key goes in a thread's small direct-mapped table.
//!
//! The request latency histogram, which needs `prometheus-client`, is
//! `observe::thread_histogram`.

pub mod counter;
pub mod sequence;
pub mod slot;
