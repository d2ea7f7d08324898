-- Full-text search (docs/search.md). One FTS4 row per version that holds
-- content, its own or a referenced version's (a rename), keyed by the
-- version's row: the row of a memory's head is what a search of the
-- current memories matches, every row is what --history matches. Text is
-- stored folded by memfs_search_fold, the Go function fulltext.Fold that
-- the engine registers on every connection: lowercased words, and runs of
-- Chinese, Japanese and Korean characters as overlapping bigrams.
--
-- A save writes nothing here: the index is brought up to date by the
-- search that needs it (versions/search.go, searchCatchUp), from
-- search_indexed's mark onwards, so an index costs saves nothing. What
-- takes a version away (redaction, pruning, its store's deletion) takes
-- its row away in the same transaction, through the triggers below.
CREATE VIRTUAL TABLE search_versions USING fts4(path, content, tokenize=simple);

-- The last version of each store that the index holds (0: none).
CREATE TABLE search_indexed (
	store INTEGER PRIMARY KEY REFERENCES stores (seq) ON DELETE CASCADE,
	seq   INTEGER NOT NULL
);

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

-- The versions written before this migration are indexed by each store's
-- first search.

-- A conflict (a save whose writer had not seen the head it replaced) is
-- open until a later save of the memory is based on it, or until someone
-- marks it resolved (memfs version resolve): resolved_at, resolver_*.
ALTER TABLE versions ADD COLUMN resolved_at INTEGER;
ALTER TABLE versions ADD COLUMN resolver_type TEXT;
ALTER TABLE versions ADD COLUMN resolver_id TEXT;
