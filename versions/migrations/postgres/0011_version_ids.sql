-- A version's id encodes its row number and a rename references its
-- content, as migrations/sqlite/0011_version_ids.sql: new versions store no
-- id, the ids of older and imported ones are found by a partial index.
ALTER TABLE versions ALTER COLUMN id DROP NOT NULL;
ALTER TABLE versions DROP CONSTRAINT versions_id_key;
CREATE UNIQUE INDEX versions_id ON versions (id) WHERE id IS NOT NULL;
ALTER TABLE versions ADD COLUMN content_of BIGINT;
