-- A quota on the bytes of content a store's versions retain, heads of live
-- memories included (0: no quota), and the exact running count of those
-- bytes, kept by every write in the transaction that changes them.
ALTER TABLE stores ADD COLUMN max_history_bytes INTEGER NOT NULL DEFAULT 104857600;
ALTER TABLE stores ADD COLUMN history_bytes INTEGER NOT NULL DEFAULT 0;
UPDATE stores SET history_bytes = coalesce((SELECT sum(v.size) FROM versions v WHERE v.store = stores.seq), 0);
