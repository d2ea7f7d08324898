-- Pending files belong to a mount's lease, not only to its mount id: every
-- operation on a row is conditioned on its owner and epoch, and a mount
-- whose lease lapsed takes a new epoch (mounts.epoch), so that it can never
-- act on a row it held before the lapse. Recovery claims a lapsed row by
-- moving it to an epoch of its own, conditioned on the old one, before it
-- publishes it; a row it cannot publish (its store over its quota, or
-- archived) is marked (failed_at, failure) and retried less often, so
-- that it never holds up the others. An identity column never gives an id
-- twice. cost is what the row counts toward its store's history quota, as
-- the version it becomes would (stores.pending_bytes sums it per store).
ALTER TABLE pending ADD COLUMN epoch BIGINT NOT NULL DEFAULT 0;
ALTER TABLE pending ADD COLUMN cost BIGINT NOT NULL DEFAULT 0;
ALTER TABLE pending ADD COLUMN failed_at BIGINT;
ALTER TABLE pending ADD COLUMN failure TEXT;
UPDATE pending SET cost = octet_length(content) + 2 * octet_length(path) + octet_length(actor_id) + 320;
ALTER TABLE mounts ADD COLUMN epoch BIGINT NOT NULL DEFAULT 0;
ALTER TABLE stores ADD COLUMN pending_bytes BIGINT NOT NULL DEFAULT 0;
UPDATE stores SET pending_bytes = (SELECT coalesce(sum(p.cost), 0) FROM pending p WHERE p.store = stores.seq);
