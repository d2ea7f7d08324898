-- A path's history (every version saved at a path, live or deleted, as
-- memfs log and the mount's .history tree show it) and the set of paths a
-- store's memories ever had are read from this index, a seek per path and
-- per directory entry, instead of a scan of the store's versions.
CREATE INDEX IF NOT EXISTS versions_path ON versions (store, path, seq);
-- Redacted versions name no path; the few a store has are found here to
-- be placed by their memory's neighbouring versions.
CREATE INDEX IF NOT EXISTS versions_redacted ON versions (store, seq) WHERE redacted_at IS NOT NULL;
