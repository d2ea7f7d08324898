-- A save of a new memory or pending file counts the store's pending files
-- (the memory limit): by store, in the index alone rather than over every
-- pending row and its content. A mount restarting lists its own rows by
-- store and owner with the same index.
DROP INDEX pending_owner;
CREATE INDEX pending_store ON pending (store, owner);
