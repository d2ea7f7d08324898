package versions

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// Saves that arrive while the writer is busy share one transaction and one
// commit; one that fails (too large, a path taken) fails alone, and every
// other is committed.
func TestGroupCommit(t *testing.T) {
	db := openSQLite(t)
	ctx := context.Background()
	by := UserActor("tester")
	s, err := db.CreateStore(ctx, StoreParams{Name: "group", MaxMemoryBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	taken, err := db.CreateMemory(ctx, s.ID, "/taken", "x", by)
	if err != nil {
		t.Fatal(err)
	}
	before := db.group.batches

	// Hold the writer connection, as a transaction in progress does, so
	// that every save below queues behind it.
	c, err := db.wp.get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const n = 12
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			switch i {
			case 3:
				_, errs[i] = db.CreateMemory(ctx, s.ID, "/big", strings.Repeat("x", 101), by)
			case 7:
				_, errs[i] = db.CreateMemory(ctx, s.ID, "/taken", "y", by)
			case 9:
				c := "new content"
				_, errs[i] = db.UpdateMemory(ctx, s.ID, taken.ID, MemoryUpdate{Content: &c}, by)
			default:
				_, errs[i] = db.CreateMemory(ctx, s.ID, fmt.Sprintf("/f%d", i), "content", by)
			}
		})
	}
	for {
		db.group.mu.Lock()
		queued := len(db.group.queue)
		db.group.mu.Unlock()
		if queued == n {
			break
		}
		wait(t)
	}
	db.wp.put(c, nil)
	wg.Wait()

	if got := db.group.batches - before; got != 1 {
		t.Fatalf("%d shared transactions for %d saves queued together, want 1", got, n)
	}
	for i, err := range errs {
		switch i {
		case 3:
			if ErrorCode(err) != CodeTooLarge {
				t.Errorf("the save over the size limit: %v", err)
			}
		case 7:
			if ErrorCode(err) != CodePathConflict {
				t.Errorf("the save at a taken path: %v", err)
			}
		default:
			if err != nil {
				t.Errorf("save %d: %v", i, err)
			}
		}
	}
	for i := range n {
		_, err := db.GetMemory(ctx, s.ID, fmt.Sprintf("/f%d", i))
		if want := i != 3 && i != 7 && i != 9; (err == nil) != want {
			t.Errorf("/f%d after the shared commit: %v", i, err)
		}
	}
	if _, err := db.GetMemory(ctx, s.ID, "/big"); ErrorCode(err) != CodeNotFound {
		t.Errorf("the refused save left /big: %v", err)
	}
	m, err := db.GetMemory(ctx, s.ID, "/taken")
	if err != nil || *m.Content != "new content" {
		t.Errorf("/taken: %+v %v", m, err)
	}
	st, err := db.GetStore(ctx, s.ID)
	if err != nil || st.MemoryCount != n-2 {
		t.Errorf("store counts %d memories, want %d (%v)", st.MemoryCount, n-2, err)
	}
}

// wait yields while a test waits for goroutines to reach a state.
func wait(t *testing.T) {
	t.Helper()
	time.Sleep(time.Millisecond)
}
