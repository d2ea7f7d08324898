-- A save writes three pages: its version's row, its memory's entry in
-- versions_memory and its memory's row. Every other way into the versions
-- costs a page only when it gains an entry, not per save:
--
-- path_memories holds, for each path, the memories that have a version
-- there that names it (not redacted): a path's history is those memories'
-- versions at the path, read through versions_memory. It replaces the
-- versions_path index, which took an entry (and a page) per version.
CREATE TABLE path_memories (
	store     INTEGER NOT NULL,
	path      TEXT    NOT NULL,
	memory_id TEXT    NOT NULL,
	PRIMARY KEY (store, path, memory_id)
) WITHOUT ROWID;
INSERT OR IGNORE INTO path_memories (store, path, memory_id)
	SELECT store, path, memory_id FROM versions WHERE path IS NOT NULL;
DROP INDEX IF EXISTS versions_path;
-- actor_memories holds the memories each actor made a version of: an
-- actor's versions (a session's undo, a listing by actor) are those
-- memories' versions by that actor. An entry outlives the versions it
-- stood for (pruned, or their store deleted): it costs a look only.
CREATE TABLE actor_memories (
	actor_id  TEXT NOT NULL,
	memory_id TEXT NOT NULL,
	PRIMARY KEY (actor_id, memory_id)
) WITHOUT ROWID;
INSERT OR IGNORE INTO actor_memories (actor_id, memory_id)
	SELECT actor_id, memory_id FROM versions WHERE actor_id IS NOT NULL;
DROP INDEX IF EXISTS versions_actor;

-- An entry of either is looked up on every save and written only when it
-- is new.
CREATE TRIGGER versions_indexed AFTER INSERT ON versions BEGIN
	INSERT OR IGNORE INTO path_memories (store, path, memory_id)
		SELECT NEW.store, NEW.path, NEW.memory_id WHERE NEW.path IS NOT NULL;
	INSERT OR IGNORE INTO actor_memories (actor_id, memory_id)
		SELECT NEW.actor_id, NEW.memory_id WHERE NEW.actor_id IS NOT NULL;
END;
-- A version that leaves no other of its memory at its path (pruned, or
-- redacted, which clears its path) takes the path's entry with it.
CREATE TRIGGER versions_unindexed AFTER DELETE ON versions WHEN OLD.path IS NOT NULL BEGIN
	DELETE FROM path_memories WHERE store = OLD.store AND path = OLD.path AND memory_id = OLD.memory_id
		AND NOT EXISTS (SELECT 1 FROM versions WHERE memory_id = OLD.memory_id AND path = OLD.path);
END;
CREATE TRIGGER versions_path_cleared AFTER UPDATE OF path ON versions
WHEN OLD.path IS NOT NULL AND NEW.path IS NOT OLD.path BEGIN
	DELETE FROM path_memories WHERE store = OLD.store AND path = OLD.path AND memory_id = OLD.memory_id
		AND NOT EXISTS (SELECT 1 FROM versions WHERE memory_id = OLD.memory_id AND path = OLD.path);
	INSERT OR IGNORE INTO path_memories (store, path, memory_id)
		SELECT NEW.store, NEW.path, NEW.memory_id WHERE NEW.path IS NOT NULL;
END;

-- A new version of a live memory (one the engine appends: id is null)
-- moves the memory's head in the statement that inserts it, so that a
-- save is one statement between BEGIN and COMMIT: a modification (with
-- its path when it is a rename), or a deletion, which removes the
-- memory's row. memfs_version_id is versionID (ids.go), registered by
-- memfs on each connection (search_sqlite.go). A modification and a
-- rename are two triggers because SQLite rewrites the memories' path
-- index whenever an UPDATE sets path, even to the value it had: only a
-- rename sets it.
CREATE TRIGGER versions_head AFTER INSERT ON versions
WHEN NEW.id IS NULL AND NEW.operation = 'modified' AND NEW.prev_path IS NULL BEGIN
	UPDATE memories SET head = NEW.seq, version_id = memfs_version_id(NEW.seq, NEW.created_at),
		sha = NEW.sha, size = NEW.size, updated_at = NEW.created_at
	WHERE id = NEW.memory_id;
END;
CREATE TRIGGER versions_moved AFTER INSERT ON versions
WHEN NEW.id IS NULL AND NEW.operation = 'modified' AND NEW.prev_path IS NOT NULL BEGIN
	UPDATE memories SET path = NEW.path, head = NEW.seq, version_id = memfs_version_id(NEW.seq, NEW.created_at),
		sha = NEW.sha, size = NEW.size, updated_at = NEW.created_at
	WHERE id = NEW.memory_id;
END;
CREATE TRIGGER versions_gone AFTER INSERT ON versions
WHEN NEW.id IS NULL AND NEW.operation = 'deleted' BEGIN
	DELETE FROM memories WHERE id = NEW.memory_id;
END;
