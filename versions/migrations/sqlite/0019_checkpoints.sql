-- Checkpoints: named positions of a store's history. pos is the seq of the
-- store's latest version when the checkpoint was taken (the store's range
-- start when it had none): the store as of a checkpoint is every version
-- up to pos. kind is 'named' (taken by someone), 'session' (taken when a
-- session began; pruned with the retention window) or 'safety' (taken by a
-- restore or an undo before it wrote). The name is unique in its store.
CREATE TABLE checkpoints (
	store      INTEGER NOT NULL REFERENCES stores (seq) ON DELETE CASCADE,
	name       TEXT    NOT NULL,
	pos        INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	actor_type TEXT,
	actor_id   TEXT,
	note       TEXT    NOT NULL DEFAULT '',
	kind       TEXT    NOT NULL,
	PRIMARY KEY (store, name)
);
