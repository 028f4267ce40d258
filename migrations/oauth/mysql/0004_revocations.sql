-- Customer-token revocations, kept where the OAuth tokens are (issue 32): a deleted
-- customer's Bearer tokens (`sg1...`, signed, never stored) are refused by a "revoked at"
-- mark per customer, which Redis carries between running instances. Kept here too, an
-- instance started after Redis lost its data still refuses them. A mark refuses the tokens
-- issued at or before `revoked_at_ms`; it is pruned once every token it could match has
-- expired.
CREATE TABLE IF NOT EXISTS customer_revocation (
    customer_id BIGINT NOT NULL PRIMARY KEY,
    revoked_at_ms BIGINT NOT NULL,
    KEY customer_revocation_at (revoked_at_ms)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
