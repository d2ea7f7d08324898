-- Each row of the changes table says what happened at its path, so that a
-- mount applies it without asking the engine: a directory made (or kept),
-- a directory removed, or the store itself changed ("/"). Rows written
-- before say nothing ("dir": ask the engine what is there).
ALTER TABLE changes ADD COLUMN op TEXT NOT NULL DEFAULT 'dir';
