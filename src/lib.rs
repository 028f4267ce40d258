//! storegate: a backend-for-frontend gateway that serves the legacy REST surface of
//! `SPEC.md` (stock items, products, images, customers, addresses, orders; XML and JSON;
//! Admin, Customer and Guest) on top of a Magento 2 or OpenMage store.
//!
//! # Layout
//! Each folder is a layer; a layer imports only layers below it (the floors, the request
//! path and the few imports that run back up: `docs/architecture.md`; a folder-by-folder
//! map: `docs/code-map.md`). From the ground up:
//! - [`compare`]: two JSON answers compared field by field (the shadow, cassette drift).
//! - [`per_thread`]: numbers every request updates, kept per worker thread.
//! - [`context`]: the request a task serves (id, deadline, peer, trace, profile).
//! - [`config`]: the contract's configuration (TOML file and `STOREGATE_*` variables).
//! - [`http`]: the client-facing wire format (formats, XML, errors, list parameters).
//! - [`auth`]: principals, tokens, the caller step, OAuth 1.0a checks and token store.
//! - [`cache`]: the read cache, its keys and tags, rendered answers.
//! - [`shared_state`]: what instances share through Redis, or keep in-process without it.
//! - [`observe`]: request ids, the access log, metrics.
//! - [`backend`]: the port to the store, its Magento 2 and OpenMage adapters, recording.
//! - [`server`]: the accept loop, connection limits and timeouts, draining.
//! - [`shadow`]: the dual run: a candidate back end compared with the serving one, cut-over.
//! - [`rules`]: policy, privacy, pricing, mappings, upload checks: data in, data out.
//! - [`app`]: the handles every request shares.
//! - [`records`]: back-end records through the cache, indexes, lookups, lists.
//! - [`resources`]: the API's resources and the gateway's own endpoints.
//! - [`front`]: the service, its layers and routes, the fast path.
//! - [`cli`]: `storegate oauth ...` and `storegate replay`.
//!
//! The embedded Magento 2 sandbox lives in its own crate, `storegate-sandbox`, so that it
//! shares no types with [`backend`]: a misread Magento shape fails a test instead of
//! cancelling out.

pub mod allocator;
pub mod app;
pub mod auth;
pub mod backend;
pub mod cache;
pub mod cli;
pub mod compare;
pub mod config;
pub mod context;
pub mod front;
pub mod http;
pub mod limits;
pub mod observe;
pub mod per_thread;
pub mod records;
pub mod resources;
pub mod rules;
pub mod server;
pub mod shadow;
pub mod shared_state;

use std::net::SocketAddr;

use tokio::net::TcpListener;
use tokio::sync::oneshot;

pub use app::AppState;
pub use front::Parts;

/// mimalloc, called through its plain entry points where they align enough
/// ([`allocator`]).
#[cfg(not(fuzzing))]
#[global_allocator]
static ALLOCATOR: allocator::Allocator = allocator::Allocator;

pub use allocator::give_back_freed_memory;
pub use config::Config;

/// Where the mappings come from: `STOREGATE_MAPPINGS`, else the back end's folder
/// (`mappings/magento2`, or `mappings/openmage` with `STOREGATE_BACKEND=openmage`, relative
/// to the working directory) when it holds the files (so edits apply on restart), else the
/// back end's copy built into the binary (a gateway started outside a checkout).
pub fn load_mappings(
    config: &Config,
) -> Result<rules::mapping::Mappings, rules::mapping::MappingError> {
    match &config.mappings {
        Some(dir) => rules::mapping::Mappings::load_dir(dir),
        None => default_mappings(config.backend, &config.backend.default_mappings()),
    }
}

/// The mappings of `backend` without `STOREGATE_MAPPINGS`: `folder` when it holds the files,
/// else the built-in copy.
fn default_mappings(
    backend: config::BackendKind,
    folder: &std::path::Path,
) -> Result<rules::mapping::Mappings, rules::mapping::MappingError> {
    rules::mapping::Mappings::of_backend(backend, folder)
}

/// `http://ADDR` as a client can use it: an unspecified address (`0.0.0.0`, `::`) is
/// reached through loopback on this machine. Set `STOREGATE_PUBLIC_URL` for other machines.
pub fn public_origin_of(addr: SocketAddr) -> String {
    match addr {
        SocketAddr::V4(v4) if v4.ip().is_unspecified() => format!("http://127.0.0.1:{}", v4.port()),
        SocketAddr::V6(v6) if v6.ip().is_unspecified() => format!("http://[::1]:{}", v6.port()),
        other => format!("http://{other}"),
    }
}

/// A gateway serving on a listener.
#[derive(Debug)]
pub struct Running {
    pub addr: SocketAddr,
    pub app: AppState,
    shutdown: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl Running {
    /// `http://ADDR/api/rest`.
    pub fn base_url(&self) -> String {
        format!("http://{}/api/rest", self.addr)
    }

    /// Stops accepting, lets requests in flight finish (within the drain deadline), and
    /// waits. The record of hot keys is written first (`front::warm_start`).
    pub async fn stop(mut self) {
        front::warm_start::save(&self.app, self.addr.port()).await;
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let _ = (&mut self.task).await;
    }

    /// Waits until the server stops (on a signal, when started with one).
    pub async fn wait(self) -> std::io::Result<()> {
        self.task.await.map_err(std::io::Error::other)
    }
}

/// Builds the gateway and serves it on `listener` until [`Running::stop`] or `signal`.
pub async fn start(
    config: Config,
    parts: Parts,
    listener: TcpListener,
    signal: Option<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>>,
) -> Result<Running, String> {
    start_with(
        config,
        parts,
        listener,
        signal,
        &backend::registry::Registry::standard(),
    )
    .await
}

/// [`start`], the back end of the configured kind built from `registry` (a program that
/// embeds the gateway with a back end of its own adds it there).
pub async fn start_with(
    config: Config,
    parts: Parts,
    listener: TcpListener,
    signal: Option<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>>,
    registry: &backend::registry::Registry,
) -> Result<Running, String> {
    let limits = server::Limits::of(&config);
    let (router, app) = front::build_with(config, parts, registry)?;
    // Not before the revocations kept in the OAuth store are known (bounded).
    app.auth
        .revocations()
        .loaded_within(auth::revocations::START_WAIT)
        .await;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let (tx, rx) = oneshot::channel::<()>();
    let stop = async move {
        match signal {
            Some(signal) => {
                tokio::select! {
                    _ = rx => {}
                    _ = signal => {}
                }
            }
            None => {
                let _ = rx.await;
            }
        }
    };
    let connections = app.connections.clone();
    let service = front::service(router, &app);
    let task = tokio::spawn(server::serve(
        listener,
        service.clone(),
        connections,
        limits,
        stop,
    ));
    // An embedded gateway is handed over warm: the lookups loaded and the previous hot
    // answers refilled, within the warm start's bound (`front::warm_start`).
    front::warm_start::run(&app, &service, addr.port()).await;
    Ok(Running {
        addr,
        app,
        shutdown: Some(tx),
        task,
    })
}

/// The gateway served by worker threads: how the binary runs it.
///
/// Each worker is an OS thread with its own single-threaded runtime and its own listening
/// socket on the same address (`SO_REUSEPORT`, after a probe that refuses an address someone
/// else holds: [`server::bind`]), so the kernel spreads connections over the workers and a
/// request never hops between threads: the model nginx uses, and on a small machine the
/// cheapest one (the work-stealing runtime spends a sixth of a cache hit on waking threads).
/// State (cache, upstream client, tokens, the connection cap) is shared by all workers.
#[derive(Debug)]
pub struct Workers {
    pub addr: SocketAddr,
    pub app: AppState,
    stop: tokio::sync::watch::Sender<bool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Workers {
    /// `http://ADDR/api/rest`.
    pub fn base_url(&self) -> String {
        format!("http://{}/api/rest", self.addr)
    }

    /// Stops accepting, lets requests in flight finish (within the drain deadline), and
    /// waits for every worker. The record of hot keys is written as the drain begins
    /// (`front::warm_start`).
    pub async fn stop(self) {
        self.app.connections.drain();
        front::warm_start::save(&self.app, self.addr.port()).await;
        let _ = self.stop.send(true);
        let threads = self.threads;
        let _ = tokio::task::spawn_blocking(move || {
            for thread in threads {
                let _ = thread.join();
            }
        })
        .await;
    }
}

/// Binds `workers` sockets on `addr` (0: one per core) and serves the gateway on them.
pub fn serve_workers(config: Config, parts: Parts, workers: usize) -> Result<Workers, String> {
    let workers = match workers {
        0 => std::thread::available_parallelism().map_or(2, |n| n.get()),
        n => n,
    };
    let sockets = server::bind::bind_group(config.listen, workers)?;
    let addr = sockets[0]
        .local_addr()
        .map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    let limits = server::Limits::of(&config);
    let (router, app) = front::build(config, parts)?;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut threads = Vec::with_capacity(workers);
    // Each worker says when its socket listens: the caller announces the address only after
    // every socket accepts connections (a bound socket that does not listen yet refuses).
    let (listening, all_listening) = std::sync::mpsc::channel::<()>();
    let service = front::service(router, &app);
    for (i, socket) in sockets.into_iter().enumerate() {
        let service = service.clone();
        let connections = app.connections.clone();
        let mut stopped = stopped.clone();
        let listening = listening.clone();
        let revocations = app.auth.revocations().clone();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            // The worker's log lines gather in a buffer of its own, handed to the log
            // thread whenever the worker is about to idle (`observe::log_writer`).
            .on_thread_park(crate::observe::log_writer::hand_over)
            .build()
            .map_err(|e| format!("cannot start worker {i}: {e}"))?;
        let thread = std::thread::Builder::new()
            .name(format!("storegate-worker-{i}"))
            .spawn(move || {
                crate::observe::log_writer::batch_this_thread();
                runtime.block_on(async move {
                    // Not before the revocations kept in the OAuth store are known (bounded;
                    // loaded on the caller's runtime).
                    revocations
                        .loaded_within(crate::auth::revocations::START_WAIT)
                        .await;
                    let listened = socket.listen(4096);
                    // Said either way: the caller waits for a word from every worker.
                    let _ = listening.send(());
                    let listener = match listened {
                        Ok(listener) => listener,
                        Err(error) => {
                            tracing::error!(%error, worker = i, "cannot listen");
                            return;
                        }
                    };
                    server::serve(listener, service, connections, limits, async move {
                        let _ = stopped.wait_for(|stop| *stop).await;
                    })
                    .await;
                });
            })
            .map_err(|e| format!("cannot start worker {i}: {e}"))?;
        threads.push(thread);
    }
    drop(listening);
    for _ in 0..workers {
        // A worker thread that ended before saying anything: stop waiting for it.
        if all_listening.recv().is_err() {
            break;
        }
    }
    // Serving already; `/readyz` says warming until this is done (`front::warm_start`).
    {
        let (app, port) = (app.clone(), addr.port());
        tokio::spawn(async move { front::warm_start::run(&app, &service, port).await });
    }
    Ok(Workers {
        addr,
        app,
        stop,
        threads,
    })
}

/// Resolves when the process is asked to stop (Ctrl-C or SIGTERM).
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = terminate => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use config::BackendKind;

    /// The source of the product's `entity_id`: `product.id` in Magento 2's files,
    /// `product.entity_id` in OpenMage's.
    fn entity_id_source(mappings: &rules::mapping::Mappings) -> String {
        let product = mappings.get("product");
        product
            .field("entity_id")
            .unwrap()
            .source
            .segments()
            .join(".")
    }

    #[test]
    fn each_back_end_falls_back_to_its_built_in_mappings() {
        let nowhere = std::env::temp_dir().join(format!(
            "storegate-no-mappings-{}/mappings/openmage",
            std::process::id()
        ));
        let openmage = default_mappings(BackendKind::OpenMage, &nowhere).unwrap();
        let magento2 = default_mappings(BackendKind::Magento2, &nowhere).unwrap();
        assert_eq!(entity_id_source(&openmage), "product.entity_id");
        assert_eq!(entity_id_source(&magento2), "product.id");
        // The folder, when it is there, is what loads.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let folder = default_mappings(BackendKind::OpenMage, &root.join("mappings/openmage"));
        assert_eq!(entity_id_source(&folder.unwrap()), "product.entity_id");
        // A folder named by STOREGATE_MAPPINGS that is not there is an error, not a fallback.
        let config = Config {
            backend: BackendKind::OpenMage,
            mappings: Some(nowhere),
            ..Config::default()
        };
        assert!(load_mappings(&config).is_err());
    }
}
