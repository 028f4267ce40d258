//! Where the binary's log lines go: stderr, written by a thread of its own, never by the
//! task serving a request.
//!
//! With the access log on (the default), every request logs a line. Written synchronously,
//! each line was a `write(2)` on unbuffered stderr under its lock, on the runtime's worker:
//! about a quarter of a cache hit's throughput (issue 23), and a stalled reader of stderr
//! (a full pipe, a slow collector) would have stalled every request behind it.
//!
//! So a line is formatted on the request's task and handed to a bounded channel
//! (`tracing-appender`'s non-blocking writer); a thread writes them through a 64 KiB buffer,
//! flushed whenever the channel runs dry, so a burst costs one system call per buffer, not
//! per line, and a quiet gateway's lines appear at once. When the channel is full
//! ([`BUFFERED_LINES`] lines waiting: the reader of stderr is not keeping up) a line is
//! **dropped**, not waited for, and counted: `/metrics` shows
//! `log_lines_dropped_total` (`observe::process`), so an operator sees that lines went missing
//! and how many. Dropping is the choice for a gateway: a request never waits for its log.
//!
//! Lines still waiting are written when the [`Guard`] is dropped (the binary holds it in
//! `main` until it stops), within about a second.

use std::sync::OnceLock;

use tracing_appender::non_blocking::{ErrorCounter, NonBlocking, NonBlockingBuilder};

pub use tracing_appender::non_blocking::WorkerGuard as Guard;

/// Lines that may wait for the writer thread: about 0.15 s of access lines at 100,000
/// requests a second, a few MiB of memory at most.
pub const BUFFERED_LINES: usize = 16_384;

/// The writer's buffer: one system call writes this much of a burst.
const BUFFER_BYTES: usize = 64 * 1024;

/// The dropped-line counter of the process's log writer, once [`stderr`] made it.
static DROPPED: OnceLock<ErrorCounter> = OnceLock::new();

/// A writer to stderr off the request path, and the guard that flushes it at exit.
pub fn stderr() -> (NonBlocking, Guard) {
    to(
        std::io::BufWriter::with_capacity(BUFFER_BYTES, std::io::stderr()),
        BUFFERED_LINES,
    )
}

/// A non-blocking, lossy writer to `sink` with room for `lines` waiting lines; its
/// counter is the one [`dropped_lines`] reads (the first writer made in the process).
pub fn to<W: std::io::Write + Send + 'static>(sink: W, lines: usize) -> (NonBlocking, Guard) {
    let (writer, guard) = NonBlockingBuilder::default()
        .lossy(true)
        .buffered_lines_limit(lines)
        .thread_name("storegate-log")
        .finish(sink);
    let _ = DROPPED.set(writer.error_counter());
    (writer, guard)
}

/// Log lines dropped so far because the writer thread could not keep up; `None` when the
/// process logs without [`stderr`] (a test, the library used elsewhere).
pub fn dropped_lines() -> Option<u64> {
    DROPPED.get().map(|counter| counter.dropped_lines() as u64)
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    use super::*;

    /// A sink that blocks until told to go on: a stderr nobody reads.
    struct Stalled(mpsc::Receiver<()>);

    impl Write for Stalled {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let _ = self.0.recv();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_stalled_sink_drops_and_counts_lines_instead_of_blocking() {
        let (go, wait) = mpsc::channel();
        let (mut writer, guard) = to(Stalled(wait), 8);
        let counter = writer.error_counter();
        let started = Instant::now();
        for i in 0..1000 {
            writer.write_all(format!("line {i}\n").as_bytes()).unwrap();
        }
        // A thousand lines into a sink that takes none: no wait, and all but the few the
        // channel and the writer thread hold are counted as dropped.
        assert!(started.elapsed() < Duration::from_millis(500));
        let dropped = counter.dropped_lines();
        assert!((1000 - 10..1000).contains(&dropped), "{dropped}");
        // Let the writer drain, so the guard's flush returns at once.
        drop(go);
        drop(guard);
    }
}
