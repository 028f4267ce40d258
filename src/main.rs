//! The `storegate` binary: parses the command line and hands over to the library.
//!
//! - `storegate [--config FILE]` serves the gateway; with no `STOREGATE_UPSTREAM_URL` it
//!   starts the embedded Magento 2 sandbox first and prints how to call it.
//! - `storegate sandbox --listen ADDR` runs the sandbox alone (benchmarks, several gateways
//!   sharing one store).
//! - `storegate replay DIR --listen ADDR` serves a cassette folder as a Magento 2
//!   (`storegate::backend::recording`); `storegate cassette import-har FILE DIR` fills one from a HAR.
//! - `storegate oauth consumer add ...` / `storegate oauth import ...`: OAuth consumers and
//!   tokens ([`storegate::cli::oauth`]).
//! - `storegate healthcheck` asks a running gateway's `/healthz` (the container's check).
//!
//! Exit status: 2 for every refused configuration (variables, the file, mappings, the
//! command line, as clap does), 1 for any other failure. `--help` lists the variables from
//! `config::KEYS`; `--version` names the commit (`build.rs`).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use serde_json::json;
use storegate::config::{Config, EXIT_CONFIG, LogFormat};
use storegate_sandbox::{DEMO_CUSTOMER_EMAIL, DEMO_CUSTOMER_PASSWORD, Sandbox, SandboxOptions};

#[derive(Parser)]
#[command(
    name = "storegate",
    version = storegate::observe::build_info::LONG_VERSION,
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
        /// Address to serve on (`localhost:PORT` accepted).
        #[arg(long, default_value = "127.0.0.1:8081", value_parser = listen_address)]
        listen: SocketAddr,
        /// Base URL the sandbox's media and storefront URLs name (the address devices reach
        /// it at); default: the address each caller used.
        #[arg(long, value_name = "URL")]
        public_url: Option<String>,
        /// Delay added to every answer, in milliseconds (simulates a slow back end).
        #[arg(long, default_value_t = 0)]
        latency_ms: u64,
        /// Extra generated products on top of the seeded catalog.
        #[arg(long, default_value_t = 0)]
        products: usize,
        /// Copy this store's catalog, stock, images, customers, addresses and orders into the
        /// sandbox instead of its own seed, read through the gateway with the serving back
        /// end's kind and credentials (`STOREGATE_BACKEND`, `STOREGATE_UPSTREAM_TOKEN`, ...).
        /// Passwords are not copied. docs/dual-run.md.
        #[arg(long, value_name = "URL")]
        seed_from: Option<String>,
    },
    /// OAuth 1.0a consumers and tokens (in STOREGATE_DATA_DIR).
    #[command(subcommand)]
    Oauth(storegate::cli::oauth::OAuthCommand),
    /// Serve a cassette folder as a Magento 2 (or OpenMage) REST server, with latency,
    /// faults and a control API under /__storegate/ (STOREGATE_REPLAY_* apply).
    Replay {
        /// The cassette folder.
        dir: PathBuf,
        /// Address to serve on (`localhost:PORT` accepted).
        #[arg(long, default_value = "127.0.0.1:8081", value_parser = listen_address)]
        listen: SocketAddr,
        /// Delays of the answers, as STOREGATE_REPLAY_LATENCY (which this replaces):
        /// `fixed:200ms`, `uniform:100ms..300ms`, `lognormal:median=150ms,p99=900ms`,
        /// `recorded`, `recorded*2`, `GET /api/rest/products/{}=...` for one endpoint.
        #[arg(long, value_name = "RULES")]
        latency: Option<String>,
        /// Faults with a probability, as STOREGATE_REPLAY_FAULTS (which this replaces).
        #[arg(long, value_name = "RULES")]
        faults: Option<String>,
        /// The seed of the random delays and faults, as STOREGATE_REPLAY_SEED.
        #[arg(long, value_name = "N")]
        seed: Option<u64>,
        /// Let callers beyond loopback use the control API (/__storegate/).
        #[arg(long)]
        control_open: bool,
    },
    /// Work on cassette folders.
    Cassette {
        #[command(subcommand)]
        command: CassetteCommand,
    },
    /// Exit 0 when the gateway at URL answers its liveness check (container health checks:
    /// the runtime image has no curl).
    Healthcheck {
        /// Default: `/healthz` on the configured listen address.
        #[arg(long, value_name = "URL")]
        url: Option<String>,
    },
}

#[derive(Subcommand)]
enum CassetteCommand {
    /// Ask the live store (STOREGATE_REPLAY_UPSTREAM_URL, with STOREGATE_UPSTREAM_TOKEN and
    /// for OpenMage the STOREGATE_UPSTREAM_* OAuth keys) every recorded read again and report
    /// per endpoint and field what it answers differently now; exit 1 on drift, 0 unchanged.
    Drift {
        /// The cassette folder.
        dir: PathBuf,
    },
    /// Add the Magento REST calls of a HAR export to a cassette folder, scrubbed.
    ImportHar {
        /// The HAR file (browser developer tools, mitmproxy).
        file: PathBuf,
        /// The cassette folder (created if missing).
        dir: PathBuf,
    },
}

fn listen_address(text: &str) -> Result<SocketAddr, String> {
    storegate::config::parse_listen(text)
        .ok_or_else(|| "expected an address such as 127.0.0.1:8081 or localhost:8081".to_owned())
}

fn main() -> ExitCode {
    // Before the heap grows: memory freed goes back in small pages (allocator.rs).
    storegate::allocator::keep_pages_small();
    let matches = Cli::command()
        .after_help(storegate::config::variables_help())
        .get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
    let config = match Config::load(cli.config.as_deref()) {
        Ok(config) => config,
        Err(error) => {
            // The format is what the variable says, if the refused value was not that one.
            let json = std::env::var("STOREGATE_LOG_FORMAT")
                .is_ok_and(|f| f.trim().eq_ignore_ascii_case("json"));
            report(json, &error.to_string());
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    // Held until `main` returns: dropping it writes the lines still waiting.
    let _log_guard = init_tracing(config.log_format);
    // `storegate oauth ...` needs no runtime: it works on the token store and stops.
    let command = match cli.command {
        Some(Command::Oauth(command)) => {
            return match storegate::cli::oauth::run(&config, command) {
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
    let json = config.log_format == LogFormat::Json;
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            report(json, &format!("cannot start the runtime: {error}"));
            return ExitCode::FAILURE;
        }
    };
    let result = match command {
        None => runtime.block_on(serve(config)),
        Some(Command::Healthcheck { url }) => runtime.block_on(healthcheck(&config, url)),
        Some(Command::Sandbox {
            listen,
            public_url,
            latency_ms,
            products,
            seed_from,
        }) => runtime.block_on(sandbox(
            config,
            cli.config.as_deref(),
            listen,
            public_url,
            Duration::from_millis(latency_ms),
            products,
            seed_from,
        )),
        Some(Command::Replay {
            dir,
            listen,
            latency,
            faults,
            seed,
            control_open,
        }) => {
            // The token is only needed to forward (record-missing, passthrough, re-recording).
            let token = config
                .upstream
                .as_ref()
                .map(|u| u.token.expose().to_owned())
                .or_else(|| std::env::var("STOREGATE_UPSTREAM_TOKEN").ok());
            let mut recording = config.recording.clone();
            let flags = latency.is_some() || faults.is_some();
            recording.replay_latency = latency.or(recording.replay_latency);
            recording.replay_faults = faults.or(recording.replay_faults);
            recording.replay_seed = seed.or(recording.replay_seed);
            match storegate::backend::recording::check(&recording) {
                // The flags' values are the variables' syntax: name the flag when it was one.
                Err(error) if flags => Err(Failure::Config(
                    error
                        .replace(
                            "STOREGATE_REPLAY_LATENCY",
                            "--latency (STOREGATE_REPLAY_LATENCY)",
                        )
                        .replace(
                            "STOREGATE_REPLAY_FAULTS",
                            "--faults (STOREGATE_REPLAY_FAULTS)",
                        ),
                )),
                Err(error) => Err(Failure::Config(error)),
                Ok(_) => runtime
                    .block_on(storegate::cli::replay::serve(
                        &dir,
                        listen,
                        &recording,
                        token.as_deref().unwrap_or_default(),
                        &storegate::cli::replay::Options { control_open },
                    ))
                    .map_err(Failure::Other),
            }
        }
        Some(Command::Cassette {
            command: CassetteCommand::ImportHar { file, dir },
        }) => import_har(&config, &file, &dir).map_err(Failure::Other),
        Some(Command::Cassette {
            command: CassetteCommand::Drift { dir },
        }) => runtime.block_on(drift(&config, &dir)),
        // Answered above, before the runtime.
        Some(Command::Oauth(_)) => Ok(()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Config(error)) => {
            report(json, &error);
            ExitCode::from(EXIT_CONFIG)
        }
        Err(Failure::Other(error)) => {
            report(json, &error);
            ExitCode::FAILURE
        }
    }
}

fn import_har(config: &Config, file: &Path, dir: &Path) -> Result<(), String> {
    let wires = storegate::backend::registry::WIRES;
    let scrubber = storegate::backend::recording::scrubber(&config.recording, &[], wires)?;
    let imported = storegate::backend::recording::har::import(file, dir, &scrubber, wires)?;
    println!(
        "imported {} Magento REST call(s) into {} ({} other entries skipped)",
        imported.interactions,
        dir.display(),
        imported.skipped
    );
    Ok(())
}

/// `storegate cassette drift DIR`: the report on stdout; drift (or a read that could not be
/// checked) is exit status 1.
async fn drift(config: &Config, dir: &Path) -> Result<(), Failure> {
    use storegate::backend::recording::drift;
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let url = config
        .recording
        .replay_upstream_url
        .clone()
        .ok_or_else(|| {
            Failure::Config(
            "storegate cassette drift needs STOREGATE_REPLAY_UPSTREAM_URL, the live store to ask"
                .into(),
        )
        })?;
    let token = config
        .upstream
        .as_ref()
        .map(|u| u.token.expose().to_owned())
        .filter(|t| !t.is_empty())
        .or_else(|| env("STOREGATE_UPSTREAM_TOKEN"))
        .unwrap_or_default();
    let oauth = match config.upstream.as_ref().and_then(|u| u.oauth.as_ref()) {
        Some(o) => Some((
            o.consumer_key.expose().to_owned(),
            o.consumer_secret.expose().to_owned(),
            o.token_secret.expose().to_owned(),
        )),
        None => match (
            env("STOREGATE_UPSTREAM_CONSUMER_KEY"),
            env("STOREGATE_UPSTREAM_CONSUMER_SECRET"),
            env("STOREGATE_UPSTREAM_TOKEN_SECRET"),
        ) {
            (Some(key), Some(secret), Some(token_secret)) => Some((key, secret, token_secret)),
            _ => None,
        },
    };
    if !dir.is_dir() {
        return Err(Failure::Other(format!(
            "{} is not a folder of cassettes",
            dir.display()
        )));
    }
    let scrubber = std::sync::Arc::new(
        storegate::backend::recording::scrubber(
            &config.recording,
            &[token.as_str()],
            storegate::backend::registry::WIRES,
        )
        .map_err(Failure::Config)?,
    );
    let live = drift::Live {
        url: url.clone(),
        token,
        oauth,
        timeout: config.upstream_timeout,
    };
    let report = drift::check(dir, &live, scrubber)
        .await
        .map_err(Failure::Other)?;
    print!("{}", report.text());
    if report.is_clean() {
        Ok(())
    } else {
        Err(Failure::Other(format!(
            "the store at {url} answers {} differently from the cassettes of {}",
            if report.drifted.is_empty() {
                "some reads (not checked)"
            } else {
                "reads"
            },
            dir.display()
        )))
    }
}

/// The one line a failed start leaves on stderr: plain text, or a JSON object shaped like
/// the log's lines in JSON mode (so a collector parses it like the others).
fn report(json: bool, error: &str) {
    if json {
        eprintln!(
            "{}",
            json!({"level": "ERROR", "target": "storegate", "fields": {"message": error}})
        );
    } else {
        eprintln!("storegate: {error}");
    }
}

/// Why the binary stopped: the configuration (exit status 2), or anything else (1).
enum Failure {
    Config(String),
    Other(String),
}

impl From<String> for Failure {
    fn from(error: String) -> Self {
        Failure::Other(error)
    }
}

/// What the binary prints at start for the person who started it: text lines, or, with
/// `STOREGATE_LOG_FORMAT=json`, one JSON object, so that a log collector reading both
/// streams sees nothing but JSON.
struct Banner {
    format: LogFormat,
    lines: Vec<String>,
    fields: serde_json::Map<String, serde_json::Value>,
}

impl Banner {
    fn new(format: LogFormat, message: &str) -> Banner {
        let mut fields = serde_json::Map::new();
        fields.insert("message".into(), json!(message));
        Banner {
            format,
            lines: Vec::new(),
            fields,
        }
    }
    fn line(&mut self, text: String) -> &mut Self {
        self.lines.push(text);
        self
    }
    fn field(&mut self, key: &str, value: impl Into<serde_json::Value>) -> &mut Self {
        self.fields.insert(key.to_owned(), value.into());
        self
    }
    fn print(&self) {
        match self.format {
            LogFormat::Text => {
                for line in &self.lines {
                    println!("{line}");
                }
            }
            LogFormat::Json => println!("{}", serde_json::Value::Object(self.fields.clone())),
        }
    }
}

/// Logs to stderr through `storegate::observe::log_writer` (a thread of its own, lines dropped and
/// counted rather than waited for); the guard flushes it.
fn init_tracing(format: LogFormat) -> storegate::observe::log_writer::Guard {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new("storegate=info,storegate_sandbox=info,tower_http=warn")
    });
    // Plain text, without colour codes even at a terminal: the subscriber is built without its
    // `ansi` feature, which cost every access line thousands of instructions (Cargo.toml).
    let (writer, guard) = storegate::observe::log_writer::stderr();
    // The access line is formatted by the gateway itself, in this format, into the same
    // writer (`observe::access_log`: a tenth of what tracing's formatter cost a cache hit).
    storegate::observe::access_log::install(format);
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(writer);
    match format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Text => builder.init(),
    }
    guard
}

fn random_hex(bytes: usize) -> String {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer).expect("the operating system's random generator");
    buffer.iter().map(|b| format!("{b:02x}")).collect()
}

async fn serve(mut config: Config) -> Result<(), Failure> {
    let mappings = storegate::load_mappings(&config).map_err(|e| Failure::Config(e.to_string()))?;
    // The replay bench's settings: a bad one stops the start, naming the variable.
    storegate::backend::recording::check(&config.recording).map_err(Failure::Config)?;

    // A token without a URL is a URL that went missing (an unexported variable, a
    // deployment that dropped it), not a wish for the demo store.
    if config.upstream.is_none() && std::env::var_os("STOREGATE_UPSTREAM_TOKEN").is_some() {
        return Err(Failure::Config(
            "STOREGATE_UPSTREAM_TOKEN is set but STOREGATE_UPSTREAM_URL is not: set the URL, \
             or unset the token to use the embedded sandbox"
                .into(),
        ));
    }

    // The sandbox only when nothing says production, or when asked for (`start_checks`).
    storegate::config::start_checks::sandbox_allowed(
        &config,
        std::env::vars_os().filter_map(|(name, _)| name.into_string().ok()),
    )
    .map_err(Failure::Config)?;

    // Upstream: the configured Magento 2, or the embedded sandbox.
    let mut sandbox = None;
    let (upstream_url, upstream_token) = match &config.upstream {
        Some(upstream) => (upstream.url.clone(), upstream.token.expose().to_owned()),
        None => {
            let wanted = config.sandbox_listen;
            let sandbox_listener = tokio::net::TcpListener::bind(wanted)
                .await
                .map_err(|e| format!("cannot start the sandbox on {wanted}: {e}"))?;
            let options = SandboxOptions {
                token: None,
                latency: config.sandbox_latency,
                generated_products: config.sandbox_products,
                seed: None,
            };
            let started = Sandbox::start(sandbox_listener, options)
                .await
                .map_err(|e| format!("cannot start the sandbox: {e}"))?;
            let pair = (started.base_url(), started.token().to_owned());
            // Its media is served through the gateway (`/media/...`), so that one public
            // address reaches everything.
            config.sandbox_media = Some(started.base_url());
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
    let format = config.log_format;
    let public_url = config.public_url.clone();
    let profile = config.profile;
    // The sandbox's media are under the public URL before the gateway starts: its warm-up
    // reads the store's configuration (media and storefront URLs) and keeps it. Known now
    // unless the port is chosen at bind; then it is set just after, as before.
    let known_public = public_url.clone().or_else(|| {
        (config.listen.port() != 0).then(|| storegate::public_origin_of(config.listen))
    });
    if let (Some(sandbox), Some(public)) = (&sandbox, &known_public) {
        sandbox.set_public_origin(public);
    }
    let running = storegate::serve_workers(config, parts, workers)?;
    let public = public_url.unwrap_or_else(|| storegate::public_origin_of(running.addr));
    if let Some(sandbox) = &sandbox
        && known_public.is_none()
    {
        sandbox.set_public_origin(&public);
        // What the warm-up read of the store's configuration before is read again.
        running
            .app
            .cache
            .invalidate(&[storegate::cache::keys::tag::STORES.to_owned()]);
    }

    let mut banner = Banner::new(format, "storegate listening");
    banner
        .line(format!("storegate listening on {}", running.base_url()))
        .field("listen", running.addr.to_string())
        .field("base_url", format!("{public}/api/rest"))
        .field("version", storegate::observe::build_info::LONG_VERSION);
    if public != storegate::public_origin_of(running.addr) {
        banner.line(format!("public URL: {public}/api/rest"));
    }
    banner.line(format!("API reference: {public}/api/rest/docs"));
    if profile != storegate::context::profile::Profile::Spec {
        // Operators should know at a glance that answers follow the original, not SPEC.md.
        banner
            .line(format!("compatibility profile: {}", profile.as_str()))
            .field("profile", profile.as_str());
    }
    match &sandbox {
        Some(sandbox) => {
            banner
                .line(format!(
                    "upstream: embedded Magento 2 sandbox at {} (media served at {public}/media/)",
                    sandbox.base_url()
                ))
                .field("upstream", "sandbox")
                .field("sandbox", sandbox.base_url());
            if let Some(key) = &generated_admin_key {
                banner
                    .line(format!("admin key (generated for this run): {key}"))
                    .field("admin_key", key.as_str());
            }
            banner
                .line(format!(
                    "demo customer: {DEMO_CUSTOMER_EMAIL} / {DEMO_CUSTOMER_PASSWORD}"
                ))
                .field("demo_customer", DEMO_CUSTOMER_EMAIL)
                .field("demo_password", DEMO_CUSTOMER_PASSWORD)
                .line(format!(
                    "try: curl -H 'Accept: application/json' {public}/api/rest/products"
                ));
        }
        None => {
            banner
                .line(format!("upstream: {upstream_url}"))
                .field("upstream", upstream_url.as_str());
        }
    }
    banner.print();

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

async fn healthcheck(config: &Config, url: Option<String>) -> Result<(), Failure> {
    let url =
        url.unwrap_or_else(|| format!("{}/healthz", storegate::public_origin_of(config.listen)));
    storegate::backend::transport::install_crypto();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(3))
        .build()
        .map_err(|e| e.to_string())?;
    let answer = client
        .get(&url)
        .send()
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    if answer.status().is_success() {
        Ok(())
    } else {
        Err(format!("{url}: {}", answer.status()).into())
    }
}

async fn sandbox(
    config: Config,
    file: Option<&Path>,
    listen: SocketAddr,
    public_url: Option<String>,
    latency: Duration,
    products: usize,
    seed_from: Option<String>,
) -> Result<(), Failure> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    let seed = match &seed_from {
        Some(url) => {
            // The store to copy, configured as the serving back end would be with that URL
            // (its kind and credentials checked as at a start).
            let source = Config::from_sources(file, &|name| {
                if name == "STOREGATE_UPSTREAM_URL" {
                    Some(url.clone())
                } else {
                    std::env::var(name).ok()
                }
            })
            .map_err(|e| Failure::Config(e.to_string()))?;
            storegate::backend::transport::install_crypto();
            let seed = storegate::cli::seed::read(&source, url)
                .await
                .map_err(|e| format!("cannot copy {url}: {e}"))?;
            eprintln!(
                "storegate: copied {} products ({} image files), {} customers and {} orders from {url}",
                seed.products.len(),
                seed.media_files.len(),
                seed.customers.len(),
                seed.orders.len()
            );
            Some(std::sync::Arc::new(seed))
        }
        None => None,
    };
    // The store's own token is for the store; a copy gets a token of its own.
    let token = match seed {
        Some(_) => None,
        None => config
            .upstream
            .as_ref()
            .map(|u| u.token.expose().to_owned())
            .or_else(|| std::env::var("STOREGATE_UPSTREAM_TOKEN").ok()),
    };
    let printed = token.is_none();
    let options = SandboxOptions {
        token,
        latency,
        generated_products: products,
        seed,
    };
    let sandbox = Sandbox::start(listener, options)
        .await
        .map_err(|e| format!("cannot start the sandbox: {e}"))?;
    if let Some(url) = &public_url {
        sandbox.set_public_origin(url.trim_end_matches('/'));
    }
    let mut banner = Banner::new(config.log_format, "storegate sandbox listening");
    banner
        .line(format!(
            "storegate sandbox (Magento 2) listening on {}",
            sandbox.base_url()
        ))
        .field("base_url", sandbox.base_url());
    if printed {
        banner
            .line(format!(
                "integration token (generated for this run): {}",
                sandbox.token()
            ))
            .field("integration_token", sandbox.token());
    }
    if seed_from.is_none() {
        banner
            .line(format!(
                "demo customer: {DEMO_CUSTOMER_EMAIL} / {DEMO_CUSTOMER_PASSWORD}"
            ))
            .field("demo_customer", DEMO_CUSTOMER_EMAIL);
    } else {
        banner.line("customers' passwords were not copied: each has a random one".to_owned());
    }
    banner.print();
    storegate::shutdown_signal().await;
    sandbox.shutdown().await;
    Ok(())
}
