package versions_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/memfs/memfs/versions"
)

// Goroutines of one process saving and looking up at once, as a mount's
// kernel requests do: every save is one version and reads never fail.
func TestConcurrentGoroutines(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	shared := create(t, db, s.ID, "/dir/shared.md", "start")
	const writers, saves = 6, 40
	var wg sync.WaitGroup
	errs := make(chan error, writers*saves*4)
	for w := range writers {
		wg.Go(func() {
			own := fmt.Sprintf("/dir/own%d.md", w)
			if _, err := db.CreateMemory(ctx, s.ID, own, "", me); err != nil {
				errs <- err
				return
			}
			for i := range saves {
				c := fmt.Sprintf("writer %d save %d", w, i)
				target := own
				if i%2 == 0 {
					target = shared.ID
				}
				if _, err := db.UpdateMemory(ctx, s.ID, target, versions.MemoryUpdate{Content: &c}, me); err != nil {
					errs <- err
				}
			}
		})
		wg.Go(func() {
			for range saves {
				if _, err := db.Stat(ctx, s.ID, "/dir/shared.md"); err != nil {
					errs <- err
				}
				if _, err := db.ReadDir(ctx, s.ID, "/dir"); err != nil {
					errs <- err
				}
				if _, err := db.ListMemories(ctx, s.ID, versions.MemoryListOptions{Depth: 1}); err != nil {
					errs <- err
				}
				if _, _, err := db.Changes(ctx, s.ID, versions.FeedPos{}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got, want := countVersions(t, db, s.ID), 1+writers+writers*saves; got != want {
		t.Fatalf("%d versions, want %d", got, want)
	}
	if got, want := len(history(t, db, s.ID, shared.ID)), 1+writers*saves/2; got != want {
		t.Fatalf("shared memory has %d versions, want %d", got, want)
	}
}

// Writers on two handles of one database (two daemons, on PostgreSQL two
// hosts) creating at once: the store's memory limit holds exactly and a
// path is created once, however the commits interleave.
func TestConcurrentCreatorsAcrossHandles(t *testing.T) {
	dsn := testDSN(t)
	var dbs [2]*versions.DB
	for i := range dbs {
		db, err := versions.Open(dsn, versions.Options{})
		ok(t, err)
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	const limit, creators = 10, 24
	s := newStore(t, dbs[0], versions.StoreParams{MaxMemories: limit})
	var wg sync.WaitGroup
	results := make(chan error, 2*creators)
	for i := range creators {
		wg.Go(func() {
			_, err := dbs[i%2].CreateMemory(ctx, s.ID, fmt.Sprintf("/own/%d.md", i), "x", me)
			results <- err
		})
		wg.Go(func() {
			_, err := dbs[i%2].CreateMemory(ctx, s.ID, "/same.md", fmt.Sprint(i), me)
			results <- err
		})
	}
	wg.Wait()
	close(results)
	created, full, taken := 0, 0, 0
	for err := range results {
		switch versions.ErrorCode(err) {
		case versions.CodeStoreFull:
			full++
		case versions.CodePathConflict:
			taken++
		default:
			ok(t, err)
			created++
		}
	}
	if created != limit || full+taken != 2*creators-limit {
		t.Fatalf("%d created, %d refused as full, %d as taken; want %d created", created, full, taken, limit)
	}
	page, err := dbs[1].ListMemories(ctx, s.ID, versions.MemoryListOptions{})
	ok(t, err)
	same := 0
	for _, it := range page.Data {
		if it.Memory.Path == "/same.md" {
			same++
		}
	}
	if len(page.Data) != limit || same > 1 {
		t.Fatalf("%d memories (want %d), /same.md %d times", len(page.Data), limit, same)
	}
	st, err := dbs[1].GetStore(ctx, s.ID)
	ok(t, err)
	if st.MemoryCount != limit {
		t.Fatalf("memory count %d, want %d", st.MemoryCount, limit)
	}
}

// Two saves from the same base version on two handles: one becomes head,
// the other is kept and marked as a conflict, as on one handle.
func TestConflictMarkingAcrossHandles(t *testing.T) {
	dsn := testDSN(t)
	a, err := versions.Open(dsn, versions.Options{})
	ok(t, err)
	t.Cleanup(func() { a.Close() })
	b, err := versions.Open(dsn, versions.Options{})
	ok(t, err)
	t.Cleanup(func() { b.Close() })
	s := newStore(t, a, versions.StoreParams{})
	m := create(t, a, s.ID, "/shared.md", "start")
	var wg sync.WaitGroup
	for i, db := range []*versions.DB{a, b} {
		wg.Go(func() {
			c := fmt.Sprint("writer ", i)
			_, err := db.UpdateMemory(ctx, s.ID, m.ID, versions.MemoryUpdate{Content: &c, BaseVersionID: m.VersionID}, me)
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	h := history(t, a, s.ID, m.ID)
	if len(h) != 3 || h[1].Conflict || !h[0].Conflict {
		t.Fatalf("history %d versions; conflict marks newest first: %v %v", len(h), h[0].Conflict, h[1].Conflict)
	}
}

// Daemons starting at once on a new database migrate it once.
func TestOpenConcurrently(t *testing.T) {
	dsn := testDSN(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			db, err := versions.Open(dsn, versions.Options{})
			if err == nil {
				_, err = db.CreateStore(ctx, versions.StoreParams{Name: "s"})
				db.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		ok(t, err)
	}
}
