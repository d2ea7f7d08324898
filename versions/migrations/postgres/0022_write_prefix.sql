-- An attachment may be writable only below a path prefix, as
-- migrations/sqlite/0022_write_prefix.sql.
ALTER TABLE attachments ADD COLUMN write_prefix TEXT;
