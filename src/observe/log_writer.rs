//! Where the binary's log lines go: stderr, written by a thread of its own, never by the
//! task serving a request.
//!
//! With the access log on (the default), every request logs a line. Written synchronously,
//! each line was a `write(2)` on unbuffered stderr under its lock, on the runtime's worker:
//! about a quarter of a cache hit's throughput (issue 23), and a stalled reader of stderr
//! (a full pipe, a slow collector) would have stalled every request behind it.
//!
//! So lines are handed to a bounded queue and a thread writes them. Handing each line over
//! on its own (a channel message per line, as `tracing-appender` does) cost a cache hit a
//! message, an allocation and a copy, and the writer thread woke, spun and wrote for nearly
//! every line: under load, a system call for every two or three lines (`strace -c`), on
//! the cores the requests need. Now:
//!
//! - A worker thread of the gateway ([`batch_this_thread`]) writes its lines into a buffer
//!   of its own, and hands the buffer over whole when its runtime is about to idle
//!   ([`hand_over`], the runtime's park hook) or when it holds [`BATCH_BYTES`]: under load, the
//!   lines of a whole round of ready connections in one hand-over, and at rest each line at
//!   once (the runtime idles as soon as the answer is out). Every line of the thread goes
//!   through its buffer (tracing's lines too), so their order is kept.
//! - Any other thread hands each line over as it is written.
//! - The writer thread takes whatever is queued, writes it through a 64 KiB buffer and
//!   flushes; then, while lines keep coming, it lets them gather for [`LINGER`] before the
//!   next write, so a burst costs one wake-up and a system call per 5 ms, not per line. A quiet
//!   gateway's lines appear at once (the thread waits on the queue and is woken by the
//!   first line).
//! - When [`BUFFERED_LINES`] lines wait (the reader of stderr is not keeping up) a line is
//!   **dropped**, not waited for, and counted: `/metrics` shows `log_lines_dropped_total`
//!   (`observe::process`), so an operator sees that lines went missing and how many.
//!   Dropping is the choice for a gateway: a request never waits for its log.
//!
//! Lines still waiting are written when the [`Guard`] is dropped (the binary holds it in
//! `main` until it stops), within about a second; a worker thread's buffer is handed over
//! when the thread ends.

use std::cell::RefCell;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

/// Lines that may wait for the writer thread: about 0.15 s of access lines at 100,000
/// requests a second, a few MiB of memory at most.
pub const BUFFERED_LINES: usize = 16_384;

/// The writer's buffer: one system call writes this much of a burst.
const BUFFER_BYTES: usize = 64 * 1024;

/// A worker thread's buffer is handed over once it holds this much, even if the thread's
/// runtime never idles.
pub const BATCH_BYTES: usize = 32 * 1024;

/// How long the writer thread lets lines gather after a write, while they keep coming: under
/// load, a wake-up (which takes a core from a worker on a small machine) and a system call
/// per 5 ms of lines.
pub const LINGER: Duration = Duration::from_millis(5);

/// What the request threads and the writer thread share.
struct Shared {
    queue: Mutex<Queue>,
    ready: Condvar,
    dropped: AtomicU64,
    /// At most this many lines wait.
    limit: usize,
}

#[derive(Default)]
struct Queue {
    chunks: Vec<Vec<u8>>,
    lines: usize,
    /// The writer thread waits for lines (it is woken by the next hand-over).
    waiting: bool,
    closed: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `chunk` (`lines` whole lines), or drops and counts them when the queue is
    /// full or closed.
    fn push(&self, chunk: Vec<u8>, lines: usize) {
        if lines == 0 {
            return;
        }
        let mut queue = self.lock();
        if queue.closed || queue.lines + lines > self.limit {
            drop(queue);
            self.dropped.fetch_add(lines as u64, Ordering::Relaxed);
            return;
        }
        queue.lines += lines;
        queue.chunks.push(chunk);
        if queue.waiting {
            queue.waiting = false;
            drop(queue);
            self.ready.notify_one();
        }
    }
}

/// The writer thread: takes what is queued, writes it, flushes, lingers.
fn work<W: Write>(shared: &Shared, mut sink: W) {
    let mut taken: Vec<Vec<u8>> = Vec::new();
    loop {
        {
            let mut queue = shared.lock();
            while queue.chunks.is_empty() {
                if queue.closed {
                    drop(queue);
                    let _ = sink.flush();
                    return;
                }
                queue.waiting = true;
                queue = shared
                    .ready
                    .wait(queue)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            std::mem::swap(&mut taken, &mut queue.chunks);
            queue.lines = 0;
        }
        for chunk in taken.drain(..) {
            let _ = sink.write_all(&chunk);
        }
        let _ = sink.flush();
        std::thread::sleep(LINGER);
    }
}

/// A handle on a log writer: what tracing's fmt layer writes its lines to (each `write` is
/// one whole line, as the fmt layer writes them).
#[derive(Clone)]
pub struct Writer {
    shared: Arc<Shared>,
}

impl Writer {
    /// Lines this writer dropped so far.
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }
}

impl Write for Writer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let batched = BATCH
            .try_with(|batch| {
                let Ok(mut batch) = batch.try_borrow_mut() else {
                    return false;
                };
                let ours = batch
                    .shared
                    .as_ref()
                    .is_some_and(|shared| Arc::ptr_eq(shared, &self.shared));
                if ours {
                    batch.buffer.extend_from_slice(buf);
                    batch.added_line();
                }
                ours
            })
            .unwrap_or(false);
        if !batched {
            self.shared.push(buf.to_vec(), 1);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Writer {
    type Writer = Writer;

    fn make_writer(&'a self) -> Writer {
        self.clone()
    }
}

/// Stops the writer thread when dropped, once what is queued is written (waiting a second
/// at most: a stalled stderr must not hold the process).
pub struct Guard {
    shared: Arc<Shared>,
    done: std::sync::mpsc::Receiver<()>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        // This thread's own lines first.
        hand_over();
        self.shared.lock().closed = true;
        self.shared.ready.notify_one();
        let _ = self.done.recv_timeout(Duration::from_secs(1));
    }
}

/// The process's log writer, once [`stderr`] made it: the one worker threads batch for.
static GLOBAL: OnceLock<Arc<Shared>> = OnceLock::new();

/// A writer to stderr off the request path, and the guard that flushes it at exit. The
/// first one made is the process's: [`line`], [`batch_this_thread`] and
/// [`dropped_lines`] use it.
pub fn stderr() -> (Writer, Guard) {
    let (writer, guard) = to(
        std::io::BufWriter::with_capacity(BUFFER_BYTES, std::io::stderr()),
        BUFFERED_LINES,
    );
    let _ = GLOBAL.set(writer.shared.clone());
    (writer, guard)
}

/// A non-blocking, lossy writer to `sink` with room for `lines` waiting lines.
pub fn to<W: Write + Send + 'static>(sink: W, lines: usize) -> (Writer, Guard) {
    let shared = Arc::new(Shared {
        queue: Mutex::new(Queue::default()),
        ready: Condvar::new(),
        dropped: AtomicU64::new(0),
        limit: lines.max(1),
    });
    let (done_tx, done) = std::sync::mpsc::channel();
    let thread_shared = shared.clone();
    let spawned = std::thread::Builder::new()
        .name("storegate-log".into())
        .spawn(move || {
            work(&thread_shared, sink);
            let _ = done_tx.send(());
        });
    if spawned.is_err() {
        // No thread, no log: every line is counted as dropped rather than blocking.
        shared.lock().closed = true;
    }
    (
        Writer {
            shared: shared.clone(),
        },
        Guard { shared, done },
    )
}

/// Log lines dropped so far because the writer thread could not keep up; `None` when the
/// process logs without [`stderr`] (a test, the library used elsewhere).
pub fn dropped_lines() -> Option<u64> {
    GLOBAL
        .get()
        .map(|shared| shared.dropped.load(Ordering::Relaxed))
}

/// A thread's lines waiting to be handed over.
struct Batch {
    shared: Option<Arc<Shared>>,
    buffer: Vec<u8>,
    lines: usize,
}

impl Batch {
    /// Counts the line just added, and hands the buffer over if it is full.
    fn added_line(&mut self) {
        self.lines += 1;
        if self.buffer.len() >= BATCH_BYTES {
            self.hand_over();
        }
    }

    fn hand_over(&mut self) {
        if self.lines == 0 {
            return;
        }
        if let Some(shared) = &self.shared {
            let full = std::mem::replace(&mut self.buffer, Vec::with_capacity(4096));
            shared.push(full, self.lines);
        }
        self.lines = 0;
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        self.hand_over();
    }
}

thread_local! {
    static BATCH: RefCell<Batch> = const {
        RefCell::new(Batch {
            shared: None,
            buffer: Vec::new(),
            lines: 0,
        })
    };
}

/// From now on this thread's lines to the process's writer gather in a buffer of the
/// thread's, handed over by [`hand_over`] (which the thread's runtime must call when it is
/// about to idle: `on_thread_park`) or when it is full. Nothing happens without a process
/// writer ([`stderr`]).
pub fn batch_this_thread() {
    if let Some(shared) = GLOBAL.get() {
        let _ = BATCH.try_with(|batch| {
            let mut batch = batch.borrow_mut();
            batch.shared = Some(shared.clone());
            batch.buffer.reserve(4096);
        });
    }
}

/// Hands this thread's gathered lines to the writer thread (a runtime's park hook).
pub fn hand_over() {
    let _ = BATCH.try_with(|batch| {
        if let Ok(mut batch) = batch.try_borrow_mut() {
            batch.hand_over();
        }
    });
}

/// Writes one line to the process's writer: `write` appends it, newline included, to the
/// buffer it is given (this thread's batch, or a buffer of its own handed over at once).
/// `false`, and `write` is not called, without a process writer ([`stderr`]).
pub fn line(write: impl FnOnce(&mut Vec<u8>)) -> bool {
    let Some(shared) = GLOBAL.get() else {
        return false;
    };
    let mut write = Some(write);
    let _ = BATCH.try_with(|batch| {
        let Ok(mut batch) = batch.try_borrow_mut() else {
            return;
        };
        if batch.shared.is_some()
            && let Some(write) = write.take()
        {
            write(&mut batch.buffer);
            batch.added_line();
        }
    });
    if let Some(write) = write {
        let mut own = Vec::with_capacity(512);
        write(&mut own);
        shared.push(own, 1);
    }
    true
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::mpsc;
    use std::time::Instant;

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
        let started = Instant::now();
        for i in 0..1000 {
            writer.write_all(format!("line {i}\n").as_bytes()).unwrap();
        }
        // A thousand lines into a sink that takes none: no wait, and all but the few the
        // queue and the writer thread hold (at most the queue's room each) are counted.
        assert!(started.elapsed() < Duration::from_millis(500));
        let dropped = writer.dropped();
        assert!((1000 - 16..1000).contains(&dropped), "{dropped}");
        // Let the writer drain, so the guard's flush returns at once.
        drop(go);
        drop(guard);
    }

    /// A sink that keeps what it is given (the access log's tests read what tracing wrote
    /// into one).
    #[derive(Clone, Default)]
    pub(crate) struct Kept(pub(crate) Arc<Mutex<Vec<u8>>>);

    impl Write for Kept {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn every_line_is_written_in_order_and_at_once_when_quiet() {
        let kept = Kept::default();
        let (mut writer, guard) = to(kept.clone(), 100);
        writer.write_all(b"first\n").unwrap();
        // A quiet writer writes a line at once, without waiting for more.
        let deadline = Instant::now() + Duration::from_secs(5);
        while kept.0.lock().unwrap().is_empty() {
            assert!(Instant::now() < deadline, "the line was not written");
            std::thread::sleep(Duration::from_millis(1));
        }
        for i in 0..50 {
            writer.write_all(format!("line {i}\n").as_bytes()).unwrap();
        }
        drop(guard);
        let text = String::from_utf8(kept.0.lock().unwrap().clone()).unwrap();
        let expected: String = std::iter::once("first\n".to_owned())
            .chain((0..50).map(|i| format!("line {i}\n")))
            .collect();
        assert_eq!(text, expected);
        assert_eq!(writer.dropped(), 0);
    }
}
