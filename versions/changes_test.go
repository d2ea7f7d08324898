package versions_test

import (
	"fmt"
	"slices"
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
	_, start, err := db.Changes(ctx, s.ID, 0)
	ok(t, err)

	since := func(after int64) ([]string, int64) {
		t.Helper()
		cs, top, err := db.Changes(ctx, s.ID, after)
		ok(t, err)
		var paths []string
		for _, c := range cs {
			if c.StoreID != s.ID || c.Seq <= after || c.Seq > top {
				t.Fatalf("change %+v outside (%d, %d]", c, after, top)
			}
			paths = append(paths, c.Path)
		}
		return paths, top
	}

	m := create(t, db, s.ID, "/a", "x")
	create(t, db, unrelated.ID, "/u", "x")
	paths, top := since(start)
	if !slices.Equal(paths, []string{"/a"}) {
		t.Fatalf("after create: %v", paths)
	}
	t.Run("F10/rename-records-both-paths", func(t *testing.T) {
		update(t, db, s.ID, m.ID, versions.MemoryUpdate{Path: ptr("/b")})
		var got []string
		got, top = since(top)
		slices.Sort(got)
		if !slices.Equal(got, []string{"/a", "/b"}) {
			t.Fatalf("after rename: %v", got)
		}
	})
	t.Run("F10/dirs-and-deletes", func(t *testing.T) {
		ok(t, db.MakeDir(ctx, s.ID, "/d"))
		ok(t, db.RemoveDir(ctx, s.ID, "/d"))
		ok(t, db.DeleteMemory(ctx, s.ID, m.ID, versions.MemoryDelete{}, me))
		var got []string
		got, top = since(top)
		if !slices.Equal(got, []string{"/d", "/d", "/b"}) {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("F10/noop-records-nothing", func(t *testing.T) {
		x := create(t, db, s.ID, "/x", "same")
		_, top = since(top)
		update(t, db, s.ID, x.ID, versions.MemoryUpdate{Content: ptr("same")})
		if got, _ := since(top); len(got) != 0 {
			t.Fatalf("no-op recorded %v", got)
		}
	})
	t.Run("F10/other-handle-sees-origin", func(t *testing.T) {
		_, err := other.CreateMemory(ctx, s.ID, "/from-other", "x", me)
		ok(t, err)
		cs, _, err := db.Changes(ctx, s.ID, top)
		ok(t, err)
		if len(cs) != 1 || cs[0].Origin != other.Origin() || cs[0].Path != "/from-other" {
			t.Fatalf("changes %+v", cs)
		}
	})
	t.Run("F10/store-deletion-recorded", func(t *testing.T) {
		_, top = since(top)
		ok(t, db.DeleteStore(ctx, s.ID))
		got, _ := since(top)
		if !slices.Equal(got, []string{"/"}) {
			t.Fatalf("got %v", got)
		}
	})
}

func TestChangesTrimmed(t *testing.T) {
	db, clk := openClocked(t)
	s := newStore(t, db, versions.StoreParams{})
	m := create(t, db, s.ID, "/a", "0")
	save := func(n int) {
		for i := range n {
			update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: ptr(fmt.Sprint(clk.now().UnixNano(), i))})
		}
	}
	save(600)
	all, top, err := db.Changes(ctx, s.ID, 0)
	ok(t, err)
	clk.advance(time.Hour)
	save(1100) // passes two trim points, each removing up to 1,024 old rows
	t.Run("F10/old-rows-trimmed", func(t *testing.T) {
		cs, _, err := db.Changes(ctx, s.ID, 0)
		ok(t, err)
		if len(cs) >= len(all)+1100 {
			t.Fatalf("%d changes kept, nothing trimmed", len(cs))
		}
		if cs[0].Seq <= top {
			t.Fatalf("a change older than an hour survived: seq %d ≤ %d", cs[0].Seq, top)
		}
	})
	t.Run("F10/recent-rows-kept", func(t *testing.T) {
		cs, newTop, err := db.Changes(ctx, s.ID, top)
		ok(t, err)
		if len(cs) != 1100 || cs[len(cs)-1].Seq != newTop {
			t.Fatalf("%d recent changes, last %d, top %d", len(cs), cs[len(cs)-1].Seq, newTop)
		}
	})
}
