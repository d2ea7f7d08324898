package versions

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// A write leads its own batch on its caller's goroutine. When its
// fn panics and the caller recovers (the HTTP API's middleware does), the
// committer must not stay "leading" with nobody running the queue: the
// next write must still commit, not wait forever, and no other daemon may
// find the database locked.
func TestGroupWritePanicFreesTheWriter(t *testing.T) {
	file := filepath.Join(t.TempDir(), "memfs.db")
	db, err := Open(file, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	func() {
		defer func() { _ = recover() }()
		_ = db.write(ctx, "boom", func(r *run) error { panic("a bug in a write") })
	}()
	db.group.mu.Lock()
	leading, queued := db.group.leading, len(db.group.queue)
	db.group.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		_, err := db.CreateStore(ctx, StoreParams{Name: "after"})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the write after the recovered panic: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("the write after a recovered panic never ran (leading %v, %d queued before it): every later write of this daemon hangs", leading, queued)
	}
	// The panic also left the writer connection in its transaction: the
	// database stays locked for every other daemon while this one lives.
	other, err := Open(file, Options{BusyTimeout: time.Second})
	if err != nil {
		t.Fatalf("another daemon opening the database after the recovered panic: %v", err)
	}
	other.Close()
}
