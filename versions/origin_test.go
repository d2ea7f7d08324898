package versions_test

import (
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/memfs/memfs/versions"
)

// TestOriginsOfConcurrentWriters: writers sharing a handle, each with its
// own origin, save at once, so that the SQLite group committer and the
// PostgreSQL pipelined group commit put their writes in shared
// transactions: each change records its own writer's origin, not the
// leader's. Also a rename over another file (two versions in one commit)
// and a pending file's publication.
func TestOriginsOfConcurrentWriters(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	const writers, saves = 6, 15
	mems := make([]*versions.Memory, writers)
	for w := range mems {
		mems[w] = create(t, db, s.ID, fmt.Sprintf("/w%d", w), "0")
	}
	start, err := db.FeedHead(ctx, s.ID)
	ok(t, err)
	origins := make([]versions.Origin, writers)
	for w := range origins {
		origins[w] = versions.NewOrigin()
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := versions.WithOrigin(ctx, origins[w])
			head := mems[w].VersionID
			for i := range saves {
				var m versions.Memory
				_, err := db.Save(c, versions.SaveReq{StoreID: s.ID, Path: mems[w].Path, Content: fmt.Sprint(i + 1), By: me,
					MemoryID: mems[w].ID, HeadVersionID: head, Memory: &m})
				if err != nil {
					errs <- err
					return
				}
				head = m.VersionID
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// A rename over another file, and a pending file published.
	o := versions.NewOrigin()
	mine := versions.WithOrigin(ctx, o)
	create(t, db, s.ID, "/src", "s")
	create(t, db, s.ID, "/dst", "d")
	_, err = db.Rename(mine, s.ID, "/src", "/dst", false, me)
	ok(t, err)
	mount := versions.NewMountID()
	holdLease(t, db, mount)
	id, err := db.SavePending(mine, s.ID, owned(mount), "/p.tmp", "p", me, 0)
	ok(t, err)
	_, _, err = db.PublishPending(mine, s.ID, owned(mount), id, "/p.md")
	ok(t, err)

	cs, _, err := db.Changes(ctx, s.ID, start)
	ok(t, err)
	byWriter := map[string]int{}
	for _, c := range cs {
		switch {
		case len(c.Path) == 3 && c.Path[:2] == "/w":
			w, _ := strconv.Atoi(c.Path[2:])
			if want := origins[w].String(); c.Origin != want {
				t.Errorf("%s %s (seq %d): origin %s, want %s", c.Op, c.Path, c.Seq, c.Origin, want)
			}
			byWriter[c.Path]++
		case c.Path == "/src" && c.Op == versions.ChangeCreated, c.Path == "/dst" && c.Op == versions.ChangeCreated:
			if c.Origin != db.Origin() {
				t.Errorf("%s %s: origin %s, want the handle's %s", c.Op, c.Path, c.Origin, db.Origin())
			}
		default:
			if c.Origin != o.String() {
				t.Errorf("%s %s (prev %s): origin %s, want %s", c.Op, c.Path, c.PrevPath, c.Origin, o)
			}
		}
	}
	for w := range writers {
		if n := byWriter[fmt.Sprintf("/w%d", w)]; n != saves {
			t.Errorf("/w%d: %d changes, want %d", w, n, saves)
		}
	}
}
