-- Sign-ins of the web page (memfs serve's /ui/), kept in the database so
-- that every memfs serve on it knows them (several behind one address).
-- token_hash is the SHA-256 (hex) of the sign-in's cookie: the cookie
-- itself is not kept. csrf is the form token its pages carry. Times are
-- nanoseconds; idle and old sign-ins are deleted by the servers.
CREATE TABLE ui_sessions (
	token_hash   TEXT    PRIMARY KEY,
	key_id       TEXT    NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
	csrf         TEXT    NOT NULL,
	created_at   INTEGER NOT NULL,
	last_seen_at INTEGER NOT NULL
);
CREATE INDEX ui_sessions_key ON ui_sessions (key_id, created_at);
CREATE INDEX ui_sessions_last_seen ON ui_sessions (last_seen_at);
