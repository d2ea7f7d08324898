-- An attachment may be writable only below a path prefix ('/projects/p1/'):
-- everything else in the store is read-only to that session. NULL: the
-- whole store, as its access says.
ALTER TABLE attachments ADD COLUMN write_prefix TEXT;
