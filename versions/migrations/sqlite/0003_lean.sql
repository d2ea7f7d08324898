-- The lean save path. A save changes one version row and one memory row;
-- everything else it wrote is gone:
--
-- * The change feed of memories is the versions table itself: a version's
--   seq is its store's row number times 2^40 plus its place in that store
--   (so a store's versions are one range of the table's rowid, ordered by
--   commit), it names the path it was saved at, and the path it was renamed
--   from, and the handle that wrote it (origin). The changes table keeps
--   only what no version records: directories, and the store itself.
-- * The index on (store, seq) is gone: a store's versions are a rowid
--   range. With it goes the foreign key to stores, whose cascade needed
--   it; a store's versions are deleted with it by the engine.
-- * The memory and actor indexes lose their store prefix: memory and
--   session ids are unique in the database, and the rowid range bounds
--   them to a store.
--
-- Existing versions are renumbered in their order, and heads with them.
CREATE TEMP TABLE seqmap AS
	SELECT seq AS old, (store << 40) + row_number() OVER (PARTITION BY store ORDER BY seq) AS new
	FROM versions;

CREATE TABLE versions_lean (
	seq           INTEGER PRIMARY KEY,
	id            TEXT    NOT NULL UNIQUE,
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
	content       TEXT
);

INSERT INTO versions_lean (seq, id, store, memory_id, operation, created_at, actor_type, actor_id,
		conflict, redacted_at, redactor_type, redactor_id, path, sha, size, content)
	SELECT m.new, v.id, v.store, v.memory_id, v.operation, v.created_at, v.actor_type, v.actor_id,
		v.conflict, v.redacted_at, v.redactor_type, v.redactor_id, v.path, v.sha, v.size, v.content
	FROM versions v JOIN seqmap m ON m.old = v.seq;

UPDATE memories SET head = (SELECT new FROM seqmap WHERE old = memories.head);

DROP TABLE versions;
ALTER TABLE versions_lean RENAME TO versions;
CREATE INDEX versions_memory ON versions (memory_id, seq);
CREATE INDEX versions_actor ON versions (actor_id, seq);
DROP TABLE seqmap;

-- Feed positions of the old numbering mean nothing now.
DELETE FROM changes;
CREATE INDEX changes_store ON changes (store, seq);
