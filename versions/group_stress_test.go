package versions_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// writers that arrive while one leads its own batch are never
// stranded in the queue: every write of many concurrent writers returns.
func TestGroupNoStrandedWrite(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{MaxMemories: 10000})
	prime(t, db, s.ID)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 40 {
				_, err := db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: fmt.Sprintf("/g%d/f%d.md", g, i), Content: "x", By: me})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("writes still waiting after a minute: one is stranded in the queue")
	}
	st, err := db.GetStore(ctx, s.ID)
	ok(t, err)
	if st.MemoryCount != 8*40+1 {
		t.Fatalf("%d memories, want %d", st.MemoryCount, 8*40+1)
	}
}
