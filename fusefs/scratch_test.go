package fusefs

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// dirInos lists a directory with getdents64 and returns the inode number
// READDIR gave each name ("." and ".." left out).
func dirInos(t *testing.T, dir string) map[string]uint64 {
	t.Helper()
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	defer syscall.Close(fd)
	out := map[string]uint64{}
	buf := make([]byte, 8192)
	for {
		n, err := syscall.Getdents(fd, buf)
		if err != nil {
			t.Fatalf("getdents %s: %v", dir, err)
		}
		if n == 0 {
			return out
		}
		for b := buf[:n]; len(b) > 0; {
			// struct linux_dirent64: ino, off, reclen, type, name.
			ino := binary.NativeEndian.Uint64(b[0:8])
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			name := string(b[19:reclen])
			if i := strings.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if name != "." && name != ".." {
				out[name] = ino
			}
			b = b[reclen:]
		}
	}
}

// dropCaches makes the kernel forget every dentry and inode it does not
// use, pages and listings too, and gives the daemon a moment to take the
// FORGETs it sends, so that what follows is a fresh lookup.
func dropCaches(t *testing.T) {
	t.Helper()
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0); err != nil {
		t.Skipf("cannot drop the kernel's caches: %v", err)
	}
	time.Sleep(100 * time.Millisecond)
}

// Scratch files, created as such (vim's swap, its 4913 probe) or made by
// renaming a stored file to a scratch name (an editor's backup), live until
// they are deleted or the mount goes away, whatever the kernel forgets: they
// are looked up, listed and read with their content and inode number, and
// deleting them records nothing.
func TestScratchFilesOutliveKernelForget(t *testing.T) {
	te := newToolEnv(t)
	notes := filepath.Join(te.dir, "notes.md")
	swap := filepath.Join(te.dir, ".notes.md.swp")
	probe := filepath.Join(te.dir, "4913")
	backup := notes + "~"
	swapContent := "b0VIM 9.0\x00\xff\xfe swap"
	dirInos(t, te.dir) // the kernel keeps this listing: what follows must not be hidden by it
	write(t, swap, swapContent)
	write(t, probe, "")
	if err := os.Rename(notes, backup); err != nil { // emacs's default backup
		t.Fatal(err)
	}
	write(t, notes, "line two\n")
	te.e.settle() // past the grace: the backup is now only in the mount
	want := map[string]string{".notes.md.swp": swapContent, "4913": "", "notes.md~": notesBefore}
	inos := map[string]uint64{}
	for name := range want {
		inos[name] = statOf(t, filepath.Join(te.dir, name)).Ino
	}

	check := func(when string) {
		t.Helper()
		for name, content := range want {
			p := filepath.Join(te.dir, name)
			var st syscall.Stat_t
			if err := syscall.Stat(p, &st); err != nil {
				t.Errorf("%s: stat %s: %v", when, name, err)
				continue
			}
			if st.Ino != inos[name] || st.Size != int64(len(content)) {
				t.Errorf("%s: %s has ino %#x size %d, want %#x %d", when, name, st.Ino, st.Size, inos[name], len(content))
			}
			if got, err := os.ReadFile(p); err != nil || string(got) != content {
				t.Errorf("%s: read %s: %q, %v; want %q", when, name, got, err, content)
			}
		}
	}
	checkListed := func(when string) {
		t.Helper()
		listed := dirInos(t, te.dir)
		for name := range want {
			if ino, ok := listed[name]; !ok || ino != inos[name] {
				t.Errorf("%s: the listing gives %s ino %#x (listed %v), want %#x", when, name, ino, ok, inos[name])
			}
		}
		if _, ok := listed["notes.md"]; !ok || len(listed) != len(want)+1 {
			t.Errorf("%s: the listing is %v, want notes.md and the scratch files", when, listed)
		}
	}
	check("before the kernel forgets")
	checkListed("before the kernel forgets")
	dropCaches(t)
	checkListed("listed after the kernel forgot")
	dropCaches(t)
	check("looked up after the kernel forgot")
	dropCaches(t)
	checkListed("listed again after the kernel forgot")

	for name := range want {
		if err := os.Remove(filepath.Join(te.dir, name)); err != nil {
			t.Errorf("remove %s: %v", name, err)
		}
	}
	for _, forgot := range []bool{false, true} {
		if forgot {
			dropCaches(t)
		}
		for name := range want {
			if _, err := os.Stat(filepath.Join(te.dir, name)); !os.IsNotExist(err) {
				t.Errorf("%s after its removal (kernel forgot: %v): %v, want ENOENT", name, forgot, err)
			}
		}
		if listed := dirInos(t, te.dir); len(listed) != 1 {
			t.Errorf("after the removals (kernel forgot: %v) the listing is %v, want notes.md alone", forgot, listed)
		}
	}
	te.checkOneEdit(t, "line two\n")
}

// A scratch file moves with its directory, whatever the kernel forgot, and
// keeps the directory from being removed; renamed over another scratch
// file, it replaces it.
func TestScratchFilesFollowTheirDirectory(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "ScratchDir")
	_, dir := e.mountStore(t, st, Options{})
	d := filepath.Join(dir, "d")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(d, ".a.swp"), "a")
	write(t, filepath.Join(d, ".b.swp"), "b")
	if err := os.Rename(filepath.Join(d, ".a.swp"), filepath.Join(d, ".b.swp")); err != nil {
		t.Fatal(err)
	}
	ino := statOf(t, filepath.Join(d, ".b.swp")).Ino
	dropCaches(t)
	moved := filepath.Join(dir, "e")
	if err := os.Rename(d, moved); err != nil {
		t.Fatal(err)
	}
	dropCaches(t)
	p := filepath.Join(moved, ".b.swp")
	if got, err := os.ReadFile(p); err != nil || string(got) != "a" {
		t.Errorf("the scratch file after its directory moved: %q, %v; want %q", got, err, "a")
	}
	if got := statOf(t, p).Ino; got != ino {
		t.Errorf("the scratch file after its directory moved: ino %#x, want %#x", got, ino)
	}
	if listed := dirInos(t, moved); len(listed) != 1 || listed[".b.swp"] != ino {
		t.Errorf("the moved directory lists %v, want .b.swp with ino %#x alone", listed, ino)
	}
	wantErrno(t, "rmdir of a directory holding a scratch file", syscall.Rmdir(moved), syscall.ENOTEMPTY)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Rmdir(moved); err != nil {
		t.Errorf("rmdir once the scratch file is removed: %v", err)
	}
	if vs := e.allVersions(t, st.ID); len(vs) != 0 {
		t.Errorf("the store's history is %s, want nothing", ops(vs))
	}
}
