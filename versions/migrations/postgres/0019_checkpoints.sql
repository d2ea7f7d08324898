-- Checkpoints: named positions of a store's history (see the SQLite
-- migration of the same number).
CREATE TABLE checkpoints (
	store      BIGINT  NOT NULL REFERENCES stores (seq) ON DELETE CASCADE,
	name       TEXT    COLLATE "C" NOT NULL,
	pos        BIGINT  NOT NULL,
	created_at BIGINT  NOT NULL,
	actor_type TEXT,
	actor_id   TEXT,
	note       TEXT    NOT NULL DEFAULT '',
	kind       TEXT    NOT NULL,
	PRIMARY KEY (store, name)
);
