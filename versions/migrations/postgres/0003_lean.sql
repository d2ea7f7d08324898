-- The lean save path, as migrations/sqlite/0003_lean.sql: a version's seq
-- is its store's row number times 2^40 plus its place in that store, the
-- versions table is the change feed of memories (with the path a version
-- was renamed from and the handle that wrote it), the (store, seq) index
-- and the foreign key whose cascade needed it are gone, and the memory and
-- actor indexes lose their store prefix.
ALTER TABLE versions ADD COLUMN origin BIGINT, ADD COLUMN prev_path TEXT COLLATE "C";
ALTER TABLE versions DROP CONSTRAINT versions_store_fkey;
DROP INDEX versions_store;
DROP INDEX versions_memory;
DROP INDEX versions_actor;

CREATE TEMP TABLE seqmap ON COMMIT DROP AS
	SELECT seq AS old, (store << 40) + row_number() OVER (PARTITION BY store ORDER BY seq) AS new
	FROM versions;
-- New numbers are all above 2^40, old ones below: no collision midway.
UPDATE versions v SET seq = m.new FROM seqmap m WHERE m.old = v.seq;
UPDATE memories SET head = m.new FROM seqmap m WHERE m.old = memories.head;

CREATE INDEX versions_memory ON versions (memory_id, seq);
CREATE INDEX versions_actor ON versions (actor_id, seq);

DELETE FROM changes;
CREATE INDEX changes_store ON changes (store, seq);
