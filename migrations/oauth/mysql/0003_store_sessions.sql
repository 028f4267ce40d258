-- A customer's credentials with the store behind the gateway (an OpenMage access token), so
-- that the gateway can ask the store for what the store shows that customer: one per
-- customer, the latest sign-in's or import's. `session` is the back end's JSON.
CREATE TABLE IF NOT EXISTS store_session (
    customer_id BIGINT NOT NULL PRIMARY KEY,
    session TEXT NOT NULL,
    updated_at BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
