//! The embedded OAuth store: one SQLite file (`oauth.sqlite3` in `STOREGATE_DATA_DIR`, or
//! `STOREGATE_DATABASE_URL=sqlite://PATH`).
//!
//! Why SQLite by default: tokens must survive a restart and be written by the CLI while a
//! gateway runs; SQLite gives both with transactions, a file the operator can back up and
//! inspect, and no server to run. WAL mode lets the CLI and other processes sharing the
//! folder write while gateways read.
//!
//! Why it is not on the serving threads: SQLite waits for another process's lock (an
//! operator's `sqlite3` session, a VACUUM, a slow disk) by sleeping in the calling thread,
//! up to [`BUSY_WAIT`]. On a Tokio worker that sleep stalled every connection the worker
//! served, cached reads and `/healthz` included. So [`EmbeddedStore`] runs each call on
//! the blocking pool, over a small pool of connections: a call waiting for the lock holds
//! one connection and one blocking thread, and every other request goes on.
//!
//! The schema is versioned ([`MIGRATIONS`], `migrations/oauth/sqlite/`), applied at open in
//! one immediate transaction, so processes opening the file together apply it once.
//! The file is created readable by its owner only.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::store::{
    AccessTokenInfo, Consumer, Exchanged, Export, ImportedToken, Kind, NewConsumer, Owner,
    REQUEST_TOKEN_LIFETIME, StoreError, StoreFuture, Token, TokenStore, now_secs, owner_columns,
    owner_from, random_hex32, rate_limit_column,
};

/// The schema's versions, oldest first: (version, description, SQL).
pub const MIGRATIONS: &[(i64, &str, &str)] = &[
    (
        1,
        "consumers, tokens, nonces",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/migrations/oauth/sqlite/0001_tables.sql"
        )),
    ),
    (
        2,
        "consumer profiles",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/migrations/oauth/sqlite/0002_consumer_profile.sql"
        )),
    ),
    (
        3,
        "customers' store sessions",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/migrations/oauth/sqlite/0003_store_sessions.sql"
        )),
    ),
    (
        4,
        "customer-token revocations",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/migrations/oauth/sqlite/0004_revocations.sql"
        )),
    ),
    (
        5,
        "consumers' own rate limits",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/migrations/oauth/sqlite/0005_consumer_rate_limit.sql"
        )),
    ),
];

/// How long a connection waits for another one's lock before it fails.
pub const BUSY_WAIT: Duration = Duration::from_secs(5);

/// Idle connections kept for the next calls; more are closed after use.
const IDLE_CONNECTIONS: usize = 8;

/// The settings every connection needs (the journal mode is the file's, set once).
fn connect(path: &Path) -> Result<Connection, rusqlite::Error> {
    let connection = Connection::open(path)?;
    connection.busy_timeout(BUSY_WAIT)?;
    connection.pragma_update(None, "synchronous", "NORMAL")?;
    connection.pragma_update(None, "foreign_keys", "ON")?;
    Ok(connection)
}

/// The file's journal mode and schema, on every open (each step is a no-op once done).
fn setup(connection: &mut Connection) -> Result<(), rusqlite::Error> {
    // WAL: readers never wait for the CLI's writes, nor the CLI for theirs. Read first:
    // asking for WAL again takes a lock even when the file already is.
    let mode: String = connection.pragma_query_value(None, "journal_mode", |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        connection.pragma_update(None, "journal_mode", "WAL")?;
    }
    connection.execute_batch(
        "CREATE TABLE IF NOT EXISTS storegate_oauth_migrations (
             version INTEGER PRIMARY KEY,
             description TEXT NOT NULL,
             applied_at INTEGER NOT NULL
         )",
    )?;
    let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Every version not applied yet, not only those above the newest: versions made on
    // branches side by side may land in either order.
    let done: Vec<i64> = tx
        .prepare("SELECT version FROM storegate_oauth_migrations")?
        .query_map([], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    for (version, description, sql) in MIGRATIONS {
        if !done.contains(version) {
            tx.execute_batch(sql)?;
            tx.execute(
                "INSERT INTO storegate_oauth_migrations (version, description, applied_at)
                 VALUES (?1, ?2, ?3)",
                params![version, description, now_secs()],
            )?;
        }
    }
    tx.commit()
}

fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// The embedded store's file and its idle connections. Its calls are synchronous; the
/// gateway reaches them through [`EmbeddedStore`].
#[derive(Debug)]
pub struct SqliteStore {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

impl SqliteStore {
    /// Opens (creating the folder and the file on first use) the store in `dir`.
    pub fn open(dir: &Path) -> Result<SqliteStore, StoreError> {
        SqliteStore::open_file(&dir.join(super::database::SQLITE_FILE))
    }

    /// Opens (creating its folder and itself on first use) the store file `path`.
    pub fn open_file(path: &Path) -> Result<SqliteStore, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| StoreError::down(format!("cannot create {}: {e}", dir.display())))?;
        }
        let mut connection = connect(path)
            .map_err(|e| StoreError::down(format!("cannot open {}: {e}", path.display())))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
        }
        // Instances and the CLI share the folder, and may start together. Some of what the
        // setup does (switching a new file to WAL, creating the tables) gets SQLITE_BUSY at
        // once, without the busy handler's wait, when another connection is at it too: so
        // the setup is tried again for as long as the busy handler would have waited.
        let give_up = std::time::Instant::now() + BUSY_WAIT;
        loop {
            match setup(&mut connection) {
                Ok(()) => break,
                Err(error) if is_busy(&error) && std::time::Instant::now() < give_up => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(error) => return Err(error.into()),
            }
        }
        let newest: i64 = connection
            .query_row(
                "SELECT COALESCE(MAX(version), 0) FROM storegate_oauth_migrations",
                [],
                |row| row.get(0),
            )
            .map_err(StoreError::from)?;
        let known = MIGRATIONS.last().map_or(0, |m| m.0);
        if newest > known {
            return Err(StoreError::down(format!(
                "{} has schema version {newest}, newer than this build's {known}: \
                 run the newer storegate",
                path.display()
            )));
        }
        Ok(SqliteStore {
            path: path.to_owned(),
            idle: Mutex::new(vec![connection]),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `work` on an idle connection, or a new one when all are in use: a call
    /// waiting for a lock does not hold up the others.
    fn with<T>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, rusqlite::Error>,
    ) -> Result<T, StoreError> {
        // A panic while holding the lock leaves the list consistent, so a poisoned lock
        // is still usable.
        let taken = self
            .idle
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .pop();
        let mut connection = match taken {
            Some(connection) => connection,
            None => connect(&self.path).map_err(|e| {
                StoreError::from(e).at(&format!("cannot open {}", self.path.display()))
            })?,
        };
        let result = work(&mut connection);
        let mut idle = self
            .idle
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if idle.len() < IDLE_CONNECTIONS {
            idle.push(connection);
        }
        result.map_err(StoreError::from)
    }

    /// Claims `key` until `ttl` from now; false when it is already claimed and not expired.
    pub fn claim(&self, key: &str, ttl: Duration) -> Result<bool, StoreError> {
        let now = now_secs();
        self.with(|c| {
            let inserted = c.execute(
                "INSERT INTO oauth_nonce (key, expires_at) VALUES (?1, ?2)
                 ON CONFLICT(key) DO UPDATE SET expires_at = excluded.expires_at
                 WHERE oauth_nonce.expires_at <= ?3",
                params![key, now + ttl.as_secs() as i64, now],
            )?;
            // Expired nonces are dropped now and then, not on every call.
            if getrandom::u32().unwrap_or(1).is_multiple_of(256) {
                c.execute("DELETE FROM oauth_nonce WHERE expires_at <= ?1", [now])?;
            }
            Ok(inserted == 1)
        })
    }

    pub fn put_session(&self, customer_id: u64, session: &str) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute(
                "INSERT INTO store_session (customer_id, session, updated_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT(customer_id) DO UPDATE SET session = excluded.session,
                     updated_at = excluded.updated_at",
                params![customer_id as i64, session, now_secs()],
            )?;
            Ok(())
        })
    }

    pub fn session(&self, customer_id: u64) -> Result<Option<String>, StoreError> {
        self.with(|c| {
            c.query_row(
                "SELECT session FROM store_session WHERE customer_id = ?1",
                [customer_id as i64],
                |row| row.get(0),
            )
            .optional()
        })
    }

    /// Every consumer and live access token (for `storegate oauth migrate`).
    pub fn export(&self) -> Result<Export, StoreError> {
        let consumers = self.consumers()?;
        let access_tokens = self.with(|c| {
            let mut statement = c.prepare(&format!(
                "SELECT {TOKEN_COLUMNS} FROM oauth_token WHERE kind = 'access' ORDER BY id"
            ))?;
            let rows = statement.query_map([], token_row)?;
            rows.collect()
        })?;
        Ok(Export {
            consumers,
            access_tokens,
        })
    }
}

const TOKEN_COLUMNS: &str = "id, consumer_id, kind, token, secret, verifier, callback_url, admin, customer_id, authorized, revoked, created_at";

fn token_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Token> {
    let owner = owner_from(row.get(7)?, row.get(8)?);
    let kind: String = row.get(2)?;
    Ok(Token {
        id: row.get(0)?,
        consumer_id: row.get(1)?,
        kind: if kind == "access" {
            Kind::Access
        } else {
            Kind::Request
        },
        token: row.get(3)?,
        secret: row.get(4)?,
        verifier: row.get(5)?,
        callback_url: row.get(6)?,
        owner,
        authorized: row.get(9)?,
        revoked: row.get(10)?,
        created_at: row.get(11)?,
    })
}

fn consumer_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Consumer> {
    Ok(Consumer {
        id: row.get(0)?,
        name: row.get(1)?,
        key: row.get(2)?,
        secret: row.get(3)?,
        callback_url: row.get(4)?,
        rejected_callback_url: row.get(5)?,
        profile: row
            .get::<_, Option<String>>(6)?
            .as_deref()
            .and_then(crate::context::profile::Profile::parse),
        rate_limit: rate_limit_column(row.get::<_, Option<String>>(7)?),
    })
}

const CONSUMER_COLUMNS: &str =
    "id, name, key, secret, callback_url, rejected_callback_url, profile, rate_limit";

/// The calls, synchronous: [`EmbeddedStore`] runs them on the blocking pool; the CLI and
/// tests may call them directly.
impl SqliteStore {
    pub fn consumer_by_key(&self, key: &str) -> Result<Option<Consumer>, StoreError> {
        self.with(|c| {
            c.query_row(
                &format!("SELECT {CONSUMER_COLUMNS} FROM oauth_consumer WHERE key = ?1"),
                [key],
                consumer_row,
            )
            .optional()
        })
    }

    pub fn consumer_by_id(&self, id: i64) -> Result<Option<Consumer>, StoreError> {
        self.with(|c| {
            c.query_row(
                &format!("SELECT {CONSUMER_COLUMNS} FROM oauth_consumer WHERE id = ?1"),
                [id],
                consumer_row,
            )
            .optional()
        })
    }

    pub fn consumers(&self) -> Result<Vec<Consumer>, StoreError> {
        self.with(|c| {
            let mut statement = c.prepare(&format!(
                "SELECT {CONSUMER_COLUMNS} FROM oauth_consumer ORDER BY id"
            ))?;
            let rows = statement.query_map([], consumer_row)?;
            rows.collect()
        })
    }

    pub fn upsert_consumer(&self, consumer: &NewConsumer) -> Result<Consumer, StoreError> {
        self.with(|c| {
            c.query_row(
                &format!(
                    "INSERT INTO oauth_consumer
                         (name, key, secret, callback_url, rejected_callback_url, created_at,
                          profile)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                     ON CONFLICT(key) DO UPDATE SET name = excluded.name,
                         secret = excluded.secret, callback_url = excluded.callback_url,
                         rejected_callback_url = excluded.rejected_callback_url,
                         profile = excluded.profile
                     RETURNING {CONSUMER_COLUMNS}"
                ),
                params![
                    consumer.name,
                    consumer.key,
                    consumer.secret,
                    consumer.callback_url,
                    consumer.rejected_callback_url,
                    now_secs(),
                    consumer
                        .profile
                        .map(crate::context::profile::Profile::as_str)
                ],
                consumer_row,
            )
        })
    }

    /// Sets (None: removes) a consumer's own rate limit; false when the key is unknown.
    pub fn set_consumer_rate_limit(
        &self,
        key: &str,
        rate: Option<crate::config::Rate>,
    ) -> Result<bool, StoreError> {
        self.with(|c| {
            c.execute(
                "UPDATE oauth_consumer SET rate_limit = ?1 WHERE key = ?2",
                params![rate.map(|r| r.to_string()), key],
            )
            .map(|changed| changed > 0)
        })
    }

    pub fn token(&self, token: &str) -> Result<Option<Token>, StoreError> {
        self.with(|c| {
            c.query_row(
                &format!("SELECT {TOKEN_COLUMNS} FROM oauth_token WHERE token = ?1"),
                [token],
                token_row,
            )
            .optional()
        })
    }

    pub fn create_request_token(
        &self,
        consumer_id: i64,
        callback: &str,
    ) -> Result<Token, StoreError> {
        let now = now_secs();
        self.with(|c| {
            // Unused request tokens past their lifetime go when new ones come.
            c.execute(
                "DELETE FROM oauth_token WHERE kind = 'request' AND created_at < ?1",
                [now - REQUEST_TOKEN_LIFETIME.as_secs() as i64],
            )?;
            c.query_row(
                &format!(
                    "INSERT INTO oauth_token (consumer_id, kind, token, secret, callback_url, created_at)
                     VALUES (?1, 'request', ?2, ?3, ?4, ?5) RETURNING {TOKEN_COLUMNS}"
                ),
                params![consumer_id, random_hex32(), random_hex32(), callback, now],
                token_row,
            )
        })
    }

    pub fn authorize_request_token(
        &self,
        token: &str,
        owner: Owner,
    ) -> Result<Option<String>, StoreError> {
        let verifier = random_hex32();
        let (admin, customer) = owner_columns(owner);
        let changed = self.with(|c| {
            c.execute(
                "UPDATE oauth_token SET authorized = 1, verifier = ?1, admin = ?2, customer_id = ?3
                 WHERE token = ?4 AND kind = 'request' AND authorized = 0 AND created_at >= ?5",
                params![
                    verifier,
                    admin,
                    customer,
                    token,
                    now_secs() - REQUEST_TOKEN_LIFETIME.as_secs() as i64
                ],
            )
        })?;
        Ok((changed == 1).then_some(verifier))
    }

    pub fn delete_request_token(&self, token: &str) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute(
                "DELETE FROM oauth_token WHERE token = ?1 AND kind = 'request'",
                [token],
            )
            .map(drop)
        })
    }

    pub fn exchange(&self, request: &Token) -> Result<Exchanged, StoreError> {
        let owner = request
            .owner
            .ok_or_else(|| StoreError::answered("request token has no owner"))?;
        let (admin, customer) = owner_columns(owner);
        self.with(|c| {
            let tx = c.transaction()?;
            let used = tx.execute(
                "DELETE FROM oauth_token WHERE id = ?1 AND kind = 'request' AND authorized = 1",
                [request.id],
            )?;
            if used != 1 {
                // Exchanged by a concurrent call: the row is gone.
                return Err(rusqlite::Error::QueryReturnedNoRows);
            }
            let replaced = tx
                .prepare(
                    "DELETE FROM oauth_token WHERE kind = 'access' AND consumer_id = ?1
                     AND admin = ?2 AND customer_id IS ?3 RETURNING id",
                )?
                .query_map(params![request.consumer_id, admin, customer], |row| {
                    row.get(0)
                })?
                .collect::<Result<Vec<i64>, _>>()?;
            let token = tx.query_row(
                &format!(
                    "INSERT INTO oauth_token
                         (consumer_id, kind, token, secret, admin, customer_id, authorized, created_at)
                     VALUES (?1, 'access', ?2, ?3, ?4, ?5, 1, ?6) RETURNING {TOKEN_COLUMNS}"
                ),
                params![
                    request.consumer_id,
                    random_hex32(),
                    random_hex32(),
                    admin,
                    customer,
                    now_secs()
                ],
                token_row,
            )?;
            tx.commit()?;
            Ok(Exchanged {
                access: token,
                replaced,
            })
        })
    }

    pub fn import_access_token(&self, token: &ImportedToken) -> Result<bool, StoreError> {
        let (admin, customer) = owner_columns(token.owner);
        self.with(|c| {
            c.execute(
                "INSERT INTO oauth_token
                     (consumer_id, kind, token, secret, admin, customer_id, authorized, created_at)
                 VALUES (?1, 'access', ?2, ?3, ?4, ?5, 1, ?6)
                 ON CONFLICT(token) DO NOTHING",
                params![
                    token.consumer_id,
                    token.token,
                    token.secret,
                    admin,
                    customer,
                    now_secs()
                ],
            )
            .map(|n| n == 1)
        })
    }

    pub fn list_access_tokens(
        &self,
        customer_id: Option<u64>,
        limit: u32,
        offset: u64,
    ) -> Result<Vec<AccessTokenInfo>, StoreError> {
        self.with(|c| {
            let mut statement = c.prepare(
                "SELECT t.id, k.key, k.name, t.admin, t.customer_id, t.revoked, t.created_at
                 FROM oauth_token t JOIN oauth_consumer k ON k.id = t.consumer_id
                 WHERE t.kind = 'access' AND (?1 IS NULL OR t.customer_id = ?1)
                 ORDER BY t.id LIMIT ?2 OFFSET ?3",
            )?;
            let filter = customer_id.map(|id| id as i64);
            let offset = i64::try_from(offset).unwrap_or(i64::MAX);
            let rows = statement.query_map(params![filter, limit, offset], |row| {
                let admin: bool = row.get(3)?;
                let customer: Option<i64> = row.get(4)?;
                Ok(AccessTokenInfo {
                    id: row.get(0)?,
                    consumer_key: row.get(1)?,
                    consumer_name: row.get(2)?,
                    owner: match (admin, customer) {
                        (false, Some(id)) => Owner::Customer(id as u64),
                        _ => Owner::Admin,
                    },
                    revoked: row.get(5)?,
                    created_at: row.get(6)?,
                })
            })?;
            rows.collect()
        })
    }

    pub fn revoke_token(&self, id: i64) -> Result<bool, StoreError> {
        self.with(|c| {
            c.execute(
                "UPDATE oauth_token SET revoked = 1 WHERE id = ?1 AND kind = 'access'",
                [id],
            )
            .map(|n| n == 1)
        })
    }

    pub fn revoke_customer(&self, customer_id: u64, at_ms: u64) -> Result<usize, StoreError> {
        self.with(|c| {
            let tx = c.transaction()?;
            tx.execute(
                "INSERT INTO customer_revocation (customer_id, revoked_at_ms) VALUES (?1, ?2)
                 ON CONFLICT(customer_id) DO UPDATE
                 SET revoked_at_ms = MAX(revoked_at_ms, excluded.revoked_at_ms)",
                params![customer_id as i64, at_ms as i64],
            )?;
            let access = tx.execute(
                "UPDATE oauth_token SET revoked = 1 WHERE customer_id = ?1 AND kind = 'access'",
                [customer_id as i64],
            )?;
            tx.execute(
                "DELETE FROM oauth_token WHERE customer_id = ?1 AND kind = 'request'",
                [customer_id as i64],
            )?;
            tx.execute(
                "DELETE FROM store_session WHERE customer_id = ?1",
                [customer_id as i64],
            )?;
            tx.commit()?;
            Ok(access)
        })
    }

    /// The customer-token revocation marks made at or after `since_ms`.
    pub fn customer_revocations(&self, since_ms: u64) -> Result<Vec<(u64, u64)>, StoreError> {
        self.with(|c| {
            let mut statement = c.prepare(
                "SELECT customer_id, revoked_at_ms FROM customer_revocation
                 WHERE revoked_at_ms >= ?1",
            )?;
            let rows = statement.query_map([since_ms as i64], |row| {
                Ok((row.get::<_, i64>(0)? as u64, row.get::<_, i64>(1)? as u64))
            })?;
            rows.collect()
        })
    }

    /// Drops the marks older than `before_ms`; how many.
    pub fn prune_revocations(&self, before_ms: u64) -> Result<u64, StoreError> {
        self.with(|c| {
            c.execute(
                "DELETE FROM customer_revocation WHERE revoked_at_ms < ?1",
                [before_ms as i64],
            )
            .map(|n| n as u64)
        })
    }

    /// Reads each table a signed call needs, then takes the file's write lock and lets it
    /// go: another process holding it (an operator's `sqlite3`, a VACUUM) stops sign-ins
    /// and nonce claims though reads go on (WAL), and shows here as a slow store.
    pub fn probe(&self) -> Result<(), StoreError> {
        self.with(|c| {
            for table in PROBED_TABLES {
                c.query_row(
                    &format!("SELECT COUNT(*) FROM (SELECT 1 FROM {table} LIMIT 1)"),
                    [],
                    |_| Ok(()),
                )?;
            }
            c.execute_batch("BEGIN IMMEDIATE; ROLLBACK")
        })
    }
}

/// The tables a signed call reads or writes: what the probe reads.
const PROBED_TABLES: [&str; 4] = [
    "oauth_consumer",
    "oauth_token",
    "oauth_nonce",
    "customer_revocation",
];

/// The embedded store as the gateway calls it: each call on Tokio's blocking pool, so a
/// wait for SQLite's lock never sleeps on a serving thread.
#[derive(Debug, Clone)]
pub struct EmbeddedStore(pub Arc<SqliteStore>);

impl EmbeddedStore {
    fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&SqliteStore) -> Result<T, StoreError> + Send + 'static,
    ) -> StoreFuture<'static, T> {
        let store = self.0.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || work(&store))
                .await
                .map_err(|e| StoreError::down(format!("store call failed: {e}")))?
        })
    }
}

impl TokenStore for EmbeddedStore {
    fn describe(&self) -> String {
        format!("sqlite://{}", self.0.path().display())
    }

    fn ping(&self) -> StoreFuture<'_, ()> {
        self.run(|s| s.with(|c| c.query_row("SELECT 1", [], |_| Ok(()))))
    }

    fn probe(&self) -> StoreFuture<'_, ()> {
        self.run(|s| s.probe())
    }

    fn consumer_by_key<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<Consumer>> {
        let key = key.to_owned();
        self.run(move |s| s.consumer_by_key(&key))
    }

    fn consumer_by_id(&self, id: i64) -> StoreFuture<'_, Option<Consumer>> {
        self.run(move |s| s.consumer_by_id(id))
    }

    fn consumers(&self) -> StoreFuture<'_, Vec<Consumer>> {
        self.run(|s| s.consumers())
    }

    fn upsert_consumer<'a>(&'a self, consumer: &'a NewConsumer) -> StoreFuture<'a, Consumer> {
        let consumer = consumer.clone();
        self.run(move |s| s.upsert_consumer(&consumer))
    }

    fn token<'a>(&'a self, token: &'a str) -> StoreFuture<'a, Option<Token>> {
        let token = token.to_owned();
        self.run(move |s| s.token(&token))
    }

    fn set_consumer_rate_limit<'a>(
        &'a self,
        key: &'a str,
        rate: Option<crate::config::Rate>,
    ) -> StoreFuture<'a, bool> {
        let key = key.to_owned();
        self.run(move |s| s.set_consumer_rate_limit(&key, rate))
    }

    fn create_request_token<'a>(
        &'a self,
        consumer_id: i64,
        callback: &'a str,
    ) -> StoreFuture<'a, Token> {
        let callback = callback.to_owned();
        self.run(move |s| s.create_request_token(consumer_id, &callback))
    }

    fn authorize_request_token<'a>(
        &'a self,
        token: &'a str,
        owner: Owner,
    ) -> StoreFuture<'a, Option<String>> {
        let token = token.to_owned();
        self.run(move |s| s.authorize_request_token(&token, owner))
    }

    fn delete_request_token<'a>(&'a self, token: &'a str) -> StoreFuture<'a, ()> {
        let token = token.to_owned();
        self.run(move |s| s.delete_request_token(&token))
    }

    fn exchange<'a>(&'a self, request: &'a Token) -> StoreFuture<'a, Exchanged> {
        let request = request.clone();
        self.run(move |s| s.exchange(&request))
    }

    fn import_access_token<'a>(&'a self, token: &'a ImportedToken) -> StoreFuture<'a, bool> {
        let token = token.clone();
        self.run(move |s| s.import_access_token(&token))
    }

    fn list_access_tokens(
        &self,
        customer_id: Option<u64>,
        limit: u32,
        offset: u64,
    ) -> StoreFuture<'_, Vec<AccessTokenInfo>> {
        self.run(move |s| s.list_access_tokens(customer_id, limit, offset))
    }

    fn revoke_token(&self, id: i64) -> StoreFuture<'_, bool> {
        self.run(move |s| s.revoke_token(id))
    }

    fn revoke_customer(&self, customer_id: u64, at_ms: u64) -> StoreFuture<'_, usize> {
        self.run(move |s| s.revoke_customer(customer_id, at_ms))
    }

    fn customer_revocations(&self, since_ms: u64) -> StoreFuture<'_, Vec<(u64, u64)>> {
        self.run(move |s| s.customer_revocations(since_ms))
    }

    fn prune_revocations(&self, before_ms: u64) -> StoreFuture<'_, u64> {
        self.run(move |s| s.prune_revocations(before_ms))
    }

    fn claim_nonce<'a>(&'a self, key: &'a str, ttl: Duration) -> StoreFuture<'a, bool> {
        let key = key.to_owned();
        self.run(move |s| s.claim(&key, ttl))
    }

    fn export(&self) -> StoreFuture<'_, Export> {
        self.run(|s| s.export())
    }

    fn put_store_session<'a>(&'a self, customer_id: u64, session: &'a str) -> StoreFuture<'a, ()> {
        let session = session.to_owned();
        self.run(move |s| s.put_session(customer_id, &session))
    }

    fn store_session(&self, customer_id: u64) -> StoreFuture<'_, Option<String>> {
        self.run(move |s| s.session(customer_id))
    }
}

#[cfg(test)]
#[path = "sqlite_tests.rs"]
mod tests;
