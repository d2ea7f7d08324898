-- What a store costs: a limit on its directories (as on its memories), and
-- its history counted as every surface now charges it: each version's
-- content, its path twice (the row and its index), its actor and 320 bytes
-- for the rest of its record (versions.VersionCost). A store's count is its
-- row's history_bytes plus its latest version's running hist, so the row
-- takes the recount less that.
ALTER TABLE stores ADD COLUMN max_directories BIGINT NOT NULL DEFAULT 2000;
UPDATE stores SET history_bytes =
	coalesce((SELECT sum(coalesce(v.size, 0) + 2 * coalesce(octet_length(v.path), 0)
		+ coalesce(octet_length(v.actor_id), 0) + 320) FROM versions v WHERE v.store = stores.seq), 0)
	- coalesce((SELECT v.hist FROM versions v WHERE v.store = stores.seq ORDER BY v.seq DESC LIMIT 1), 0);
-- A store the recount takes past its quota keeps taking saves: its quota
-- becomes twice what it holds, as when the quota was introduced.
UPDATE stores SET max_history_bytes = 2 * (history_bytes
	+ coalesce((SELECT v.hist FROM versions v WHERE v.store = stores.seq ORDER BY v.seq DESC LIMIT 1), 0))
WHERE max_history_bytes > 0 AND history_bytes
	+ coalesce((SELECT v.hist FROM versions v WHERE v.store = stores.seq ORDER BY v.seq DESC LIMIT 1), 0) > max_history_bytes;
-- A store already past its directory limit keeps its directories.
UPDATE stores SET max_directories = (SELECT count(*) FROM dirs d WHERE d.store = stores.seq)
WHERE (SELECT count(*) FROM dirs d WHERE d.store = stores.seq) > max_directories;
