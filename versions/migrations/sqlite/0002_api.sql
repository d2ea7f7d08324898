-- What the HTTP API records of a session: agent (JSON, as its creator gave
-- it) and environment_id are kept, not interpreted. updated_at is null
-- until the session first changes.
ALTER TABLE sessions ADD COLUMN agent TEXT;
ALTER TABLE sessions ADD COLUMN environment_id TEXT;
ALTER TABLE sessions ADD COLUMN title TEXT;
ALTER TABLE sessions ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
ALTER TABLE sessions ADD COLUMN updated_at INTEGER;
ALTER TABLE sessions ADD COLUMN archived_at INTEGER;

-- API keys are kept only as the SHA-256 of the key: the key itself is shown
-- once, when it is made. hint is enough of it for a person to tell keys
-- apart.
CREATE TABLE api_keys (
	id         TEXT    PRIMARY KEY,
	name       TEXT    NOT NULL,
	hash       TEXT    NOT NULL UNIQUE,
	hint       TEXT    NOT NULL,
	created_at INTEGER NOT NULL,
	revoked_at INTEGER
);
