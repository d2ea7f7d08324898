-- A key's scope: scoped keys reach only the stores listed for them in
-- api_key_stores (none when every one of them was deleted: scoped stays
-- set, so such a key reaches nothing rather than everything); read_only
-- keys change nothing.
ALTER TABLE api_keys ADD COLUMN scoped BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE api_keys ADD COLUMN read_only BOOLEAN NOT NULL DEFAULT FALSE;

CREATE TABLE api_key_stores (
	key_id   TEXT NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
	store_id TEXT NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
	PRIMARY KEY (key_id, store_id)
);
CREATE INDEX api_key_stores_store ON api_key_stores (store_id);
