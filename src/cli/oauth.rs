//! `storegate oauth ...`: consumers and the original's tables, on the token store in
//! `STOREGATE_DATA_DIR`. Safe while gateways run on the same folder: they read through to
//! the database on every request, so a change counts at once.

use std::path::PathBuf;

use clap::Subcommand;

use crate::auth::oauth::import::{self, Table};
use crate::auth::oauth::store::{NewConsumer, SqliteStore, TokenStore, random_hex32};
use crate::config::Config;

#[derive(Debug, Subcommand)]
pub enum OAuthCommand {
    /// Manage OAuth consumers (the applications).
    #[command(subcommand)]
    Consumer(ConsumerCommand),
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
        /// The application's callback URL, as the original's consumer form had it (kept for
        /// the operator's reference; the dance uses the `oauth_callback` the app sends).
        #[arg(long, value_name = "URL")]
        callback: Option<String>,
        /// Where users who reject the app are sent.
        #[arg(long, value_name = "URL")]
        rejected_callback: Option<String>,
    },
    /// List the registered applications (names, keys and callbacks; never secrets).
    List,
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

fn url(name: &str, value: Option<String>) -> Result<Option<String>, String> {
    match value {
        None => Ok(None),
        Some(value) => match reqwest::Url::parse(&value) {
            Ok(parsed) if matches!(parsed.scheme(), "http" | "https") => Ok(Some(value)),
            _ => Err(format!("--{name}: expected an http:// or https:// URL")),
        },
    }
}

/// Runs a command; what it prints on success.
pub fn run(config: &Config, command: OAuthCommand) -> Result<String, String> {
    let store = SqliteStore::open(&config.data_dir).map_err(|e| e.to_string())?;
    match command {
        OAuthCommand::Consumer(ConsumerCommand::Add {
            name,
            key,
            secret,
            callback,
            rejected_callback,
        }) => {
            if name.trim().is_empty() {
                return Err("--name: expected a name".into());
            }
            let key = credential("key", key)?;
            if store
                .consumer_by_key(&key)
                .map_err(|e| e.to_string())?
                .is_some()
            {
                return Err(format!("a consumer with key {key} already exists"));
            }
            let consumer = store
                .upsert_consumer(&NewConsumer {
                    name: name.trim().to_owned(),
                    key,
                    secret: credential("secret", secret)?,
                    callback_url: url("callback", callback)?,
                    rejected_callback_url: url("rejected-callback", rejected_callback)?,
                })
                .map_err(|e| e.to_string())?;
            Ok(format!(
                "consumer {:?} registered in {}\nkey:    {}\nsecret: {}\n(the secret is not shown again)",
                consumer.name,
                store.path().display(),
                consumer.key,
                consumer.secret
            ))
        }
        OAuthCommand::Consumer(ConsumerCommand::List) => {
            let consumers = store.consumers().map_err(|e| e.to_string())?;
            let mut out = format!(
                "{} consumer(s) in {}",
                consumers.len(),
                store.path().display()
            );
            for consumer in consumers {
                out.push_str(&format!(
                    "\n{}\t{}\t{}",
                    consumer.key,
                    consumer.name,
                    consumer.callback_url.as_deref().unwrap_or("-")
                ));
            }
            Ok(out)
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
            let summary = import::import(&store, &consumers_table, tokens_table.as_ref())
                .map_err(|e| e.to_string())?;
            Ok(format!("{summary} (into {})", store.path().display()))
        }
    }
}
