//! The `storegate` binary: parses the command line and hands over to the library.
//!
//! - `storegate [--config FILE]` serves the gateway; with no `STOREGATE_UPSTREAM_URL` it
//!   starts the embedded Magento 2 sandbox first and prints how to call it.
//! - `storegate sandbox --listen ADDR` runs the sandbox alone (benchmarks, several gateways
//!   sharing one store).
//! - `storegate replay DIR --listen ADDR` serves a cassette folder as a Magento 2
//!   (`storegate::recording`); `storegate cassette import-har FILE DIR` fills one from a HAR.
//! - `storegate oauth consumer add ...` / `storegate oauth import ...`: OAuth consumers and
//!   tokens ([`storegate::oauth::cli`]).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use rand::RngCore;
use storegate::config::{Config, LogFormat};
use storegate_sandbox::{DEMO_CUSTOMER_EMAIL, DEMO_CUSTOMER_PASSWORD, Sandbox, SandboxOptions};

#[derive(Parser)]
#[command(
    name = "storegate",
    version,
    about = "A backend-for-frontend gateway in front of Magento 2"
)]
struct Cli {
    /// A TOML configuration file; `STOREGATE_*` environment variables override it.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the Magento-2-compatible sandbox store alone.
    Sandbox {
        /// Address to serve on.
        #[arg(long, default_value = "127.0.0.1:8081")]
        listen: SocketAddr,
        /// Delay added to every answer, in milliseconds (simulates a slow back end).
        #[arg(long, default_value_t = 0)]
        latency_ms: u64,
        /// Extra generated products on top of the seeded catalog.
        #[arg(long, default_value_t = 0)]
        products: usize,
    },
    /// OAuth 1.0a consumers and tokens (in STOREGATE_DATA_DIR).
    #[command(subcommand)]
    Oauth(storegate::oauth::cli::OAuthCommand),
    /// Serve a cassette folder as a Magento 2 REST server (STOREGATE_REPLAY_* apply).
    Replay {
        /// The cassette folder.
        dir: PathBuf,
        /// Address to serve on.
        #[arg(long, default_value = "127.0.0.1:8081")]
        listen: SocketAddr,
    },
    /// Work on cassette folders.
    Cassette {
        #[command(subcommand)]
        command: CassetteCommand,
    },
}

#[derive(Subcommand)]
enum CassetteCommand {
    /// Add the Magento REST calls of a HAR export to a cassette folder, scrubbed.
    ImportHar {
        /// The HAR file (browser developer tools, mitmproxy).
        file: PathBuf,
        /// The cassette folder (created if missing).
        dir: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let config = match Config::load(cli.config.as_deref()) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("storegate: {error}");
            return ExitCode::from(2);
        }
    };
    init_tracing(config.log_format);
    // `storegate oauth ...` needs no runtime: it works on the token store and stops.
    let command = match cli.command {
        Some(Command::Oauth(command)) => {
            return match storegate::oauth::cli::run(&config, command) {
                Ok(output) => {
                    println!("{output}");
                    ExitCode::SUCCESS
                }
                Err(error) => {
                    eprintln!("storegate: {error}");
                    ExitCode::FAILURE
                }
            };
        }
        other => other,
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("storegate: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let result = match command {
        None => runtime.block_on(serve(config)),
        Some(Command::Sandbox {
            listen,
            latency_ms,
            products,
        }) => runtime.block_on(sandbox(
            config,
            listen,
            Duration::from_millis(latency_ms),
            products,
        )),
        Some(Command::Replay { dir, listen }) => {
            // The token is only needed to forward (record-missing, passthrough).
            let token = config
                .upstream
                .as_ref()
                .map(|u| u.token.expose().to_owned())
                .or_else(|| std::env::var("STOREGATE_UPSTREAM_TOKEN").ok());
            runtime.block_on(storegate::recording::serve(
                &dir,
                listen,
                &config.recording,
                token.as_deref().unwrap_or_default(),
            ))
        }
        Some(Command::Cassette {
            command: CassetteCommand::ImportHar { file, dir },
        }) => import_har(&config, &file, &dir),
        // Answered above, before the runtime.
        Some(Command::Oauth(_)) => Ok(()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("storegate: {error}");
            ExitCode::FAILURE
        }
    }
}

fn import_har(config: &Config, file: &Path, dir: &Path) -> Result<(), String> {
    let scrubber = storegate::recording::scrubber(&config.recording, &[])?;
    let imported = storegate::recording::har::import(file, dir, &scrubber)?;
    println!(
        "imported {} Magento REST call(s) into {} ({} other entries skipped)",
        imported.interactions,
        dir.display(),
        imported.skipped
    );
    Ok(())
}

fn init_tracing(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new("storegate=info,storegate_sandbox=info,tower_http=warn")
    });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Text => builder.init(),
    }
}

fn random_hex(bytes: usize) -> String {
    let mut buffer = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buffer);
    buffer.iter().map(|b| format!("{b:02x}")).collect()
}

async fn serve(config: Config) -> Result<(), String> {
    let mappings = storegate::load_mappings(&config).map_err(|e| e.to_string())?;

    // Upstream: the configured Magento 2, or the embedded sandbox.
    let mut sandbox = None;
    let (upstream_url, upstream_token) = match &config.upstream {
        Some(upstream) => (upstream.url.clone(), upstream.token.expose().to_owned()),
        None => {
            let sandbox_listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .map_err(|e| format!("cannot start the sandbox: {e}"))?;
            let options = SandboxOptions {
                token: None,
                latency: config.sandbox_latency,
                generated_products: config.sandbox_products,
            };
            let started = Sandbox::start(sandbox_listener, options)
                .await
                .map_err(|e| format!("cannot start the sandbox: {e}"))?;
            let pair = (started.base_url(), started.token().to_owned());
            sandbox = Some(started);
            pair
        }
    };

    // Admin keys: digests of the configured ones; in sandbox mode a generated one if none.
    let mut admin_digests = config.admin_key_sha256.clone();
    if let Some(key) = &config.admin_key {
        admin_digests.push(storegate::auth::admin_key_digest(key.expose()));
    }
    let mut generated_admin_key = None;
    if admin_digests.is_empty() {
        if sandbox.is_some() {
            let key = random_hex(24);
            admin_digests.push(storegate::auth::admin_key_digest(&key));
            generated_admin_key = Some(key);
        } else {
            tracing::warn!(
                "no STOREGATE_ADMIN_KEY or STOREGATE_ADMIN_KEY_SHA256: Admin operations are unavailable"
            );
        }
    }
    let token_secret = match &config.token_secret {
        Some(secret) => secret.expose().as_bytes().to_vec(),
        None => {
            tracing::warn!(
                "no STOREGATE_TOKEN_SECRET: customer tokens are signed with a random key and die with this process; \
                 set one shared by every instance"
            );
            random_hex(32).into_bytes()
        }
    };

    let parts = storegate::Parts {
        upstream_url: upstream_url.clone(),
        upstream_token,
        admin_digests,
        token_secret,
        mappings,
    };
    let workers = config.workers;
    let profile = config.profile;
    let running = storegate::serve_workers(config, parts, workers)?;

    println!("storegate listening on {}", running.base_url());
    if profile != storegate::profile::Profile::Spec {
        // Operators should know at a glance that answers follow the original, not SPEC.md.
        println!("compatibility profile: {}", profile.as_str());
    }
    match &sandbox {
        Some(sandbox) => {
            println!(
                "upstream: embedded Magento 2 sandbox at {}",
                sandbox.base_url()
            );
            if let Some(key) = &generated_admin_key {
                println!("admin key (generated for this run): {key}");
            }
            println!("demo customer: {DEMO_CUSTOMER_EMAIL} / {DEMO_CUSTOMER_PASSWORD}");
            println!(
                "try: curl -H 'Accept: application/json' {}/products",
                running.base_url()
            );
        }
        None => println!("upstream: {upstream_url}"),
    }

    storegate::shutdown_signal().await;
    tracing::info!(
        drain_secs = running.app.config.drain_timeout.as_secs(),
        "shutting down: /readyz fails, requests in flight may finish; a second signal exits at once"
    );
    running.app.connections.drain();
    tokio::spawn(async {
        storegate::shutdown_signal().await;
        eprintln!("storegate: second signal, exiting without draining");
        std::process::exit(130);
    });
    running.stop().await;
    if let Some(sandbox) = sandbox {
        sandbox.shutdown().await;
    }
    Ok(())
}

async fn sandbox(
    config: Config,
    listen: SocketAddr,
    latency: Duration,
    products: usize,
) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    let token = config
        .upstream
        .as_ref()
        .map(|u| u.token.expose().to_owned())
        .or_else(|| std::env::var("STOREGATE_UPSTREAM_TOKEN").ok());
    let printed = token.is_none();
    let options = SandboxOptions {
        token,
        latency,
        generated_products: products,
    };
    let sandbox = Sandbox::start(listener, options)
        .await
        .map_err(|e| format!("cannot start the sandbox: {e}"))?;
    println!(
        "storegate sandbox (Magento 2) listening on {}",
        sandbox.base_url()
    );
    if printed {
        println!(
            "integration token (generated for this run): {}",
            sandbox.token()
        );
    }
    println!("demo customer: {DEMO_CUSTOMER_EMAIL} / {DEMO_CUSTOMER_PASSWORD}");
    storegate::shutdown_signal().await;
    sandbox.shutdown().await;
    Ok(())
}
