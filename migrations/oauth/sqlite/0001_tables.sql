-- OAuth consumers, tokens and nonces, as the embedded store has kept them since it began.
-- IF NOT EXISTS: a file made before versioned migrations already has these tables, and
-- adopts this version as it is.
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
