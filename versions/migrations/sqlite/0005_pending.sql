-- Files saved through a mount and not yet published as memories: the first
-- saves of a file created in the mount, durable from close(), until the
-- file outlives the mount's grace period or is renamed onto its target
-- (one transaction then drops the row and writes the version). A mount
-- that restarts publishes the rows it left (owner).
CREATE TABLE pending (
	id         INTEGER PRIMARY KEY,
	store      INTEGER NOT NULL REFERENCES stores (seq) ON DELETE CASCADE,
	owner      TEXT    NOT NULL,
	path       TEXT    NOT NULL,
	actor_type TEXT    NOT NULL,
	actor_id   TEXT    NOT NULL,
	saved_at   INTEGER NOT NULL,
	content    TEXT    NOT NULL
);
CREATE INDEX pending_owner ON pending (owner);
