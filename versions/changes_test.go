package versions_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/memfs/memfs/versions"
)

func TestChanges(t *testing.T) {
	dsn := testDSN(t)
	db, other := openOn(t, dsn), openOn(t, dsn)
	if db.Origin() == "" || db.Origin() == other.Origin() {
		t.Fatalf("origins %q %q", db.Origin(), other.Origin())
	}
	s := newStore(t, db, versions.StoreParams{})
	unrelated := newStore(t, db, versions.StoreParams{Name: "unrelated"})
	start, err := db.FeedHead(ctx, s.ID)
	ok(t, err)
	if again, _, err := db.Changes(ctx, s.ID, start); err != nil || len(again) != 0 {
		t.Fatalf("changes after the head of an empty store: %v %v", again, err)
	}

	since := func(after versions.FeedPos) ([]string, versions.FeedPos) {
		t.Helper()
		cs, top, err := db.Changes(ctx, s.ID, after)
		ok(t, err)
		var paths []string
		for _, c := range cs {
			if c.StoreID != s.ID {
				t.Fatalf("change %+v of another store", c)
			}
			paths = append(paths, c.Paths()...)
		}
		if again, same, err := db.Changes(ctx, s.ID, top); err != nil || len(again) != 0 || same != top {
			t.Fatalf("changes after the position returned: %v %v", again, err)
		}
		return paths, top
	}

	m := create(t, db, s.ID, "/a", "x")
	create(t, db, unrelated.ID, "/u", "x")
	paths, top := since(start)
	if !slices.Equal(paths, []string{"/a"}) {
		t.Fatalf("after create: %v", paths)
	}
	if head, err := db.FeedHead(ctx, s.ID); err != nil || head != top {
		t.Fatalf("FeedHead %v, want the position Changes reached %v (%v)", head, top, err)
	}
	t.Run("rename-records-both-paths", func(t *testing.T) {
		update(t, db, s.ID, m.ID, versions.MemoryUpdate{Path: ptr("/b")})
		var got []string
		got, top = since(top)
		slices.Sort(got)
		if !slices.Equal(got, []string{"/a", "/b"}) {
			t.Fatalf("after rename: %v", got)
		}
	})
	t.Run("dirs-and-deletes", func(t *testing.T) {
		ok(t, db.MakeDir(ctx, s.ID, "/d"))
		ok(t, db.RemoveDir(ctx, s.ID, "/d"))
		ok(t, db.DeleteMemory(ctx, s.ID, m.ID, versions.MemoryDelete{}, me))
		var got []string
		got, top = since(top)
		if !slices.Equal(got, []string{"/d", "/d", "/b"}) {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("noop-records-nothing", func(t *testing.T) {
		x := create(t, db, s.ID, "/x", "same")
		_, top = since(top)
		update(t, db, s.ID, x.ID, versions.MemoryUpdate{Content: ptr("same")})
		if got, _ := since(top); len(got) != 0 {
			t.Fatalf("no-op recorded %v", got)
		}
	})
	t.Run("other-handle-sees-origin", func(t *testing.T) {
		_, err := other.CreateMemory(ctx, s.ID, "/from-other", "x", me)
		ok(t, err)
		ok(t, other.MakeDir(ctx, s.ID, "/dir-from-other"))
		cs, _, err := db.Changes(ctx, s.ID, top)
		ok(t, err)
		if len(cs) != 2 || cs[0].Origin != other.Origin() || cs[0].Path != "/from-other" ||
			cs[1].Origin != other.Origin() || cs[1].Path != "/dir-from-other" {
			t.Fatalf("changes %+v", cs)
		}
		_, top = since(top)
	})
	t.Run("redacted-version-names-no-path", func(t *testing.T) {
		r := create(t, db, s.ID, "/r", "secret")
		update(t, db, s.ID, r.ID, versions.MemoryUpdate{Content: ptr("public")})
		_, err := db.RedactVersion(ctx, s.ID, r.VersionID, me)
		ok(t, err)
		// The save of "public", and the redaction as a change of /r's
		// history: the redacted version itself names no path any more.
		cs, _, err := db.Changes(ctx, s.ID, top)
		ok(t, err)
		got, _ := since(top)
		if !slices.Equal(got, []string{"/r", "/r"}) || cs[1].Op != versions.ChangeRedacted {
			t.Fatalf("got %v: %+v", got, cs)
		}
	})
	t.Run("store-deletion-recorded", func(t *testing.T) {
		_, top = since(top)
		ok(t, db.DeleteStore(ctx, s.ID))
		got, _ := since(top)
		if !slices.Equal(got, []string{"/"}) {
			t.Fatalf("got %v", got)
		}
	})
}

// WaitFeed returns once another handle commits, and not before.
func TestWaitFeed(t *testing.T) {
	dsn := testDSN(t)
	db, writer := openOn(t, dsn), openOn(t, dsn)
	s := newStore(t, writer, versions.StoreParams{})
	// A newer store with versions: its seqs are all above s's, so a save
	// in s must wake the wait although it is not the largest seq.
	newer := newStore(t, writer, versions.StoreParams{})
	create(t, writer, newer.ID, "/later", "x")
	pos, err := db.FeedHead(ctx, s.ID)
	ok(t, err)
	mark := settledFeed(t, db)
	var wg sync.WaitGroup
	woke := make(chan versions.FeedMark, 1)
	wg.Go(func() {
		next, _, err := db.WaitFeed(ctx, mark, 5*time.Millisecond)
		if err != nil {
			t.Error(err)
		}
		woke <- next
	})
	select {
	case <-woke:
		t.Fatal("WaitFeed returned with nothing committed")
	case <-time.After(100 * time.Millisecond):
	}
	create(t, writer, s.ID, "/new", "x")
	select {
	case <-woke:
	case <-time.After(3 * time.Second):
		t.Fatal("WaitFeed did not return after a commit")
	}
	wg.Wait()
	cs, _, err := db.Changes(ctx, s.ID, pos)
	ok(t, err)
	if len(cs) != 1 || cs[0].Path != "/new" {
		t.Fatalf("changes %+v", cs)
	}
}

func TestChangesTrimmed(t *testing.T) {
	db, clk := openClocked(t)
	s := newStore(t, db, versions.StoreParams{})
	start, err := db.FeedHead(ctx, s.ID)
	ok(t, err)
	churn := func(n int) { // two changes rows each
		for i := range n {
			d := fmt.Sprint("/d", i)
			ok(t, db.MakeDir(ctx, s.ID, d))
			ok(t, db.RemoveDir(ctx, s.ID, d))
		}
	}
	churn(300)
	all, top, err := db.Changes(ctx, s.ID, start)
	ok(t, err)
	clk.advance(time.Hour)
	churn(550) // passes two trim points, each removing up to 1,024 old rows
	t.Run("old-rows-trimmed", func(t *testing.T) {
		cs, _, err := db.Changes(ctx, s.ID, start)
		ok(t, err)
		if len(cs) >= len(all)+1100 {
			t.Fatalf("%d changes kept, nothing trimmed", len(cs))
		}
		if cs[0].Seq <= all[len(all)-1].Seq {
			t.Fatalf("a change older than an hour survived: seq %d", cs[0].Seq)
		}
	})
	t.Run("recent-rows-kept", func(t *testing.T) {
		cs, _, err := db.Changes(ctx, s.ID, top)
		ok(t, err)
		if len(cs) != 1100 {
			t.Fatalf("%d recent changes, want 1100", len(cs))
		}
	})
}

// Each change says what it did, with the memory and version it did it to,
// in commit order; each write reports the position its version got.
func TestChangesSayWhatChanged(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	start, err := db.FeedHead(ctx, s.ID)
	ok(t, err)
	a := create(t, db, s.ID, "/a", "one")
	b := update(t, db, s.ID, a.ID, versions.MemoryUpdate{Content: ptr("two")})
	ok(t, db.MakeDir(ctx, s.ID, "/d"))
	c := update(t, db, s.ID, a.ID, versions.MemoryUpdate{Path: ptr("/d/a")})
	other := create(t, db, s.ID, "/o", "other")
	over, err := db.Rename(ctx, s.ID, "/o", "/d/a", false, me)
	ok(t, err)
	ok(t, db.DeleteMemory(ctx, s.ID, a.ID, versions.MemoryDelete{}, me))
	ok(t, db.RemoveDir(ctx, s.ID, "/d"))

	cs, pos, err := db.Changes(ctx, s.ID, start)
	ok(t, err)
	type row struct {
		op              versions.ChangeOp
		path, prev, mem string
		ver             string
		seq             int64
		size            int
	}
	want := []row{
		{versions.ChangeCreated, "/a", "", a.ID, a.VersionID, a.Seq, 3},
		{versions.ChangeModified, "/a", "", a.ID, b.VersionID, b.Seq, 3},
		{versions.ChangeDirMade, "/d", "", "", "", -1, 0},
		{versions.ChangeRenamed, "/d/a", "/a", a.ID, c.VersionID, c.Seq, 3},
		{versions.ChangeCreated, "/o", "", other.ID, other.VersionID, other.Seq, 5},
		// A file renamed onto another: the destination's memory takes the
		// content, the source's is deleted right after it.
		{versions.ChangeModified, "/d/a", "", a.ID, over.VersionID, over.Seq, 5},
		{versions.ChangeDeleted, "/o", "", other.ID, "", over.Seq + 1, 0},
		{versions.ChangeDeleted, "/d/a", "", a.ID, "", -2, 0},
		{versions.ChangeDirRemoved, "/d", "", "", "", -1, 0},
	}
	var got []row
	for _, c := range cs {
		r := row{c.Op, c.Path, c.PrevPath, c.MemoryID, c.VersionID, c.Seq, c.Size}
		if c.MemoryID == "" {
			r.seq = -1
		} else if c.Op != versions.ChangeDeleted {
			if c.VersionID == "" || len(c.SHA256) != 64 {
				t.Errorf("change %+v: no version or hash", c)
			}
		} else if c.VersionID == "" {
			t.Errorf("deletion %+v names no version", c)
		}
		if c.Op == versions.ChangeDeleted {
			r.ver = ""
		}
		if c.Op == versions.ChangeDeleted && c.Path == "/d/a" {
			r.seq = -2 // a deletion reports no position
		}
		if c.Origin != db.Origin() {
			t.Errorf("change %+v: origin %q, want %q", c, c.Origin, db.Origin())
		}
		got = append(got, r)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("changes\n got %v\nwant %v", got, want)
	}
	if head, err := db.FeedHead(ctx, s.ID); err != nil || head != pos {
		t.Fatalf("FeedHead %v, want %v (%v)", head, pos, err)
	}
	// Reading on from the middle returns the rest.
	mid, _, err := db.Changes(ctx, s.ID, pos)
	ok(t, err)
	if len(mid) != 0 {
		t.Fatalf("changes after the end: %+v", mid)
	}
}

// TestChangesNameTheirWriter: every kind of write records the origin its
// context gives (WithOrigin), on the one-statement paths and the others,
// so that a mount tells its own changes in the feed the moment they
// commit; a write without one records the handle's.
func TestChangesNameTheirWriter(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	start, err := db.FeedHead(ctx, s.ID)
	ok(t, err)
	o := versions.NewOrigin()
	mine := versions.WithOrigin(ctx, o)
	m, err := db.CreateMemory(mine, s.ID, "/a", "one", me)
	ok(t, err)
	_, err = db.Save(mine, versions.SaveReq{StoreID: s.ID, Path: "/a", Content: "two", By: me, MemoryID: m.ID,
		HeadVersionID: m.VersionID})
	ok(t, err)
	_, err = db.Rename(mine, s.ID, "/a", "/b", false, me)
	ok(t, err)
	ok(t, db.MakeDir(mine, s.ID, "/d"))
	_, err = db.Rename(mine, s.ID, "/b", "/d/b", false, me) // to another directory: read and decide
	ok(t, err)
	ok(t, db.DeleteMemory(mine, s.ID, m.ID, versions.MemoryDelete{KeepParentDir: true}, me))
	ok(t, db.RemoveDir(mine, s.ID, "/d"))
	create(t, db, s.ID, "/theirs", "x")

	cs, _, err := db.Changes(ctx, s.ID, start)
	ok(t, err)
	if len(cs) < 8 {
		t.Fatalf("%d changes, want at least 8: %+v", len(cs), cs)
	}
	for i, c := range cs {
		want := o.String()
		if i == len(cs)-1 {
			want = db.Origin()
		}
		if c.Origin != want {
			t.Errorf("change %d %s %s: origin %q, want %q", i, c.Op, c.Path, c.Origin, want)
		}
	}
}

// On PostgreSQL a commit's notification names the stores it changed and
// its origin: a wait on another store sleeps through it, a wait that
// declares the origin its own too, and a wait on the store wakes with
// that store moved.
func TestWaitFeedNamesStores(t *testing.T) {
	if !onPostgres() {
		t.Skip("SQLite sends no notifications: WaitFeed polls")
	}
	dsn := testDSN(t)
	db, writer := openOn(t, dsn), openOn(t, dsn)
	a := newStore(t, writer, versions.StoreParams{Name: "named a"})
	b := newStore(t, writer, versions.StoreParams{Name: "named b"})
	m := create(t, writer, a.ID, "/f", "one")
	mark := settledFeed(t, db, versions.Followed{Store: a.ID}, versions.Followed{Store: b.ID})
	mine := versions.NewOrigin()
	own := versions.WithOrigin(ctx, mine)
	writes := []struct {
		what  string
		write func(ctx context.Context) error
	}{
		{"a create", func(ctx context.Context) error { _, err := writer.CreateMemory(ctx, a.ID, "/g", "x", me); return err }},
		{"a save by path", func(ctx context.Context) error {
			_, err := writer.Save(ctx, versions.SaveReq{StoreID: a.ID, Path: "/f", Content: "two", By: me})
			return err
		}},
		{"a known head's save", func(ctx context.Context) error {
			m, err := writer.GetMemory(ctx, a.ID, m.ID)
			if err == nil {
				_, err = writer.Save(ctx, versions.SaveReq{StoreID: a.ID, Path: "/f", Content: "three", By: me,
					MemoryID: m.ID, HeadVersionID: m.VersionID})
			}
			return err
		}},
		{"a rename", func(ctx context.Context) error { _, err := writer.Rename(ctx, a.ID, "/g", "/h", false, me); return err }},
		{"a directory", func(ctx context.Context) error { return writer.MakeDir(ctx, a.ID, "/d") }},
		{"a deletion", func(ctx context.Context) error {
			return writer.DeleteMemory(ctx, a.ID, m.ID, versions.MemoryDelete{}, me)
		}},
	}
	asleep := func(what string, follow ...versions.Followed) {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		if _, _, err := db.WaitFeed(wctx, mark, 0, follow...); err == nil {
			t.Errorf("%s woke a wait on %+v", what, follow)
		}
	}
	for _, w := range writes {
		ok(t, w.write(own))
		asleep(w.what+" in one store", versions.Followed{Store: b.ID})
		asleep(w.what+" of its own", versions.Followed{Store: a.ID, Own: mine}, versions.Followed{Store: b.ID})
		next, moved, err := db.WaitFeed(ctx, mark, 0, versions.Followed{Store: b.ID}, versions.Followed{Store: a.ID})
		ok(t, err)
		if !slices.Equal(moved, []bool{false, true}) {
			t.Errorf("after %s in the second store, moved %v, want [false true]", w.what, moved)
		}
		mark = next
	}
	// Another origin's commit wakes the wait, whether its own came before
	// or after it. The wait begins once every notification is in (they
	// come in the order of their commits: a last one to b is heard last).
	for n, origins := range [][]context.Context{{ctx, own}, {own, ctx, own}} {
		for i, c := range origins {
			_, err := writer.CreateMemory(c, a.ID, fmt.Sprintf("/o%d-%d", n, i), "x", me)
			ok(t, err)
		}
		ok(t, writer.MakeDir(ctx, b.ID, fmt.Sprintf("/heard-%d", n)))
		wctx, cancel := context.WithTimeout(ctx, time.Second)
		_, _, err := db.WaitFeed(wctx, mark, 0, versions.Followed{Store: b.ID})
		ok(t, err)
		next, moved, err := db.WaitFeed(wctx, mark, 0, versions.Followed{Store: a.ID, Own: mine})
		cancel()
		if err != nil || !slices.Equal(moved, []bool{true}) {
			t.Errorf("after %d commits, one not its own: moved %v (%v), want [true]", len(origins), moved, err)
		}
		mark = next
	}
	// WakeFollowers, and a notification that names no store (sent by an
	// older build), may be of any.
	raw, err := sql.Open("pgx", dsn)
	ok(t, err)
	t.Cleanup(func() { raw.Close() })
	for what, wake := range map[string]func(){
		"WakeFollowers":                  db.WakeFollowers,
		"a notification naming no store": func() { _, err := raw.ExecContext(ctx, "NOTIFY memfs"); ok(t, err) },
	} {
		wake()
		next, moved, err := db.WaitFeed(ctx, mark, 0, versions.Followed{Store: b.ID})
		ok(t, err)
		if moved != nil {
			t.Errorf("after %s, moved %v, want nil (any)", what, moved)
		}
		mark = next
	}
}

// FeedsMoved tells, in one statement, which stores' feeds hold changes
// after their positions: a memory's save, a directory's change, the
// store's deletion; not another store's changes.
func TestFeedsMoved(t *testing.T) {
	db := openDB(t)
	a := newStore(t, db, versions.StoreParams{Name: "moved a"})
	b := newStore(t, db, versions.StoreParams{Name: "moved b"})
	ids := []string{a.ID, b.ID}
	heads := func() []versions.FeedPos {
		t.Helper()
		var ps []versions.FeedPos
		for _, id := range ids {
			p, err := db.FeedHead(ctx, id)
			ok(t, err)
			ps = append(ps, p)
		}
		return ps
	}
	expect := func(after []versions.FeedPos, want ...bool) {
		t.Helper()
		got, err := db.FeedsMoved(ctx, ids, after)
		ok(t, err)
		if !slices.Equal(got, want) {
			t.Fatalf("moved %v, want %v", got, want)
		}
	}
	start := heads()
	expect(start, false, false)
	create(t, db, a.ID, "/one", "1")
	expect(start, true, false)
	now := heads()
	expect(now, false, false)
	ok(t, db.MakeDir(ctx, b.ID, "/d"))
	expect(now, false, true)
	now = heads()
	ok(t, db.DeleteStore(ctx, b.ID))
	expect(now, false, true)
}

// A store deleted and imported again by another handle keeps its id under
// a new row number: once this handle's feed brings that, its reads find
// the store's memories again.
func TestStoreImportedAgainElsewhere(t *testing.T) {
	dsn := testDSN(t)
	db, other := openOn(t, dsn), openOn(t, dsn)
	s := newStore(t, other, versions.StoreParams{Name: "imported again"})
	create(t, other, s.ID, "/a.md", "one")
	pos, err := db.FeedHead(ctx, s.ID)
	ok(t, err)
	_, err = db.Stat(ctx, s.ID, "/a.md")
	ok(t, err)
	export := exportBytes(t, other, s.ID)
	ok(t, other.DeleteStore(ctx, s.ID))
	_, err = other.Import(ctx, bytes.NewReader(export))
	ok(t, err)
	cs, _, err := db.Changes(ctx, s.ID, pos)
	ok(t, err)
	if !slices.ContainsFunc(cs, func(c versions.Change) bool { return c.Op == versions.ChangeStore }) {
		t.Fatalf("the feed after the store's deletion and import: %+v, want a change of the store", cs)
	}
	if e, err := db.Stat(ctx, s.ID, "/a.md"); err != nil || e.Memory == nil {
		t.Errorf("/a.md of the store imported again: %+v, %v", e, err)
	}
}

// Each store's commits notify a channel of its own, so that a session
// listening for one store hears its writes, of every kind, and nothing of
// another store's.
func TestStoreChannels(t *testing.T) {
	if !onPostgres() {
		t.Skip("SQLite sends no notifications")
	}
	dsn := testDSN(t)
	writer := openOn(t, dsn)
	a := newStore(t, writer, versions.StoreParams{Name: "heard"})
	b := newStore(t, writer, versions.StoreParams{Name: "not heard"})
	conn, err := pgx.Connect(ctx, dsn)
	ok(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })
	_, err = conn.Exec(ctx, `LISTEN memfs; LISTEN "memfs:`+a.ID+`"`)
	ok(t, err)
	heard := func() []string {
		t.Helper()
		var got []string
		for {
			wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			n, err := conn.WaitForNotification(wctx)
			cancel()
			if err != nil {
				return got
			}
			got = append(got, n.Channel+" "+n.Payload)
		}
	}
	writes := func(s *versions.Store) []func() error {
		var m *versions.Memory
		return []func() error{
			func() (err error) { m, err = writer.CreateMemory(ctx, s.ID, "/f", "one", me); return err },
			func() error {
				_, err := writer.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: "/f", Content: "two", By: me,
					MemoryID: m.ID, HeadVersionID: m.VersionID})
				return err
			},
			func() error {
				_, err := writer.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: "/f", Content: "three", By: me})
				return err
			},
			func() error { _, err := writer.Rename(ctx, s.ID, "/f", "/g", false, me); return err },
			func() error { return writer.MakeDir(ctx, s.ID, "/d") },
			func() error { return writer.DeleteMemory(ctx, s.ID, m.ID, versions.MemoryDelete{}, me) },
		}
	}
	for i, w := range writes(b) {
		ok(t, w())
		if got := heard(); len(got) != 0 {
			t.Errorf("write %d to another store was heard: %q", i, got)
		}
	}
	for i, w := range writes(a) {
		ok(t, w())
		if got := heard(); len(got) != 1 || !strings.HasPrefix(got[0], "memfs:"+a.ID+" ") {
			t.Errorf("write %d to the store was heard as %q, want once on its channel", i, got)
		}
	}
}

// A handle's waits hear a store followed after its listener began: the
// first wait on it returns once its channel is listened to, with no
// commit, and later commits wake it, and still the stores followed
// before.
func TestWaitFeedFollowsNewStores(t *testing.T) {
	if !onPostgres() {
		t.Skip("SQLite sends no notifications: WaitFeed polls")
	}
	dsn := testDSN(t)
	db, writer := openOn(t, dsn), openOn(t, dsn)
	a := newStore(t, writer, versions.StoreParams{Name: "first"})
	mark := settledFeed(t, db, versions.Followed{Store: a.ID})
	c := newStore(t, writer, versions.StoreParams{Name: "later"})
	wait := func(what string, f versions.Followed) {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		next, moved, err := db.WaitFeed(wctx, mark, 0, f)
		if err != nil || !slices.Equal(moved, []bool{true}) {
			t.Fatalf("%s: moved %v (%v), want [true]", what, moved, err)
		}
		mark = next
	}
	wait("the first wait on a new store", versions.Followed{Store: c.ID})
	create(t, writer, c.ID, "/x", "1")
	wait("a commit to the new store", versions.Followed{Store: c.ID})
	create(t, writer, a.ID, "/y", "1")
	wait("a commit to the store followed before", versions.Followed{Store: a.ID})
}

// ChangesHeard gives a follower the changes of the functions of one round
// trip as their notifications said them, without reading, and reads
// after any other commit: either way what Changes reads.
func TestChangesHeard(t *testing.T) {
	if !onPostgres() {
		t.Skip("SQLite sends no notifications: ChangesHeard reads")
	}
	dsn := testDSN(t)
	follower, writer := openOn(t, dsn), openOn(t, dsn)
	a := newStore(t, writer, versions.StoreParams{Name: "followed"})
	m := create(t, writer, a.ID, "/first", "1") // the writer learns the store: its next saves are one call
	follow := versions.Followed{Store: a.ID}
	mark := settledFeed(t, follower, follow)
	_, pos, err := follower.ChangesHeard(ctx, a.ID, versions.FeedPos{})
	ok(t, err)
	save := func(req versions.SaveReq) func() error {
		return func() error {
			req.StoreID, req.By = a.ID, me
			ch, err := writer.Save(ctx, req)
			if err == nil && req.MemoryID != "" {
				m.VersionID = ch.VersionID
			}
			return err
		}
	}
	writes := []struct {
		what  string
		write func() error
		reads bool
	}{
		{"a create", save(versions.SaveReq{Path: "/new", Content: "new"}), false},
		{"a known head's save", func() error {
			return save(versions.SaveReq{Path: "/first", Content: "2", MemoryID: m.ID, HeadVersionID: m.VersionID})()
		}, false},
		{"a save by path", save(versions.SaveReq{Path: "/first", Content: "3"}), true},
		{"a rename", func() error { _, err := writer.Rename(ctx, a.ID, "/new", "/renamed", false, me); return err }, false},
		{"a directory", func() error { return writer.MakeDir(ctx, a.ID, "/d") }, true},
		{"a deletion", func() error { return writer.DeleteMemory(ctx, a.ID, m.ID, versions.MemoryDelete{}, me) }, false},
		{"a create after the deletion", save(versions.SaveReq{Path: "/again", Content: "again"}), false},
	}
	for _, w := range writes {
		ok(t, w.write())
		wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		next, _, err := follower.WaitFeed(wctx, mark, 0, follow)
		cancel()
		ok(t, err)
		mark = next
		before := follower.Statements()
		got, gotPos, err := follower.ChangesHeard(ctx, a.ID, pos)
		ok(t, err)
		if read := follower.Statements() > before; read != w.reads {
			t.Errorf("after %s, ChangesHeard read: %v, want %v", w.what, read, w.reads)
		}
		want, wantPos, err := follower.Changes(ctx, a.ID, pos)
		ok(t, err)
		if len(got) != 1 || fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
			t.Errorf("after %s, ChangesHeard gave\n%+v, Changes reads\n%+v", w.what, got, want)
		}
		if more, _, err := follower.Changes(ctx, a.ID, gotPos); err != nil || len(more) != 0 {
			t.Errorf("after %s, ChangesHeard's position %+v leaves %+v (%v); Changes' is %+v", w.what, gotPos, more, err, wantPos)
		}
		pos = gotPos
	}
}

// importAs makes a store with one memory /f on a scratch SQLite database,
// exports it with the store's id and the memory's replaced by storeID and
// memID, and imports that into dst: ids only an import can give.
func importAs(t *testing.T, dst *versions.DB, storeID, memID string) {
	t.Helper()
	src := openOn(t, filepath.Join(t.TempDir(), "src.db"))
	s := newStore(t, src, versions.StoreParams{Name: "imported " + storeID[:12]})
	m := create(t, src, s.ID, "/f", "one")
	exp := exportBytes(t, src, s.ID)
	exp = bytes.ReplaceAll(exp, []byte(s.ID), []byte(storeID))
	exp = bytes.ReplaceAll(exp, []byte(m.ID), []byte(memID))
	importBytes(t, dst, exp)
}

// ChangesHeard reads whenever what it heard may leave something out: the
// commits of a store whose id has no channel of its own (they notify the
// shared channel, which says what changed of no store), and a
// notification of the shared channel naming a store (as a build from
// before the stores' channels sends).
func TestChangesHeardReadsWhatItMayHaveMissed(t *testing.T) {
	if !onPostgres() {
		t.Skip("SQLite sends no notifications: ChangesHeard reads")
	}
	dsn := testDSN(t)
	writer, follower := openOn(t, dsn), openOn(t, dsn)
	odd := "memstore_odd.id" // short, but not a channel's
	importAs(t, writer, odd, "mem_01JODDIDMEMORY00000000000")
	plain := newStore(t, writer, versions.StoreParams{Name: "plain"}).ID
	raw := openRaw(t, dsn)
	for _, tc := range []struct {
		store   string
		between func() error
	}{
		{odd, func() error { return writer.MakeDir(ctx, odd, "/d") }},
		{plain, func() error {
			_, err := raw.Exec(`BEGIN; INSERT INTO changes (store, path, origin, at, op) VALUES ('` + plain + `', '/old', '0', ` +
				fmt.Sprint(time.Now().UnixNano()) + `, 'dir_made'); SELECT pg_notify('memfs', '` + plain + `,@7'); COMMIT`)
			return err
		}},
	} {
		// The writer learns the store: its creates are then one round trip.
		_, err := writer.Save(ctx, versions.SaveReq{StoreID: tc.store, Path: "/warm", Content: "w", By: me})
		ok(t, err)
		follow := versions.Followed{Store: tc.store}
		mark := settledFeed(t, follower, follow)
		_, pos, err := follower.ChangesHeard(ctx, tc.store, versions.FeedPos{})
		ok(t, err)
		save := func(path string) {
			t.Helper()
			_, err := writer.Save(ctx, versions.SaveReq{StoreID: tc.store, Path: path, Content: path, By: me})
			ok(t, err)
			// Heard, well before the wait's 5 s bound.
			wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			next, _, err := follower.WaitFeed(wctx, mark, 0, follow)
			ok(t, err)
			mark = next
		}
		save("/a")
		_, pos, err = follower.ChangesHeard(ctx, tc.store, pos)
		ok(t, err)
		ok(t, tc.between())
		save("/b")
		settledFeed(t, follower, follow)
		got, _, err := follower.ChangesHeard(ctx, tc.store, pos)
		ok(t, err)
		want, _, err := follower.Changes(ctx, tc.store, pos)
		ok(t, err)
		if len(want) != 2 || fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
			t.Errorf("store %s: ChangesHeard gave\n%+v, Changes reads\n%+v", tc.store, got, want)
		}
	}
}

// A memory whose imported id is long is still renamed and deleted in one
// round trip: the notification then says only the commit's origin, within
// PostgreSQL's 8,000 bytes.
func TestLongMemoryIDInOneRoundTrip(t *testing.T) {
	if !onPostgres() {
		t.Skip("PostgreSQL's notifications only")
	}
	db := openDB(t)
	store, long := "memstore_01JLONGMEMORYID000000000", "mem_"+strings.Repeat("x", 7950)
	importAs(t, db, store, long)
	_, err := db.Save(ctx, versions.SaveReq{StoreID: store, Path: "/other", Content: "o", By: me})
	ok(t, err)
	_, err = db.Rename(ctx, store, "/f", "/g", false, me)
	ok(t, err)
	ok(t, db.DeleteMemory(ctx, store, long, versions.MemoryDelete{}, me))
}

// Under a storm of notifications the listener stops listening and polls:
// its followers still hear every change, as the notifications would have
// told them, and read nothing; once the storm is over it listens again.
func TestFeedPolledUnderAStorm(t *testing.T) {
	if !onPostgres() {
		t.Skip("SQLite sends no notifications: its followers poll")
	}
	// Five notifications within a second make it poll, which it does every
	// 5 ms; a window of five seconds with no change makes it listen again.
	versions.FeedPolls(t, 5, time.Second, 5*time.Millisecond, 1, 5*time.Second)
	dsn := testDSN(t)
	follower, writer := openOn(t, dsn), openOn(t, dsn)
	a := newStore(t, writer, versions.StoreParams{Name: "stormed"})
	m := create(t, writer, a.ID, "/first", "1")
	follow := versions.Followed{Store: a.ID}
	mark := settledFeed(t, follower, follow)
	// heard gathers what ChangesHeard gives until it holds n changes,
	// and whether it read for them.
	heard := func(pos versions.FeedPos, n int) ([]versions.Change, versions.FeedPos, bool) {
		t.Helper()
		var got []versions.Change
		before := follower.Statements()
		deadline := time.Now().Add(5 * time.Second)
		for len(got) < n && time.Now().Before(deadline) {
			wctx, cancel := context.WithTimeout(ctx, time.Second)
			next, _, err := follower.WaitFeed(wctx, mark, 0, follow)
			cancel()
			if err == nil {
				mark = next
			}
			more, next2, err := follower.ChangesHeard(ctx, a.ID, pos)
			ok(t, err)
			got, pos = append(got, more...), next2
		}
		if len(got) != n {
			t.Fatalf("heard %d changes, want %d: %+v", len(got), n, got)
		}
		return got, pos, follower.Statements() > before
	}
	_, pos, err := follower.ChangesHeard(ctx, a.ID, versions.FeedPos{})
	ok(t, err)

	for i := range 8 {
		create(t, writer, a.ID, fmt.Sprintf("/storm/%d", i), "storm")
	}
	_, pos, _ = heard(pos, 8)
	for deadline := time.Now().Add(5 * time.Second); !follower.FeedPolling(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("eight notifications within a second did not make the listener poll")
		}
	}
	// The follower reads once, for what came before the polls.
	mark = settledFeed(t, follower, follow)
	_, pos, err = follower.ChangesHeard(ctx, a.ID, pos)
	ok(t, err)

	from := pos
	_, err = writer.Save(ctx, versions.SaveReq{StoreID: a.ID, Path: "/new", Content: "new", By: me})
	ok(t, err)
	_, err = writer.Save(ctx, versions.SaveReq{StoreID: a.ID, Path: "/first", Content: "2", MemoryID: m.ID, HeadVersionID: m.VersionID, By: me})
	ok(t, err)
	_, err = writer.Save(ctx, versions.SaveReq{StoreID: a.ID, Path: "/first", Content: "3", By: me})
	ok(t, err)
	_, err = writer.Rename(ctx, a.ID, "/new", "/renamed", false, me)
	ok(t, err)
	ok(t, writer.DeleteMemory(ctx, a.ID, m.ID, versions.MemoryDelete{}, me))
	got, pos, read := heard(pos, 5)
	if read {
		t.Error("a follower read the changes a poll brought")
	}
	want, _, err := follower.Changes(ctx, a.ID, from)
	ok(t, err)
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("polled, ChangesHeard gave\n%+v\nChanges reads\n%+v", got, want)
	}
	if !follower.FeedPolling() {
		t.Error("the listener stopped polling within its five quiet seconds")
	}

	// A directory is not heard: it wakes the followers, who read it, and
	// the versions after it, in the order of their commits.
	from = pos
	ok(t, writer.MakeDir(ctx, a.ID, "/d"))
	create(t, writer, a.ID, "/d/in", "in")
	wctx, cancel := context.WithTimeout(ctx, time.Second)
	mark, _, err = follower.WaitFeed(wctx, mark, 0, follow)
	cancel()
	ok(t, err)
	got, pos, _ = heard(pos, 2)
	want, _, err = follower.Changes(ctx, a.ID, from)
	ok(t, err)
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("after a directory, ChangesHeard gave\n%+v\nChanges reads\n%+v", got, want)
	}

	for deadline := time.Now().Add(20 * time.Second); follower.FeedPolling(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the listener still polls after twenty seconds with no change")
		}
	}
	mark = settledFeed(t, follower, follow)
	_, pos, err = follower.ChangesHeard(ctx, a.ID, pos)
	ok(t, err)
	create(t, writer, a.ID, "/after", "after")
	if got, _, _ = heard(pos, 1); got[0].Path != "/after" {
		t.Errorf("listening again, heard %+v", got)
	}
}
