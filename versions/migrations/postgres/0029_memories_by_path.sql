-- A new memory's inode number is the seq of the version that created it,
-- as on SQLite (migrations/sqlite/0029_memories_by_path.sql), whichever
-- way it is created: the identity of memories.ino numbers no new row. A
-- seq is unique in the database, and never handed out again: a store's
-- next version takes the number after its newest, which is never removed.
-- memfs_create of 0027, with that one change.
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
	IF EXISTS (SELECT 1 FROM memories WHERE store = p_store AND path = ANY (p_up))
		OR EXISTS (SELECT 1 FROM memories WHERE store = p_store AND path > below AND path < beyond)
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
		path, sha, size, content, hist, live, via_key)
	VALUES (coalesce(l_seq, lo) + 1, p_store, p_memory, 'created', v_at, p_actor_type, p_actor_id, false, p_origin,
		p_path, p_sha, p_size, p_content, coalesce(l_hist, 0) + p_cost, coalesce(l_live, 0) + 1, p_via)
	RETURNING seq INTO v_seq;
	INSERT INTO memories (ino, id, store, path, head, version_id, sha, size, created_at, updated_at)
	VALUES (v_seq, p_memory, p_store, p_path, v_seq, memfs_version_id(v_seq, v_at), p_sha, p_size, v_at, v_at)
	RETURNING ino INTO v_ino;
	PERFORM pg_notify('memfs', CASE WHEN octet_length(s.id) <= 7000 THEN s.id || ',@' || p_origin ELSE '' END);
	RETURN;
END $$;
