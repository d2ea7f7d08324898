-- Full-text search (docs/search.md), as migrations/sqlite/0020_search.sql:
-- one row per version that holds content, its own or a referenced
-- version's (a rename), keyed by the version's row. tsv holds the path's
-- words (weight A) and the content's (weight D), folded by
-- memfs_search_fold as fulltext.Fold folds them in Go: lowercased runs of
-- letters and digits, and runs of Chinese, Japanese and Korean characters
-- as overlapping bigrams followed by their last character.
CREATE FUNCTION memfs_search_fold(t text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT coalesce(string_agg(
		CASE
		WHEN w !~ '^[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+$' THEN w
		WHEN length(w) = 1 THEN w
		ELSE (SELECT string_agg(substr(w, i, 2), ' ' ORDER BY i) FROM generate_series(1, length(w) - 1) AS i) || ' ' || right(w, 1)
		END, ' ' ORDER BY n), '')
	FROM regexp_split_to_table(
		regexp_replace(
			regexp_replace(lower(coalesce(t, '')), '([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+)', ' \1 ', 'g'),
			'[^[:alnum:]\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+', ' ', 'g'),
		' ') WITH ORDINALITY AS s(w, n)
	WHERE w <> ''
$$;

CREATE FUNCTION memfs_search_doc(path text, content text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT setweight(to_tsvector('simple', memfs_search_fold(path)), 'A')
		|| setweight(to_tsvector('simple', memfs_search_fold(content)), 'D')
$$;

CREATE TABLE search_versions (
	seq BIGINT   PRIMARY KEY REFERENCES versions (seq) ON DELETE CASCADE,
	tsv TSVECTOR NOT NULL
);
CREATE INDEX search_versions_tsv ON search_versions USING gin (tsv);

-- A save writes nothing here: the index is brought up to date by the
-- search that needs it (versions/search.go, searchCatchUp), from
-- search_indexed's mark onwards. A redacted version is dropped by the
-- trigger below; a pruned one, or one deleted with its store, goes by the
-- foreign key.
CREATE TABLE search_indexed (
	store BIGINT PRIMARY KEY REFERENCES stores (seq) ON DELETE CASCADE,
	seq   BIGINT NOT NULL
);

CREATE FUNCTION search_versions_redact() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM search_versions WHERE seq = OLD.seq;
	RETURN NULL;
END $$;
CREATE TRIGGER search_versions_redact AFTER UPDATE OF redacted_at ON versions
	FOR EACH ROW WHEN (NEW.redacted_at IS NOT NULL AND OLD.redacted_at IS NULL)
	EXECUTE FUNCTION search_versions_redact();

-- The versions written before this migration are indexed by each store's
-- first search.

-- A conflict stays open until a later save of the memory is based on it or
-- someone marks it resolved (memfs version resolve).
ALTER TABLE versions ADD COLUMN resolved_at BIGINT;
ALTER TABLE versions ADD COLUMN resolver_type TEXT;
ALTER TABLE versions ADD COLUMN resolver_id TEXT;
