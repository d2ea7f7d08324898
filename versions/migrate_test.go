package versions_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// A SQLite file made by the first schema, with memories, history and a
// directory in two stores, opens with everything kept: the lean schema's
// migration renumbers versions without losing or reordering one.
func TestMigrateFirstSchemaForward(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memfs.db")
	first, err := os.ReadFile("migrations/sqlite/0001_init.sql")
	ok(t, err)
	raw, err := sql.Open("sqlite3", "file:"+path+"?_foreign_keys=on")
	ok(t, err)
	for _, q := range []string{
		string(first),
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`,
		`INSERT INTO schema_migrations VALUES (1, '0001_init.sql', 0)`,
		`INSERT INTO stores (seq, id, name, description, metadata, max_memories, max_memory_bytes, memory_count, created_at, updated_at)
			VALUES (1, 'memstore_a', 'a', '', '{}', 10, 1000, 1, 1, 1), (2, 'memstore_b', 'b', '', '{}', 10, 1000, 1, 1, 1)`,
		// Versions of the two stores interleaved, as one writer makes them.
		`INSERT INTO versions (seq, id, store, memory_id, operation, created_at, actor_type, actor_id, path, sha, size, content) VALUES
			(1, 'memver_1', 1, 'mem_a', 'created', 10, 'user_actor', 'u', '/a.md', 'sha1', 2, 'v1'),
			(2, 'memver_2', 2, 'mem_b', 'created', 11, 'user_actor', 'u', '/b.md', 'shab', 2, 'b1'),
			(3, 'memver_3', 1, 'mem_a', 'modified', 12, 'session_actor', 'sesn_x', '/a.md', 'sha2', 2, 'v2')`,
		`INSERT INTO memories (ino, id, store, path, head, version_id, sha, size, created_at, updated_at) VALUES
			(1, 'mem_a', 1, '/a.md', 3, 'memver_3', 'sha2', 2, 10, 12),
			(2, 'mem_b', 2, '/b.md', 2, 'memver_2', 'shab', 2, 11, 11)`,
		`INSERT INTO dirs VALUES (1, '/empty')`,
		`INSERT INTO changes (store, path, origin, at) VALUES ('memstore_a', '/a.md', 'x', 12)`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	ok(t, raw.Close())

	db, err := versions.Open(path, versions.Options{})
	ok(t, err)
	defer db.Close()
	m, err := db.GetMemory(ctx, "memstore_a", "/a.md")
	ok(t, err)
	if *m.Content != "v2" || m.VersionID != "memver_3" || m.Ino != 1 {
		t.Fatalf("head after migration: %+v", m)
	}
	// Migration 0029 keyed the memories by store and path: a memory is
	// found by id through its latest version, and keeps its inode number.
	if byID, err := db.GetMemory(ctx, "memstore_a", "mem_a"); err != nil || byID.Path != "/a.md" || byID.Ino != 1 {
		t.Fatalf("memory by id after migration: %+v %v", byID, err)
	}
	h := history(t, db, "memstore_a", "mem_a")
	if len(h) != 2 || h[0].ID != "memver_3" || h[1].ID != "memver_1" || *h[1].Content != "v1" {
		t.Fatalf("history after migration: %+v", h)
	}
	sess, err := db.ListVersions(ctx, "memstore_a", versions.VersionListOptions{SessionID: "sesn_x"})
	ok(t, err)
	if len(sess.Data) != 1 || sess.Data[0].ID != "memver_3" {
		t.Fatalf("session history after migration: %+v", sess.Data)
	}
	// The path's history and the tree of paths, read through the tables
	// migration 0023 filled from the versions.
	ph, err := db.PathHistory(ctx, "memstore_a", "/a.md", versions.PathHistoryOptions{})
	ok(t, err)
	if len(ph.Data) != 2 || ph.Data[0].ID != "memver_3" || ph.Data[1].ID != "memver_1" {
		t.Fatalf("path history after migration: %+v", ph.Data)
	}
	if in, err := db.InHistory(ctx, "memstore_b", "/b.md"); err != nil || !in {
		t.Fatalf("InHistory /b.md after migration: %v %v", in, err)
	}
	b, err := db.GetMemory(ctx, "memstore_b", "/b.md")
	ok(t, err)
	if *b.Content != "b1" {
		t.Fatalf("other store's memory: %+v", b)
	}
	if e, err := db.Stat(ctx, "memstore_a", "/empty"); err != nil || !e.Dir {
		t.Fatalf("directory after migration: %+v %v", e, err)
	}
	// The history quota's count is recounted as versions cost now.
	st, err := db.GetStore(ctx, "memstore_a")
	ok(t, err)
	cost := 0
	for i := range h {
		cost += versions.VersionCost(&h[i])
	}
	if st.HistoryBytes != cost || st.MaxDirectories != versions.DefaultMaxDirectories {
		t.Fatalf("store after migration counts %d bytes of history (its versions cost %d), %d directories at most", st.HistoryBytes, cost, st.MaxDirectories)
	}
	// The migrated store goes on: a save after the old ones, in the feed.
	pos, err := db.FeedHead(ctx, "memstore_a")
	ok(t, err)
	up := update(t, db, "memstore_a", "mem_a", versions.MemoryUpdate{Content: ptr("v3")})
	if h := history(t, db, "memstore_a", "mem_a"); len(h) != 3 || h[0].ID != up.VersionID {
		t.Fatalf("history after a new save: %d versions, newest %s", len(h), h[0].ID)
	}
	cs, _, err := db.Changes(ctx, "memstore_a", pos)
	ok(t, err)
	if len(cs) != 1 || cs[0].Path != "/a.md" {
		t.Fatalf("feed after a new save: %+v", cs)
	}
	// A deletion by id, and a new memory, whose inode number is its first
	// version's row and none a memory had before.
	ok(t, db.DeleteMemory(ctx, "memstore_b", "mem_b", versions.MemoryDelete{}, me))
	if _, err := db.GetMemory(ctx, "memstore_b", "/b.md"); versions.ErrorCode(err) != versions.CodeNotFound {
		t.Fatalf("deleted memory: %v", err)
	}
	n := create(t, db, "memstore_b", "/b.md", "b2")
	if n.Ino <= 2 || n.Ino != uint64(n.Seq) {
		t.Fatalf("new memory's inode number %d (its version's row %d)", n.Ino, n.Seq)
	}
	// Old ids, kept in their rows, and new ones, encoding their rows,
	// both resolve; an old id of the other store does not.
	for _, id := range []string{"memver_1", "memver_3", up.VersionID} {
		if v, err := db.GetVersion(ctx, "memstore_a", id); err != nil || v.ID != id {
			t.Fatalf("GetVersion %s: %+v %v", id, v, err)
		}
	}
	if _, err := db.GetVersion(ctx, "memstore_a", "memver_2"); versions.ErrorCode(err) != versions.CodeNotFound {
		t.Fatalf("another store's version: %v", err)
	}
}

// A database a newer memfs migrated (a migration this build does not
// have is recorded) is refused at open, with a message saying so, and
// left as it is.
func TestNewerSchemaRefused(t *testing.T) {
	dsn := testDSN(t)
	db, err := versions.Open(dsn, versions.Options{})
	ok(t, err)
	s := newStore(t, db, versions.StoreParams{})
	create(t, db, s.ID, "/kept.md", "kept")
	ok(t, db.Close())
	raw := openRaw(t, dsn)
	_, err = raw.Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, '9999_from_the_future.sql', 0)")
	ok(t, err)
	_, err = versions.Open(dsn, versions.Options{})
	if err == nil || !strings.Contains(err.Error(), "9999_from_the_future.sql") || !strings.Contains(err.Error(), "newer schema") {
		t.Fatalf("opening a database with a newer schema: err %v, want a refusal naming the unknown migration", err)
	}
	_, err = raw.Exec("DELETE FROM schema_migrations WHERE version = 9999")
	ok(t, err)
	db, err = versions.Open(dsn, versions.Options{})
	ok(t, err)
	defer db.Close()
	if _, err := db.GetMemory(ctx, s.ID, "/kept.md"); err != nil {
		t.Fatalf("the refused open changed the database: %v", err)
	}
}

// A migration does not run while a mount holds a live lease on the
// database: that mount runs an older memfs, which would go on writing the
// old way. The refusal comes once the leases had time to lapse (a mount
// killed without ending its lease does not hold the upgrade up), names
// the mounts whose leases are still renewed, and changes nothing. A
// database whose schema is current opens beside live mounts, as every
// mount of one build does.
func TestMigrationRefusedUnderLiveMounts(t *testing.T) {
	dsn := testDSN(t)
	db, err := versions.Open(dsn, versions.Options{})
	ok(t, err)
	s := newStore(t, db, versions.StoreParams{})
	create(t, db, s.ID, "/kept.md", "kept")
	sess, err := db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: s.ID}})
	ok(t, err)
	ok(t, db.StartMount(ctx, versions.MountLease{ID: "mnt_old", SessionID: sess.ID, Host: "agent-7", Mountpoint: "/mnt/memory"}))
	ok(t, db.StartMount(ctx, versions.MountLease{ID: "mnt_dead", SessionID: sess.ID, Host: "agent-8", Mountpoint: "/mnt/memory"}))
	ok(t, db.Close())

	raw := openRaw(t, dsn)
	// mnt_old is renewed for the rest of the test, as a running daemon's
	// lease is; mnt_dead's lapses.
	_, err = raw.Exec("UPDATE mounts SET expires_at = expires_at + $1 WHERE id = 'mnt_old'", int64(time.Hour))
	ok(t, err)
	var last int
	var name string
	ok(t, raw.QueryRow("SELECT version, name FROM schema_migrations ORDER BY version DESC LIMIT 1").Scan(&last, &name))
	// The last migration as not yet applied: what an older build's
	// database looks like to this one.
	_, err = raw.Exec(fmt.Sprintf("DELETE FROM schema_migrations WHERE version = %d", last))
	ok(t, err)
	_, err = versions.Open(dsn, versions.Options{})
	if versions.ErrorCode(err) != versions.CodeConflict || !strings.Contains(err.Error(), "agent-7:/mnt/memory") ||
		strings.Contains(err.Error(), "agent-8") || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "stop them") {
		t.Fatalf("migrating under a live mount: err %v, want a conflict naming the live mount (not the lapsed one) and the migration", err)
	}
	var n int
	ok(t, raw.QueryRow(fmt.Sprintf("SELECT count(*) FROM schema_migrations WHERE version = %d", last)).Scan(&n))
	if n != 0 {
		t.Fatalf("the refused migration was recorded")
	}

	_, err = raw.Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, 0)", last, name)
	ok(t, err)
	db, err = versions.Open(dsn, versions.Options{})
	ok(t, err)
	defer db.Close()
	if _, err := db.GetMemory(ctx, s.ID, "/kept.md"); err != nil {
		t.Fatalf("opening beside a live mount of the same schema: %v", err)
	}
}

// A handle opened before a newer memfs upgraded the schema takes no lease
// on it, whichever way it would: a mount's start, a run's session, a
// lapsed lease taken again. On PostgreSQL a lease waits for a migration
// running and then sees it.
func TestNoLeaseOnANewerSchema(t *testing.T) {
	dsn := testDSN(t)
	db, err := versions.Open(dsn, versions.Options{})
	ok(t, err)
	defer db.Close()
	s := newStore(t, db, versions.StoreParams{})
	sess, err := db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: s.ID}})
	ok(t, err)
	lapsing := versions.MountLease{ID: "mnt_lapsing", SessionID: sess.ID, Host: "agent-7", Mountpoint: "/mnt/memory"}
	ok(t, db.StartMount(ctx, lapsing))
	raw := openRaw(t, dsn)
	_, err = raw.Exec("UPDATE mounts SET expires_at = expires_at - $1 WHERE id = 'mnt_lapsing'", int64(time.Hour))
	ok(t, err)
	const future = "9999_from_the_future.sql"
	_, err = raw.Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, $1, 0)", future)
	ok(t, err)
	defer raw.Exec("DELETE FROM schema_migrations WHERE version = 9999")
	refused := func(what string, err error) {
		t.Helper()
		if versions.ErrorCode(err) != versions.CodeConflict || !strings.Contains(err.Error(), future) {
			t.Fatalf("%s on a newer schema: err %v, want a conflict naming the migration", what, err)
		}
	}
	leases := func() (n int) {
		t.Helper()
		ok(t, raw.QueryRow("SELECT count(*) FROM mounts").Scan(&n))
		return n
	}

	refused("StartMount", db.StartMount(ctx, versions.MountLease{ID: "mnt_late", SessionID: sess.ID, Host: "agent-8", Mountpoint: "/mnt/memory"}))
	l := lapsing
	lapsed, err := db.RenewMount(ctx, &l)
	refused("RenewMount of a lapsed lease", err)
	if lapsed || l.Epoch != lapsing.Epoch {
		t.Fatalf("the refused renewal took a new lease: lapsed %v, epoch %d", lapsed, l.Epoch)
	}
	_, err = db.CreateSessionFrom(ctx, versions.SessionParams{Resources: []versions.AttachmentParams{{StoreID: s.ID}},
		Lease: &versions.MountLease{ID: "mnt_run", Host: "agent-9", Mountpoint: "/mnt/memory"}})
	refused("a run's session with its lease", err)
	if n := leases(); n != 1 {
		t.Fatalf("%d leases after the refusals, want the lapsed one alone", n)
	}

	if !onPostgres() {
		return // SQLite's write lock orders a lease and a migration
	}
	_, err = raw.Exec("DELETE FROM schema_migrations WHERE version = 9999")
	ok(t, err)
	migration, err := raw.Begin()
	ok(t, err)
	defer migration.Rollback()
	_, err = migration.Exec("SELECT pg_advisory_xact_lock(469853103731)") // migrationLock
	ok(t, err)
	_, err = migration.Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, $1, 0)", future)
	ok(t, err)
	started := make(chan error, 1)
	go func() {
		started <- db.StartMount(ctx, versions.MountLease{ID: "mnt_racing", SessionID: sess.ID, Host: "agent-10", Mountpoint: "/mnt/memory"})
	}()
	select {
	case err := <-started:
		t.Fatalf("StartMount during a migration returned before it committed: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	ok(t, migration.Commit())
	refused("StartMount behind a migration", <-started)

	// A migration that holds its lock past the lease's lock timeout.
	_, err = raw.Exec("DELETE FROM schema_migrations WHERE version = 9999")
	ok(t, err)
	impatient, err := versions.Open(dsn, versions.Options{BusyTimeout: time.Second})
	ok(t, err)
	defer impatient.Close()
	live := versions.MountLease{ID: "mnt_live", SessionID: sess.ID, Host: "agent-12", Mountpoint: "/mnt/memory"}
	ok(t, impatient.StartMount(ctx, live))
	long, err := raw.Begin()
	ok(t, err)
	defer long.Rollback()
	_, err = long.Exec("SELECT pg_advisory_xact_lock(469853103731)")
	ok(t, err)
	// Neither a renewal nor the open of a current schema takes the
	// migrations' lock, so neither queues behind it.
	if lapsed, err := impatient.RenewMount(ctx, &live); err != nil || lapsed {
		t.Fatalf("renewing a live lease while the migrations' lock is held: lapsed %v, err %v", lapsed, err)
	}
	again, err := versions.Open(dsn, versions.Options{BusyTimeout: time.Second})
	if err != nil {
		t.Fatalf("opening a current schema while the migrations' lock is held: %v", err)
	}
	again.Close()
	err = impatient.StartMount(ctx, versions.MountLease{ID: "mnt_impatient", SessionID: sess.ID, Host: "agent-11", Mountpoint: "/mnt/memory"})
	if versions.ErrorCode(err) != versions.CodeUnavailable || !strings.Contains(err.Error(), "being migrated") {
		t.Fatalf("StartMount behind a long migration: err %v, want unavailable, saying the database is being migrated", err)
	}
}
