package versions

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Migrations live in migrations/<dialect>/NNNN_name.sql (see
// migrations/README.md): each is applied once, in its own write
// transaction, and recorded in schema_migrations.
//
//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrationFiles embed.FS

// migrate applies every embedded migration of the dialect not yet
// recorded. Two processes opening a new database at once apply each
// migration exactly once: on SQLite each transaction begins IMMEDIATE, on
// PostgreSQL each first takes an advisory lock.
func (db *DB) migrate(ctx context.Context) error {
	names, err := migrationNames(db.d.name)
	if err != nil {
		return err
	}
	integer := "INTEGER" // SQLite's rowid
	if db.d.name == "postgres" {
		integer = "BIGINT"
	}
	// A schema that records every migration of this build (each once: a
	// version is the table's key) takes no lock and no write: every
	// command opens the database, and a transaction per migration that
	// holds the migrations' lock alone would queue the leases taken
	// meanwhile behind it.
	if current, err := db.schemaCurrent(ctx, names); err != nil || current {
		return err
	}
	err = db.write(ctx, "migrate "+db.where, func(r *run) error {
		if err := db.lockMigrations(r, false); err != nil {
			return err
		}
		_, err := r.c.c.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version `+integer+` PRIMARY KEY, name TEXT NOT NULL, applied_at `+integer+` NOT NULL)`)
		return err
	})
	if err != nil {
		return err
	}
	if err := db.one(ctx, "read the schema's version", db.refuseNewerSchema); err != nil {
		return err
	}
	seen := map[int]string{}
	for _, name := range names {
		base, num, err := migrationNumber(name)
		if err != nil {
			return err
		}
		// A number is applied once: a second file with it would be skipped
		// for good wherever the first ran.
		if other, dup := seen[num]; dup {
			return fmt.Errorf("migrations %s and %s have the same number: renumber the newer one", other, name)
		}
		seen[num] = name
		body, err := migrationFiles.ReadFile(name)
		if err != nil {
			return fmt.Errorf("read migration %s: %w", name, err)
		}
		var lapses time.Duration // until the live mounts' leases lapse
		apply := func() error {
			return db.write(ctx, "migrate "+db.d.name+"/"+base, func(r *run) error {
				if err := db.lockMigrations(r, false); err != nil {
					return err
				}
				var done int
				err := r.c.c.QueryRowContext(ctx, db.d.rebind("SELECT 1 FROM schema_migrations WHERE version = ?"), num).Scan(&done)
				if err == nil {
					return nil
				}
				if err != sql.ErrNoRows {
					return err
				}
				if lapses, err = db.refuseLiveMounts(ctx, r, base); err != nil {
					return err
				}
				if _, err := r.c.c.ExecContext(ctx, string(body)); err != nil {
					return err
				}
				_, err = r.c.c.ExecContext(ctx, db.d.rebind("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)"),
					num, base, db.nowNanos())
				return err
			})
		}
		if err := apply(); err != nil {
			if lapses <= 0 {
				return err
			}
			// A mount killed without ending its lease (an upgrade that
			// stopped the old daemons with SIGKILL) keeps it until it
			// lapses: wait for that once, then look again. A lease still
			// live then is renewed, its mount running.
			t := time.NewTimer(min(lapses, LeaseTTL) + 100*time.Millisecond)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return err
			}
			if err := apply(); err != nil {
				return err
			}
		}
	}
	return nil
}

// schemaCurrent reports whether the database records every migration in
// names, and refuses one that records a migration this build lacks
// (refuseNewerSchema). A database without schema_migrations is not
// current.
func (db *DB) schemaCurrent(ctx context.Context, names []string) (current bool, err error) {
	err = db.one(ctx, "read the schema's version", func(r *run) error {
		var tables int
		q := "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
		if db.d.name == "postgres" {
			q = "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'schema_migrations'"
		}
		if err := r.c.c.QueryRowContext(r.ctx, q).Scan(&tables); err != nil || tables == 0 {
			return err
		}
		recorded, err := db.checkSchema(r)
		current = err == nil && recorded == len(names)
		return err
	})
	return current, err
}

// migrationNames lists the dialect's embedded migrations, in order.
func migrationNames(dialect string) ([]string, error) {
	names, err := fs.Glob(migrationFiles, "migrations/"+dialect+"/*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	sort.Strings(names)
	return names, nil
}

// migrationNumber is a migration file's name and the number it starts
// with.
func migrationNumber(name string) (base string, num int, err error) {
	base = name[strings.LastIndexByte(name, '/')+1:]
	num, err = strconv.Atoi(strings.SplitN(base, "_", 2)[0])
	if err != nil {
		return base, 0, fmt.Errorf("migration %s: its name must start with a number", name)
	}
	return base, num, nil
}

// refuseNewerSchema fails when the database records a migration this
// build does not have: a newer memfs changed the schema, and this one
// would write the old way (a save missing what the new schema keeps
// consistent), so it must not open the database, nor mount it.
func (db *DB) refuseNewerSchema(r *run) error {
	_, err := db.checkSchema(r)
	return err
}

// checkSchema is refuseNewerSchema, which also counts the migrations of
// this build the database records.
func (db *DB) checkSchema(r *run) (recorded int, err error) {
	names, err := migrationNames(db.d.name)
	if err != nil {
		return 0, err
	}
	known := map[int]bool{}
	latest := ""
	for _, name := range names {
		if base, num, err := migrationNumber(name); err == nil {
			known[num] = true
			latest = base
		}
	}
	rows, err := r.c.c.QueryContext(r.ctx, "SELECT version, name FROM schema_migrations ORDER BY version")
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var unknown []string
	for rows.Next() {
		var v int
		var name string
		if err := rows.Scan(&v, &name); err != nil {
			return 0, err
		}
		if known[v] {
			recorded++
		} else {
			unknown = append(unknown, name)
		}
	}
	if err := rows.Err(); err != nil || len(unknown) == 0 {
		return recorded, err
	}
	return recorded, errorf(CodeConflict, "the database %s has a newer schema than this memfs knows (it has %s; this build's last is %s): a newer memfs upgraded it, and this one would not keep it consistent, so it refuses to use it; run the newer memfs (`memfs version` names the build)",
		db.where, strings.Join(unknown, ", "), latest)
}

// refuseLiveMounts fails migration while a mount holds a live lease on the
// database. That mount runs an older memfs (a build that had the
// migration would have applied it before mounting, and takes no lease on
// a schema newer than its own: StartMount, RenewMount), which would go on writing the
// old way under the new schema: its saves would fail, or leave rows the
// new schema does not expect. lapses is how long until the last of those
// leases lapses unless renewed. Mount leases came with migration 9; a
// database older than that has none to look at.
func (db *DB) refuseLiveMounts(ctx context.Context, r *run, migration string) (lapses time.Duration, err error) {
	var leases int
	err = r.c.c.QueryRowContext(ctx, "SELECT count(*) FROM schema_migrations WHERE version = 9").Scan(&leases)
	if err != nil || leases == 0 {
		return 0, err
	}
	now, err := db.leaseClock(r)
	if err != nil {
		return 0, err
	}
	// A run's lease and its mount's name the same host and root.
	rows, err := r.c.c.QueryContext(ctx, db.d.rebind(
		"SELECT host, mountpoint, max(expires_at) FROM mounts WHERE expires_at >= ? GROUP BY host, mountpoint ORDER BY host, mountpoint"), now)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var live []string
	last := now
	for rows.Next() {
		var host, mountpoint string
		var expires int64
		if err := rows.Scan(&host, &mountpoint, &expires); err != nil {
			return 0, err
		}
		live = append(live, host+":"+mountpoint)
		last = max(last, expires)
	}
	if err := rows.Err(); err != nil || len(live) == 0 {
		return 0, err
	}
	named := live
	if len(named) > 3 {
		named = append(named[:3:3], fmt.Sprintf("and %d more", len(live)-3))
	}
	// At least a millisecond: the caller waits when it is not zero.
	return max(time.Duration(last-now), time.Millisecond), errorf(CodeConflict, "the database %s is mounted by an older memfs at %d place(s) (%s), and this memfs must upgrade its schema (%s) before it can use it: those mounts would go on writing the old way, so nothing was changed; stop them (`memfs mount` and `memfs run` end their leases when they exit; a killed one's lapses within %s), and every other older memfs using the database (`memfs serve`, `memfs tool`), then run this again",
		db.where, len(live), strings.Join(named, ", "), migration, LeaseTTL)
}

// lockMigrations takes migrationLock for r's transaction on PostgreSQL:
// alone for a migration, shared for a lease (beginLease). SQLite's write
// lock, which every write transaction holds, orders them there.
func (db *DB) lockMigrations(r *run, shared bool) error {
	if db.d.name != "postgres" {
		return nil
	}
	fn := "pg_advisory_xact_lock"
	if shared {
		fn += "_shared"
	}
	_, err := r.c.c.ExecContext(r.ctx, fmt.Sprintf("SELECT %s(%d)", fn, migrationLock))
	if pgCode(err) == "55P03" { // lock_timeout ran out: say what for
		return errorf(CodeUnavailable, "the database %s is being migrated, or another memfs held its migration lock too long: try again in a moment (%v)", db.where, err)
	}
	return err
}
