//! Request bodies that must keep arriving.
//!
//! A client that sends its head and then stalls its body used to hold the request until the
//! request deadline, and got a 504 blamed on Magento (and logged as an upstream failure).
//! [`Watched`] wraps the body: when no piece of it arrives for `stall` (from the first read,
//! or from the last piece), reading it fails with [`Stalled`], which the body reader turns
//! into a 408 (`body::read_limited`). It also tells its owner how reading goes
//! ([`Progress`]), so that time spent waiting for the client does not count against the
//! deadline of the upstream calls that follow.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use tokio::time::Sleep;

/// The client stopped sending its request body.
#[derive(Debug, Clone, Copy)]
pub struct Stalled;

impl std::fmt::Display for Stalled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the client stalled its request body")
    }
}

impl std::error::Error for Stalled {}

/// Is `error`, or anything it wraps, a [`Stalled`]?
pub fn is_stalled(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(error) = next {
        if error.is::<Stalled>() {
            return true;
        }
        next = error.source();
    }
    false
}

/// How reading the body goes, for the request's deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Waiting for the next piece, for at most the stall time.
    Waiting,
    /// The whole body arrived.
    Done,
}

/// A body whose reader fails with [`Stalled`] when the client stops sending.
pub struct Watched<F> {
    inner: axum::body::Body,
    stall: Duration,
    timer: Option<Pin<Box<Sleep>>>,
    on_progress: F,
}

impl<F: Fn(Progress)> Watched<F> {
    pub fn new(inner: axum::body::Body, stall: Duration, on_progress: F) -> Self {
        Watched {
            inner,
            stall,
            timer: None,
            on_progress,
        }
    }
}

impl<F: Fn(Progress) + Unpin> HttpBody for Watched<F> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(frame)) => {
                this.timer = None;
                Poll::Ready(Some(frame))
            }
            Poll::Ready(None) => {
                this.timer = None;
                (this.on_progress)(Progress::Done);
                Poll::Ready(None)
            }
            Poll::Pending => {
                let timer = match &mut this.timer {
                    Some(timer) => timer,
                    None => {
                        (this.on_progress)(Progress::Waiting);
                        this.timer.insert(Box::pin(tokio::time::sleep(this.stall)))
                    }
                };
                match timer.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Some(Err(axum::Error::new(Stalled)))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[tokio::test(start_paused = true)]
    async fn a_stalled_body_fails_and_a_complete_one_says_so() {
        // Two bytes, then nothing more: a client that stalls.
        let rx = futures_util::StreamExt::chain(
            futures_util::stream::iter([Ok::<_, Stalled>(Frame::data(Bytes::from_static(b"ab")))]),
            futures_util::stream::pending(),
        );
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let body = Watched::new(
            axum::body::Body::new(http_body_util::StreamBody::new(rx)),
            Duration::from_secs(10),
            move |p| log.lock().unwrap().push(p),
        );
        let error = axum::body::to_bytes(axum::body::Body::new(body), 100)
            .await
            .unwrap_err();
        assert!(is_stalled(&error), "{error}");
        assert_eq!(*seen.lock().unwrap(), vec![Progress::Waiting]);

        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let body = Watched::new(
            axum::body::Body::from("abc"),
            Duration::from_secs(1),
            move |p| log.lock().unwrap().push(p),
        );
        let bytes = axum::body::to_bytes(axum::body::Body::new(body), 100)
            .await
            .unwrap();
        assert_eq!(bytes, "abc");
        assert_eq!(seen.lock().unwrap().last(), Some(&Progress::Done));
    }
}
