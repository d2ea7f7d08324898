package fusefs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// Scratch files, empty ones too, count toward the mount's cap on them:
// one past it fails with ENOSPC, creating or renaming, and removing one
// makes room. Over all the mount's stores, and nothing of them is stored.
func TestScratchFilesCapped(t *testing.T) {
	e := newEnv(t)
	a, b := e.store(t, "Scratch A"), e.store(t, "Scratch B")
	m := e.mount(t, Options{MaxScratchFiles: 5}, versions.AttachmentParams{StoreID: a.ID}, versions.AttachmentParams{StoreID: b.ID})
	for i := range 3 {
		if err := os.WriteFile(filepath.Join(m.dir(0), fmt.Sprintf("notes%d.md~", i)), nil, 0o644); err != nil {
			t.Fatalf("scratch file %d: %v", i, err)
		}
	}
	for _, name := range []string{".notes.md.swp", "#notes.md#"} {
		if err := os.WriteFile(filepath.Join(m.dir(1), name), []byte("x"), 0o644); err != nil {
			t.Fatalf("scratch file %s: %v", name, err)
		}
	}
	err := os.WriteFile(filepath.Join(m.dir(1), "more.md~"), nil, 0o644)
	wantErrno(t, "a scratch file past the cap", err, syscall.ENOSPC)
	// A stored file renamed to a scratch name (an editor's backup) is one.
	if err := os.WriteFile(filepath.Join(m.dir(0), "kept.md"), []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = os.Rename(filepath.Join(m.dir(0), "kept.md"), filepath.Join(m.dir(0), "kept.md~"))
	wantErrno(t, "renaming to a scratch name past the cap", err, syscall.ENOSPC)
	if got, err := os.ReadFile(filepath.Join(m.dir(0), "kept.md")); err != nil || string(got) != "kept" {
		t.Errorf("the file a refused rename left: %q, %v", got, err)
	}
	if err := os.Remove(filepath.Join(m.dir(0), "notes0.md~")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m.dir(1), "more.md~"), nil, 0o644); err != nil {
		t.Errorf("a scratch file once one was removed: %v", err)
	}
	if !strings.Contains(e.log.String(), "at most 5 scratch files") {
		t.Errorf("the refusal is not in the daemon's log")
	}
	for _, st := range []*versions.Store{a, b} {
		for _, v := range e.allVersions(t, st.ID) {
			if v.Path != nil && strings.ContainsAny(*v.Path, "~#") {
				t.Errorf("a scratch file was stored: %s", *v.Path)
			}
		}
	}
}

// A temporary file's pending content counts toward the store's history
// quota: a write that would take the store past it, with the mount's other
// temporary files, is refused with EDQUOT, and nothing of it waits to be
// published.
func TestPendingCountsTowardQuota(t *testing.T) {
	e := newEnv(t)
	st := e.storeWith(t, versions.StoreParams{Name: "Pending quota", MaxHistoryBytes: 8 << 10})
	// A grace longer than the test: every temporary file stays pending.
	_, dir := e.mountStore(t, st, Options{Grace: time.Minute})
	big := strings.Repeat("a", 3<<10)
	for i := range 2 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf(".tmp-%d-x", i)), []byte(big), 0o644); err != nil {
			t.Fatalf("temporary file %d within the quota: %v", i, err)
		}
	}
	err := os.WriteFile(filepath.Join(dir, ".tmp-2-x"), []byte(big), 0o644)
	wantErrno(t, "a temporary file past the quota", err, syscall.EDQUOT)
	// The rows are written Settle after each close.
	if err := eventually(5*time.Second, func() error {
		files, err := e.db.PendingFiles(context.Background(), st.ID)
		if err != nil {
			return err
		}
		if len(files) != 2 || files[0].Size != len(big) || files[0].State != versions.PendingLive {
			return fmt.Errorf("pending files %+v, want the two saved within the quota, live", files)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
}

// A temporary file's content counts toward the mount's unsaved budget
// until it is published: the mount keeps its buffer, and past the budget
// the next write fails with ENOSPC.
func TestPendingCountsTowardUnsavedBudget(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Pending budget")
	_, dir := e.mountStore(t, st, Options{Grace: time.Minute, MaxUnsavedBytes: 8 << 10})
	big := strings.Repeat("b", 3<<10)
	for i := range 2 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf(".tmp-%d-y", i)), []byte(big), 0o644); err != nil {
			t.Fatalf("temporary file %d within the budget: %v", i, err)
		}
	}
	err := os.WriteFile(filepath.Join(dir, ".tmp-2-y"), []byte(big), 0o644)
	wantErrno(t, "a temporary file past the unsaved budget", err, syscall.ENOSPC)
}
