-- OAuth consumers, tokens and nonces in a MariaDB / MySQL database shared by a fleet.
-- The same tables as the embedded store's (migrations/oauth/sqlite/0001_tables.sql), in
-- MySQL's dialect: `key` is a reserved word there, and keys and tokens are ASCII.
CREATE TABLE IF NOT EXISTS oauth_consumer (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    name VARCHAR(255) NOT NULL,
    `key` VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    secret VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    callback_url TEXT,
    rejected_callback_url TEXT,
    created_at BIGINT NOT NULL,
    UNIQUE KEY oauth_consumer_key (`key`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE IF NOT EXISTS oauth_token (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    consumer_id BIGINT NOT NULL,
    kind VARCHAR(8) CHARACTER SET ascii NOT NULL,
    token VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    secret VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    verifier VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin,
    callback_url TEXT,
    admin TINYINT NOT NULL DEFAULT 0,
    customer_id BIGINT,
    authorized TINYINT NOT NULL DEFAULT 0,
    revoked TINYINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    UNIQUE KEY oauth_token_token (token),
    KEY oauth_token_customer (customer_id),
    KEY oauth_token_owner (consumer_id, kind, admin, customer_id),
    CONSTRAINT oauth_token_consumer FOREIGN KEY (consumer_id)
        REFERENCES oauth_consumer (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
-- A nonce is the client's to choose (any length, any character): kept as the SHA-256 of
-- its claim key, so the primary key has one size.
CREATE TABLE IF NOT EXISTS oauth_nonce (
    digest CHAR(64) CHARACTER SET ascii NOT NULL PRIMARY KEY,
    expires_at BIGINT NOT NULL,
    KEY oauth_nonce_expiry (expires_at)
) ENGINE=InnoDB;
