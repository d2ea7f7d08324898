package versions

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/memfs/memfs/versions/pgtest"
)

// The triggers that move a memory's head name its new version with
// memfs_version_id: on SQLite versionID itself, on PostgreSQL a copy in
// SQL, which must give the same id for every row number and time,
// including the clamped times before 1970.
func TestVersionIDInSQL(t *testing.T) {
	cases := []struct{ seq, nanos int64 }{
		{1, 0},
		{1<<40 + 5, 1_780_000_000_123_456_789},
		{math.MaxInt64, math.MaxInt64},
		{7, -1},
		{7, -1_000_000},
		{7, math.MinInt64},
	}
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			dsn := filepath.Join(t.TempDir(), "memfs.db")
			if backend == "postgres" {
				dsn = pgtest.Database(t)
			}
			db, err := Open(dsn, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for _, c := range cases {
				var got string
				err := db.one(context.Background(), "version id", func(r *run) error {
					return r.scan("SELECT memfs_version_id(?, ?)", []any{c.seq, c.nanos}, &got)
				})
				if err != nil {
					t.Fatal(err)
				}
				if want := versionID(c.seq, c.nanos); got != want {
					t.Errorf("memfs_version_id(%d, %d) = %s, versionID %s", c.seq, c.nanos, got, want)
				}
			}
		})
	}
}
