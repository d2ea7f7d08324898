-- Each row of the changes table says what happened at its path, as
-- migrations/sqlite/0010_feed_ops.sql.
ALTER TABLE changes ADD COLUMN op TEXT NOT NULL DEFAULT 'dir';
