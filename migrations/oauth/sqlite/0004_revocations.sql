-- Customer-token revocations, kept where the OAuth tokens are (issue 32): a deleted
-- customer's Bearer tokens (`sg1...`, signed, never stored) are refused by a "revoked at"
-- mark per customer, which Redis carries between running instances. Kept here too, an
-- instance started after Redis lost its data still refuses them. A mark refuses the tokens
-- issued at or before `revoked_at_ms`; it is pruned once every token it could match has
-- expired.
CREATE TABLE IF NOT EXISTS customer_revocation (
    customer_id INTEGER PRIMARY KEY,
    revoked_at_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS customer_revocation_at ON customer_revocation(revoked_at_ms);
