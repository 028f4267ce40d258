//! Where OAuth consumers and tokens live: one interface ([`TokenStore`]) and its embedded
//! SQLite implementation ([`SqliteStore`]).
//!
//! Why SQLite: tokens must survive a restart and be written by the CLI while a gateway runs;
//! SQLite gives both with transactions, a file the operator can back up and inspect, and
//! no server to run. Every request reads through to the file (an indexed lookup, a few
//! microseconds), so a consumer added or a token revoked by `storegate oauth ...` or by
//! another process sharing the folder counts at the next request, with no cache to go
//! stale. WAL mode lets the CLI write while gateways read. A store shared by several
//! machines implements the same trait.
//!
//! Secrets are stored as they are: HMAC verification needs the plain consumer and token
//! secrets, exactly as the original's `oauth_consumer` / `oauth_token` tables held them.
//! The database file is created readable by its owner only.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, params};

#[derive(Debug, thiserror::Error)]
#[error("token store: {0}")]
pub struct StoreError(pub String);

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        StoreError(error.to_string())
    }
}

/// Who an access token speaks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    Admin,
    Customer(u64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Request,
    Access,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Consumer {
    pub id: i64,
    pub name: String,
    pub key: String,
    pub secret: String,
    pub callback_url: Option<String>,
    pub rejected_callback_url: Option<String>,
}

/// A consumer to register.
#[derive(Debug, Clone)]
pub struct NewConsumer {
    pub name: String,
    pub key: String,
    pub secret: String,
    pub callback_url: Option<String>,
    pub rejected_callback_url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub id: i64,
    pub consumer_id: i64,
    pub kind: Kind,
    pub token: String,
    pub secret: String,
    pub verifier: Option<String>,
    pub callback_url: Option<String>,
    pub owner: Option<Owner>,
    pub authorized: bool,
    pub revoked: bool,
    /// Unix seconds.
    pub created_at: i64,
}

/// An access token as the Admin's listing shows it: never the token's secret.
#[derive(Debug, Clone)]
pub struct AccessTokenInfo {
    pub id: i64,
    pub consumer_key: String,
    pub consumer_name: String,
    pub owner: Owner,
    pub revoked: bool,
    pub created_at: i64,
}

/// An access token carried over from the original's `oauth_token` table.
#[derive(Debug, Clone)]
pub struct ImportedToken {
    pub consumer_id: i64,
    pub token: String,
    pub secret: String,
    pub owner: Owner,
}

/// The token store's interface. Synchronous: the embedded implementation answers in
/// microseconds; a networked one would run its calls on a blocking pool behind it.
pub trait TokenStore: Send + Sync + std::fmt::Debug {
    fn consumer_by_key(&self, key: &str) -> Result<Option<Consumer>, StoreError>;
    fn consumer_by_id(&self, id: i64) -> Result<Option<Consumer>, StoreError>;
    fn consumers(&self) -> Result<Vec<Consumer>, StoreError>;
    /// Registers a consumer; a consumer with the same key is updated (import is rerunnable).
    fn upsert_consumer(&self, consumer: &NewConsumer) -> Result<Consumer, StoreError>;
    fn token(&self, token: &str) -> Result<Option<Token>, StoreError>;
    /// A new request token (initiate).
    fn create_request_token(&self, consumer_id: i64, callback: &str) -> Result<Token, StoreError>;
    /// Marks an unauthorized request token authorized by `owner`; its verifier, or None when
    /// the token is unknown, already authorized or not a request token.
    fn authorize_request_token(
        &self,
        token: &str,
        owner: Owner,
    ) -> Result<Option<String>, StoreError>;
    /// Removes a request token (rejected by the user).
    fn delete_request_token(&self, token: &str) -> Result<(), StoreError>;
    /// Swaps an authorized request token for an access token, in one transaction: the
    /// request token is used up, and the owner's earlier access tokens for this consumer are
    /// replaced (as the original did).
    fn exchange(&self, request: &Token) -> Result<Token, StoreError>;
    /// Carries over an access token; false when that token already exists.
    fn import_access_token(&self, token: &ImportedToken) -> Result<bool, StoreError>;
    /// Access tokens, oldest first: `limit` of them after skipping `offset`.
    fn list_access_tokens(
        &self,
        customer_id: Option<u64>,
        limit: u32,
        offset: u64,
    ) -> Result<Vec<AccessTokenInfo>, StoreError>;
    /// Revokes one access token by id; false when there is none.
    fn revoke_token(&self, id: i64) -> Result<bool, StoreError>;
    /// Revokes every token of a customer (deleted customer); how many.
    fn revoke_customer(&self, customer_id: u64) -> Result<usize, StoreError>;
}

/// 32 lower-case hex characters: the original's length for keys, secrets, tokens and
/// verifiers.
pub fn random_hex32() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random generator");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Request tokens not exchanged within this time are gone (the original kept them forever).
pub const REQUEST_TOKEN_LIFETIME: Duration = Duration::from_secs(3600);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS oauth_consumer (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    key TEXT NOT NULL UNIQUE,
    secret TEXT NOT NULL,
    callback_url TEXT,
    rejected_callback_url TEXT,
    created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS oauth_token (
    id INTEGER PRIMARY KEY,
    consumer_id INTEGER NOT NULL REFERENCES oauth_consumer(id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('request', 'access')),
    token TEXT NOT NULL UNIQUE,
    secret TEXT NOT NULL,
    verifier TEXT,
    callback_url TEXT,
    admin INTEGER NOT NULL DEFAULT 0,
    customer_id INTEGER,
    authorized INTEGER NOT NULL DEFAULT 0,
    revoked INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS oauth_token_customer ON oauth_token(customer_id);
CREATE TABLE IF NOT EXISTS oauth_nonce (
    key TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS oauth_nonce_expiry ON oauth_nonce(expires_at);
";

/// How long a connection waits for another one's lock before it fails.
const BUSY_WAIT: Duration = Duration::from_secs(5);

/// The file's settings and tables, on every open (each step is a no-op once done).
fn setup(connection: &Connection) -> Result<(), rusqlite::Error> {
    // WAL: readers never wait for the CLI's writes, nor the CLI for theirs. Read first:
    // asking for WAL again takes a lock even when the file already is.
    let mode: String = connection.pragma_query_value(None, "journal_mode", |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        connection.pragma_update(None, "journal_mode", "WAL")?;
    }
    connection.pragma_update(None, "synchronous", "NORMAL")?;
    connection.pragma_update(None, "foreign_keys", "ON")?;
    connection.execute_batch(SCHEMA)
}

fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// The embedded store: one SQLite file, `oauth.sqlite3` in the data folder.
#[derive(Debug)]
pub struct SqliteStore {
    path: PathBuf,
    connection: Mutex<Connection>,
}

impl SqliteStore {
    /// Opens (creating the folder and the file on first use) the store in `dir`.
    pub fn open(dir: &Path) -> Result<SqliteStore, StoreError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| StoreError(format!("cannot create {}: {e}", dir.display())))?;
        let path = dir.join("oauth.sqlite3");
        let connection = Connection::open(&path)
            .map_err(|e| StoreError(format!("cannot open {}: {e}", path.display())))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600));
        }
        connection.busy_timeout(BUSY_WAIT)?;
        // Instances and the CLI share the folder, and may start together. Some of what the
        // setup does (switching a new file to WAL, creating the tables) gets SQLITE_BUSY at
        // once, without the busy handler's wait, when another connection is at it too: so
        // the setup is tried again for as long as the busy handler would have waited.
        let give_up = std::time::Instant::now() + BUSY_WAIT;
        loop {
            match setup(&connection) {
                Ok(()) => break,
                Err(error) if is_busy(&error) && std::time::Instant::now() < give_up => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(error) => return Err(error.into()),
            }
        }
        Ok(SqliteStore {
            path,
            connection: Mutex::new(connection),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn with<T>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, rusqlite::Error>,
    ) -> Result<T, StoreError> {
        // A panic while holding the lock leaves SQLite consistent (transactions roll back
        // on drop), so a poisoned lock is still usable.
        let mut connection = self
            .connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        work(&mut connection).map_err(StoreError::from)
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
}

const TOKEN_COLUMNS: &str = "id, consumer_id, kind, token, secret, verifier, callback_url, admin, customer_id, authorized, revoked, created_at";

fn token_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Token> {
    let admin: bool = row.get(7)?;
    let customer: Option<i64> = row.get(8)?;
    let owner = match (admin, customer) {
        (true, _) => Some(Owner::Admin),
        (false, Some(id)) => Some(Owner::Customer(id as u64)),
        _ => None,
    };
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
    })
}

const CONSUMER_COLUMNS: &str = "id, name, key, secret, callback_url, rejected_callback_url";

fn owner_columns(owner: Owner) -> (bool, Option<i64>) {
    match owner {
        Owner::Admin => (true, None),
        Owner::Customer(id) => (false, Some(id as i64)),
    }
}

impl TokenStore for SqliteStore {
    fn consumer_by_key(&self, key: &str) -> Result<Option<Consumer>, StoreError> {
        self.with(|c| {
            c.query_row(
                &format!("SELECT {CONSUMER_COLUMNS} FROM oauth_consumer WHERE key = ?1"),
                [key],
                consumer_row,
            )
            .optional()
        })
    }

    fn consumer_by_id(&self, id: i64) -> Result<Option<Consumer>, StoreError> {
        self.with(|c| {
            c.query_row(
                &format!("SELECT {CONSUMER_COLUMNS} FROM oauth_consumer WHERE id = ?1"),
                [id],
                consumer_row,
            )
            .optional()
        })
    }

    fn consumers(&self) -> Result<Vec<Consumer>, StoreError> {
        self.with(|c| {
            let mut statement = c.prepare(&format!(
                "SELECT {CONSUMER_COLUMNS} FROM oauth_consumer ORDER BY id"
            ))?;
            let rows = statement.query_map([], consumer_row)?;
            rows.collect()
        })
    }

    fn upsert_consumer(&self, consumer: &NewConsumer) -> Result<Consumer, StoreError> {
        self.with(|c| {
            c.query_row(
                &format!(
                    "INSERT INTO oauth_consumer
                         (name, key, secret, callback_url, rejected_callback_url, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT(key) DO UPDATE SET name = excluded.name,
                         secret = excluded.secret, callback_url = excluded.callback_url,
                         rejected_callback_url = excluded.rejected_callback_url
                     RETURNING {CONSUMER_COLUMNS}"
                ),
                params![
                    consumer.name,
                    consumer.key,
                    consumer.secret,
                    consumer.callback_url,
                    consumer.rejected_callback_url,
                    now_secs()
                ],
                consumer_row,
            )
        })
    }

    fn token(&self, token: &str) -> Result<Option<Token>, StoreError> {
        self.with(|c| {
            c.query_row(
                &format!("SELECT {TOKEN_COLUMNS} FROM oauth_token WHERE token = ?1"),
                [token],
                token_row,
            )
            .optional()
        })
    }

    fn create_request_token(&self, consumer_id: i64, callback: &str) -> Result<Token, StoreError> {
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

    fn authorize_request_token(
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

    fn delete_request_token(&self, token: &str) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute(
                "DELETE FROM oauth_token WHERE token = ?1 AND kind = 'request'",
                [token],
            )
            .map(drop)
        })
    }

    fn exchange(&self, request: &Token) -> Result<Token, StoreError> {
        let owner = request
            .owner
            .ok_or_else(|| StoreError("request token has no owner".into()))?;
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
            tx.execute(
                "DELETE FROM oauth_token WHERE kind = 'access' AND consumer_id = ?1
                 AND admin = ?2 AND customer_id IS ?3",
                params![request.consumer_id, admin, customer],
            )?;
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
            Ok(token)
        })
    }

    fn import_access_token(&self, token: &ImportedToken) -> Result<bool, StoreError> {
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

    fn list_access_tokens(
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

    fn revoke_token(&self, id: i64) -> Result<bool, StoreError> {
        self.with(|c| {
            c.execute(
                "UPDATE oauth_token SET revoked = 1 WHERE id = ?1 AND kind = 'access'",
                [id],
            )
            .map(|n| n == 1)
        })
    }

    fn revoke_customer(&self, customer_id: u64) -> Result<usize, StoreError> {
        self.with(|c| {
            let tx = c.transaction()?;
            let access = tx.execute(
                "UPDATE oauth_token SET revoked = 1 WHERE customer_id = ?1 AND kind = 'access'",
                [customer_id as i64],
            )?;
            tx.execute(
                "DELETE FROM oauth_token WHERE customer_id = ?1 AND kind = 'request'",
                [customer_id as i64],
            )?;
            tx.commit()?;
            Ok(access)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gateways_opening_one_folder_at_once_all_get_the_store() {
        // Instances (and the CLI) share the data folder; at their first start they create
        // the file and switch it to WAL together.
        let dir = std::env::temp_dir().join(format!("storegate-store-{}", random_hex32()));
        let openers: Vec<_> = (0..16)
            .map(|_| {
                let dir = dir.clone();
                std::thread::spawn(move || SqliteStore::open(&dir).map(|_| ()))
            })
            .collect();
        for opener in openers {
            opener.join().unwrap().unwrap();
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn store() -> (SqliteStore, PathBuf) {
        let dir = std::env::temp_dir().join(format!("storegate-store-{}", random_hex32()));
        (SqliteStore::open(&dir).unwrap(), dir)
    }

    fn consumer(store: &SqliteStore) -> Consumer {
        store
            .upsert_consumer(&NewConsumer {
                name: "app".into(),
                key: random_hex32(),
                secret: random_hex32(),
                callback_url: Some("http://app.example/cb".into()),
                rejected_callback_url: None,
            })
            .unwrap()
    }

    #[test]
    fn the_dance_replaces_earlier_access_tokens() {
        let (store, dir) = store();
        let consumer = consumer(&store);
        let mut first = None;
        for _ in 0..2 {
            let request = store.create_request_token(consumer.id, "oob").unwrap();
            let verifier = store
                .authorize_request_token(&request.token, Owner::Customer(5))
                .unwrap()
                .unwrap();
            assert_eq!(
                store
                    .authorize_request_token(&request.token, Owner::Admin)
                    .unwrap(),
                None,
                "a request token is authorized once"
            );
            let request = store.token(&request.token).unwrap().unwrap();
            assert_eq!(request.verifier.as_deref(), Some(verifier.as_str()));
            let access = store.exchange(&request).unwrap();
            assert!(store.exchange(&request).is_err(), "used up");
            assert!(store.token(&request.token).unwrap().is_none());
            assert_eq!(access.owner, Some(Owner::Customer(5)));
            if let Some(first) = first.replace(access.token.clone()) {
                assert!(store.token(&first).unwrap().is_none(), "replaced");
            }
        }
        assert_eq!(store.list_access_tokens(Some(5), 10, 0).unwrap().len(), 1);
        assert!(store.list_access_tokens(Some(5), 10, 1).unwrap().is_empty());
        assert_eq!(store.revoke_customer(5).unwrap(), 1);
        let token = store.token(first.as_deref().unwrap()).unwrap().unwrap();
        assert!(token.revoked);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn nonces_are_claimed_once_until_they_expire() {
        let (store, dir) = store();
        assert!(store.claim("k|n", Duration::from_secs(60)).unwrap());
        assert!(!store.claim("k|n", Duration::from_secs(60)).unwrap());
        assert!(store.claim("k|other", Duration::from_secs(60)).unwrap());
        assert!(store.claim("k|gone", Duration::ZERO).unwrap());
        assert!(store.claim("k|gone", Duration::ZERO).unwrap(), "expired");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
