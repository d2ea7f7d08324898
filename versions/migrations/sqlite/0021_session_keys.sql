-- Who may act as a session over HTTP (the memory tool's X-Memfs-Session):
-- a key made for that session (session), or a key of every store made to
-- act as any session (any_session). A session's version records the key it
-- came through (via_key).
ALTER TABLE api_keys ADD COLUMN session TEXT;
ALTER TABLE api_keys ADD COLUMN any_session INTEGER NOT NULL DEFAULT 0;
ALTER TABLE versions ADD COLUMN via_key TEXT;
-- Open sessions are counted per store when one is created.
CREATE INDEX attachments_store ON attachments (store_id);
