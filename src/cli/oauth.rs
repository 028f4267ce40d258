//! `storegate oauth ...`: consumers, access tokens and the original's tables, on the
//! configured OAuth store (`STOREGATE_DATABASE_URL`, by default the SQLite file in
//! `STOREGATE_DATA_DIR`); `migrate --to URL` copies that store into another (a single
//! machine's SQLite file into the fleet's MariaDB). Safe while gateways run on the same
//! store: a new consumer counts at their next sign-in; a revocation within their
//! credentials' freshness (`oauth::verified`: a second, or at once with Redis, where the CLI
//! announces it).

use crate::context::profile::Profile;
use std::path::PathBuf;

use clap::Subcommand;

use crate::auth::oauth::callback;
use crate::auth::oauth::import::{self, Table};
use crate::auth::oauth::store::{
    ImportedToken, Kind, NewConsumer, Owner, TokenStore, random_hex32,
};
use crate::auth::oauth::{self as oauth_provider};
use crate::backend::port::StoreSession;
use crate::config::{Config, Rate};

#[derive(Debug, Subcommand)]
pub enum OAuthCommand {
    /// Manage OAuth consumers (the applications).
    #[command(subcommand)]
    Consumer(ConsumerCommand),
    /// List or revoke access tokens.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Copy this store's consumers and live access tokens into another store (e.g. the
    /// single machine's SQLite file into the fleet's MariaDB); rerunnable.
    Migrate {
        /// The destination: `mysql://user:password@host:port/database` or `sqlite://PATH`.
        #[arg(long, value_name = "URL")]
        to: String,
    },
    /// Import the original's oauth_consumer and oauth_token tables (`mysql --batch` output).
    Import {
        /// Output of `mysql --batch -e 'SELECT * FROM oauth_consumer'`.
        #[arg(long, value_name = "FILE")]
        consumers: PathBuf,
        /// Output of `mysql --batch -e 'SELECT * FROM oauth_token'`.
        #[arg(long, value_name = "FILE")]
        tokens: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum ConsumerCommand {
    /// Register an application; prints its key and secret (the secret only this once).
    Add {
        #[arg(long)]
        name: String,
        /// The consumer key (default: 32 random hex characters).
        #[arg(long)]
        key: Option<String>,
        /// The consumer secret (default: 32 random hex characters).
        #[arg(long)]
        secret: Option<String>,
        /// The application's callback URL, of any scheme (`myapp://cb` for a mobile app):
        /// the `oauth_callback` it sends must then be this URL or below it (same scheme,
        /// host and port, the path continued at a `/`, its query parameters kept). Without
        /// one, any http(s) callback is accepted.
        #[arg(long, value_name = "URL")]
        callback: Option<String>,
        /// Where users who reject the app are sent (any scheme), with `oauth_token` and
        /// `rejected=1`; without one, back to the app's own callback.
        #[arg(long, value_name = "URL")]
        rejected_callback: Option<String>,
        /// The profile its signed calls are answered in: `original` for an app written for
        /// the original API (its formats: `Accept: */*` is JSON, `magento_api` XML...),
        /// `spec` for the gateway's. Default: the gateway's (`STOREGATE_PROFILE`).
        #[arg(long, value_name = "PROFILE")]
        profile: Option<String>,
        /// The app's own rate limit, in place of STOREGATE_RATE_LIMITS's `consumer=`
        /// (`6000/60s`: requests per window, per route class, all its tokens together).
        #[arg(long, value_name = "N/Ws", value_parser = rate_limit_arg)]
        rate_limit: Option<RateLimitArg>,
    },
    /// Change a registered application, found by its key; what is not given is kept (an
    /// empty URL, `--callback ''`, removes that callback).
    Update {
        /// The consumer's key.
        #[arg(long)]
        key: String,
        #[arg(long)]
        name: Option<String>,
        /// The callback URL (see `add`); `''` removes it.
        #[arg(long, value_name = "URL")]
        callback: Option<String>,
        /// The rejected callback URL (see `add`); `''` removes it.
        #[arg(long, value_name = "URL")]
        rejected_callback: Option<String>,
        /// `spec`, `original`, or `gateway` for the gateway's own.
        #[arg(long, value_name = "PROFILE")]
        profile: Option<String>,
        /// The app's own rate limit (see `add`); `off`: STOREGATE_RATE_LIMITS's `consumer=`
        /// again.
        #[arg(long, value_name = "N/Ws|off", value_parser = rate_limit_arg)]
        rate_limit: Option<RateLimitArg>,
    },
    /// List the registered applications (names, keys, callbacks, rate limits; never secrets).
    List,
}

/// `--rate-limit`: a rate, or `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateLimitArg {
    Rate(Rate),
    Off,
}

impl RateLimitArg {
    fn rate(self) -> Option<Rate> {
        match self {
            RateLimitArg::Rate(rate) => Some(rate),
            RateLimitArg::Off => None,
        }
    }
}

/// Checked as the gateway checks `STOREGATE_RATE_LIMITS`' rates: a bad one is refused by
/// the command line (exit status 2, with what was wrong), never stored.
fn rate_limit_arg(text: &str) -> Result<RateLimitArg, String> {
    if text.trim().eq_ignore_ascii_case("off") {
        return Ok(RateLimitArg::Off);
    }
    Rate::parse(text).map(RateLimitArg::Rate)
}

/// A consumer's own rate limit as the listing shows it.
fn rate_limit_shown(rate: Option<Rate>) -> String {
    rate.map_or_else(|| "(STOREGATE_RATE_LIMITS)".to_owned(), |r| r.to_string())
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Access tokens, oldest first (ids, applications, users; never secrets).
    List {
        /// Only this customer's.
        #[arg(long)]
        customer_id: Option<u64>,
    },
    /// Revoke an access token by id (as listed).
    Revoke { id: i64 },
}

/// A consumer's profile as the listing shows it.
fn profile_shown(profile: Option<Profile>) -> &'static str {
    profile.map_or("(the gateway's)", Profile::as_str)
}

fn credential(name: &str, value: Option<String>) -> Result<String, String> {
    match value {
        None => Ok(random_hex32()),
        Some(value)
            if !value.is_empty()
                && value.len() <= 255
                && value.bytes().all(|b| b.is_ascii_graphic()) =>
        {
            Ok(value)
        }
        Some(_) => Err(format!(
            "--{name}: expected 1 to 255 printable ASCII characters without spaces"
        )),
    }
}

/// A callback URL as given on the command line: any scheme, refused (saying why) without
/// one, with userinfo or with a fragment ([`callback::registrable`]).
fn url(name: &str, value: Option<String>) -> Result<Option<String>, String> {
    match value {
        None => Ok(None),
        Some(value) => callback::registrable(value.trim())
            .map(|()| Some(value.trim().to_owned()))
            .map_err(|why| format!("--{name}: {value:?} cannot be a callback: {why}")),
    }
}

/// `--profile` of `add`.
fn profile_arg(text: &str) -> Result<Profile, String> {
    Profile::parse(text)
        .filter(|_| !text.trim().is_empty())
        .ok_or_else(|| format!("--profile: expected spec or original, not {text:?}"))
}

/// Runs a command; what it prints on success. The store's calls are asynchronous: a
/// small runtime of its own runs them (the CLI has no other).
pub fn run(config: &Config, command: OAuthCommand) -> Result<String, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime.block_on(run_async(config, command))
}

async fn run_async(config: &Config, command: OAuthCommand) -> Result<String, String> {
    let store = oauth_provider::open_store(config).map_err(|e| e.to_string())?;
    let place = store.describe();
    let failed = |e: oauth_provider::store::StoreError| e.to_string();
    match command {
        OAuthCommand::Consumer(ConsumerCommand::Add {
            name,
            key,
            secret,
            callback,
            rejected_callback,
            profile,
            rate_limit,
        }) => {
            if name.trim().is_empty() {
                return Err("--name: expected a name".into());
            }
            let profile = profile.as_deref().map(profile_arg).transpose()?;
            let key = credential("key", key)?;
            if store.consumer_by_key(&key).await.map_err(failed)?.is_some() {
                return Err(format!("a consumer with key {key} already exists"));
            }
            let consumer = store
                .upsert_consumer(&NewConsumer {
                    name: name.trim().to_owned(),
                    key,
                    secret: credential("secret", secret)?,
                    callback_url: url("callback", callback)?,
                    rejected_callback_url: url("rejected-callback", rejected_callback)?,
                    profile,
                })
                .await
                .map_err(failed)?;
            let rate = rate_limit.and_then(RateLimitArg::rate);
            if rate.is_some() {
                store
                    .set_consumer_rate_limit(&consumer.key, rate)
                    .await
                    .map_err(failed)?;
            }
            Ok(format!(
                "consumer {:?} registered in {place}\nkey:    {}\nsecret: {}\nprofile: {}\nrate limit: {}\n(the secret is not shown again)",
                consumer.name,
                consumer.key,
                consumer.secret,
                profile_shown(consumer.profile),
                rate_limit_shown(rate)
            ))
        }
        OAuthCommand::Consumer(ConsumerCommand::Update {
            key,
            name,
            callback,
            rejected_callback,
            profile,
            rate_limit,
        }) => {
            let Some(current) = store.consumer_by_key(&key).await.map_err(failed)? else {
                return Err(format!("no consumer with key {key} in {place}"));
            };
            // `''` removes a callback; anything else must be one.
            let changed = |name: &str, value: Option<String>, was: Option<String>| match value {
                None => Ok(was),
                Some(value) if value.trim().is_empty() => Ok(None),
                Some(value) => url(name, Some(value)),
            };
            let name = match name {
                Some(name) if name.trim().is_empty() => {
                    return Err("--name: expected a name".into());
                }
                Some(name) => name.trim().to_owned(),
                None => current.name,
            };
            let profile = match profile.as_deref() {
                None => current.profile,
                Some("gateway") => None,
                Some(text) => Some(profile_arg(text)?),
            };
            let consumer = store
                .upsert_consumer(&NewConsumer {
                    name,
                    key: current.key,
                    secret: current.secret,
                    callback_url: changed("callback", callback, current.callback_url)?,
                    rejected_callback_url: changed(
                        "rejected-callback",
                        rejected_callback,
                        current.rejected_callback_url,
                    )?,
                    profile,
                })
                .await
                .map_err(failed)?;
            let mut rate = consumer.rate_limit;
            if let Some(rate_limit) = rate_limit {
                rate = rate_limit.rate();
                store
                    .set_consumer_rate_limit(&consumer.key, rate)
                    .await
                    .map_err(failed)?;
            }
            // A consumer changed: gateways sharing Redis read their consumers again at once.
            let announced = announce(config, &oauth_provider::verified::Forget::All).await;
            Ok(format!(
                "consumer {:?} updated in {place}{announced}\nkey:      {}\ncallback: {}\nrejected: {}\nprofile:  {}\nrate limit: {}",
                consumer.name,
                consumer.key,
                consumer
                    .callback_url
                    .as_deref()
                    .unwrap_or("(none: any http(s) callback)"),
                consumer
                    .rejected_callback_url
                    .as_deref()
                    .unwrap_or("(none)"),
                profile_shown(consumer.profile),
                rate_limit_shown(rate)
            ))
        }
        OAuthCommand::Consumer(ConsumerCommand::List) => {
            let consumers = store.consumers().await.map_err(failed)?;
            let mut out = format!("{} consumer(s) in {place}", consumers.len());
            for consumer in consumers {
                out.push_str(&format!(
                    "\n{}\t{}\t{}\t{}\t{}",
                    consumer.key,
                    consumer.name,
                    consumer.callback_url.as_deref().unwrap_or("-"),
                    profile_shown(consumer.profile),
                    rate_limit_shown(consumer.rate_limit)
                ));
            }
            Ok(out)
        }
        OAuthCommand::Token(TokenCommand::List { customer_id }) => {
            let mut out = String::new();
            let mut count = 0;
            // Page by page: a store may hold many.
            loop {
                let page = store
                    .list_access_tokens(customer_id, 1000, count)
                    .await
                    .map_err(failed)?;
                for token in &page {
                    let user = match token.owner {
                        Owner::Admin => "admin".to_owned(),
                        Owner::Customer(id) => format!("customer {id}"),
                    };
                    out.push_str(&format!(
                        "\n{}\t{}\t{}\t{}{}",
                        token.id,
                        token.consumer_key,
                        token.consumer_name,
                        user,
                        if token.revoked { "\trevoked" } else { "" }
                    ));
                }
                count += page.len() as u64;
                if page.len() < 1000 {
                    break;
                }
            }
            Ok(format!("{count} access token(s) in {place}{out}"))
        }
        OAuthCommand::Token(TokenCommand::Revoke { id }) => {
            if !store.revoke_token(id).await.map_err(failed)? {
                return Err(format!("no access token {id} in {place}"));
            }
            // Gateways sharing Redis drop what they verified at once; without Redis they
            // read it again within a second.
            let announced =
                announce(config, &oauth_provider::verified::Forget::Tokens(vec![id])).await;
            Ok(format!("access token {id} revoked in {place}{announced}"))
        }
        OAuthCommand::Migrate { to } => {
            let location = oauth_provider::database::Location::parse(&to)
                .map_err(|why| format!("--to: expected {why}"))?;
            let destination: std::sync::Arc<dyn TokenStore> = match location {
                oauth_provider::database::Location::Sqlite(path) if path.as_os_str().is_empty() => {
                    return Err("--to: expected sqlite://PATH with a path".into());
                }
                oauth_provider::database::Location::Sqlite(path) => {
                    std::sync::Arc::new(oauth_provider::sqlite::EmbeddedStore(std::sync::Arc::new(
                        oauth_provider::sqlite::SqliteStore::open_file(&path).map_err(failed)?,
                    )))
                }
                location @ oauth_provider::database::Location::MySql(_) => {
                    let oauth_provider::database::Location::MySql(url) = &location else {
                        unreachable!()
                    };
                    std::sync::Arc::new(
                        oauth_provider::mysql::MySqlStore::connect(url, location.describe())
                            .map_err(failed)?,
                    )
                }
            };
            if destination.describe() == place {
                return Err(format!("--to names the configured store itself ({place})"));
            }
            migrate(&*store, &*destination).await
        }
        OAuthCommand::Import { consumers, tokens } => {
            let read = |path: &PathBuf| {
                std::fs::read_to_string(path)
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))
            };
            let consumers_table =
                Table::parse(&consumers.display().to_string(), &read(&consumers)?)
                    .map_err(|e| e.to_string())?;
            let tokens_table = match &tokens {
                Some(path) => Some(
                    Table::parse(&path.display().to_string(), &read(path)?)
                        .map_err(|e| e.to_string())?,
                ),
                None => None,
            };
            let summary = import::import(&*store, &consumers_table, tokens_table.as_ref())
                .await
                .map_err(|e| e.to_string())?;
            keep_store_sessions(&*store, &summary.customer_credentials).await?;
            Ok(format!("{summary} (into {place})"))
        }
    }
}

/// Tells gateways sharing Redis to drop what they verified (a revocation, a changed rate
/// limit) at once; without Redis they read it again within a second. What to add to the
/// command's output.
async fn announce(config: &Config, forget: &oauth_provider::verified::Forget) -> String {
    let Some(url) = &config.redis_url else {
        return String::new();
    };
    match crate::shared_state::announce_oauth_forget(url.expose(), config.redis_timeout, forget)
        .await
    {
        Ok(()) => " (announced to the gateways through Redis)".to_owned(),
        Err(error) => format!(
            " (not announced through Redis: {error}; gateways see it within {} s)",
            oauth_provider::verified::SHARED_FRESH.as_secs()
        ),
    }
}

/// The store issued the customers' imported tokens: each is also kept as that customer's
/// session with the store, so that a store rendering for each customer (OpenMage) shows
/// them their group's prices from their first call (`backend::port::StoreSession`).
async fn keep_store_sessions(
    store: &dyn TokenStore,
    credentials: &[import::CustomerCredentials],
) -> Result<(), String> {
    for c in credentials {
        let session = StoreSession {
            customer_id: c.customer_id,
            consumer: Some((c.consumer_key.clone(), c.consumer_secret.clone())),
            token: c.token.clone(),
            secret: c.secret.clone(),
        };
        store
            .put_store_session(c.customer_id, &session.to_text())
            .await
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Copies consumers (updated where the key exists) and live access tokens (kept where the
/// token exists); revoked tokens stay behind, they would refuse anyway.
async fn migrate(from: &dyn TokenStore, to: &dyn TokenStore) -> Result<String, String> {
    let export = from.export().await.map_err(|e| e.to_string())?;
    let mut ids = std::collections::HashMap::new();
    for consumer in &export.consumers {
        let copied = to
            .upsert_consumer(&NewConsumer {
                name: consumer.name.clone(),
                key: consumer.key.clone(),
                secret: consumer.secret.clone(),
                callback_url: consumer.callback_url.clone(),
                rejected_callback_url: consumer.rejected_callback_url.clone(),
                profile: consumer.profile,
            })
            .await
            .map_err(|e| e.to_string())?;
        if consumer.rate_limit.is_some() {
            to.set_consumer_rate_limit(&consumer.key, consumer.rate_limit)
                .await
                .map_err(|e| e.to_string())?;
        }
        ids.insert(consumer.id, copied.id);
    }
    let (mut copied, mut present, mut revoked) = (0, 0, 0);
    for token in &export.access_tokens {
        let (Some(&consumer_id), Some(owner)) = (ids.get(&token.consumer_id), token.owner) else {
            continue;
        };
        if token.revoked || token.kind != Kind::Access {
            revoked += 1;
            continue;
        }
        let inserted = to
            .import_access_token(&ImportedToken {
                consumer_id,
                token: token.token.clone(),
                secret: token.secret.clone(),
                owner,
            })
            .await
            .map_err(|e| e.to_string())?;
        if inserted {
            copied += 1;
        } else {
            present += 1;
        }
    }
    Ok(format!(
        "copied {} consumer(s) and {copied} access token(s) from {} into {}; {present} token(s) \
         were there already, {revoked} revoked one(s) left behind",
        export.consumers.len(),
        from.describe(),
        to.describe()
    ))
}
