package versions_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

func TestChanges(t *testing.T) {
	path := testDSN(t)
	db, err := versions.Open(path, versions.Options{})
	ok(t, err)
	t.Cleanup(func() { db.Close() })
	other, err := versions.Open(path, versions.Options{})
	ok(t, err)
	t.Cleanup(func() { other.Close() })
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
			paths = append(paths, c.Path)
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
		if !slices.Equal(got, []string{"/b", "/d", "/d"}) {
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
		got, _ := since(top)
		if !slices.Equal(got, []string{"/r"}) {
			t.Fatalf("got %v", got)
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
	db, err := versions.Open(dsn, versions.Options{})
	ok(t, err)
	t.Cleanup(func() { db.Close() })
	writer, err := versions.Open(dsn, versions.Options{})
	ok(t, err)
	t.Cleanup(func() { writer.Close() })
	s := newStore(t, writer, versions.StoreParams{})
	// A newer store with versions: its seqs are all above s's, so a save
	// in s must wake the wait although it is not the largest seq.
	newer := newStore(t, writer, versions.StoreParams{})
	create(t, writer, newer.ID, "/later", "x")
	pos, err := db.FeedHead(ctx, s.ID)
	ok(t, err)
	// Settle: the first waits may return at once (a first mark; on
	// PostgreSQL the listener's connection).
	var mark versions.FeedMark
	for {
		wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		next, err := db.WaitFeed(wctx, mark, 5*time.Millisecond)
		cancel()
		if err != nil {
			break
		}
		mark = next
	}
	var wg sync.WaitGroup
	woke := make(chan versions.FeedMark, 1)
	wg.Go(func() {
		next, err := db.WaitFeed(ctx, mark, 5*time.Millisecond)
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
