//! How the gateway holds its connections: binding the listen address, accepting under a cap,
//! the per-connection timeouts, and draining on shutdown.
//!
//! Written on hyper's HTTP/1 connection directly rather than `axum::serve`, because
//! `axum::serve` has none of the limits a server facing the internet needs: no header-read
//! or idle timeout, no cap on open connections (past the descriptor limit every request,
//! `/healthz` included, timed out), and a shutdown that waits for the slowest client for
//! ever.
//!
//! - **Cap.** At most `STOREGATE_MAX_CONNECTIONS` connections are open at once, shared by
//!   every worker; one more is accepted and closed at once (counted in
//!   `storegate_connections_refused_total`), so the kernel's backlog never fills with
//!   connections nobody serves. The default is derived from the descriptor limit
//!   ([`default_max_connections`]).
//! - **Timeouts** ([`connection`]): a request head must arrive within
//!   `STOREGATE_HEADER_TIMEOUT_SECS` of its first byte (of the accept, for a new
//!   connection); a keep-alive connection with nothing in flight is closed after
//!   `STOREGATE_IDLE_TIMEOUT_SECS`. A request body that stalls is the body reader's
//!   business (`http::client_body`), where it becomes a 408.
//! - **Drain.** On stop, [`Connections::drain`] marks the gateway draining: `/readyz` answers
//!   503 from that moment, idle connections close, every connection closes after the
//!   request it is serving (new ones too, until load balancers notice), and a worker is done
//!   as soon as it has no connection left, or after `STOREGATE_DRAIN_TIMEOUT_SECS`, when
//!   whatever is left is dropped.
//! - **Limits of the head** ([`protocol`]): a URI or a head too large is answered with the
//!   API's error body and a request id, not hyper's empty one.

pub mod bind;
pub mod connection;
pub mod protocol;
pub mod refusal;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;

use crate::config::Config;

/// The limits every connection is held to.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
    pub drain_timeout: Duration,
}

impl Limits {
    pub fn of(config: &Config) -> Limits {
        Limits {
            header_timeout: config.header_timeout,
            idle_timeout: config.idle_timeout,
            drain_timeout: config.drain_timeout,
        }
    }
}

/// What every worker of one gateway shares about connections: the cap, the count of
/// refused ones, and whether the gateway is draining.
#[derive(Debug)]
pub struct Connections {
    cap: Arc<Semaphore>,
    max: usize,
    refused: AtomicU64,
    draining: AtomicBool,
    /// Woken once when draining starts. A `Notify` rather than a `watch`: every connection
    /// polls it each time its socket wakes it, and a pinned `Notified` costs less to poll.
    drain: tokio::sync::Notify,
}

impl Connections {
    pub fn new(max: usize) -> Connections {
        Connections {
            cap: Arc::new(Semaphore::new(max)),
            max,
            refused: AtomicU64::new(0),
            draining: AtomicBool::new(false),
            drain: tokio::sync::Notify::new(),
        }
    }

    /// A place for one more connection, if there is one.
    fn admit(&self) -> Option<OwnedSemaphorePermit> {
        let permit = self.cap.clone().try_acquire_owned().ok();
        if permit.is_none() {
            self.refused.fetch_add(1, Ordering::Relaxed);
        }
        permit
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.max - self.cap.available_permits()
    }

    /// Connections closed at once because the cap was reached.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// Starts draining: `/readyz` fails from now on, listeners stop accepting and
    /// connections close once their request in flight is answered.
    pub fn drain(&self) {
        self.draining.store(true, Ordering::SeqCst);
        self.drain.notify_waiters();
    }

    pub fn draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }

    /// Resolves once draining starts (at once if it has).
    pub(crate) async fn drained(&self) {
        let notified = self.drain.notified();
        tokio::pin!(notified);
        // Registered before the flag is read: a drain in between still wakes it.
        notified.as_mut().enable();
        if self.draining.load(Ordering::SeqCst) {
            return;
        }
        notified.await;
    }
}

/// The connection cap when `STOREGATE_MAX_CONNECTIONS` is not set: what the descriptor
/// limit leaves after the upstream calls' sockets and some for files and the listeners,
/// and at most 10,000. Accepting past the descriptor limit is what made every request hang:
/// `accept` fails, the connection stays in the backlog, and nothing answers it.
pub fn default_max_connections(upstream_max_in_flight: usize) -> usize {
    let descriptors = descriptor_limit().unwrap_or(1024);
    let reserve = upstream_max_in_flight as u64 + 64;
    descriptors.saturating_sub(reserve).clamp(16, 10_000) as usize
}

/// The soft limit on open descriptors (`ulimit -n`).
fn descriptor_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes into the struct we pass and reads nothing else.
        let status = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
        #[allow(clippy::unnecessary_cast)] // rlim_t is not u64 everywhere
        let soft = limit.rlim_cur as u64;
        (status == 0).then_some(soft)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// What the accept loop serves: a request in, its answer out (`front::Service`: the router
/// behind the trim of a trailing slash, and a cache hit answered before routing). A trait
/// rather than a boxed service, so that no request pays for a box.
pub trait Serve: Clone + Send + Sync + 'static {
    fn serve(
        &self,
        request: http::Request<axum::body::Body>,
    ) -> impl Future<Output = axum::response::Response> + Send;
}

/// Serves `router` on `listener` until `stop` resolves, then drains: see the module doc.
pub async fn serve<S: Serve>(
    listener: TcpListener,
    router: S,
    connections: Arc<Connections>,
    limits: Limits,
    stop: impl Future<Output = ()> + Send,
) {
    let mut open = JoinSet::new();
    // Serving and draining admit connections alike.
    let serve_connection = |stream, permit| {
        connection::serve(stream, router.clone(), limits, connections.clone(), permit)
    };
    let drained = connections.drained();
    tokio::pin!(stop, drained);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            () = &mut drained => break,
            // Reap finished connections so the set does not grow.
            Some(_) = open.join_next(), if !open.is_empty() => {}
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _peer)) => stream,
                    Err(error) => {
                        // Out of descriptors despite the cap (other files, a low limit):
                        // back off a little instead of spinning on the same error.
                        tracing::warn!(%error, "accept failed");
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        continue;
                    }
                };
                let Some(permit) = connections.admit() else {
                    // Closed at once: the client learns now instead of waiting in a queue.
                    drop(stream);
                    continue;
                };
                let _ = stream.set_nodelay(true);
                open.spawn(serve_connection(stream, permit));
            }
        }
    }
    // Draining: `/readyz` fails from now on, so load balancers stop sending; until they
    // notice, new connections are still served, one request each. The worker is done when
    // no connection is left, or at the drain deadline.
    connections.drain();
    let deadline = tokio::time::Instant::now() + limits.drain_timeout;
    while !open.is_empty() {
        tokio::select! {
            _ = tokio::time::sleep_until(deadline) => {
                tracing::warn!(
                    left = open.len(),
                    "drain deadline passed (STOREGATE_DRAIN_TIMEOUT_SECS): closing the connections left"
                );
                open.abort_all();
                break;
            }
            Some(_) = open.join_next() => {}
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted
                    && let Some(permit) = connections.admit()
                {
                    open.spawn(serve_connection(stream, permit));
                }
            }
        }
    }
}
