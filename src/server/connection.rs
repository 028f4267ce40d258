//! One client connection: HTTP/1 through hyper, watched for the two ways a client holds a
//! connection without using it.
//!
//! - **Slow heads** (slowloris: a header line every few seconds): a request head must be
//!   complete within the header timeout of its first byte, or of the accept for a new
//!   connection (a connection that never sends anything is a slow head too).
//! - **Idle keep-alive**: after an answer, a connection with nothing in flight is closed when
//!   no byte of a next request arrived within the idle timeout.
//!
//! hyper has a header-read timeout of its own, but its timer also runs while a keep-alive
//! connection waits for its next request, so it cannot tell the two apart; the watch here
//! can, from what the socket reads and writes and what the service has in flight. A
//! connection is only ever cut with nothing in flight; a request being served is the request
//! deadline's business, and a stalled body the body reader's.
//!
//! The watch is one timer per connection that nothing but its own expiry wakes: reads,
//! writes and requests only note the time in atomics. A request must not wake the
//! connection's task a second time (a cache hit costs about a third more instructions that
//! way, `bench/instructions.py`), so the timer is armed never later than the earliest a
//! deadline could fall that the watch has not seen yet ([`Activity::next_check`]).

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use crate::server::Serve;
use http::HeaderValue;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Instant;

use super::{Connections, Limits, protocol, refusal};

/// What the socket and the service did, in milliseconds since the connection opened.
///
/// The milliseconds come from the kernel's coarse monotonic clock ([`coarse_ms`]): they
/// are read three times a request (a read, a write, the answer's end), and the precise
/// clock cost each reading some 20 ns on this project's machines, the coarse one 5. It
/// trails the precise clock by at most one kernel tick (1 to 10 ms), which moves the
/// connection's deadlines, counted in seconds, by no more than that.
#[derive(Debug)]
struct Activity {
    opened: Instant,
    /// [`coarse_ms`] when the connection opened.
    opened_ms: u64,
    in_flight: AtomicU32,
    /// The last answer finished (or the connection opened), or a write was made since.
    quiet_since: AtomicU64,
    /// A byte of a next request arrived since `quiet_since`.
    head_started: AtomicBool,
    head_started_at: AtomicU64,
    answered: AtomicBool,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            opened: Instant::now(),
            opened_ms: coarse_ms(),
            in_flight: AtomicU32::new(0),
            quiet_since: AtomicU64::new(0),
            head_started: AtomicBool::new(false),
            head_started_at: AtomicU64::new(0),
            answered: AtomicBool::new(false),
        }
    }

    fn now(&self) -> u64 {
        coarse_ms().saturating_sub(self.opened_ms)
    }

    fn read(&self) {
        if self.in_flight.load(Ordering::Relaxed) == 0
            && !self.head_started.swap(true, Ordering::Relaxed)
        {
            self.head_started_at.store(self.now(), Ordering::Relaxed);
        }
    }

    fn wrote(&self) {
        if self.in_flight.load(Ordering::Relaxed) == 0 && !self.head_started.load(Ordering::Relaxed)
        {
            self.quiet_since.store(self.now(), Ordering::Relaxed);
        }
    }

    fn begin(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(self.clone())
    }

    /// When the connection should be closed if nothing changes, or `None` while a request
    /// is in flight.
    fn deadline(&self, limits: &Limits) -> Option<Instant> {
        if self.in_flight.load(Ordering::Relaxed) > 0 {
            return None;
        }
        let ms = if self.head_started.load(Ordering::Relaxed) {
            self.head_started_at.load(Ordering::Relaxed) + limits.header_timeout.as_millis() as u64
        } else if self.answered.load(Ordering::Relaxed) {
            self.quiet_since.load(Ordering::Relaxed) + limits.idle_timeout.as_millis() as u64
        } else {
            // A new connection that has sent nothing yet: a slow head.
            limits.header_timeout.as_millis() as u64
        };
        Some(self.opened + Duration::from_millis(ms))
    }

    /// When the watch must look again. A deadline the watch has not seen can only appear
    /// later than `now + min(header, idle)`: a head that starts from now on is due at least
    /// a header timeout later, and a request in flight that ends from now on leaves the
    /// connection an idle timeout, or its next head a header timeout. So the connection's
    /// own deadline, but never later than that, is never too late, and no read, write or
    /// request has to wake the watch.
    fn next_check(&self, limits: &Limits) -> Instant {
        let unseen = Instant::now() + limits.header_timeout.min(limits.idle_timeout);
        match self.deadline(limits) {
            Some(deadline) => deadline.min(unseen),
            None => unseen,
        }
    }
}

/// Milliseconds on the kernel's coarse monotonic clock (`CLOCK_MONOTONIC_COARSE`: the time
/// of the last tick, read without the time counter); elsewhere, on the precise one.
fn coarse_ms() -> u64 {
    #[cfg(target_os = "linux")]
    {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes into the struct we pass and reads nothing else.
        if unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut now) } == 0 {
            return now.tv_sec as u64 * 1000 + now.tv_nsec as u64 / 1_000_000;
        }
    }
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_millis() as u64
}

/// One request being served; when it ends, the connection is quiet again.
struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let activity = &self.0;
        if activity.in_flight.fetch_sub(1, Ordering::Relaxed) == 1 {
            activity.answered.store(true, Ordering::Relaxed);
            activity.head_started.store(false, Ordering::Relaxed);
            activity
                .quiet_since
                .store(activity.now(), Ordering::Relaxed);
        }
    }
}

/// The socket, noting reads and writes, and putting the API's answer in place of hyper's
/// bare refusals of heads it could not read (`refusal`).
struct Watched {
    stream: TcpStream,
    activity: Arc<Activity>,
    sniffer: refusal::Sniffer,
    /// The API's refusal, being written in place of hyper's (what is left of it).
    replacement: Option<bytes::Bytes>,
}

impl Watched {
    /// A write's result, passed on; bytes written are activity (the idle timer starts over)
    /// and end whatever the sniffer was matching.
    fn note_written(
        &mut self,
        result: Poll<std::io::Result<usize>>,
    ) -> Poll<std::io::Result<usize>> {
        if matches!(result, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.wrote();
            self.sniffer.reset();
        }
        result
    }

    /// Writes what is left of a replacement; ready once it is all written.
    fn poll_replacement(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        while let Some(rest) = self.replacement.as_mut() {
            if rest.is_empty() {
                self.replacement = None;
                break;
            }
            match Pin::new(&mut self.stream).poll_write(cx, rest) {
                Poll::Ready(Ok(0)) => {
                    return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
                }
                Poll::Ready(Ok(n)) => {
                    bytes::Buf::advance(rest, n);
                }
                Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }

    /// hyper's own refusal of a head: the API's answer is written in its place, and hyper
    /// is told its bytes went out (`len` of them).
    fn poll_replace(
        &mut self,
        cx: &mut Context<'_>,
        first: &[u8],
        len: usize,
    ) -> Option<Poll<std::io::Result<usize>>> {
        let replacement = refusal::replace(first, &mut self.sniffer)?;
        self.replacement = Some(replacement);
        self.activity.wrote();
        Some(match self.poll_replacement(cx) {
            Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
            // Pending: the rest goes out on hyper's flush or shutdown.
            _ => Poll::Ready(Ok(len)),
        })
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let result = Pin::new(&mut self.stream).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.read();
            // A head is read while nothing is in flight; bodies are not looked through.
            if self.activity.in_flight.load(Ordering::Relaxed) == 0 {
                let this = &mut *self;
                this.sniffer.saw(&buf.filled()[before..]);
            }
        }
        result
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        if this.replacement.is_some() {
            // Nothing of hyper's follows its refusal but a flush; its bytes are dropped.
            return this.poll_replacement(cx).map_ok(|()| buf.len());
        }
        if let Some(done) = this.poll_replace(cx, buf, buf.len()) {
            return done;
        }
        let result = Pin::new(&mut this.stream).poll_write(cx, buf);
        this.note_written(result)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        let len = bufs.iter().map(|b| b.len()).sum();
        if this.replacement.is_some() {
            return this.poll_replacement(cx).map_ok(|()| len);
        }
        if let Some(first) = bufs.iter().find(|b| !b.is_empty())
            && let Some(done) = this.poll_replace(cx, first, len)
        {
            return done;
        }
        let result = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        this.note_written(result)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        std::task::ready!(self.poll_replacement(cx))?;
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        std::task::ready!(self.poll_replacement(cx))?;
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// What a connection's requests share: the service, the worker's connections (for the
/// drain) and the connection's activity.
struct Serving<S> {
    router: S,
    connections: Arc<Connections>,
    activity: Arc<Activity>,
}

/// Serves one connection until the client closes it, a timeout cuts it, or a drain ends it.
pub async fn serve<S: Serve>(
    stream: TcpStream,
    router: S,
    limits: Limits,
    connections: Arc<Connections>,
    _permit: OwnedSemaphorePermit,
) {
    // The peer's address, for OAuth to decide whether forwarded headers are believed
    // (`request_context::peer`). A socket without one is already disconnected.
    let Ok(peer) = stream.peer_addr() else {
        return;
    };
    let activity = Arc::new(Activity::new());
    let io = TokioIo::new(Watched {
        stream,
        activity: activity.clone(),
        sniffer: refusal::Sniffer::default(),
        replacement: None,
    });
    // What each request's future needs, in one allocation of this connection's own: a
    // request clones this `Arc`, whose count only this connection's thread touches. Cloning
    // the router and the worker's `Connections` per request instead incremented counts every
    // worker shares, a cache line moved between cores on every request (issue 23).
    let serving = Arc::new(Serving {
        router,
        connections: connections.clone(),
        activity: activity.clone(),
    });
    let service = hyper::service::service_fn(move |request: http::Request<Incoming>| {
        let in_flight = serving.activity.begin();
        let serving = serving.clone();
        async move {
            let response = match protocol::refuse(&request) {
                Some(response) => response,
                None => {
                    serving
                        .router
                        .serve(request.map(axum::body::Body::new))
                        .await
                }
            };
            let mut response = response;
            if serving.connections.draining() {
                // One request per connection while draining, so clients move on.
                response
                    .headers_mut()
                    .insert(http::header::CONNECTION, HeaderValue::from_static("close"));
            }
            drop(in_flight);
            Ok::<_, Infallible>(response)
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        // Room for our own, stricter head size limits to answer with the API's body
        // (`protocol`); past these, and past 100 fields, hyper answers and `refusal`
        // replaces its answer.
        .max_buf_size(protocol::HYPER_MAX_HEAD)
        .max_headers(protocol::HYPER_MAX_HEADERS)
        // The watch below times heads; hyper's timer would also cut idle keep-alives.
        .header_read_timeout(None);
    let connection = builder.serve_connection(io, service);
    tokio::pin!(connection);
    // Accepted while draining: served once (the answer says `Connection: close`); closing
    // it now would leave the client without an answer.
    let mut draining = connections.draining();
    let drained = connections.drained();
    let watch = tokio::time::sleep_until(activity.next_check(&limits));
    tokio::pin!(watch, drained);
    let watched = async {
        loop {
            tokio::select! {
                // The connection first: it is what almost every wake-up is for.
                biased;
                result = connection.as_mut() => {
                    if let Err(error) = result {
                        tracing::debug!(%error, "connection ended with an error");
                    }
                    return;
                }
                () = &mut watch => {
                    if activity.deadline(&limits).is_some_and(|d| d <= Instant::now()) {
                        // Nothing in flight: dropping the connection closes the socket.
                        return;
                    }
                    watch.as_mut().reset(activity.next_check(&limits));
                }
                () = &mut drained, if !draining => {
                    draining = true;
                    connection.as_mut().graceful_shutdown();
                }
            }
        }
    };
    crate::context::request::with_peer(peer, watched).await
}
