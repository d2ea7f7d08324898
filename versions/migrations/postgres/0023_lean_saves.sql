-- The lean save, as migrations/sqlite/0023_lean_saves.sql: path_memories
-- and actor_memories replace the versions_path and versions_actor indexes
-- (an entry per path or actor and memory, not per version), the insert of
-- an engine's version moves its memory's head, and memfs_save writes a
-- save whose caller knows the head in one round trip.
CREATE TABLE path_memories (
	store     BIGINT NOT NULL,
	path      TEXT COLLATE "C" NOT NULL,
	memory_id TEXT NOT NULL,
	PRIMARY KEY (store, path, memory_id)
);
INSERT INTO path_memories (store, path, memory_id)
	SELECT DISTINCT store, path, memory_id FROM versions WHERE path IS NOT NULL;
DROP INDEX IF EXISTS versions_path;
CREATE TABLE actor_memories (
	actor_id  TEXT NOT NULL,
	memory_id TEXT NOT NULL,
	PRIMARY KEY (actor_id, memory_id)
);
INSERT INTO actor_memories (actor_id, memory_id)
	SELECT DISTINCT actor_id, memory_id FROM versions WHERE actor_id IS NOT NULL;
DROP INDEX IF EXISTS versions_actor;

-- A version id as the engine makes it (versionID in ids.go): the ULID
-- of the creation millisecond, the tag 0x5e90 and the row number. A
-- millisecond before 1970 is clamped to the ULID's last (2^48 - 1), as
-- versionID does.
CREATE FUNCTION memfs_version_id(seq BIGINT, nanos BIGINT) RETURNS TEXT
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
	ms   BIGINT := CASE WHEN nanos / 1000000 < 0 THEN 281474976710655 ELSE nanos / 1000000 END;
	b    BYTEA := substring(int8send(ms) from 3 for 6) || '\x5e90'::bytea || int8send(seq);
	bits BIT(130) := B'00' || ('x' || encode(b, 'hex'))::bit(128);
	out  TEXT := 'memver_';
BEGIN
	FOR i IN 0..25 LOOP
		out := out || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substring(bits from i * 5 + 1 for 5)::int + 1, 1);
	END LOOP;
	RETURN out;
END $$;

CREATE FUNCTION memfs_version_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.path IS NOT NULL THEN
		INSERT INTO path_memories (store, path, memory_id) VALUES (NEW.store, NEW.path, NEW.memory_id) ON CONFLICT DO NOTHING;
	END IF;
	IF NEW.actor_id IS NOT NULL THEN
		INSERT INTO actor_memories (actor_id, memory_id) VALUES (NEW.actor_id, NEW.memory_id) ON CONFLICT DO NOTHING;
	END IF;
	IF NEW.id IS NULL AND NEW.operation = 'modified' THEN
		UPDATE memories SET path = NEW.path, head = NEW.seq, version_id = memfs_version_id(NEW.seq, NEW.created_at),
			sha = NEW.sha, size = NEW.size, updated_at = NEW.created_at
		WHERE id = NEW.memory_id;
	ELSIF NEW.id IS NULL AND NEW.operation = 'deleted' THEN
		DELETE FROM memories WHERE id = NEW.memory_id;
	END IF;
	RETURN NULL;
END $$;
CREATE TRIGGER versions_inserted AFTER INSERT ON versions FOR EACH ROW EXECUTE FUNCTION memfs_version_inserted();

CREATE FUNCTION memfs_version_unindexed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF OLD.path IS NOT NULL AND (TG_OP = 'DELETE' OR NEW.path IS DISTINCT FROM OLD.path) THEN
		DELETE FROM path_memories p WHERE p.store = OLD.store AND p.path = OLD.path AND p.memory_id = OLD.memory_id
			AND NOT EXISTS (SELECT 1 FROM versions v WHERE v.memory_id = OLD.memory_id AND v.path = OLD.path);
	END IF;
	IF TG_OP = 'UPDATE' AND NEW.path IS NOT NULL AND NEW.path IS DISTINCT FROM OLD.path THEN
		INSERT INTO path_memories (store, path, memory_id) VALUES (NEW.store, NEW.path, NEW.memory_id) ON CONFLICT DO NOTHING;
	END IF;
	RETURN NULL;
END $$;
CREATE TRIGGER versions_deleted AFTER DELETE ON versions FOR EACH ROW EXECUTE FUNCTION memfs_version_unindexed();
CREATE TRIGGER versions_path_cleared AFTER UPDATE OF path ON versions FOR EACH ROW EXECUTE FUNCTION memfs_version_unindexed();

-- memfs_save appends a modified version of memory p_memory at head p_head
-- and path p_path, in the statement that calls it: it takes the store's
-- lock, checks against the rows what the caller decided on (the memory at
-- that head and path, the store writable with that guard policy and
-- per-memory limit, the history quota against the store's counters),
-- inserts the version (whose trigger moves the head) and notifies the
-- feed's listeners. It returns the version's row and the memory's ino
-- and creation time, or NULLs when anything differs, and then writes
-- nothing: the caller reads and decides again.
-- Each statement of the function sees the commits made before the lock
-- was granted.
CREATE FUNCTION memfs_save(p_store BIGINT, p_memory TEXT, p_head BIGINT, p_path TEXT, p_at BIGINT,
	p_actor_type TEXT, p_actor_id TEXT, p_conflict BOOLEAN, p_origin BIGINT, p_sha TEXT, p_size BIGINT,
	p_content BYTEA, p_cost BIGINT, p_via TEXT, p_guard TEXT, p_max_bytes BIGINT,
	OUT v_seq BIGINT, OUT v_ino BIGINT, OUT v_created BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
	lo     BIGINT := p_store << 40;
	hi     BIGINT := (p_store + 1) << 40;
	s      RECORD;
	l_seq  BIGINT;
	l_hist BIGINT;
	l_live BIGINT;
BEGIN
	SELECT archived_at, guard, max_memory_bytes, max_history_bytes, history_bytes, pending_bytes INTO s
		FROM stores WHERE seq = p_store FOR UPDATE;
	IF NOT FOUND OR s.archived_at IS NOT NULL OR s.guard <> p_guard OR s.max_memory_bytes <> p_max_bytes THEN
		v_ino := NULL;
		RETURN;
	END IF;
	SELECT ino, created_at INTO v_ino, v_created FROM memories
		WHERE id = p_memory AND store = p_store AND head = p_head AND path = p_path;
	IF NOT FOUND THEN
		RETURN;
	END IF;
	SELECT seq, hist, live INTO l_seq, l_hist, l_live FROM versions WHERE seq > lo AND seq < hi ORDER BY seq DESC LIMIT 1;
	IF s.max_history_bytes > 0 AND s.history_bytes + s.pending_bytes + coalesce(l_hist, 0) + p_cost > s.max_history_bytes THEN
		v_ino := NULL;
		RETURN;
	END IF;
	INSERT INTO versions (seq, store, memory_id, operation, created_at, actor_type, actor_id, conflict, origin,
		path, sha, size, content, hist, live, via_key)
	VALUES (coalesce(l_seq, lo) + 1, p_store, p_memory, 'modified', p_at, p_actor_type, p_actor_id, p_conflict, p_origin,
		p_path, p_sha, p_size, p_content, coalesce(l_hist, 0) + p_cost, coalesce(l_live, 0), p_via)
	RETURNING seq INTO v_seq;
	PERFORM pg_notify('memfs', '');
	RETURN;
END $$;

-- memfs_delete appends the deleted version of the memory p_ref names (its
-- id, or with p_by_path its path) in the store whose id is p_store_id, in
-- one round trip as memfs_save does (it finds and locks the store's row
-- itself: the caller looks nothing up first). It returns NULL, and writes
-- nothing, when there is no such store or memory, the memory's content is
-- not p_if_sha (unless ''), or p_keep asks to keep a directory the
-- deletion empties (the caller then deletes in a transaction that keeps
-- it). Deletions are never refused for the store's limits. The check
-- for p_keep is here, not a keepDir after the call, because the call
-- commits alone: a directory kept after it would be a second round trip,
-- and a commit in which the directory had vanished.
CREATE FUNCTION memfs_delete(p_store_id TEXT, p_by_path BOOLEAN, p_ref TEXT, p_if_sha TEXT, p_at BIGINT,
	p_actor_type TEXT, p_actor_id TEXT, p_origin BIGINT, p_cost BIGINT, p_via TEXT, p_keep BOOLEAN) RETURNS BIGINT
LANGUAGE plpgsql AS $$
DECLARE
	s_seq  BIGINT;
	lo     BIGINT;
	hi     BIGINT;
	m_id   TEXT;
	m_path TEXT;
	m_sha  TEXT;
	parent TEXT;
	l_seq  BIGINT;
	l_hist BIGINT;
	l_live BIGINT;
	v_seq  BIGINT;
BEGIN
	SELECT seq INTO s_seq FROM stores WHERE id = p_store_id FOR UPDATE;
	IF NOT FOUND THEN
		RETURN NULL;
	END IF;
	lo := s_seq << 40;
	hi := (s_seq + 1) << 40;
	IF p_by_path THEN
		SELECT id, path, sha INTO m_id, m_path, m_sha FROM memories WHERE store = s_seq AND path = p_ref;
	ELSE
		SELECT id, path, sha INTO m_id, m_path, m_sha FROM memories WHERE id = p_ref AND store = s_seq;
	END IF;
	IF m_id IS NULL OR (p_if_sha <> '' AND m_sha <> lower(p_if_sha)) THEN
		RETURN NULL;
	END IF;
	parent := regexp_replace(m_path, '/[^/]*$', '');
	IF p_keep AND parent <> ''
		AND NOT EXISTS (SELECT 1 FROM memories WHERE store = s_seq AND path > parent || '/' AND path < parent || '0' AND id <> m_id)
		AND NOT EXISTS (SELECT 1 FROM dirs WHERE store = s_seq AND path > parent || '/' AND path < parent || '0') THEN
		RETURN NULL;
	END IF;
	SELECT seq, hist, live INTO l_seq, l_hist, l_live FROM versions WHERE seq > lo AND seq < hi ORDER BY seq DESC LIMIT 1;
	INSERT INTO versions (seq, store, memory_id, operation, created_at, actor_type, actor_id, conflict, origin,
		path, hist, live, via_key)
	VALUES (coalesce(l_seq, lo) + 1, s_seq, m_id, 'deleted', p_at, p_actor_type, p_actor_id, false, p_origin,
		m_path, coalesce(l_hist, 0) + p_cost + 2 * octet_length(m_path), coalesce(l_live, 0) - 1, p_via)
	RETURNING seq INTO v_seq;
	PERFORM pg_notify('memfs', '');
	RETURN v_seq;
END $$;
