-- A consumer's compatibility profile (spec, original); NULL: the gateway's own.
ALTER TABLE oauth_consumer ADD COLUMN profile VARCHAR(16) NULL;
