-- A consumer's own rate limit (`N/Ws`, as `storegate oauth consumer update --rate-limit`
-- takes it); NULL: STOREGATE_RATE_LIMITS's `consumer=` applies.
ALTER TABLE oauth_consumer ADD COLUMN rate_limit TEXT;
