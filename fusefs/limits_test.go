package fusefs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/versions"
)

// Directories persist, rmdir refuses non-empty ones, emptied ones stay;
// mkdir -p and rm -r work as sequences of syscalls.
func TestDirectories(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Dirs")
	_, dir := e.mountStore(t, st, Options{})
	ctx := context.Background()
	if err := os.MkdirAll(filepath.Join(dir, "a", "b", "c"), 0o755); err != nil {
		t.Fatalf("mkdir -p: %v", err)
	}
	if ent, err := e.db.Stat(ctx, st.ID, "/a/b/c"); err != nil || !ent.Dir {
		t.Fatalf("mkdir not persisted: %+v, %v", ent, err)
	}
	write(t, filepath.Join(dir, "a", "b", "f.txt"), "f")
	wantErrno(t, "rmdir non-empty", syscall.Rmdir(filepath.Join(dir, "a", "b")), syscall.ENOTEMPTY)
	if err := os.Remove(filepath.Join(dir, "a", "b", "f.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "lone", "only.txt"), "x")
	if err := os.Remove(filepath.Join(dir, "lone", "only.txt")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "lone")); err != nil || !fi.IsDir() {
		t.Errorf("a directory emptied by unlink disappeared: %v", err)
	}
	write(t, filepath.Join(dir, "tree", "x", "1.txt"), "1")
	write(t, filepath.Join(dir, "tree", "x", "y", "2.txt"), "2")
	write(t, filepath.Join(dir, "tree", "3.txt"), "3")
	if err := os.RemoveAll(filepath.Join(dir, "tree")); err != nil {
		t.Fatalf("rm -r: %v", err)
	}
	if _, err := e.db.Stat(ctx, st.ID, "/tree"); versions.ErrorCode(err) != versions.CodeNotFound {
		t.Errorf("after rm -r, /tree: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "a")); err != nil {
		t.Fatalf("rm -r a: %v", err)
	}
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0].Name() != "lone" {
		t.Errorf("left in the store: %v, want [lone]", names)
	}
	checkAlive(t, dir)
}

// Only files and directories.
func TestOnlyFilesAndDirectories(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Kinds")
	_, dir := e.mountStore(t, st, Options{})
	f := filepath.Join(dir, "f")
	write(t, f, "x")
	wantErrno(t, "symlink", os.Symlink("f", filepath.Join(dir, "l")), syscall.EPERM)
	wantErrno(t, "link", os.Link(f, filepath.Join(dir, "h")), syscall.EPERM)
	wantErrno(t, "mkfifo", syscall.Mkfifo(filepath.Join(dir, "p"), 0o644), syscall.EPERM)
	wantErrno(t, "mknod char device", syscall.Mknod(filepath.Join(dir, "c"), syscall.S_IFCHR|0o644, 0x0103), syscall.EPERM)
	if err := os.Chmod(f, 0o4755); err != nil {
		t.Fatalf("chmod: %v", err)
	}
	fi, err := os.Stat(f)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
		t.Errorf("setuid kept: %v", fi.Mode())
	}
	var sfs unix.Statfs_t
	if err := unix.Statfs(dir, &sfs); err != nil {
		t.Fatal(err)
	}
	if sfs.Flags&unix.ST_NOSUID == 0 || sfs.Flags&unix.ST_NODEV == 0 {
		t.Errorf("mount flags %#x lack nosuid,nodev", sfs.Flags)
	}
	e2 := e.store(t, "Other")
	m := e.mount(t, Options{}, versions.AttachmentParams{StoreID: st.ID}, versions.AttachmentParams{StoreID: e2.ID})
	wantErrno(t, "rename across stores", os.Rename(filepath.Join(m.dir(0), "f"), filepath.Join(m.dir(1), "f")), syscall.EXDEV)
	wantErrno(t, "rename into the root", os.Rename(filepath.Join(m.dir(0), "f"), filepath.Join(m.root, "f")), syscall.EXDEV)
	checkAlive(t, dir)
	checkAlive(t, m.dir(1))
}

// Limits and refused names surface as errnos, are logged, and the
// mount keeps working after each.
func TestLimits(t *testing.T) {
	e := newEnv(t)
	st := e.storeWith(t, versions.StoreParams{Name: "Small", MaxMemories: 5, MaxMemoryBytes: 1000})
	_, dir := e.mountStore(t, st, Options{})

	t.Run("EFBIG", func(t *testing.T) {
		p := filepath.Join(dir, "big.txt")
		fd, err := syscall.Open(p, syscall.O_CREAT|syscall.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		_, err = syscall.Write(fd, bytes.Repeat([]byte("a"), 1200))
		wantErrno(t, "write crossing the limit", err, syscall.EFBIG)
		_, err = syscall.Pwrite(fd, []byte("c"), 1<<40)
		wantErrno(t, "pwrite at a huge offset", err, syscall.EFBIG)
		wantErrno(t, "ftruncate past the limit", syscall.Ftruncate(fd, 1001), syscall.EFBIG)
		wantErrno(t, "close after an oversized write", syscall.Close(fd), syscall.EFBIG)
		if _, err := e.db.GetMemory(context.Background(), st.ID, "/big.txt"); versions.ErrorCode(err) != versions.CodeNotFound {
			t.Errorf("a new file whose only save was oversized was kept: %v", err)
		}
		checkAlive(t, dir)
	})
	t.Run("EILSEQ", func(t *testing.T) {
		p := filepath.Join(dir, "text.txt")
		write(t, p, "good")
		// fsync reports it, and the same handle can retry once the
		// content is fixed.
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte{0xc3}, 0); err != nil {
			t.Fatal(err)
		}
		wantErrno(t, "fsync with invalid UTF-8", f.Sync(), syscall.EILSEQ)
		if got := e.memory(t, st.ID, "/text.txt"); *got.Content != "good" {
			t.Errorf("previous version not intact: %q", *got.Content)
		}
		if _, err := f.WriteAt([]byte("G"), 0); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Errorf("fsync after fixing the content: %v", err)
		}
		if err := f.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		if got := e.memory(t, st.ID, "/text.txt"); *got.Content != "Good" {
			t.Errorf("after the retry the store holds %q, want Good", *got.Content)
		}
		// close reports it.
		f, err = os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			t.Fatal(err)
		}
		// The write itself fails, and so does the save of what the
		// handle holds around it.
		_, err = f.Write([]byte{0xff, 0xfe, 'x'})
		wantErrno(t, "write of invalid UTF-8", err, syscall.EILSEQ)
		wantErrno(t, "close after a refused write", f.Close(), syscall.EILSEQ)
		if got := e.memory(t, st.ID, "/text.txt"); *got.Content != "Good" {
			t.Errorf("previous version not intact: %q", *got.Content)
		}
		f, err = os.Create(filepath.Join(dir, "new-binary"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.Write([]byte{0x80})
		wantErrno(t, "write of invalid UTF-8 into a new file", err, syscall.EILSEQ)
		wantErrno(t, "close of a new file after a refused write", f.Close(), syscall.EILSEQ)
		// A rune split between two writes is text.
		f, err = os.Create(filepath.Join(dir, "split.txt"))
		if err != nil {
			t.Fatal(err)
		}
		euro := []byte("€")
		for _, part := range [][]byte{euro[:1], euro[1:2], euro[2:]} {
			if _, err := f.Write(part); err != nil {
				t.Errorf("write of part %x of a rune split across writes: %v", part, err)
			}
		}
		if err := f.Close(); err != nil {
			t.Errorf("close of a rune split across writes: %v", err)
		}
		if err := eventually(visibilityLimit, func() error {
			if _, err := os.Stat(filepath.Join(dir, "new-binary")); !os.IsNotExist(err) {
				return fmt.Errorf("stat: %v", err)
			}
			return nil
		}); err != nil {
			t.Errorf("a new file whose save failed still exists: %v", err)
		}
		checkAlive(t, dir)
	})
	t.Run("Names", func(t *testing.T) {
		wantErrno(t, "name of 256 bytes", os.WriteFile(filepath.Join(dir, strings.Repeat("n", 256)), nil, 0o644), syscall.ENAMETOOLONG)
		deep := dir
		for i := 0; i < 21; i++ {
			deep = filepath.Join(deep, "d")
		}
		wantErrno(t, "21 segments", os.MkdirAll(deep, 0o755), syscall.ENAMETOOLONG)
		wantErrno(t, "control character", os.WriteFile(filepath.Join(dir, "bad\x01name"), nil, 0o644), syscall.EINVAL)
		wantErrno(t, "non-NFC name", os.WriteFile(filepath.Join(dir, "cafe\u0301"), nil, 0o644), syscall.EINVAL)
		wantErrno(t, "U+2028", os.WriteFile(filepath.Join(dir, "line\u2028sep"), nil, 0o644), syscall.EINVAL)
		checkAlive(t, dir)
	})
	t.Run("ENOSPC", func(t *testing.T) {
		for i := 0; ; i++ {
			err := os.WriteFile(filepath.Join(dir, "fill"+string(rune('a'+i))), []byte("x"), 0o644)
			if err != nil {
				wantErrno(t, "create in a full store", err, syscall.ENOSPC)
				break
			}
			if i > 10 {
				t.Fatal("the store never became full")
			}
		}
		// Existing memories stay editable.
		write(t, filepath.Join(dir, "text.txt"), "still editable")
		if err := os.Remove(filepath.Join(dir, "text.txt")); err != nil {
			t.Fatal(err)
		}
		checkAlive(t, dir)
	})
	if log := e.log.String(); !strings.Contains(log, "EFBIG") || !strings.Contains(log, "/text.txt") || !strings.Contains(log, "EILSEQ") {
		t.Errorf("refusals are not logged with errno and path:\n%s", log)
	}
}

func getxattr(t *testing.T, path, name string) string {
	t.Helper()
	buf := make([]byte, 256)
	n, err := unix.Getxattr(path, name, buf)
	if err != nil {
		t.Errorf("getxattr %s %s: %v", path, name, err)
		return ""
	}
	return string(buf[:n])
}
