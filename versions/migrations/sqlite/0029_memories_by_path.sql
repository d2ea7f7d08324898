-- A memory's row is one entry of one b-tree, keyed by its store and path
-- (WITHOUT ROWID), so that a save or a deletion writes one page of it:
-- the rowid table before had two unique indexes beside it (by id, by
-- store and path), which a deletion wrote as well, and a create also
-- wrote the sqlite_sequence row of its AUTOINCREMENT inode number.
--
-- A memory is found by id through its latest version (versions_memory),
-- whose path is the memory's while the memory lives: a head is never
-- redacted, and every version the engine appends moves the row with it.
--
-- A new memory's inode number is the seq of the version that created it
-- (an imported one's, its head's): unique in the database, and never
-- handed out again, since a store's next version takes the number after
-- its newest, and its newest is never removed (pruning keeps each
-- memory's newest version; a deleted store's row number is not reused).
-- The rows that exist keep their numbers, all below the first store's
-- versions' (2^40).
DROP TRIGGER versions_head;
DROP TRIGGER versions_moved;
DROP TRIGGER versions_gone;

CREATE TABLE memories_by_path (
	ino        INTEGER NOT NULL,
	id         TEXT    NOT NULL,
	store      INTEGER NOT NULL REFERENCES stores (seq) ON DELETE CASCADE,
	path       TEXT    NOT NULL,
	head       INTEGER NOT NULL,
	version_id TEXT    NOT NULL,
	sha        TEXT    NOT NULL,
	size       INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (store, path)
) WITHOUT ROWID;
INSERT INTO memories_by_path (ino, id, store, path, head, version_id, sha, size, created_at, updated_at)
	SELECT ino, id, store, path, head, version_id, sha, size, created_at, updated_at FROM memories;
DROP TABLE memories;
ALTER TABLE memories_by_path RENAME TO memories;

-- The triggers of 0023, finding the row by the version's path (a
-- rename's by the path it leaves); the id makes sure of the memory.
CREATE TRIGGER versions_head AFTER INSERT ON versions
WHEN NEW.id IS NULL AND NEW.operation = 'modified' AND NEW.prev_path IS NULL BEGIN
	UPDATE memories SET head = NEW.seq, version_id = memfs_version_id(NEW.seq, NEW.created_at),
		sha = NEW.sha, size = NEW.size, updated_at = NEW.created_at
	WHERE store = NEW.store AND path = NEW.path AND id = NEW.memory_id;
END;
CREATE TRIGGER versions_moved AFTER INSERT ON versions
WHEN NEW.id IS NULL AND NEW.operation = 'modified' AND NEW.prev_path IS NOT NULL BEGIN
	UPDATE memories SET path = NEW.path, head = NEW.seq, version_id = memfs_version_id(NEW.seq, NEW.created_at),
		sha = NEW.sha, size = NEW.size, updated_at = NEW.created_at
	WHERE store = NEW.store AND path = NEW.prev_path AND id = NEW.memory_id;
END;
CREATE TRIGGER versions_gone AFTER INSERT ON versions
WHEN NEW.id IS NULL AND NEW.operation = 'deleted' BEGIN
	DELETE FROM memories WHERE store = NEW.store AND path = NEW.path AND id = NEW.memory_id;
END;
