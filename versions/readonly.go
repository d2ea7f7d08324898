package versions

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A SQLite database this user cannot write (its file, or the directory
// that holds it and its -wal and -shm files, is read-only: permissions, a
// read-only mount) is opened for reading, as git and restic read a
// repository they cannot write: every read works, every write fails with
// CodeReadOnly saying why, and nothing is migrated, swept or checkpointed.
// A schema older than this memfs cannot be read without migrating it: that
// is said too.

// readOnlyParams are the extra DSN parameters for a database file this
// user cannot write, or "" when it can. In a directory that cannot be
// written SQLite could not make the -shm file a WAL reader needs, so the
// file is read as immutable (no other process can write there either,
// short of another user's).
func readOnlyParams(abs string) string {
	switch {
	case unix.Access(filepath.Dir(abs), unix.W_OK) != nil:
		return "&mode=ro&immutable=1"
	case unix.Access(abs, unix.W_OK) != nil:
		return "&mode=ro"
	}
	return ""
}

func (db *DB) readOnlyError() error {
	return errorf(CodeReadOnly, "the database %s is read-only to this user (its file or its directory cannot be written): reads work, nothing was changed; to change it, run memfs as a user who can write both, or copy the database somewhere writable", db.where)
}

// checkReadOnlySchema refuses a read-only database whose schema lacks a
// migration of this memfs.
func (db *DB) checkReadOnlySchema() error {
	names, err := fs.Glob(migrationFiles, "migrations/"+db.d.name+"/*.sql")
	if err != nil {
		return fmt.Errorf("list migrations: %w", err)
	}
	applied := map[int]bool{}
	err = db.one(context.Background(), "read the schema of "+db.where, func(r *run) error {
		rows, err := r.query("SELECT version FROM schema_migrations")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var v int
			if err := rows.Scan(&v); err != nil {
				return err
			}
			applied[v] = true
		}
		return rows.Err()
	})
	if err != nil {
		return errorf(CodeReadOnly, "the database %s is read-only to this user and cannot be read as a memfs database (%v): check that it is one, or open it with write access", db.where, err)
	}
	for _, name := range names {
		base := name[strings.LastIndexByte(name, '/')+1:]
		num, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err == nil && !applied[num] {
			return errorf(CodeReadOnly, "the database %s is read-only to this user, and its schema is older than this memfs (migration %s is missing): run memfs once as a user who can write it to upgrade it, then it can be read read-only", db.where, base)
		}
	}
	return nil
}
