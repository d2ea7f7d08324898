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
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrate applies every embedded migration not yet recorded, each in its own
// immediate transaction, so that two processes opening a new database at
// once apply each migration exactly once.
func (db *DB) migrate(ctx context.Context) error {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("list migrations: %w", err)
	}
	sort.Strings(names)
	err = db.write(ctx, "migrate "+db.path, func(r *run) error {
		_, err := r.c.c.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`)
		return err
	})
	if err != nil {
		return err
	}
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		num, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("migration %s: its name must start with a number", name)
		}
		body, err := migrationFiles.ReadFile(name)
		if err != nil {
			return fmt.Errorf("read migration %s: %w", name, err)
		}
		err = db.write(ctx, "migrate "+base, func(r *run) error {
			var done int
			err := r.c.c.QueryRowContext(ctx, "SELECT 1 FROM schema_migrations WHERE version = ?", num).Scan(&done)
			if err == nil {
				return nil
			}
			if err != sql.ErrNoRows {
				return err
			}
			if _, err := r.c.c.ExecContext(ctx, string(body)); err != nil {
				return err
			}
			_, err = r.c.c.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
				num, base, db.nowNanos())
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}
