package fusefs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/memfs/memfs/internal/mirror"
	"github.com/memfs/memfs/versions"
)

// Every node of a mount shows a number from its range of the layout in
// internal/mirror/inos.go, the root included (go-fuse leaves it 0 unless told).
func TestInodeLayout(t *testing.T) {
	e := newEnv(t)
	a, b := e.store(t, "A"), e.store(t, "B")
	var mems []*versions.Memory
	for _, p := range []string{"/first.md", "/second.md"} {
		mem, err := e.db.CreateMemory(t.Context(), b.ID, p, "stored", versions.UserActor("t"))
		if err != nil {
			t.Fatal(err)
		}
		mems = append(mems, mem)
	}
	m := e.mount(t, Options{}, versions.AttachmentParams{StoreID: a.ID}, versions.AttachmentParams{StoreID: b.ID})
	if got := statOf(t, m.root).Ino; got != mirror.RootIno {
		t.Errorf("mount root: ino %d, want %d", got, mirror.RootIno)
	}
	topA, topB := statOf(t, m.dir(0)).Ino, statOf(t, m.dir(1)).Ino
	if topA&mirror.DirInoBit == 0 || topB&mirror.DirInoBit == 0 || topA == topB {
		t.Errorf("store directories: inos %#x and %#x, want distinct numbers with the top bit set", topA, topB)
	}
	d := filepath.Join(m.dir(0), "d")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := statOf(t, d).Ino; got&mirror.DirInoBit == 0 || got == topA {
		t.Errorf("a directory: ino %#x, want the top bit set", got)
	}
	f := filepath.Join(d, "new.md")
	write(t, f, "new")
	if got := statOf(t, f).Ino; got&mirror.LocalInoBit == 0 || got&mirror.DirInoBit != 0 {
		t.Errorf("a file created in the mount: ino %#x, want bit 62 (pending) set", got)
	}
	for _, mem := range mems {
		want := mem.Ino
		if mem.Ino <= 1 {
			want = mirror.LowMemoryInoBit | mem.Ino // off the root's number
		}
		if got := statOf(t, filepath.Join(m.dir(1), mem.Path)).Ino; got != want {
			t.Errorf("memory %s (engine Ino %d): ino %#x, want %#x", mem.Path, mem.Ino, got, want)
		}
	}
}

// An editor's backup rename leaves the memory's number on the backup while
// the new file continues the memory: a new inode of the memory must not
// take the backup's number, or cmp, diff and cp take them for one file.
func TestBackupRenameKeepsNumbersApart(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Backup")
	if _, err := e.db.CreateMemory(t.Context(), st.ID, "/notes.md", "old", versions.UserActor("t")); err != nil {
		t.Fatal(err)
	}
	_, dir := e.mountStore(t, st, Options{})
	f := filepath.Join(dir, "notes.md")
	statOf(t, f) // the memory's own number, from a lookup
	if err := os.Rename(f, f+"~"); err != nil {
		t.Fatal(err)
	}
	backup, err := os.Open(f + "~") // keeps the backup's inode in the kernel
	if err != nil {
		t.Fatal(err)
	}
	defer backup.Close()
	write(t, f, "new")
	e.settle()
	forgetInodes(t) // notes.md is looked up again: a new inode of the memory
	if a, b := statOf(t, f).Ino, statOf(t, f+"~").Ino; a == b {
		t.Errorf("notes.md and its backup notes.md~ share inode number %#x", a)
	}
}
