-- Full-text search (docs/search.md). One FTS4 row per version that holds
-- content, its own or a referenced version's (a rename), keyed by the
-- version's row: the row of a memory's head is what a search of the
-- current memories matches, every row is what --history matches. Text is
-- stored folded by memfs_search_fold, the Go function fulltext.Fold that
-- the engine registers on every connection: lowercased words, and runs of
-- Chinese, Japanese and Korean characters as overlapping bigrams.
--
-- The triggers keep it in the transaction of each change: a version
-- appended (a save, a restore, an import), redacted, pruned, or deleted
-- with its store. A version is immutable but for redaction and for taking
-- over the content it referenced (which changes nothing the index holds).
CREATE VIRTUAL TABLE search_versions USING fts4(path, content, tokenize=simple);

CREATE TRIGGER search_versions_insert AFTER INSERT ON versions
WHEN NEW.redacted_at IS NULL AND (NEW.content IS NOT NULL OR NEW.content_of IS NOT NULL)
BEGIN
	INSERT INTO search_versions (docid, path, content) VALUES (NEW.seq, memfs_search_fold(NEW.path),
		memfs_search_fold(coalesce(NEW.content, (SELECT c.content FROM versions c WHERE c.seq = NEW.content_of))));
END;

CREATE TRIGGER search_versions_redact AFTER UPDATE OF redacted_at ON versions
WHEN NEW.redacted_at IS NOT NULL AND OLD.redacted_at IS NULL
BEGIN
	DELETE FROM search_versions WHERE docid = OLD.seq;
END;

CREATE TRIGGER search_versions_delete AFTER DELETE ON versions
WHEN OLD.redacted_at IS NULL AND (OLD.content IS NOT NULL OR OLD.content_of IS NOT NULL)
BEGIN
	DELETE FROM search_versions WHERE docid = OLD.seq;
END;

-- The versions written before this migration.
INSERT INTO search_versions (docid, path, content)
	SELECT v.seq, memfs_search_fold(v.path), memfs_search_fold(coalesce(v.content, c.content))
	FROM versions v LEFT JOIN versions c ON c.seq = v.content_of
	WHERE v.redacted_at IS NULL AND (v.content IS NOT NULL OR v.content_of IS NOT NULL);

-- A conflict (a save whose writer had not seen the head it replaced) is
-- open until a later save of the memory is based on it, or until someone
-- marks it resolved (memfs version resolve): resolved_at, resolver_*.
ALTER TABLE versions ADD COLUMN resolved_at INTEGER;
ALTER TABLE versions ADD COLUMN resolver_type TEXT;
ALTER TABLE versions ADD COLUMN resolver_id TEXT;
