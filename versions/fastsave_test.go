package versions_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/memfs/memfs/guard/guardtest"
	"github.com/memfs/memfs/versions"
)

// twoHandles opens the same database twice, as two daemons do.
func twoHandles(t *testing.T) (a, b *versions.DB) {
	t.Helper()
	dsn := testDSN(t)
	for _, p := range []**versions.DB{&a, &b} {
		db, err := versions.Open(dsn, versions.Options{})
		ok(t, err)
		t.Cleanup(func() { db.Close() })
		*p = db
	}
	return a, b
}

// saveKnown saves content over m as a mount does: with the head it knows.
func saveKnown(db *versions.DB, storeID string, m *versions.Memory, content string, strict bool) (versions.Change, error) {
	return db.Save(ctx, versions.SaveReq{StoreID: storeID, Path: m.Path, Content: content, By: me, MemoryID: m.ID,
		HeadVersionID: m.VersionID, HeadSHA256: m.ContentSHA256, HeadContent: m.Content, BaseVersionID: m.VersionID, Strict: strict})
}

// prime makes db save once through the path that reads the store, as a
// daemon's first save does, so that its later saves of the store may be
// written by one statement.
func prime(t *testing.T, db *versions.DB, storeID string) {
	t.Helper()
	m := create(t, db, storeID, "/prime-"+db.Origin(), "x")
	_, err := saveKnown(db, storeID, m, "y", false)
	ok(t, err)
}

// A save with the head it knows commits the version the head now is: the
// id the engine returns is the memory's (moved by the version's insert),
// with its content, and the path's history and the actor's versions hold it.
func TestKnownHeadSave(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	prime(t, db, s.ID)
	m := create(t, db, s.ID, "/notes/a.md", "one")
	var saved versions.Memory
	db.HoldSweeps()
	n := db.Statements()
	ch, err := db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: m.Path, Content: "two", By: me, MemoryID: m.ID,
		HeadVersionID: m.VersionID, HeadSHA256: m.ContentSHA256, HeadContent: m.Content, BaseVersionID: m.VersionID, Memory: &saved})
	ok(t, err)
	// SQLite: BEGIN, the version's INSERT, COMMIT. PostgreSQL: memfs_save,
	// which commits alone (one round trip).
	if got, want := db.Statements()-n, int64(3); onPostgres() && got > 1 || got > want {
		t.Fatalf("the save ran %d statements, want at most %d (1 on PostgreSQL)", got, want)
	}
	got, err := db.GetMemory(ctx, s.ID, m.ID)
	ok(t, err)
	if saved.Ino != m.Ino || !saved.CreatedAt.Equal(got.CreatedAt) || saved.VersionID != got.VersionID || saved.Seq != ch.Seq ||
		*saved.Content != "two" || saved.ContentSize != 3 || !saved.UpdatedAt.Equal(got.UpdatedAt) || saved.Path != got.Path {
		t.Fatalf("the memory as saved %+v, as read %+v", saved, got)
	}
	if ch.Op != versions.ChangeModified || ch.Seq == 0 || ch.Conflict || got.VersionID != ch.VersionID || *got.Content != "two" ||
		got.ContentSHA256 != ch.SHA256 || got.ContentSize != 3 || !got.UpdatedAt.Equal(ch.At) || got.Path != "/notes/a.md" {
		t.Fatalf("change %+v, memory after it %+v", ch, got)
	}
	ph, err := db.PathHistory(ctx, s.ID, "/notes/a.md", versions.PathHistoryOptions{})
	ok(t, err)
	if len(ph.Data) != 2 || ph.Data[0].ID != ch.VersionID || ph.Data[1].ID != m.VersionID {
		t.Fatalf("path history: %+v", ph.Data)
	}
	if v, err := db.GetVersion(ctx, s.ID, ch.VersionID); err != nil || *v.Content != "two" {
		t.Fatalf("GetVersion %s: %+v %v", ch.VersionID, v, err)
	}
	st, err := db.GetStore(ctx, s.ID)
	ok(t, err)
	if st.MemoryCount != 2 {
		t.Fatalf("%d memories counted, want 2", st.MemoryCount)
	}
}

// A save whose known head is no longer the head (another daemon saved)
// is decided again: marked a conflict, or with Strict refused.
func TestKnownHeadStale(t *testing.T) {
	a, b := twoHandles(t)
	s := newStore(t, a, versions.StoreParams{})
	prime(t, a, s.ID)
	prime(t, b, s.ID)
	m := create(t, a, s.ID, "/a.md", "one")
	first, err := saveKnown(a, s.ID, m, "two", false)
	ok(t, err)
	if _, err := saveKnown(b, s.ID, m, "three", true); versions.ErrorCode(err) != versions.CodeStale {
		t.Fatalf("a strict save over a stale head: %v, want %v", err, versions.CodeStale)
	}
	ch, err := saveKnown(b, s.ID, m, "three", false)
	ok(t, err)
	h := history(t, a, s.ID, m.ID)
	if !ch.Conflict || len(h) != 3 || h[0].ID != ch.VersionID || h[1].ID != first.VersionID || !h[0].Conflict {
		t.Fatalf("change %+v; history %+v", ch, h)
	}
}

// The history quota is checked by each save's statement against the
// store's counters: two daemons that each last saw room cannot both use it.
func TestKnownHeadQuotaTwoDaemons(t *testing.T) {
	a, b := twoHandles(t)
	s := newStore(t, a, versions.StoreParams{MaxHistoryBytes: 8000})
	prime(t, a, s.ID)
	prime(t, b, s.ID)
	ma := create(t, a, s.ID, "/a.md", "a")
	mb := create(t, a, s.ID, "/b.md", "b")
	st, err := a.GetStore(ctx, s.ID)
	ok(t, err)
	room := st.MaxHistoryBytes - st.HistoryBytes
	// Each save alone fits; the two together do not.
	big := strings.Repeat("x", room-versions.VersionRecordBytes-2*len("/a.md")-len(me.ID)-10)
	if _, err := saveKnown(a, s.ID, ma, big, false); err != nil {
		t.Fatalf("the first save: %v", err)
	}
	if _, err := saveKnown(b, s.ID, mb, big, false); versions.ErrorCode(err) != versions.CodeOverQuota {
		t.Fatalf("the second daemon's save past the quota: %v, want %v", err, versions.CodeOverQuota)
	}
	st, err = b.GetStore(ctx, s.ID)
	ok(t, err)
	if st.HistoryBytes > st.MaxHistoryBytes {
		t.Fatalf("history %d bytes, over the quota of %d", st.HistoryBytes, st.MaxHistoryBytes)
	}
}

// A store archived or whose guard was turned on by another daemon since
// this one last read it refuses the save as it would have then.
func TestKnownHeadStoreChanged(t *testing.T) {
	a, b := twoHandles(t)
	off := versions.GuardPolicy("off")
	s := newStore(t, a, versions.StoreParams{Guard: off})
	prime(t, b, s.ID)
	m := create(t, a, s.ID, "/a.md", "one")
	refuse := versions.GuardPolicy("refuse")
	_, err := a.UpdateStore(ctx, s.ID, versions.StoreUpdate{Guard: &refuse})
	ok(t, err)
	c := guardtest.All()[0]
	if _, err := saveKnown(b, s.ID, m, c.Text, false); versions.ErrorCode(err) != versions.CodeCredential {
		t.Fatalf("a credential saved after the guard was turned on: %v, want %v", err, versions.CodeCredential)
	}
	_, err = a.ArchiveStore(ctx, s.ID)
	ok(t, err)
	if _, err := saveKnown(b, s.ID, m, "two", false); versions.ErrorCode(err) != versions.CodeReadOnly {
		t.Fatalf("a save to an archived store: %v, want %v", err, versions.CodeReadOnly)
	}
}

// A deletion through a mount keeps the directory it empties, and one
// whose precondition fails deletes nothing.
func TestDeleteKeepsEmptiedDir(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	m1 := create(t, db, s.ID, "/d/one.md", "1")
	m2 := create(t, db, s.ID, "/d/two.md", "2")
	if err := db.DeleteMemory(ctx, s.ID, m1.ID, versions.MemoryDelete{IfSHA256: m2.ContentSHA256}, me); versions.ErrorCode(err) != versions.CodePreconditionFailed {
		t.Fatalf("a deletion whose precondition fails: %v", err)
	}
	ok(t, db.DeleteMemory(ctx, s.ID, m1.ID, versions.MemoryDelete{KeepParentDir: true, IfSHA256: strings.ToUpper(m1.ContentSHA256)}, me))
	ok(t, db.DeleteMemory(ctx, s.ID, "/d/two.md", versions.MemoryDelete{KeepParentDir: true}, me))
	if e, err := db.Stat(ctx, s.ID, "/d"); err != nil || !e.Dir {
		t.Fatalf("the emptied directory: %+v %v", e, err)
	}
	h := history(t, db, s.ID, m1.ID)
	if len(h) != 2 || h[0].Operation != versions.OpDeleted || h[0].Path == nil || *h[0].Path != "/d/one.md" {
		t.Fatalf("history %+v", h)
	}
	ph, err := db.PathHistory(ctx, s.ID, "/d/two.md", versions.PathHistoryOptions{})
	ok(t, err)
	st, err := db.GetStore(ctx, s.ID)
	ok(t, err)
	if len(ph.Data) != 2 || st.MemoryCount != 0 {
		t.Fatalf("path history %+v; %d memories counted", ph.Data, st.MemoryCount)
	}
	if err := db.DeleteMemory(ctx, s.ID, m1.ID, versions.MemoryDelete{}, me); versions.ErrorCode(err) != versions.CodeNotFound {
		t.Fatalf("deleting a deleted memory: %v", err)
	}
}

// A deletion is one statement on PostgreSQL (memfs_delete finds the
// store's row itself), and on SQLite the version's INSERT in a
// transaction, even by a handle that has not read the store before.
func TestDeleteOneStatement(t *testing.T) {
	a, b := twoHandles(t)
	s := newStore(t, a, versions.StoreParams{})
	m := create(t, a, s.ID, "/gone.md", "x")
	b.HoldSweeps()
	n := b.Statements()
	ok(t, b.DeleteMemory(ctx, s.ID, m.ID, versions.MemoryDelete{}, me))
	// SQLite: BEGIN, the store's row number, the version's INSERT, COMMIT.
	if got, want := b.Statements()-n, int64(4); onPostgres() && got > 1 || got > want {
		t.Fatalf("the deletion ran %d statements, want at most %d (1 on PostgreSQL)", got, want)
	}
	if _, err := a.GetMemory(ctx, s.ID, m.ID); versions.ErrorCode(err) != versions.CodeNotFound {
		t.Fatalf("the deleted memory: %v", err)
	}
}

// A new memory's save is the version's insert and the memory's (one
// round trip on PostgreSQL), with the memory, its history and the store's
// count as the save that reads everything leaves them.
func TestKnownCreate(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	prime(t, db, s.ID)
	var saved versions.Memory
	db.HoldSweeps()
	n := db.Statements()
	ch, err := db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: "/notes/b.md", Content: "new", By: me, Memory: &saved})
	ok(t, err)
	// SQLite: BEGIN, the version's INSERT, the memory's, COMMIT.
	// PostgreSQL: memfs_create, which commits alone.
	if got, want := db.Statements()-n, int64(4); onPostgres() && got > 1 || got > want {
		t.Fatalf("the create ran %d statements, want at most %d (1 on PostgreSQL)", got, want)
	}
	got, err := db.GetMemory(ctx, s.ID, ch.MemoryID)
	ok(t, err)
	if ch.Op != versions.ChangeCreated || got.VersionID != ch.VersionID || *got.Content != "new" || got.ContentSHA256 != ch.SHA256 ||
		got.Path != "/notes/b.md" || !got.CreatedAt.Equal(ch.At) || saved.Ino != got.Ino || saved.ID != got.ID || saved.Seq != ch.Seq {
		t.Fatalf("change %+v, saved %+v, memory after it %+v", ch, saved, got)
	}
	h := history(t, db, s.ID, got.ID)
	if len(h) != 1 || h[0].ID != ch.VersionID || h[0].Operation != versions.OpCreated || h[0].Conflict {
		t.Fatalf("history %+v", h)
	}
	ph, err := db.PathHistory(ctx, s.ID, "/notes/b.md", versions.PathHistoryOptions{})
	ok(t, err)
	if len(ph.Data) != 1 || ph.Data[0].ID != ch.VersionID {
		t.Fatalf("path history: %+v", ph.Data)
	}
	st, err := db.GetStore(ctx, s.ID)
	ok(t, err)
	if st.MemoryCount != 2 {
		t.Fatalf("%d memories counted, want 2", st.MemoryCount)
	}
	if l, err := db.ReadDir(ctx, s.ID, "/notes"); err != nil || len(l) != 1 || l[0].Name != "b.md" {
		t.Fatalf("listing of /notes: %+v %v", l, err)
	}
}

// A create whose path is not free is decided again by the save that
// reads, with that save's answers: the memory there gets the version (an
// API create, Exclusive, is refused), and a path below a file or at a
// directory is refused.
func TestKnownCreatePathTaken(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	prime(t, db, s.ID)
	m := create(t, db, s.ID, "/a/b.md", "one")
	ch, err := db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: "/a/b.md", Content: "two", By: me})
	ok(t, err)
	if ch.Op != versions.ChangeModified || ch.MemoryID != m.ID {
		t.Fatalf("a save at a memory's path: %+v, want a version of %s", ch, m.ID)
	}
	ok(t, db.MakeDir(ctx, s.ID, "/kept"))
	for _, c := range []struct {
		path      string
		exclusive bool
	}{{"/a/b.md", true}, {"/a/b.md/c.md", false}, {"/a", false}, {"/kept", false}} {
		if _, err := db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: c.path, Content: "x", By: me, Exclusive: c.exclusive}); versions.ErrorCode(err) != versions.CodePathConflict {
			t.Errorf("a create at %s (exclusive %v): %v, want %v", c.path, c.exclusive, err, versions.CodePathConflict)
		}
	}
	if l, err := db.ReadDir(ctx, s.ID, "/a"); err != nil || len(l) != 1 {
		t.Fatalf("listing of /a after the refusals: %+v %v", l, err)
	}
}

// Two daemons creating in one store never both see room: the limit is
// counted from the rows, pending files included.
func TestKnownCreateLimitTwoDaemons(t *testing.T) {
	a, b := twoHandles(t)
	s := newStore(t, a, versions.StoreParams{MaxMemories: 4})
	prime(t, a, s.ID)
	prime(t, b, s.ID)
	create(t, a, s.ID, "/one.md", "1")
	holdLease(t, a, "mount-a")
	if _, err := a.SavePending(ctx, s.ID, owned("mount-a"), "/tmp.md", "t", me, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: "/two.md", Content: "2", By: me}); versions.ErrorCode(err) != versions.CodeStoreFull {
		t.Fatalf("a create past the limit: %v, want %v", err, versions.CodeStoreFull)
	}
	st, err := a.GetStore(ctx, s.ID)
	ok(t, err)
	if st.MemoryCount != 3 {
		t.Fatalf("%d memories, want 3", st.MemoryCount)
	}
}

// A caller that knows the head's version but not its content (an atomic
// save over a file this mount never read) still saves in one statement;
// the content already the head's writes nothing, and a credential anywhere
// in the content is refused as the save that reads refuses it.
func TestKnownHeadVersionOnly(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	prime(t, db, s.ID)
	m := create(t, db, s.ID, "/a.md", "one")
	save := func(content string) (versions.Change, error) {
		return db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: m.Path, Content: content, By: me, MemoryID: m.ID,
			HeadVersionID: m.VersionID, BaseVersionID: m.VersionID})
	}
	db.HoldSweeps()
	n := db.Statements()
	if _, err := save("one"); err != nil {
		t.Fatal(err)
	}
	if h := history(t, db, s.ID, m.ID); len(h) != 1 {
		t.Fatalf("the head's own content saved again: %d versions, want 1", len(h))
	}
	n = db.Statements()
	ch, err := save("two")
	ok(t, err)
	if got, want := db.Statements()-n, int64(3); onPostgres() && got > 1 || got > want {
		t.Fatalf("the save ran %d statements, want at most %d (1 on PostgreSQL)", got, want)
	}
	if got, err := db.GetMemory(ctx, s.ID, m.ID); err != nil || got.VersionID != ch.VersionID || *got.Content != "two" || ch.Conflict {
		t.Fatalf("change %+v, memory after it %+v %v", ch, got, err)
	}
	m2, err := db.GetMemory(ctx, s.ID, m.ID)
	ok(t, err)
	m = m2
	if _, err := save("two\n" + guardtest.All()[0].Text); versions.ErrorCode(err) != versions.CodeCredential {
		t.Fatalf("a credential saved over a head known by version only: %v, want %v", err, versions.CodeCredential)
	}
}

// A rename within a directory to a free name is one statement (one round
// trip on PostgreSQL): the memory keeps its id, inode and content, and its
// history holds the move; a name that is taken is decided by the rename
// that reads, with its answers.
func TestKnownRename(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	prime(t, db, s.ID)
	m := create(t, db, s.ID, "/d/a.md", "one")
	db.HoldSweeps()
	n := db.Statements()
	moved, err := db.Rename(ctx, s.ID, "/d/a.md", "/d/b.md", false, me)
	ok(t, err)
	if got, want := db.Statements()-n, int64(3); onPostgres() && got > 1 || got > want {
		t.Fatalf("the rename ran %d statements, want at most %d (1 on PostgreSQL)", got, want)
	}
	got, err := db.GetMemory(ctx, s.ID, "/d/b.md")
	ok(t, err)
	if got.ID != m.ID || got.Ino != m.Ino || *got.Content != "one" || moved.ID != m.ID || moved.Ino != m.Ino || moved.VersionID != got.VersionID ||
		moved.Seq == 0 || moved.Path != "/d/b.md" || moved.ContentSHA256 != m.ContentSHA256 || !moved.CreatedAt.Equal(m.CreatedAt) {
		t.Fatalf("moved %+v, memory after the rename %+v, before %+v", moved, got, m)
	}
	h := history(t, db, s.ID, m.ID)
	if len(h) != 2 || h[0].PreviousPath != "/d/a.md" || h[0].Path == nil || *h[0].Path != "/d/b.md" {
		t.Fatalf("history %+v", h)
	}
	if v, err := db.GetVersion(ctx, s.ID, h[0].ID); err != nil || v.Content == nil || *v.Content != "one" {
		t.Fatalf("the move's version: %+v %v", v, err)
	}
	if _, err := db.GetMemory(ctx, s.ID, "/d/a.md"); versions.ErrorCode(err) != versions.CodeNotFound {
		t.Fatalf("the old path after the rename: %v", err)
	}
	c := create(t, db, s.ID, "/d/c.md", "two")
	if _, err := db.Rename(ctx, s.ID, "/d/b.md", "/d/c.md", true, me); versions.ErrorCode(err) != versions.CodePathConflict {
		t.Fatalf("a rename onto a memory without replacing: %v, want %v", err, versions.CodePathConflict)
	}
	ok(t, db.MakeDir(ctx, s.ID, "/d/kept"))
	if _, err := db.Rename(ctx, s.ID, "/d/b.md", "/d/kept", false, me); versions.ErrorCode(err) != versions.CodeIsDir {
		t.Fatalf("a rename onto a directory: %v, want %v", err, versions.CodeIsDir)
	}
	over, err := db.Rename(ctx, s.ID, "/d/b.md", "/d/c.md", false, me)
	ok(t, err)
	if over.ID != c.ID {
		t.Fatalf("a rename over a memory gives it a version: %+v, want memory %s", over, c.ID)
	}
	if got, err := db.GetMemory(ctx, s.ID, "/d/c.md"); err != nil || *got.Content != "one" {
		t.Fatalf("the memory renamed over: %+v %v", got, err)
	}
	_, err = db.ArchiveStore(ctx, s.ID)
	ok(t, err)
	if _, err := db.Rename(ctx, s.ID, "/d/c.md", "/d/e.md", false, me); versions.ErrorCode(err) != versions.CodeReadOnly {
		t.Fatalf("a rename in an archived store: %v, want %v", err, versions.CodeReadOnly)
	}
}

// The rows that go with a version (the memory's row at its head, the
// index of each path and actor a memory's versions had) are what the
// versions say after the writes of saves by several actors: each kind that
// takes one statement, those that read and decide (a move to another
// directory, a rename over a file), a restore, and an import. The insert
// triggers on versions write those rows, for every writer.
func TestVersionsKeepTheirRows(t *testing.T) {
	dsn := testDSN(t)
	db := openOn(t, dsn)
	s := newStore(t, db, versions.StoreParams{})
	prime(t, db, s.ID)
	by := func(name string) versions.Actor { return versions.SessionActor("sesn_" + name) }
	db.HoldSweeps()
	n := db.Statements()
	ch, err := db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: "/d/a.md", Content: "one", By: by("ann")})
	ok(t, err)
	m, err := db.GetMemory(ctx, s.ID, ch.MemoryID)
	ok(t, err)
	_, err = db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: m.Path, Content: "two", By: by("bob"), MemoryID: m.ID,
		HeadVersionID: m.VersionID, HeadSHA256: m.ContentSHA256, HeadContent: m.Content, BaseVersionID: m.VersionID})
	ok(t, err)
	_, err = db.Rename(ctx, s.ID, "/d/a.md", "/d/b.md", false, by("cy"))
	ok(t, err)
	gone, err := db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: "/d/c.md", Content: "three", By: by("dee")})
	ok(t, err)
	ok(t, db.DeleteMemory(ctx, s.ID, gone.MemoryID, versions.MemoryDelete{}, by("eve")))
	_, err = db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: "/e.md", Content: "four", By: by("fay")})
	ok(t, err)
	// Six writes and a read: more means one of them read and decided.
	if got := db.Statements() - n; onPostgres() && got > 7 {
		t.Fatalf("the writes ran %d statements: not all of them took one", got)
	}
	// Writes that read and decide.
	five := "five"
	_, err = db.UpdateMemory(ctx, s.ID, "/e.md", versions.MemoryUpdate{Content: &five}, by("gus"))
	ok(t, err)
	ok(t, db.MakeDir(ctx, s.ID, "/f"))
	_, err = db.Rename(ctx, s.ID, "/e.md", "/f/e.md", false, by("hal"))
	ok(t, err)
	_, err = db.Restore(ctx, s.ID, gone.VersionID, "", by("ivy"))
	ok(t, err)
	ok(t, db.DeleteMemory(ctx, s.ID, "/d/b.md", versions.MemoryDelete{}, by("jon")))
	create(t, db, s.ID, "/g.md", "six")
	create(t, db, s.ID, "/h.md", "seven")
	_, err = db.Rename(ctx, s.ID, "/g.md", "/h.md", false, by("kim")) // deletes /g.md's memory
	ok(t, err)

	check := func(when, dsn string) {
		t.Helper()
		raw := openRaw(t, dsn)
		// Rows the versions call for and that are missing, and with
		// extra, rows they do not call for (an actor's entry may outlive
		// its versions: not checked).
		rows := func(what, kept, want string, extra bool) {
			t.Helper()
			qs := []string{want + " EXCEPT " + kept}
			if extra {
				qs = append(qs, kept+" EXCEPT "+want)
			}
			for _, q := range qs {
				var n int
				ok(t, raw.QueryRow("SELECT count(*) FROM ("+q+") x").Scan(&n))
				if n != 0 {
					t.Fatalf("%s, %s: %d rows of %q", when, what, n, q)
				}
			}
		}
		rows("paths", "SELECT store, path, memory_id FROM path_memories",
			"SELECT DISTINCT store, path, memory_id FROM versions WHERE path IS NOT NULL", true)
		rows("actors", "SELECT actor_id, memory_id FROM actor_memories",
			"SELECT DISTINCT actor_id, memory_id FROM versions WHERE actor_id IS NOT NULL", false)
		rows("memories", "SELECT id, path, head, sha, size, updated_at FROM memories",
			`SELECT v.memory_id, v.path, v.seq, v.sha, v.size, v.created_at FROM versions v
			WHERE v.operation <> 'deleted' AND v.seq = (SELECT max(seq) FROM versions w WHERE w.memory_id = v.memory_id)`, true)
		var actors int
		ok(t, raw.QueryRow("SELECT count(DISTINCT actor_id) FROM versions").Scan(&actors))
		if actors != 12 { // the eleven above and me (prime, create)
			t.Fatalf("%s: the versions have %d actors, want 12", when, actors)
		}
	}
	check("after the saves", dsn)

	other := testDSN(t)
	_, err = openOn(t, other).Import(ctx, bytes.NewReader(exportBytes(t, db, s.ID)))
	ok(t, err)
	check("after an import into another database", other)
}
