-- A version's id encodes its row number (see versionID), so a save writes
-- no entry of an index on ids: new versions store no id, and the ids the
-- versions before this kept (and imported ones) are found by a partial
-- index of the rows that have one.
--
-- A rename references its content rather than copying it: content_of is
-- the row of the version that holds the content (content is then null),
-- always one that holds it itself. Pruning or redacting that version
-- first copies the content into the versions referencing it.
--
-- SQLite cannot drop a UNIQUE constraint: the table is rebuilt, its rows
-- and row numbers kept, and its indexes made again, those of later
-- migrations too when a database applied them first (they make theirs
-- only if they do not exist).
CREATE TABLE versions_new (
	seq           INTEGER PRIMARY KEY,
	id            TEXT,
	store         INTEGER NOT NULL,
	memory_id     TEXT    NOT NULL,
	operation     TEXT    NOT NULL,
	created_at    INTEGER NOT NULL,
	actor_type    TEXT,
	actor_id      TEXT,
	conflict      INTEGER NOT NULL DEFAULT 0,
	redacted_at   INTEGER,
	redactor_type TEXT,
	redactor_id   TEXT,
	origin        INTEGER,
	prev_path     TEXT,
	path          TEXT,
	sha           TEXT,
	size          INTEGER,
	restored_from TEXT,
	hist          INTEGER,
	live          INTEGER,
	content_of    INTEGER,
	content       TEXT
);
INSERT INTO versions_new (seq, id, store, memory_id, operation, created_at, actor_type, actor_id, conflict,
		redacted_at, redactor_type, redactor_id, origin, prev_path, path, sha, size, restored_from, hist, live, content)
	SELECT seq, id, store, memory_id, operation, created_at, actor_type, actor_id, conflict,
		redacted_at, redactor_type, redactor_id, origin, prev_path, path, sha, size, restored_from, hist, live, content
	FROM versions;
DROP TABLE versions;
ALTER TABLE versions_new RENAME TO versions;
CREATE INDEX versions_memory ON versions (memory_id, seq);
CREATE INDEX versions_actor ON versions (actor_id, seq);
CREATE UNIQUE INDEX versions_id ON versions (id) WHERE id IS NOT NULL;
CREATE INDEX IF NOT EXISTS versions_path ON versions (store, path, seq);
CREATE INDEX IF NOT EXISTS versions_redacted ON versions (store, seq) WHERE redacted_at IS NOT NULL;
