package versions_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
	"github.com/memfs/memfs/versions/pgtest"
)

var (
	ctx = context.Background()
	me  = versions.UserActor("tester")
)

// testDSN names a fresh, empty database: a file under t.TempDir(), or,
// when MEMFS_TEST_POSTGRES names a server, a new PostgreSQL database on it,
// so that the same tests run on both backends.
func testDSN(t testing.TB) string {
	t.Helper()
	if onPostgres() {
		return pgtest.Database(t)
	}
	return filepath.Join(t.TempDir(), "memfs.db")
}

func onPostgres() bool { return pgtest.Server() != "" }

// openRaw opens the test database at dsn beside the engine, to write or
// read what its API does not; closed when the test ends.
func openRaw(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	driver := "sqlite3"
	if onPostgres() {
		driver = "pgx"
	}
	raw, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return raw
}

// sqliteOnly skips a test of the SQLite file itself when the suite runs
// on PostgreSQL.
func sqliteOnly(t testing.TB) {
	t.Helper()
	if onPostgres() {
		t.Skip("a test of the SQLite backend; the suite runs on PostgreSQL")
	}
}

// openOn opens a handle on the database dsn, closed at the end of the
// test; two handles on one database are two processes' views of it.
func openOn(t testing.TB, dsn string) *versions.DB {
	t.Helper()
	db, err := versions.Open(dsn, versions.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// settledFeed waits until db's WaitFeed on follow no longer returns at
// once (its first mark; on PostgreSQL the listener's connection and its
// channels) and returns the mark from which it waits for commits.
func settledFeed(t testing.TB, db *versions.DB, follow ...versions.Followed) versions.FeedMark {
	t.Helper()
	var mark versions.FeedMark
	for {
		wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		next, _, err := db.WaitFeed(wctx, mark, 5*time.Millisecond, follow...)
		cancel()
		if err != nil {
			return mark
		}
		mark = next
	}
}

// openDB opens a fresh database (testDSN).
func openDB(t testing.TB) *versions.DB {
	t.Helper()
	return openOn(t, testDSN(t))
}

func newStore(t testing.TB, db *versions.DB, p versions.StoreParams) *versions.Store {
	t.Helper()
	if p.Name == "" {
		p.Name = "Test Store"
	}
	s, err := db.CreateStore(ctx, p)
	if err != nil {
		t.Fatalf("CreateStore: %v", err)
	}
	return s
}

func create(t testing.TB, db *versions.DB, storeID, path, content string) *versions.Memory {
	t.Helper()
	m, err := db.CreateMemory(ctx, storeID, path, content, me)
	if err != nil {
		t.Fatalf("CreateMemory %s: %v", path, err)
	}
	return m
}

func update(t testing.TB, db *versions.DB, storeID, id string, u versions.MemoryUpdate) *versions.Memory {
	t.Helper()
	m, err := db.UpdateMemory(ctx, storeID, id, u, me)
	if err != nil {
		t.Fatalf("UpdateMemory %s: %v", id, err)
	}
	return m
}

// wantCode fails unless err is an *versions.Error with code want.
func wantCode(t testing.TB, err error, want versions.Code) *versions.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want code %d", want)
	}
	var e *versions.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %T %v, want *versions.Error with code %d", err, err, want)
	}
	if e.Code != want {
		t.Fatalf("got code %d (%v), want %d", e.Code, err, want)
	}
	if e.Message == "" {
		t.Fatalf("error with code %d has no message", e.Code)
	}
	return e
}

// errOf is the error of a call that also returns a value.
func errOf[T any](_ T, err error) error { return err }

func ok(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

// history lists every version of a memory with content, newest first.
func history(t testing.TB, db *versions.DB, storeID, memoryID string) []versions.Version {
	t.Helper()
	var out []versions.Version
	page := ""
	for {
		p, err := db.ListVersions(ctx, storeID, versions.VersionListOptions{MemoryID: memoryID, View: versions.ViewFull, Page: page})
		ok(t, err)
		out = append(out, p.Data...)
		if p.NextPage == nil {
			return out
		}
		page = *p.NextPage
	}
}

func countVersions(t testing.TB, db *versions.DB, storeID string) int {
	t.Helper()
	n := 0
	page := ""
	for {
		p, err := db.ListVersions(ctx, storeID, versions.VersionListOptions{Limit: versions.MaxPageSize, Page: page})
		ok(t, err)
		n += len(p.Data)
		if p.NextPage == nil {
			return n
		}
		page = *p.NextPage
	}
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o600) }
