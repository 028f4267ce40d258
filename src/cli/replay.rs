//! `storegate replay DIR --listen ADDR`: the cassettes of a folder served over HTTP as a
//! standalone store, until the process is asked to stop.
//!
//! Its own accept loop (not `axum::serve`): a connection fault must reach the socket, which
//! the router never holds. The router marks such an answer ([`server::Cut`]); the loop then
//! closes the connection without a byte, with a TCP reset for `reset`.

use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use axum::extract::ConnectInfo;
use hyper_util::rt::TokioIo;

use crate::backend::recording::{replay_player, server};
use crate::config::Recording;

/// How `storegate replay` was asked to run, besides the folder.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--control-open`: the control API answers callers beyond loopback too.
    pub control_open: bool,
}

/// Serves the cassettes of `dir` as a store on `listen` until the process is asked to
/// stop (`storegate replay`).
pub async fn serve(
    dir: &Path,
    listen: SocketAddr,
    settings: &Recording,
    token: &str,
    options: &Options,
) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    serve_on(
        listener,
        dir,
        settings,
        token,
        options,
        crate::shutdown_signal(),
    )
    .await
}

/// The same on a bound listener, until `stop` completes (tests run it in-process).
pub async fn serve_on(
    listener: tokio::net::TcpListener,
    dir: &Path,
    settings: &Recording,
    token: &str,
    options: &Options,
    stop: impl Future<Output = ()>,
) -> Result<(), String> {
    let player = replay_player(
        dir,
        settings,
        token,
        Duration::from_secs(30),
        crate::backend::registry::WIRES,
    )?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    println!(
        "storegate replay: the store from {} listening on http://{addr} (control API: http://{addr}{}/)",
        dir.display(),
        crate::backend::recording::control::PREFIX,
    );
    let router = server::router(player, options.control_open);
    tokio::pin!(stop);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                // Out of descriptors and the like: try again shortly, do not stop serving.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut stop => return Ok(()),
        };
        let router = router.clone();
        tokio::spawn(connection(stream, peer, router));
    }
}

/// Why a connection was cut on purpose (never shown: the connection just ends).
#[derive(Debug)]
struct CutOnPurpose;

impl std::fmt::Display for CutOnPurpose {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("replay fault")
    }
}

impl std::error::Error for CutOnPurpose {}

async fn connection(stream: tokio::net::TcpStream, peer: SocketAddr, router: axum::Router) {
    let _ = stream.set_nodelay(true);
    // A second handle on the socket, to set SO_LINGER for a reset: hyper owns the first.
    let Ok(std_stream) = stream.into_std() else {
        return;
    };
    let Ok(handle) = std_stream.try_clone() else {
        return;
    };
    let Ok(stream) = tokio::net::TcpStream::from_std(std_stream) else {
        return;
    };
    let handle = std::sync::Arc::new(handle);
    let socket = handle.clone();
    let service =
        hyper::service::service_fn(move |mut request: http::Request<hyper::body::Incoming>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            let mut router = router.clone();
            let socket = socket.clone();
            async move {
                let response =
                    tower::Service::call(&mut router, request.map(axum::body::Body::new))
                        .await
                        .unwrap_or_else(|never| match never {});
                match response.extensions().get::<server::Cut>() {
                    None => Ok(response),
                    Some(cut) => {
                        if *cut == server::Cut::Reset {
                            // With a zero linger, the last close sends RST instead of FIN.
                            let _ = socket2::SockRef::from(socket.as_ref())
                                .set_linger(Some(Duration::ZERO));
                        }
                        Err(CutOnPurpose)
                    }
                }
            }
        });
    let _ = hyper::server::conn::http1::Builder::new()
        .keep_alive(true)
        .serve_connection(TokioIo::new(stream), service)
        .await;
    drop(handle);
}
