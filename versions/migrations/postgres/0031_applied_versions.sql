-- A version a save function writes carries its changes to the rest of
-- the schema itself: the memory's row, and the path and actor indexes
-- (path_memories, actor_memories). It marks the version applied, and the
-- versions_inserted trigger, which does that work for every other
-- writer's version (the engine's transactions, imports), skips it by its
-- WHEN condition, which PostgreSQL evaluates without calling the trigger's
-- function. A trigger's call costs a save about as much as its
-- statements: it runs a PL/pgSQL function of its own, whose every
-- statement is prepared and started apart from the caller's.
--
-- What each function writes besides its version:
--   memfs_create: the memory's row, its path, its actor (a new memory's,
--     so neither index holds it yet); it also looks each taken path up
--     by the (store, path) key, where a generic plan of = ANY scanned the
--     store's every memory;
--   memfs_save: the memory's head, found by the head the caller saved over
--     (the row that was read before), and its actor; its path is its
--     head's, already indexed;
--   memfs_rename: the memory's path and head, the new path, the actor;
--   memfs_delete: the memory's row removed, the actor; the path is the
--     head's.
-- The functions are 0030's otherwise.
ALTER TABLE versions ADD COLUMN applied BOOLEAN;
DROP TRIGGER versions_inserted ON versions;
CREATE TRIGGER versions_inserted AFTER INSERT ON versions FOR EACH ROW WHEN (NEW.applied IS NULL)
	EXECUTE FUNCTION memfs_version_inserted();

CREATE OR REPLACE FUNCTION memfs_create(p_store BIGINT, p_memory TEXT, p_path TEXT, p_up TEXT[], p_at BIGINT,
	p_actor_type TEXT, p_actor_id TEXT, p_origin BIGINT, p_sha TEXT, p_size BIGINT,
	p_content BYTEA, p_cost BIGINT, p_via TEXT, p_guard TEXT, p_max_bytes BIGINT,
	OUT v_seq BIGINT, OUT v_ino BIGINT, OUT v_at BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
	lo     BIGINT := p_store << 40;
	hi     BIGINT := (p_store + 1) << 40;
	below  TEXT := p_path || '/';
	beyond TEXT := p_path || '0';
	s      RECORD;
	up     TEXT;
	l_seq  BIGINT;
	l_hist BIGINT;
	l_live BIGINT;
	l_at   BIGINT;
BEGIN
	SELECT id, archived_at, guard, max_memory_bytes, max_memories, memory_count, max_history_bytes, history_bytes, pending_bytes INTO s
		FROM stores WHERE seq = p_store FOR UPDATE;
	IF NOT FOUND OR s.archived_at IS NOT NULL OR s.guard <> p_guard OR s.max_memory_bytes <> p_max_bytes THEN
		RETURN;
	END IF;
	-- Each taken path by the (store, path) key, one lookup each: with
	-- = ANY (p_up) a generic plan made while the store was small scanned
	-- every memory of the store (the key's first column) for each create.
	FOREACH up IN ARRAY p_up LOOP
		IF EXISTS (SELECT 1 FROM memories WHERE store = p_store AND path = up) THEN
			RETURN;
		END IF;
	END LOOP;
	IF EXISTS (SELECT 1 FROM memories WHERE store = p_store AND path > below AND path < beyond)
		OR EXISTS (SELECT 1 FROM dirs WHERE store = p_store AND path >= p_path AND path < beyond AND (path = p_path OR path > below)) THEN
		RETURN;
	END IF;
	SELECT seq, hist, live, created_at INTO l_seq, l_hist, l_live, l_at FROM versions WHERE seq > lo AND seq < hi ORDER BY seq DESC LIMIT 1;
	v_at := greatest(p_at, l_at);
	IF s.memory_count + coalesce(l_live, 0) + (SELECT count(*) FROM pending WHERE store = p_store) >= s.max_memories
		OR s.max_history_bytes > 0 AND s.history_bytes + s.pending_bytes + coalesce(l_hist, 0) + p_cost > s.max_history_bytes THEN
		RETURN;
	END IF;
	INSERT INTO versions (seq, store, memory_id, operation, created_at, actor_type, actor_id, conflict, origin,
		path, sha, size, content, hist, live, via_key, applied)
	VALUES (coalesce(l_seq, lo) + 1, p_store, p_memory, 'created', v_at, p_actor_type, p_actor_id, false, p_origin,
		p_path, p_sha, p_size, p_content, coalesce(l_hist, 0) + p_cost, coalesce(l_live, 0) + 1, p_via, true)
	RETURNING seq INTO v_seq;
	INSERT INTO memories (ino, id, store, path, head, version_id, sha, size, created_at, updated_at)
	VALUES (v_seq, p_memory, p_store, p_path, v_seq, memfs_version_id(v_seq, v_at), p_sha, p_size, v_at, v_at)
	RETURNING ino INTO v_ino;
	INSERT INTO path_memories (store, path, memory_id) VALUES (p_store, p_path, p_memory);
	IF p_actor_id IS NOT NULL THEN
		INSERT INTO actor_memories (actor_id, memory_id) VALUES (p_actor_id, p_memory);
	END IF;
	PERFORM memfs_notify(s.id, p_origin, v_seq, 'created', p_memory, p_sha, p_size, v_at, p_path, NULL);
	RETURN;
END $$;

CREATE OR REPLACE FUNCTION memfs_save(p_store BIGINT, p_memory TEXT, p_head BIGINT, p_path TEXT, p_at BIGINT,
	p_actor_type TEXT, p_actor_id TEXT, p_conflict BOOLEAN, p_origin BIGINT, p_sha TEXT, p_size BIGINT,
	p_content BYTEA, p_cost BIGINT, p_via TEXT, p_guard TEXT, p_max_bytes BIGINT,
	OUT v_seq BIGINT, OUT v_ino BIGINT, OUT v_created BIGINT, OUT v_at BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
	lo     BIGINT := p_store << 40;
	hi     BIGINT := (p_store + 1) << 40;
	s      RECORD;
	l_seq  BIGINT;
	l_hist BIGINT;
	l_live BIGINT;
	l_at   BIGINT;
	n_seq  BIGINT;
	n_at   BIGINT;
BEGIN
	SELECT id, archived_at, guard, max_memory_bytes, max_history_bytes, history_bytes, pending_bytes INTO s
		FROM stores WHERE seq = p_store FOR UPDATE;
	IF NOT FOUND OR s.archived_at IS NOT NULL OR s.guard <> p_guard OR s.max_memory_bytes <> p_max_bytes THEN
		RETURN;
	END IF;
	SELECT seq, hist, live, created_at INTO l_seq, l_hist, l_live, l_at FROM versions WHERE seq > lo AND seq < hi ORDER BY seq DESC LIMIT 1;
	IF s.max_history_bytes > 0 AND s.history_bytes + s.pending_bytes + coalesce(l_hist, 0) + p_cost > s.max_history_bytes THEN
		RETURN;
	END IF;
	n_seq := coalesce(l_seq, lo) + 1;
	n_at := greatest(p_at, l_at);
	-- The head the caller saved over, or nothing is written.
	UPDATE memories SET head = n_seq, version_id = memfs_version_id(n_seq, n_at), sha = p_sha, size = p_size, updated_at = n_at
		WHERE id = p_memory AND store = p_store AND head = p_head AND path = p_path AND sha <> p_sha
		RETURNING ino, created_at INTO v_ino, v_created;
	IF NOT FOUND THEN
		RETURN;
	END IF;
	INSERT INTO versions (seq, store, memory_id, operation, created_at, actor_type, actor_id, conflict, origin,
		path, sha, size, content, hist, live, via_key, applied)
	VALUES (n_seq, p_store, p_memory, 'modified', n_at, p_actor_type, p_actor_id, p_conflict, p_origin,
		p_path, p_sha, p_size, p_content, coalesce(l_hist, 0) + p_cost, coalesce(l_live, 0), p_via, true);
	IF p_actor_id IS NOT NULL THEN
		INSERT INTO actor_memories (actor_id, memory_id) VALUES (p_actor_id, p_memory) ON CONFLICT DO NOTHING;
	END IF;
	PERFORM memfs_notify(s.id, p_origin, n_seq, 'modified', p_memory, p_sha, p_size, n_at, p_path, NULL);
	v_seq := n_seq;
	v_at := n_at;
	RETURN;
END $$;

CREATE OR REPLACE FUNCTION memfs_rename(p_store BIGINT, p_from TEXT, p_to TEXT, p_below TEXT, p_beyond TEXT, p_at BIGINT,
	p_actor_type TEXT, p_actor_id TEXT, p_origin BIGINT, p_cost BIGINT, p_via TEXT, p_guard TEXT,
	OUT v_seq BIGINT, OUT v_memory TEXT, OUT v_sha TEXT, OUT v_size BIGINT, OUT v_ino BIGINT, OUT v_created BIGINT, OUT v_at BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
	lo     BIGINT := p_store << 40;
	hi     BIGINT := (p_store + 1) << 40;
	s      RECORD;
	m      RECORD;
	l_seq  BIGINT;
	l_hist BIGINT;
	l_live BIGINT;
	l_at   BIGINT;
BEGIN
	SELECT id, archived_at, guard, max_history_bytes, history_bytes, pending_bytes INTO s
		FROM stores WHERE seq = p_store FOR UPDATE;
	IF NOT FOUND OR s.archived_at IS NOT NULL OR s.guard <> p_guard THEN
		RETURN;
	END IF;
	SELECT id, head, sha, size, ino, created_at INTO m FROM memories WHERE store = p_store AND path = p_from;
	IF NOT FOUND
		OR EXISTS (SELECT 1 FROM memories WHERE store = p_store AND path >= p_to AND path < p_beyond AND (path = p_to OR path > p_below))
		OR EXISTS (SELECT 1 FROM dirs WHERE store = p_store AND path >= p_to AND path < p_beyond AND (path = p_to OR path > p_below)) THEN
		RETURN;
	END IF;
	SELECT seq, hist, live, created_at INTO l_seq, l_hist, l_live, l_at FROM versions WHERE seq > lo AND seq < hi ORDER BY seq DESC LIMIT 1;
	v_at := greatest(p_at, l_at);
	IF s.max_history_bytes > 0 AND s.history_bytes + s.pending_bytes + coalesce(l_hist, 0) + p_cost + m.size > s.max_history_bytes THEN
		RETURN;
	END IF;
	INSERT INTO versions (seq, store, memory_id, operation, created_at, actor_type, actor_id, conflict, origin,
		prev_path, path, sha, size, content_of, hist, live, via_key, applied)
	VALUES (coalesce(l_seq, lo) + 1, p_store, m.id, 'modified', v_at, p_actor_type, p_actor_id, false, p_origin,
		p_from, p_to, m.sha, m.size, (SELECT coalesce(c.content_of, c.seq) FROM versions c WHERE c.seq = m.head),
		coalesce(l_hist, 0) + p_cost + m.size, coalesce(l_live, 0), p_via, true)
	RETURNING seq INTO v_seq;
	UPDATE memories SET path = p_to, head = v_seq, version_id = memfs_version_id(v_seq, v_at), updated_at = v_at
		WHERE ino = m.ino;
	INSERT INTO path_memories (store, path, memory_id) VALUES (p_store, p_to, m.id) ON CONFLICT DO NOTHING;
	IF p_actor_id IS NOT NULL THEN
		INSERT INTO actor_memories (actor_id, memory_id) VALUES (p_actor_id, m.id) ON CONFLICT DO NOTHING;
	END IF;
	v_memory := m.id;
	v_sha := m.sha;
	v_size := m.size;
	v_ino := m.ino;
	v_created := m.created_at;
	PERFORM memfs_notify(s.id, p_origin, v_seq, 'modified', m.id, m.sha, m.size, v_at, p_to, p_from);
	RETURN;
END $$;

CREATE OR REPLACE FUNCTION memfs_delete(p_store_id TEXT, p_by_path BOOLEAN, p_ref TEXT, p_if_sha TEXT, p_at BIGINT,
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
	l_at   BIGINT;
	v_seq  BIGINT;
	v_at   BIGINT;
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
	SELECT seq, hist, live, created_at INTO l_seq, l_hist, l_live, l_at FROM versions WHERE seq > lo AND seq < hi ORDER BY seq DESC LIMIT 1;
	INSERT INTO versions (seq, store, memory_id, operation, created_at, actor_type, actor_id, conflict, origin,
		path, hist, live, via_key, applied)
	VALUES (coalesce(l_seq, lo) + 1, s_seq, m_id, 'deleted', greatest(p_at, l_at), p_actor_type, p_actor_id, false, p_origin,
		m_path, coalesce(l_hist, 0) + p_cost + 2 * octet_length(m_path), coalesce(l_live, 0) - 1, p_via, true)
	RETURNING seq, created_at INTO v_seq, v_at;
	DELETE FROM memories WHERE id = m_id;
	IF p_actor_id IS NOT NULL THEN
		INSERT INTO actor_memories (actor_id, memory_id) VALUES (p_actor_id, m_id) ON CONFLICT DO NOTHING;
	END IF;
	PERFORM memfs_notify(p_store_id, p_origin, v_seq, 'deleted', m_id, NULL, NULL, v_at, m_path, NULL);
	RETURN v_seq;
END $$;
