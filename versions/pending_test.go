package versions_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// A pending file is durable and invisible; publishing it is one version:
// "created" at a free path, or "modified" of the memory at the path with its
// id kept; dropping it leaves nothing.
func TestPending(t *testing.T) {
	db := openDB(t)
	st := newStore(t, db, versions.StoreParams{Name: "Pending"})
	target := create(t, db, st.ID, "/notes.md", "v1")
	holdLease(t, db, "mount-a")
	holdLease(t, db, "mount-b")
	id, err := db.SavePending(ctx, st.ID, owned("mount-a"), "/sedAbc123", "half", me, 0)
	ok(t, err)
	again, err := db.SavePending(ctx, st.ID, owned("mount-a"), "/sedAbc123", "v2", me, id)
	ok(t, err)
	if again != id {
		t.Errorf("a second save of pending file %d made %d", id, again)
	}
	wantCode(t, errOf(db.GetMemory(ctx, st.ID, "/sedAbc123")), versions.CodeNotFound)
	if n := countVersions(t, db, st.ID); n != 1 {
		t.Errorf("%d versions after pending saves, want 1", n)
	}
	m, created, err := db.PublishPending(ctx, st.ID, owned("mount-a"), id, "/notes.md")
	ok(t, err)
	if m.ID != target.ID || created {
		t.Errorf("published onto /notes.md as %s (created %v), want a version of the target %s", m.ID, created, target.ID)
	}
	got, err := db.GetMemory(ctx, st.ID, "/notes.md")
	ok(t, err)
	if *got.Content != "v2" {
		t.Errorf("content %q, want v2", *got.Content)
	}
	if h := history(t, db, st.ID, target.ID); len(h) != 2 || h[0].Operation != versions.OpModified {
		t.Errorf("history %+v, want created then modified", h)
	}
	wantCode(t, errOf3(db.PublishPending(ctx, st.ID, owned("mount-a"), id, "/notes.md")), versions.CodeNotFound)

	id2, err := db.SavePending(ctx, st.ID, owned("mount-a"), "/new.md", "new", me, 0)
	ok(t, err)
	id3, err := db.SavePending(ctx, st.ID, owned("mount-b"), "/gone.md", "gone", me, 0)
	ok(t, err)
	left, err := db.ListPending(ctx, st.ID, "mount-a", time.Now().Add(-time.Hour))
	ok(t, err)
	if len(left) != 1 || left[0].ID != id2 || left[0].Content != "new" || left[0].By != me {
		t.Errorf("mount-a's pending files: %+v", left)
	}
	m2, created, err := db.PublishPending(ctx, st.ID, owned("mount-a"), id2, "/new.md")
	ok(t, err)
	if !created {
		t.Errorf("a new file published: created false, want true")
	}
	if h := history(t, db, st.ID, m2.ID); len(h) != 1 || h[0].Operation != versions.OpCreated {
		t.Errorf("a new file published: %+v, want one created", h)
	}
	ok(t, db.DropPending(ctx, st.ID, owned("mount-b"), id3))
	if left, _ := db.ListPending(ctx, st.ID, "mount-b", time.Now().Add(time.Hour)); len(left) != 0 {
		t.Errorf("after drop: %+v", left)
	}
	if n := countVersions(t, db, st.ID); n != 3 {
		t.Errorf("%d versions, want 3", n)
	}
	wantCode(t, errOf(db.SavePending(ctx, st.ID, owned("mount-a"), "/bad.md", "\xff", me, 0)), versions.CodeNotUTF8)
}

// A pending file holds a slot of the store's memory limit from its first
// save until it is published or dropped: nothing that adds a memory can
// take it, and publishing it never fails for the limit.
func TestPendingHoldsASlot(t *testing.T) {
	db := openDB(t)
	st := newStore(t, db, versions.StoreParams{Name: "Slots", MaxMemories: 3})
	target := create(t, db, st.ID, "/target.md", "t1")
	gone := create(t, db, st.ID, "/gone.md", "g1")
	ok(t, db.DeleteMemory(ctx, st.ID, gone.ID, versions.MemoryDelete{}, me))
	holdLease(t, db, "mount-a")
	holdLease(t, db, "mount-b")
	p1, err := db.SavePending(ctx, st.ID, owned("mount-a"), "/p1.md", "p1", me, 0)
	ok(t, err)
	p2, err := db.SavePending(ctx, st.ID, owned("mount-b"), "/p2.md", "p2", me, 0)
	ok(t, err)

	// One live memory and two pending files fill the limit of 3.
	wantCode(t, errOf(db.SavePending(ctx, st.ID, owned("mount-a"), "/p3.md", "p3", me, 0)), versions.CodeStoreFull)
	wantCode(t, errOf(db.CreateMemory(ctx, st.ID, "/api.md", "api", me)), versions.CodeStoreFull)
	wantCode(t, errOf(db.Restore(ctx, st.ID, gone.VersionID, "/gone.md", me)), versions.CodeStoreFull)
	// Another save of a pending file keeps its slot.
	if again, err := db.SavePending(ctx, st.ID, owned("mount-a"), "/p1.md", "p1 v2", me, p1); err != nil || again != p1 {
		t.Errorf("second save of pending file %d: %d, %v", p1, again, err)
	}

	// Dropping a pending file releases its slot.
	ok(t, db.DropPending(ctx, st.ID, owned("mount-b"), p2))
	p4, err := db.SavePending(ctx, st.ID, owned("mount-b"), "/tmp4", "t2", me, 0)
	ok(t, err)
	// So does renaming one onto an existing memory: it becomes a version.
	ok(t, errOf3(db.PublishPending(ctx, st.ID, owned("mount-b"), p4, "/target.md")))
	ok(t, errOf(db.CreateMemory(ctx, st.ID, "/api.md", "api", me)))
	// The store is full with a pending file in it, and that file publishes.
	wantCode(t, errOf(db.CreateMemory(ctx, st.ID, "/api2.md", "api", me)), versions.CodeStoreFull)
	ok(t, errOf3(db.PublishPending(ctx, st.ID, owned("mount-a"), p1, "/p1.md")))
	if got, err := db.GetMemory(ctx, st.ID, "/target.md"); err != nil || *got.Content != "t2" || got.ID != target.ID {
		t.Errorf("/target.md after the rename: %+v, %v", got, err)
	}
	wantCode(t, errOf(db.SavePending(ctx, st.ID, owned("mount-a"), "/p5.md", "p5", me, 0)), versions.CodeStoreFull)
}

// Two processes (two mounts, or a mount and the API) filling one store at
// once cannot over-commit: exactly the limit's worth of pending files and
// memories are admitted, and every pending file admitted publishes.
func TestPendingLimitAcrossHandles(t *testing.T) {
	const limit = 8
	dsn := testDSN(t)
	var dbs [2]*versions.DB
	for i := range dbs {
		db, err := versions.Open(dsn, versions.Options{})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	st := newStore(t, dbs[0], versions.StoreParams{Name: "Contended", MaxMemories: limit})
	holdLease(t, dbs[0], "mount-0")
	holdLease(t, dbs[1], "mount-1")
	var mu sync.Mutex
	pend := map[int64]int{} // pending file → the handle and mount that saved it
	created := 0
	var wg sync.WaitGroup
	for i := range 2 * limit {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db := dbs[i%2]
			var err error
			var id int64
			if i%3 == 0 {
				_, err = db.CreateMemory(ctx, st.ID, fmt.Sprintf("/api%02d.md", i), "api", me)
			} else {
				id, err = db.SavePending(ctx, st.ID, owned(fmt.Sprintf("mount-%d", i%2)), fmt.Sprintf("/f%02d.md", i), "f", me, 0)
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && id != 0:
				pend[id] = i % 2
			case err == nil:
				created++
			case versions.ErrorCode(err) != versions.CodeStoreFull:
				t.Errorf("adding file %d: %v, want success or a full store", i, err)
			}
		}()
	}
	wg.Wait()
	if len(pend)+created != limit {
		t.Fatalf("%d pending files and %d memories admitted to a store of %d", len(pend), created, limit)
	}
	for id, i := range pend {
		if _, _, err := dbs[i].PublishPending(ctx, st.ID, owned(fmt.Sprintf("mount-%d", i)), id, fmt.Sprintf("/published%02d.md", id)); err != nil {
			t.Errorf("publish pending file %d: %v", id, err)
		}
	}
	s, err := dbs[1].GetStore(ctx, st.ID)
	ok(t, err)
	if s.MemoryCount != limit {
		t.Errorf("the store holds %d memories, want %d", s.MemoryCount, limit)
	}
}

// owned is the owner of the pending files of a mount that holdLease holds.
func owned(mount string) versions.PendingOwner { return versions.PendingOwner{Mount: mount} }

// holdLease holds mount id's lease for the test, so that the pending files
// saved as its own are not published by a sweep (leases.go).
func holdLease(t *testing.T, db *versions.DB, id string) {
	t.Helper()
	l := versions.MountLease{ID: id, SessionID: "sesn_test", Host: "test", Mountpoint: "/mnt/test"}
	ok(t, db.StartMount(ctx, l))
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			case <-time.After(versions.LeaseRenew):
				db.RenewMount(ctx, &l)
			}
		}
	}()
	t.Cleanup(func() {
		close(done)
		<-stopped
		db.EndMount(ctx, id)
	})
}
