-- A save no longer writes its store's row. Each version carries the
-- store's running counts through it: hist, the bytes of content its
-- versions retain, and live, its live memories, both counted from the
-- store row's history_bytes and memory_count, which change only when
-- versions are pruned or redacted. A store's counts are its row's plus its
-- latest version's (null before this migration: 0).
ALTER TABLE versions ADD COLUMN hist BIGINT;
ALTER TABLE versions ADD COLUMN live BIGINT;
