-- Mounts alive now. Each mount instance holds a lease it renews about
-- every half second; the pending files it saved belong to it (pending.owner
-- is its id). Whoever uses the database after a lease has lapsed (a mount
-- killed, its host gone) publishes that mount's pending files and ends its
-- session (leases.go). expires_at is on the database's clock.
CREATE TABLE mounts (
	id         TEXT    PRIMARY KEY,
	session    TEXT    NOT NULL,
	host       TEXT    NOT NULL,
	mountpoint TEXT    NOT NULL,
	started_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL
);
CREATE INDEX mounts_expires ON mounts (expires_at);
CREATE INDEX mounts_session ON mounts (session);
