-- A quota on the bytes of content a store's versions retain, heads of live
-- memories included (0: no quota), and the exact running count of those
-- bytes, kept by every write in the transaction that changes them.
ALTER TABLE stores ADD COLUMN max_history_bytes INTEGER NOT NULL DEFAULT 104857600;
ALTER TABLE stores ADD COLUMN history_bytes INTEGER NOT NULL DEFAULT 0;
UPDATE stores SET history_bytes = coalesce((SELECT sum(v.size) FROM versions v WHERE v.store = stores.seq), 0);
-- A store already past the default when this runs keeps taking saves: its
-- quota starts at twice what it holds, rather than refusing every save
-- until someone prunes.
UPDATE stores SET max_history_bytes = 2 * history_bytes WHERE history_bytes > max_history_bytes;
