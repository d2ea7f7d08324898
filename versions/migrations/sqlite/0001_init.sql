-- Stores are referenced by their integer seq inside the database so the big
-- indexes (memories, versions) stay small; the text id is for callers.
CREATE TABLE stores (
	seq              INTEGER PRIMARY KEY AUTOINCREMENT,
	id               TEXT    NOT NULL UNIQUE,
	name             TEXT    NOT NULL,
	description      TEXT    NOT NULL,
	metadata         TEXT    NOT NULL,
	max_memories     INTEGER NOT NULL,
	max_memory_bytes INTEGER NOT NULL,
	memory_count     INTEGER NOT NULL DEFAULT 0,
	created_at       INTEGER NOT NULL,
	updated_at       INTEGER NOT NULL,
	archived_at      INTEGER
);
CREATE INDEX stores_name ON stores (name);

-- content is the last column: a listing that does not select it never reads
-- the overflow pages a large memory spills into. seq is a plain rowid (not
-- AUTOINCREMENT, which costs a page write per save): versions are named by
-- their id, and seq only orders them.
CREATE TABLE versions (
	seq           INTEGER PRIMARY KEY,
	id            TEXT    NOT NULL UNIQUE,
	store         INTEGER NOT NULL REFERENCES stores (seq) ON DELETE CASCADE,
	memory_id     TEXT    NOT NULL,
	operation     TEXT    NOT NULL,
	created_at    INTEGER NOT NULL,
	actor_type    TEXT,
	actor_id      TEXT,
	conflict      INTEGER NOT NULL DEFAULT 0,
	redacted_at   INTEGER,
	redactor_type TEXT,
	redactor_id   TEXT,
	path          TEXT,
	sha           TEXT,
	size          INTEGER,
	content       TEXT
);
CREATE INDEX versions_store ON versions (store, seq);
CREATE INDEX versions_memory ON versions (store, memory_id, seq);
CREATE INDEX versions_actor ON versions (store, actor_id, seq);

-- ino is AUTOINCREMENT so a deleted memory's number is never handed out
-- again: it is the inode number a mount shows. The content lives once, in
-- the head version.
CREATE TABLE memories (
	ino        INTEGER PRIMARY KEY AUTOINCREMENT,
	id         TEXT    NOT NULL UNIQUE,
	store      INTEGER NOT NULL REFERENCES stores (seq) ON DELETE CASCADE,
	path       TEXT    NOT NULL,
	head       INTEGER NOT NULL,
	version_id TEXT    NOT NULL,
	sha        TEXT    NOT NULL,
	size       INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	UNIQUE (store, path)
);

-- Directories made explicitly (mkdir) or kept when a move emptied them.
CREATE TABLE dirs (
	store INTEGER NOT NULL REFERENCES stores (seq) ON DELETE CASCADE,
	path  TEXT    NOT NULL,
	PRIMARY KEY (store, path)
) WITHOUT ROWID;

CREATE TABLE sessions (
	seq        INTEGER PRIMARY KEY AUTOINCREMENT,
	id         TEXT    NOT NULL UNIQUE,
	created_at INTEGER NOT NULL,
	ended_at   INTEGER
);

-- Attachments keep the store id as text, not a reference: a session's record
-- outlives the deletion of a store it used.
CREATE TABLE attachments (
	session      INTEGER NOT NULL REFERENCES sessions (seq) ON DELETE CASCADE,
	pos          INTEGER NOT NULL,
	store_id     TEXT    NOT NULL,
	access       TEXT    NOT NULL,
	instructions TEXT,
	name         TEXT    NOT NULL,
	description  TEXT    NOT NULL,
	slug         TEXT    NOT NULL,
	PRIMARY KEY (session, pos)
) WITHOUT ROWID;

-- The change feed mounts poll (F10). store is the text id so that a deleted
-- store's last change still reaches its mounts. A poll reads the few rows
-- after a seq by rowid, so no index; the newest row is never trimmed, so
-- seq never goes back without AUTOINCREMENT.
CREATE TABLE changes (
	seq    INTEGER PRIMARY KEY,
	store  TEXT    NOT NULL,
	path   TEXT    NOT NULL,
	origin TEXT    NOT NULL,
	at     INTEGER NOT NULL
);
