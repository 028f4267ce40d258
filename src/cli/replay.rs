//! `storegate replay DIR --listen ADDR`: the cassettes of a folder served over HTTP as a
//! standalone store, until the process is asked to stop.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use crate::backend::recording::{replay_transport, server};
use crate::config::Recording;

/// Serves the cassettes of `dir` as a Magento 2 on `listen` until the process is asked to
/// stop (`storegate replay`).
pub async fn serve(
    dir: &Path,
    listen: SocketAddr,
    settings: &Recording,
    token: &str,
) -> Result<(), String> {
    let transport = replay_transport(
        dir,
        settings,
        token,
        Duration::from_secs(30),
        crate::backend::registry::WIRES,
    )?;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    println!(
        "storegate replay: Magento 2 from {} listening on http://{addr}",
        dir.display()
    );
    axum::serve(listener, server::router(transport))
        .with_graceful_shutdown(crate::shutdown_signal())
        .await
        .map_err(|e| e.to_string())
}
