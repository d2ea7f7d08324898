package versions_test

import (
	"database/sql"
	"testing"

	"github.com/memfs/memfs/versions"
)

// A server that closes a handle's idle connections (a restart, a proxy
// timing them out) does not fail the next save or read: the pooled
// connections that broke meanwhile are replaced at once.
func TestReconnectAfterConnectionsDropped(t *testing.T) {
	if !onPostgres() {
		t.Skip("a test of PostgreSQL connections; SQLite has none to lose")
	}
	dsn := testDSN(t)
	db, err := versions.Open(dsn, versions.Options{})
	ok(t, err)
	t.Cleanup(func() { db.Close() })
	s := newStore(t, db, versions.StoreParams{})
	m := create(t, db, s.ID, "/a.md", "before")
	// Every pool connection open and idle.
	for range 8 {
		ok(t, errOf(db.GetMemory(ctx, s.ID, m.ID)))
		ok(t, errOf(db.UpdateMemory(ctx, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("before " + m.ID)}, me)))
	}

	admin, err := sql.Open("pgx", dsn)
	ok(t, err)
	defer admin.Close()
	var killed int
	ok(t, admin.QueryRowContext(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = 'memfs'`).Scan(&killed))
	if killed == 0 {
		t.Fatal("no memfs connection to terminate")
	}
	t.Logf("terminated %d connections", killed)

	for i := range 8 {
		ok(t, errOf(db.UpdateMemory(ctx, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("after " + string(rune('a'+i)))}, me)))
		got, err := db.GetMemory(ctx, s.ID, m.ID)
		ok(t, err)
		if *got.Content != "after "+string(rune('a'+i)) {
			t.Fatalf("read %q after save %d", *got.Content, i)
		}
		ok(t, errOf(db.ListVersions(ctx, s.ID, versions.VersionListOptions{})))
	}
}
