-- Pending files belong to a mount's lease, not only to its mount id: every
-- operation on a row is conditioned on its owner and epoch, and a mount
-- whose lease lapsed takes a new epoch (mounts.epoch), so that it can never
-- act on a row it held before the lapse. Recovery claims a lapsed row by
-- moving it to an epoch of its own, conditioned on the old one, before it
-- publishes it; a row it cannot publish (its store over its quota, or
-- archived) is marked (failed_at, failure) and retried less often, so
-- that it never holds up the others.
--
-- The table is rebuilt so that its ids are never used again
-- (AUTOINCREMENT): a mount resuming after a lapse must not find another
-- mount's new row under an id it still holds. cost is what the row counts
-- toward its store's history quota, as the version it becomes would
-- (stores.pending_bytes sums it per store).
CREATE TABLE pending_owned (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	store      INTEGER NOT NULL REFERENCES stores (seq) ON DELETE CASCADE,
	owner      TEXT    NOT NULL,
	epoch      INTEGER NOT NULL DEFAULT 0,
	path       TEXT    NOT NULL,
	actor_type TEXT    NOT NULL,
	actor_id   TEXT    NOT NULL,
	saved_at   INTEGER NOT NULL,
	content    TEXT    NOT NULL,
	cost       INTEGER NOT NULL DEFAULT 0,
	failed_at  INTEGER,
	failure    TEXT
);
INSERT INTO pending_owned (id, store, owner, epoch, path, actor_type, actor_id, saved_at, content, cost)
	SELECT id, store, owner, 0, path, actor_type, actor_id, saved_at, content,
		length(CAST(content AS BLOB)) + 2 * length(CAST(path AS BLOB)) + length(CAST(actor_id AS BLOB)) + 320
	FROM pending;
DROP TABLE pending;
ALTER TABLE pending_owned RENAME TO pending;
CREATE INDEX pending_store ON pending (store, owner);
ALTER TABLE mounts ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0;
ALTER TABLE stores ADD COLUMN pending_bytes INTEGER NOT NULL DEFAULT 0;
UPDATE stores SET pending_bytes = (SELECT coalesce(sum(p.cost), 0) FROM pending p WHERE p.store = stores.seq);
