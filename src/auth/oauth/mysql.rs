//! The OAuth store shared by a fleet: a MariaDB or MySQL database
//! (`STOREGATE_DATABASE_URL=mysql://user:password@host:port/database`).
//!
//! Why MariaDB/MySQL: it is the engine a Magento shop already runs and backs up, so a fleet
//! of gateways needs no new kind of server to share its consumers, tokens and revocations.
//! Why sqlx: an asynchronous, pooled client maintained for years, with MySQL's wire protocol
//! in Rust (no C client library to build), rustls for TLS like the rest of the gateway.
//!
//! The pool connects lazily and reconnects by itself: a database down at start or later
//! fails the calls that need it (named "OAuth store: ..."), never the start or the
//! requests that do not. The schema is versioned ([`MIGRATIONS`],
//! `migrations/oauth/mysql/`) and applied by the first call that needs it, under a named
//! lock (`GET_LOCK`) so that instances starting together apply each version once.

use std::time::Duration;

use sha2::{Digest, Sha256};
use sqlx::Row;
use sqlx::mysql::{MySqlPool, MySqlPoolOptions, MySqlRow};
use tokio::sync::OnceCell;

use super::store::{
    AccessTokenInfo, Consumer, Exchanged, Export, ImportedToken, Kind, NewConsumer, Owner,
    REQUEST_TOKEN_LIFETIME, StoreError, StoreFuture, Token, TokenStore, now_secs, owner_columns,
    owner_from, random_hex32,
};

/// The schema's versions, oldest first: (version, description, SQL).
pub const MIGRATIONS: &[(i64, &str, &str)] = &[
    (
        1,
        "consumers, tokens, nonces",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/migrations/oauth/mysql/0001_tables.sql"
        )),
    ),
    (
        2,
        "consumer profiles",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/migrations/oauth/mysql/0002_consumer_profile.sql"
        )),
    ),
    (
        3,
        "customers' store sessions",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/migrations/oauth/mysql/0003_store_sessions.sql"
        )),
    ),
    (
        4,
        "customer-token revocations",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/migrations/oauth/mysql/0004_revocations.sql"
        )),
    ),
    (
        5,
        "consumers' own rate limits",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/migrations/oauth/mysql/0005_consumer_rate_limit.sql"
        )),
    ),
];

/// How long a call waits for a pooled connection (the database unreachable or saturated)
/// before it fails. Each call's own deadline (`STOREGATE_DATABASE_TIMEOUT_MS`, the guard's)
/// is shorter; this bounds the breaker's probe and the start's migration.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

const TOKEN_COLUMNS: &str = "id, consumer_id, kind, token, secret, verifier, callback_url, admin, customer_id, authorized, revoked, created_at";
const CONSUMER_COLUMNS: &str =
    "id, name, `key`, secret, callback_url, rejected_callback_url, profile, rate_limit";

#[derive(Debug)]
pub struct MySqlStore {
    pool: MySqlPool,
    /// `mysql://host:port/database`, for messages.
    place: String,
    /// The server's TCP address, for the probe's first question (None: a Unix socket).
    server: Option<(String, u16)>,
    schema: OnceCell<()>,
}

/// How long the probe's TCP connect may take before it counts as a server that does not
/// answer (slow), not one that refuses (down).
const CONNECT_CHECK: Duration = Duration::from_millis(200);

impl MySqlStore {
    /// The store at `url` (`mysql://...`); connects on first use.
    pub fn connect(url: &str, place: String) -> Result<MySqlStore, StoreError> {
        MySqlStore::connect_with_lock_wait(url, place, None)
    }

    /// As [`MySqlStore::connect`], each session's lock waits (a table locked by another
    /// session, a row held by another transaction) ending after `lock_wait` on the server
    /// too: a call the gateway stopped waiting for frees its connection soon after, instead
    /// of holding it until the lock goes (MariaDB waits a year by default).
    pub fn connect_with_lock_wait(
        url: &str,
        place: String,
        lock_wait: Option<Duration>,
    ) -> Result<MySqlStore, StoreError> {
        let mut options = MySqlPoolOptions::new()
            .max_connections(16)
            .min_connections(0)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .idle_timeout(Duration::from_secs(300));
        if let Some(wait) = lock_wait {
            // Whole seconds, at least one (the variables' unit and minimum).
            let seconds = wait.as_secs_f64().ceil().max(1.0) as u64;
            options = options.after_connect(move |connection, _| {
                Box::pin(async move {
                    use sqlx::Executor;
                    connection
                        .execute(
                            format!(
                                "SET SESSION lock_wait_timeout = {seconds}, \
                                 innodb_lock_wait_timeout = {seconds}"
                            )
                            .as_str(),
                        )
                        .await
                        .map(drop)
                })
            });
        }
        let server = url
            .parse::<sqlx::mysql::MySqlConnectOptions>()
            .ok()
            .filter(|o| o.get_socket().is_none())
            .map(|o| (o.get_host().to_owned(), o.get_port()));
        let pool = options
            .connect_lazy(url)
            .map_err(|e| StoreError::from(e).at(&place))?;
        Ok(MySqlStore {
            pool,
            place,
            server,
            schema: OnceCell::new(),
        })
    }

    fn fail(&self, error: sqlx::Error) -> StoreError {
        StoreError::from(error).at(&self.place)
    }

    /// Applies the versions the database does not have yet (once per process; retried by
    /// the next call after a failure).
    pub async fn ensure_schema(&self) -> Result<(), StoreError> {
        self.schema
            .get_or_try_init(|| async { self.migrate().await.map_err(|e| self.fail(e)) })
            .await
            .map(|_| ())
    }

    async fn migrate(&self) -> Result<(), sqlx::Error> {
        let mut connection = self.pool.acquire().await?;
        // One instance migrates at a time; the others wait, then find the work done.
        let locked: Option<i64> =
            sqlx::query_scalar("SELECT GET_LOCK('storegate_oauth_migrate', 60)")
                .fetch_one(&mut *connection)
                .await?;
        if locked != Some(1) {
            return Err(sqlx::Error::Protocol(
                "another instance held the migration lock for 60 s".into(),
            ));
        }
        let result = async {
            sqlx::query(
                "CREATE TABLE IF NOT EXISTS storegate_oauth_migrations (
                     version BIGINT NOT NULL PRIMARY KEY,
                     description VARCHAR(255) NOT NULL,
                     applied_at BIGINT NOT NULL
                 ) ENGINE=InnoDB",
            )
            .execute(&mut *connection)
            .await?;
            // Every version not applied yet, not only those above the newest: versions made
            // on branches side by side may land in either order.
            let applied: Vec<i64> = sqlx::query_scalar(
                "SELECT CAST(version AS SIGNED) FROM storegate_oauth_migrations",
            )
            .fetch_all(&mut *connection)
            .await?;
            let done = applied.iter().copied().max().unwrap_or(0);
            let known = MIGRATIONS.last().map_or(0, |m| m.0);
            if done > known {
                return Err(sqlx::Error::Protocol(format!(
                    "the database has schema version {done}, newer than this build's {known}: \
                     run the newer storegate"
                )));
            }
            for (version, description, sql) in MIGRATIONS {
                if applied.contains(version) {
                    continue;
                }
                // MySQL commits DDL as it goes: statements one by one, the version
                // recorded after the last (each is IF NOT EXISTS, so a retry is safe).
                for statement in statements(sql) {
                    sqlx::query(&statement).execute(&mut *connection).await?;
                }
                sqlx::query(
                    "INSERT INTO storegate_oauth_migrations (version, description, applied_at)
                     VALUES (?, ?, ?)",
                )
                .bind(version)
                .bind(description)
                .bind(now_secs())
                .execute(&mut *connection)
                .await?;
                tracing::info!(version, description, store = %self.place, "OAuth store migrated");
            }
            Ok(())
        }
        .await;
        let _ = sqlx::query("SELECT RELEASE_LOCK('storegate_oauth_migrate')")
            .execute(&mut *connection)
            .await;
        result
    }

    /// The pool, once the schema is there.
    async fn pool(&self) -> Result<&MySqlPool, StoreError> {
        self.ensure_schema().await?;
        Ok(&self.pool)
    }
}

/// A migration file's statements: split at `;` ending a line, comments dropped.
fn statements(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in sql.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("--") || trimmed.is_empty() {
            continue;
        }
        current.push_str(line);
        current.push('\n');
        if trimmed.ends_with(';') {
            out.push(current.trim().trim_end_matches(';').to_owned());
            current.clear();
        }
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_owned());
    }
    out
}

/// A text column. Keys, secrets and tokens are `ascii_bin` (compared byte for byte), which
/// the driver reports as binary: those are read as bytes.
fn text(row: &MySqlRow, column: &str) -> Result<String, sqlx::Error> {
    match row.try_get::<String, _>(column) {
        Ok(text) => Ok(text),
        Err(_) => {
            let bytes: Vec<u8> = row.try_get(column)?;
            String::from_utf8(bytes).map_err(|e| sqlx::Error::Decode(Box::new(e)))
        }
    }
}

fn optional_text(row: &MySqlRow, column: &str) -> Result<Option<String>, sqlx::Error> {
    match row.try_get::<Option<String>, _>(column) {
        Ok(text) => Ok(text),
        Err(_) => row
            .try_get::<Option<Vec<u8>>, _>(column)?
            .map(|bytes| String::from_utf8(bytes).map_err(|e| sqlx::Error::Decode(Box::new(e))))
            .transpose(),
    }
}

fn flag(row: &MySqlRow, column: &str) -> Result<bool, sqlx::Error> {
    Ok(row.try_get::<i8, _>(column)? != 0)
}

fn token_row(row: &MySqlRow) -> Result<Token, sqlx::Error> {
    let kind = text(row, "kind")?;
    Ok(Token {
        id: row.try_get("id")?,
        consumer_id: row.try_get("consumer_id")?,
        kind: if kind == "access" {
            Kind::Access
        } else {
            Kind::Request
        },
        token: text(row, "token")?,
        secret: text(row, "secret")?,
        verifier: optional_text(row, "verifier")?,
        callback_url: optional_text(row, "callback_url")?,
        owner: owner_from(flag(row, "admin")?, row.try_get("customer_id")?),
        authorized: flag(row, "authorized")?,
        revoked: flag(row, "revoked")?,
        created_at: row.try_get("created_at")?,
    })
}

fn consumer_row(row: &MySqlRow) -> Result<Consumer, sqlx::Error> {
    Ok(Consumer {
        id: row.try_get("id")?,
        name: text(row, "name")?,
        key: text(row, "key")?,
        secret: text(row, "secret")?,
        callback_url: optional_text(row, "callback_url")?,
        rejected_callback_url: optional_text(row, "rejected_callback_url")?,
        profile: optional_text(row, "profile")?
            .as_deref()
            .and_then(crate::context::profile::Profile::parse),
        rate_limit: super::store::rate_limit_column(optional_text(row, "rate_limit")?),
    })
}

/// The nonce table's key: fixed-size whatever the client's nonce.
fn nonce_digest(key: &str) -> String {
    Sha256::digest(key.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl MySqlStore {
    async fn token_by(&self, token: &str) -> Result<Option<Token>, StoreError> {
        let sql = format!("SELECT {TOKEN_COLUMNS} FROM oauth_token WHERE token = ?");
        self.one_row(&sql, token, token_row).await
    }

    async fn consumer_where(
        &self,
        condition: &str,
        value: impl for<'q> sqlx::Encode<'q, sqlx::MySql> + sqlx::Type<sqlx::MySql> + Send,
    ) -> Result<Option<Consumer>, StoreError> {
        let sql = format!("SELECT {CONSUMER_COLUMNS} FROM oauth_consumer WHERE {condition}");
        self.one_row(&sql, value, consumer_row).await
    }

    /// A transaction on a connection of the pool (given back when it ends).
    async fn begin(&self) -> Result<sqlx::Transaction<'static, sqlx::MySql>, StoreError> {
        self.pool().await?.begin().await.map_err(|e| self.fail(e))
    }

    /// The row `sql` (with one `?`, bound to `value`) finds, if any, read by `read`.
    async fn one_row<T>(
        &self,
        sql: &str,
        value: impl for<'q> sqlx::Encode<'q, sqlx::MySql> + sqlx::Type<sqlx::MySql> + Send,
        read: fn(&MySqlRow) -> Result<T, sqlx::Error>,
    ) -> Result<Option<T>, StoreError> {
        let row = sqlx::query(sql)
            .bind(value)
            .fetch_optional(self.pool().await?)
            .await
            .map_err(|e| self.fail(e))?;
        row.as_ref().map(read).transpose().map_err(|e| self.fail(e))
    }

    async fn do_exchange(&self, request: &Token) -> Result<Exchanged, StoreError> {
        let owner = request
            .owner
            .ok_or_else(|| StoreError::answered("request token has no owner"))?;
        let (admin, customer) = owner_columns(owner);
        let mut tx = self.begin().await?;
        let used = sqlx::query(
            "DELETE FROM oauth_token WHERE id = ? AND kind = 'request' AND authorized = 1",
        )
        .bind(request.id)
        .execute(&mut *tx)
        .await
        .map_err(|e| self.fail(e))?;
        if used.rows_affected() != 1 {
            return Err(StoreError::answered("the request token was used already"));
        }
        let replaced: Vec<i64> = sqlx::query_scalar(
            "SELECT id FROM oauth_token WHERE kind = 'access' AND consumer_id = ?
             AND admin = ? AND customer_id <=> ? FOR UPDATE",
        )
        .bind(request.consumer_id)
        .bind(admin)
        .bind(customer)
        .fetch_all(&mut *tx)
        .await
        .map_err(|e| self.fail(e))?;
        sqlx::query(
            "DELETE FROM oauth_token WHERE kind = 'access' AND consumer_id = ?
             AND admin = ? AND customer_id <=> ?",
        )
        .bind(request.consumer_id)
        .bind(admin)
        .bind(customer)
        .execute(&mut *tx)
        .await
        .map_err(|e| self.fail(e))?;
        let token = random_hex32();
        sqlx::query(
            "INSERT INTO oauth_token
                 (consumer_id, kind, token, secret, admin, customer_id, authorized, created_at)
             VALUES (?, 'access', ?, ?, ?, ?, 1, ?)",
        )
        .bind(request.consumer_id)
        .bind(&token)
        .bind(random_hex32())
        .bind(admin)
        .bind(customer)
        .bind(now_secs())
        .execute(&mut *tx)
        .await
        .map_err(|e| self.fail(e))?;
        let row = sqlx::query(&format!(
            "SELECT {TOKEN_COLUMNS} FROM oauth_token WHERE token = ?"
        ))
        .bind(&token)
        .fetch_one(&mut *tx)
        .await
        .map_err(|e| self.fail(e))?;
        let access = token_row(&row).map_err(|e| self.fail(e))?;
        tx.commit().await.map_err(|e| self.fail(e))?;
        Ok(Exchanged { access, replaced })
    }
}

impl TokenStore for MySqlStore {
    fn describe(&self) -> String {
        self.place.clone()
    }

    fn ping(&self) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            sqlx::query("SELECT 1")
                .execute(self.pool().await?)
                .await
                .map(drop)
                .map_err(|e| self.fail(e))
        })
    }

    fn reach(&self) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            // The pool retries a refused connection until its acquire timeout, which makes a
            // stopped server look like a slow one; the kernel of a hung server's host still
            // accepts the connection.
            if let Some((host, port)) = &self.server {
                let connect = tokio::net::TcpStream::connect((host.as_str(), *port));
                if let Ok(Err(error)) = tokio::time::timeout(CONNECT_CHECK, connect).await {
                    return Err(StoreError::down(format!("{}: {error}", self.place)));
                }
            }
            Ok(())
        })
    }

    fn probe(&self) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            self.reach().await?;
            // One statement reading each table a signed call needs: a table another
            // session locked (LOCK TABLES ... WRITE) makes it wait, as the calls would.
            sqlx::query(
                "SELECT (SELECT COUNT(*) FROM (SELECT 1 FROM oauth_consumer LIMIT 1) c)
                      + (SELECT COUNT(*) FROM (SELECT 1 FROM oauth_token LIMIT 1) t)
                      + (SELECT COUNT(*) FROM (SELECT 1 FROM oauth_nonce LIMIT 1) n)
                      + (SELECT COUNT(*) FROM (SELECT 1 FROM customer_revocation LIMIT 1) r)",
            )
            .execute(self.pool().await?)
            .await
            .map(drop)
            .map_err(|e| self.fail(e))
        })
    }

    fn consumer_by_key<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<Consumer>> {
        Box::pin(self.consumer_where("`key` = ?", key))
    }

    fn consumer_by_id(&self, id: i64) -> StoreFuture<'_, Option<Consumer>> {
        Box::pin(self.consumer_where("id = ?", id))
    }

    fn consumers(&self) -> StoreFuture<'_, Vec<Consumer>> {
        Box::pin(async move {
            let rows = sqlx::query(&format!(
                "SELECT {CONSUMER_COLUMNS} FROM oauth_consumer ORDER BY id"
            ))
            .fetch_all(self.pool().await?)
            .await
            .map_err(|e| self.fail(e))?;
            rows.iter()
                .map(consumer_row)
                .collect::<Result<_, _>>()
                .map_err(|e| self.fail(e))
        })
    }

    fn set_consumer_rate_limit<'a>(
        &'a self,
        key: &'a str,
        rate: Option<crate::config::Rate>,
    ) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            sqlx::query("UPDATE oauth_consumer SET rate_limit = ? WHERE `key` = ?")
                .bind(rate.map(|r| r.to_string()))
                .bind(key)
                .execute(self.pool().await?)
                .await
                .map_err(|e| self.fail(e))?;
            // MySQL counts rows changed, not matched: an unchanged limit is no proof of
            // an unknown key.
            Ok(self.consumer_where("`key` = ?", key).await?.is_some())
        })
    }

    fn upsert_consumer<'a>(&'a self, consumer: &'a NewConsumer) -> StoreFuture<'a, Consumer> {
        Box::pin(async move {
            sqlx::query(
                "INSERT INTO oauth_consumer
                     (name, `key`, secret, callback_url, rejected_callback_url, created_at,
                      profile)
                 VALUES (?, ?, ?, ?, ?, ?, ?)
                 ON DUPLICATE KEY UPDATE name = VALUES(name), secret = VALUES(secret),
                     callback_url = VALUES(callback_url),
                     rejected_callback_url = VALUES(rejected_callback_url),
                     profile = VALUES(profile)",
            )
            .bind(&consumer.name)
            .bind(&consumer.key)
            .bind(&consumer.secret)
            .bind(&consumer.callback_url)
            .bind(&consumer.rejected_callback_url)
            .bind(now_secs())
            .bind(
                consumer
                    .profile
                    .map(crate::context::profile::Profile::as_str),
            )
            .execute(self.pool().await?)
            .await
            .map_err(|e| self.fail(e))?;
            self.consumer_where("`key` = ?", consumer.key.as_str())
                .await?
                .ok_or_else(|| StoreError::answered("the consumer just written is not there"))
        })
    }

    fn token<'a>(&'a self, token: &'a str) -> StoreFuture<'a, Option<Token>> {
        Box::pin(self.token_by(token))
    }

    fn create_request_token<'a>(
        &'a self,
        consumer_id: i64,
        callback: &'a str,
    ) -> StoreFuture<'a, Token> {
        Box::pin(async move {
            let pool = self.pool().await?;
            let now = now_secs();
            // Unused request tokens past their lifetime go when new ones come.
            sqlx::query("DELETE FROM oauth_token WHERE kind = 'request' AND created_at < ?")
                .bind(now - REQUEST_TOKEN_LIFETIME.as_secs() as i64)
                .execute(pool)
                .await
                .map_err(|e| self.fail(e))?;
            let token = random_hex32();
            sqlx::query(
                "INSERT INTO oauth_token (consumer_id, kind, token, secret, callback_url, created_at)
                 VALUES (?, 'request', ?, ?, ?, ?)",
            )
            .bind(consumer_id)
            .bind(&token)
            .bind(random_hex32())
            .bind(callback)
            .bind(now)
            .execute(pool)
            .await
            .map_err(|e| self.fail(e))?;
            self.token_by(&token)
                .await?
                .ok_or_else(|| StoreError::answered("the request token just written is not there"))
        })
    }

    fn authorize_request_token<'a>(
        &'a self,
        token: &'a str,
        owner: Owner,
    ) -> StoreFuture<'a, Option<String>> {
        Box::pin(async move {
            let verifier = random_hex32();
            let (admin, customer) = owner_columns(owner);
            let changed = sqlx::query(
                "UPDATE oauth_token SET authorized = 1, verifier = ?, admin = ?, customer_id = ?
                 WHERE token = ? AND kind = 'request' AND authorized = 0 AND created_at >= ?",
            )
            .bind(&verifier)
            .bind(admin)
            .bind(customer)
            .bind(token)
            .bind(now_secs() - REQUEST_TOKEN_LIFETIME.as_secs() as i64)
            .execute(self.pool().await?)
            .await
            .map_err(|e| self.fail(e))?;
            Ok((changed.rows_affected() == 1).then_some(verifier))
        })
    }

    fn delete_request_token<'a>(&'a self, token: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            sqlx::query("DELETE FROM oauth_token WHERE token = ? AND kind = 'request'")
                .bind(token)
                .execute(self.pool().await?)
                .await
                .map(drop)
                .map_err(|e| self.fail(e))
        })
    }

    fn exchange<'a>(&'a self, request: &'a Token) -> StoreFuture<'a, Exchanged> {
        Box::pin(self.do_exchange(request))
    }

    fn import_access_token<'a>(&'a self, token: &'a ImportedToken) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let (admin, customer) = owner_columns(token.owner);
            let inserted = sqlx::query(
                "INSERT IGNORE INTO oauth_token
                     (consumer_id, kind, token, secret, admin, customer_id, authorized, created_at)
                 VALUES (?, 'access', ?, ?, ?, ?, 1, ?)",
            )
            .bind(token.consumer_id)
            .bind(&token.token)
            .bind(&token.secret)
            .bind(admin)
            .bind(customer)
            .bind(now_secs())
            .execute(self.pool().await?)
            .await
            .map_err(|e| self.fail(e))?;
            Ok(inserted.rows_affected() == 1)
        })
    }

    fn list_access_tokens(
        &self,
        customer_id: Option<u64>,
        limit: u32,
        offset: u64,
    ) -> StoreFuture<'_, Vec<AccessTokenInfo>> {
        Box::pin(async move {
            let filter = customer_id.map(|id| id as i64);
            let rows = sqlx::query(
                "SELECT t.id, k.`key`, k.name, t.admin, t.customer_id, t.revoked, t.created_at
                 FROM oauth_token t JOIN oauth_consumer k ON k.id = t.consumer_id
                 WHERE t.kind = 'access' AND (? IS NULL OR t.customer_id = ?)
                 ORDER BY t.id LIMIT ? OFFSET ?",
            )
            .bind(filter)
            .bind(filter)
            .bind(i64::from(limit))
            .bind(i64::try_from(offset).unwrap_or(i64::MAX))
            .fetch_all(self.pool().await?)
            .await
            .map_err(|e| self.fail(e))?;
            rows.iter()
                .map(|row| {
                    Ok(AccessTokenInfo {
                        id: row.try_get("id")?,
                        consumer_key: text(row, "key")?,
                        consumer_name: text(row, "name")?,
                        owner: owner_from(flag(row, "admin")?, row.try_get("customer_id")?)
                            .unwrap_or(Owner::Admin),
                        revoked: flag(row, "revoked")?,
                        created_at: row.try_get("created_at")?,
                    })
                })
                .collect::<Result<_, sqlx::Error>>()
                .map_err(|e| self.fail(e))
        })
    }

    fn revoke_token(&self, id: i64) -> StoreFuture<'_, bool> {
        Box::pin(async move {
            let changed =
                sqlx::query("UPDATE oauth_token SET revoked = 1 WHERE id = ? AND kind = 'access'")
                    .bind(id)
                    .execute(self.pool().await?)
                    .await
                    .map_err(|e| self.fail(e))?;
            // A token revoked already matches without changing: still there, still revoked.
            if changed.rows_affected() == 1 {
                return Ok(true);
            }
            let exists: Option<i64> =
                sqlx::query_scalar("SELECT id FROM oauth_token WHERE id = ? AND kind = 'access'")
                    .bind(id)
                    .fetch_optional(self.pool().await?)
                    .await
                    .map_err(|e| self.fail(e))?;
            Ok(exists.is_some())
        })
    }

    fn revoke_customer(&self, customer_id: u64, at_ms: u64) -> StoreFuture<'_, usize> {
        Box::pin(async move {
            let mut tx = self.begin().await?;
            sqlx::query(
                "INSERT INTO customer_revocation (customer_id, revoked_at_ms) VALUES (?, ?)
                 ON DUPLICATE KEY UPDATE
                 revoked_at_ms = GREATEST(revoked_at_ms, VALUES(revoked_at_ms))",
            )
            .bind(customer_id as i64)
            .bind(at_ms as i64)
            .execute(&mut *tx)
            .await
            .map_err(|e| self.fail(e))?;
            let access = sqlx::query(
                "UPDATE oauth_token SET revoked = 1 WHERE customer_id = ? AND kind = 'access'",
            )
            .bind(customer_id as i64)
            .execute(&mut *tx)
            .await
            .map_err(|e| self.fail(e))?;
            sqlx::query("DELETE FROM oauth_token WHERE customer_id = ? AND kind = 'request'")
                .bind(customer_id as i64)
                .execute(&mut *tx)
                .await
                .map_err(|e| self.fail(e))?;
            sqlx::query("DELETE FROM store_session WHERE customer_id = ?")
                .bind(customer_id as i64)
                .execute(&mut *tx)
                .await
                .map_err(|e| self.fail(e))?;
            tx.commit().await.map_err(|e| self.fail(e))?;
            Ok(access.rows_affected() as usize)
        })
    }

    fn customer_revocations(&self, since_ms: u64) -> StoreFuture<'_, Vec<(u64, u64)>> {
        Box::pin(async move {
            let rows: Vec<(i64, i64)> = sqlx::query_as(
                "SELECT customer_id, revoked_at_ms FROM customer_revocation
                 WHERE revoked_at_ms >= ?",
            )
            .bind(since_ms as i64)
            .fetch_all(self.pool().await?)
            .await
            .map_err(|e| self.fail(e))?;
            Ok(rows
                .into_iter()
                .map(|(customer, at)| (customer as u64, at as u64))
                .collect())
        })
    }

    fn prune_revocations(&self, before_ms: u64) -> StoreFuture<'_, u64> {
        Box::pin(async move {
            sqlx::query("DELETE FROM customer_revocation WHERE revoked_at_ms < ?")
                .bind(before_ms as i64)
                .execute(self.pool().await?)
                .await
                .map(|done| done.rows_affected())
                .map_err(|e| self.fail(e))
        })
    }

    fn put_store_session<'a>(&'a self, customer_id: u64, session: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let pool = self.pool().await?;
            sqlx::query(
                "INSERT INTO store_session (customer_id, session, updated_at) VALUES (?, ?, ?)
                 ON DUPLICATE KEY UPDATE session = VALUES(session), updated_at = VALUES(updated_at)",
            )
            .bind(customer_id as i64)
            .bind(session)
            .bind(now_secs())
            .execute(pool)
            .await
            .map_err(|e| self.fail(e))?;
            Ok(())
        })
    }

    fn store_session(&self, customer_id: u64) -> StoreFuture<'_, Option<String>> {
        Box::pin(async move {
            let pool = self.pool().await?;
            let row: Option<(String,)> =
                sqlx::query_as("SELECT session FROM store_session WHERE customer_id = ?")
                    .bind(customer_id as i64)
                    .fetch_optional(pool)
                    .await
                    .map_err(|e| self.fail(e))?;
            Ok(row.map(|(session,)| session))
        })
    }

    fn claim_nonce<'a>(&'a self, key: &'a str, ttl: Duration) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let pool = self.pool().await?;
            let now = now_secs();
            let digest = nonce_digest(key);
            // An expired claim gives way; then exactly one of the racing inserts wins.
            sqlx::query("DELETE FROM oauth_nonce WHERE digest = ? AND expires_at <= ?")
                .bind(&digest)
                .bind(now)
                .execute(pool)
                .await
                .map_err(|e| self.fail(e))?;
            let inserted =
                sqlx::query("INSERT IGNORE INTO oauth_nonce (digest, expires_at) VALUES (?, ?)")
                    .bind(&digest)
                    .bind(now + ttl.as_secs() as i64)
                    .execute(pool)
                    .await
                    .map_err(|e| self.fail(e))?;
            // Expired nonces are dropped now and then, not on every call.
            if getrandom::u32().unwrap_or(1).is_multiple_of(256) {
                let _ = sqlx::query("DELETE FROM oauth_nonce WHERE expires_at <= ? LIMIT 1000")
                    .bind(now)
                    .execute(pool)
                    .await;
            }
            Ok(inserted.rows_affected() == 1)
        })
    }

    fn export(&self) -> StoreFuture<'_, Export> {
        Box::pin(async move {
            let consumers = self.consumers().await?;
            let rows = sqlx::query(&format!(
                "SELECT {TOKEN_COLUMNS} FROM oauth_token WHERE kind = 'access' ORDER BY id"
            ))
            .fetch_all(self.pool().await?)
            .await
            .map_err(|e| self.fail(e))?;
            let access_tokens = rows
                .iter()
                .map(token_row)
                .collect::<Result<_, _>>()
                .map_err(|e| self.fail(e))?;
            Ok(Export {
                consumers,
                access_tokens,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migration_statements() {
        let parts = statements(MIGRATIONS[0].2);
        assert_eq!(parts.len(), 3, "{parts:?}");
        assert!(parts.iter().all(|p| p.starts_with("CREATE TABLE")));
        assert!(parts.iter().all(|p| !p.ends_with(';')));
        assert_eq!(nonce_digest("k").len(), 64);
    }
}
