package fusefs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// Files deleted while open keep their buffers in the daemon; past the
// mount's unsaved budget a write fails with ENOSPC, earlier content stays,
// and closing the files gives the budget back.
func TestUnsavedBudgetOpenUnlinked(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "budget")
	const budget = 100_000
	_, dir := e.mountStore(t, st, Options{MaxUnsavedBytes: budget})

	chunk := bytes.Repeat([]byte("x"), 40_000)
	var open []*os.File
	defer func() {
		for _, f := range open {
			f.Close()
		}
	}()
	for i, name := range []string{"a.md", "b.md"} {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, f)
		if _, err := f.Write(chunk); err != nil {
			t.Fatalf("write %d under the budget: %v", i, err)
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, "c.md")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	open = append(open, f)
	if _, err := f.Write([]byte("kept")); err != nil {
		t.Fatalf("small write under the budget: %v", err)
	}
	// The kernel may split the write: what fitted is a short write, as on
	// a full disk.
	wrote, err := f.Write(chunk)
	wantErrno(t, "write past the unsaved budget", err, syscall.ENOSPC)
	err = f.Truncate(budget)
	wantErrno(t, "truncate past the unsaved budget", err, syscall.ENOSPC)
	got := make([]byte, budget)
	k, _ := f.ReadAt(got, 0)
	if k != 4+wrote || string(got[:4]) != "kept" {
		t.Fatalf("content after the refused write: %d bytes starting %q, want %d starting %q", k, got[:min(k, 4)], 4+wrote, "kept")
	}
	k, _ = open[0].ReadAt(make([]byte, len(chunk)+1), 0)
	if k != len(chunk) {
		t.Fatalf("an unlinked file's content: %d bytes, want %d", k, len(chunk))
	}
	if n := strings.Count(e.log.String(), "bytes of unsaved data"); n != 1 {
		t.Errorf("the refusals were logged %d times, want once:\n%s", n, e.log.String())
	}
	if !strings.Contains(e.log.String(), "c.md") {
		t.Errorf("the refusal's log names no path:\n%s", e.log.String())
	}

	for _, f := range open {
		if err := f.Close(); err != nil && f.Name() != p {
			t.Fatalf("close %s: %v", f.Name(), err)
		}
	}
	open = nil
	e.settle()
	if vs := e.allVersions(t, st.ID); len(vs) != 0 {
		t.Fatalf("c.md, whose write was refused, was saved in part: %d versions, the last of %d bytes", len(vs), vs[len(vs)-1].ContentSize)
	}
	big := bytes.Repeat([]byte("y"), 90_000)
	q := filepath.Join(dir, "after.md")
	// The kernel sends each handle's release after its close returned.
	if err := eventually(5*time.Second, func() error { return os.WriteFile(q, big, 0o644) }); err != nil {
		t.Fatalf("write after the buffers were closed: %v", err)
	}
	e.settle()
	if m := e.memory(t, st.ID, "/after.md"); m.Content == nil || *m.Content != string(big) {
		t.Fatalf("after.md was not saved whole")
	}
}

// A save whose write the budget refused fails whole: the memory keeps its
// head, not the part of the new content that fitted.
func TestUnsavedBudgetRefusedWriteKeepsHead(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "keep")
	const budget = 50_000 // below a memory's size limit, so that the budget refuses
	_, dir := e.mountStore(t, st, Options{MaxUnsavedBytes: budget})
	p := filepath.Join(dir, "notes.md")
	if err := os.WriteFile(p, []byte("the head\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.settle()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(bytes.Repeat([]byte("a"), 30_000)); err != nil {
		f.Close()
		t.Fatalf("write under the budget: %v", err)
	}
	_, err = f.Write(bytes.Repeat([]byte("b"), 30_000))
	wantErrno(t, "write past the unsaved budget", err, syscall.ENOSPC)
	wantErrno(t, "close after a refused write", f.Close(), syscall.ENOSPC)
	e.settle()
	if m := e.memory(t, st.ID, "/notes.md"); m.Content == nil || *m.Content != "the head\n" {
		t.Fatalf("the head after a refused save: %d bytes, want the head kept", m.ContentSize)
	}
	if got, err := os.ReadFile(p); err != nil || string(got) != "the head\n" {
		t.Fatalf("the mount after a refused save: %d bytes, %v; want the head", len(got), err)
	}
	if n := len(e.allVersions(t, st.ID)); n != 1 {
		t.Fatalf("%d versions, want 1: the refused save made one", n)
	}
}

// Saves under the budget are unaffected: a buffer's bytes are given back
// when its file is saved and closed, however many saves there are.
func TestUnsavedBudgetSavesUnaffected(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "saves")
	_, dir := e.mountStore(t, st, Options{MaxUnsavedBytes: 100_000})
	p := filepath.Join(dir, "notes.md")
	for i := range 10 {
		data := bytes.Repeat([]byte{'a' + byte(i)}, 60_000)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatalf("save %d: %v", i, err)
		}
		e.settle()
	}
	if m := e.memory(t, st.ID, "/notes.md"); m.Content == nil || *m.Content != strings.Repeat("j", 60_000) {
		t.Fatalf("the last save is not the head")
	}
	if strings.Contains(e.log.String(), "unsaved data") {
		t.Fatalf("a save under the budget was refused:\n%s", e.log.String())
	}
}

// A scratch file's buffer is its only copy: it counts until the file is
// deleted, not just while it is open.
func TestUnsavedBudgetScratch(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "scratch")
	_, dir := e.mountStore(t, st, Options{MaxUnsavedBytes: 100_000})
	swap := filepath.Join(dir, ".notes.md.swp")
	if err := os.WriteFile(swap, bytes.Repeat([]byte{0}, 80_000), 0o644); err != nil {
		t.Fatalf("write the swap file: %v", err)
	}
	err := os.WriteFile(filepath.Join(dir, "notes.md"), bytes.Repeat([]byte("n"), 40_000), 0o644)
	wantErrno(t, "write past the budget a closed scratch file holds", err, syscall.ENOSPC)
	if err := os.Remove(swap); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.md"), bytes.Repeat([]byte("n"), 40_000), 0o644); err != nil {
		t.Fatalf("write after the scratch file was deleted: %v", err)
	}
}

// Opening files holds their content in the daemon whether or not much is
// written: 900 files of 100 kB opened read-write, written one byte each,
// unlinked and held are refused past a 1 MiB budget, and the budget is
// back once they are closed.
func TestUnsavedBudgetOpenedFiles(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "opened")
	const budget, files, size = 1 << 20, 900, 100_000
	content := strings.Repeat("m", size)
	for i := range files {
		if _, err := e.db.CreateMemory(t.Context(), st.ID, fmt.Sprintf("/f%03d.md", i), content, versions.UserActor("test")); err != nil {
			t.Fatal(err)
		}
	}
	_, dir := e.mountStore(t, st, Options{MaxUnsavedBytes: budget})
	var held []*os.File
	defer func() {
		for _, f := range held {
			f.Close()
		}
	}()
	var refused error
	for i := range files {
		p := filepath.Join(dir, fmt.Sprintf("f%03d.md", i))
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err == nil {
			held = append(held, f)
			_, err = f.WriteAt([]byte("x"), 0)
		}
		if err == nil {
			err = os.Remove(p)
		}
		if err != nil {
			refused = err
			break
		}
	}
	wantErrno(t, "opening past the budget", refused, syscall.ENOSPC)
	if len(held)*size > budget {
		t.Errorf("%d files of %d bytes held under a budget of %d", len(held), size, budget)
	}
	if !strings.Contains(e.log.String(), "bytes of unsaved data") {
		t.Errorf("the refusal is not logged with its reason:\n%s", e.log.String())
	}
	for _, f := range held {
		f.Close()
	}
	held = nil
	// The last handle's release gives the bytes back after close returns.
	p := filepath.Join(dir, fmt.Sprintf("f%03d.md", files-1))
	for try := 0; ; try++ {
		b, err := os.ReadFile(p)
		if err == nil && len(b) == size {
			break
		}
		if try == 100 {
			t.Fatalf("reading a file after the held ones were closed: %d bytes, %v", len(b), err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
