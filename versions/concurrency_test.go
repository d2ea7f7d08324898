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
				if _, _, err := db.Changes(ctx, s.ID, 0); err != nil {
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
