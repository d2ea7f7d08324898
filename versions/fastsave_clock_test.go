package versions

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// A one-statement create takes its time (and its memory's id) once it
// holds the writer: a save committed while it waited has an earlier row
// and an earlier time, so a store "as of" a moment between the two never
// shows the save made after that moment.
func TestFastCreateTimeTakenUnderTheLock(t *testing.T) {
	var mu sync.Mutex
	base := time.Now().Add(-time.Hour)
	cur := base
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return cur }
	set := func(d time.Duration) { mu.Lock(); cur = base.Add(d); mu.Unlock() }
	file := filepath.Join(t.TempDir(), "memfs.db")
	a, err := Open(file, Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(file, Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	by := UserActor("tester")
	s, err := a.CreateStore(ctx, StoreParams{Name: "clock"})
	if err != nil {
		t.Fatal(err)
	}
	set(time.Second)
	if _, err := a.Save(ctx, SaveReq{StoreID: s.ID, Path: "/prime.md", Content: "p", By: by}); err != nil {
		t.Fatal(err)
	}
	// The writer is busy (a transaction of this daemon in progress).
	c, err := a.wp.get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	set(2 * time.Second)
	done := make(chan error, 1)
	go func() {
		_, err := a.Save(ctx, SaveReq{StoreID: s.ID, Path: "/queued.md", Content: "q", By: by})
		done <- err
	}()
	for {
		a.group.mu.Lock()
		queued := len(a.group.queue) > 0 || a.group.leading
		a.group.mu.Unlock()
		if queued {
			break
		}
		time.Sleep(time.Millisecond)
	}
	set(10 * time.Second)
	if _, err := b.Save(ctx, SaveReq{StoreID: s.ID, Path: "/later.md", Content: "l", By: by}); err != nil {
		t.Fatal(err)
	}
	a.wp.put(c, nil)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	set(20 * time.Second)
	at := base.Add(5 * time.Second).UTC().Format(time.RFC3339Nano)
	_, files, err := a.StoreAsOf(ctx, s.ID, at, SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Memory.Path == "/later.md" {
			t.Fatalf("the store as of %s holds /later.md, saved at +10s (its time %s): the create queued before it took +2s and a later row", at, f.Memory.CreatedAt)
		}
	}
}
