package fusefs

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/memfs/memfs/versions"
)

// A save past the per-memory size fails whole: EFBIG at write() and again at
// fsync() and close(), nothing of it is kept, the previous version stays the
// head, and the daemon log names the path and the limit. Before, the first
// 1,000 bytes of a 1,200-byte write became the head.
func TestOverLimitSaveFailsWhole(t *testing.T) {
	e := newEnv(t)
	st := e.storeWith(t, versions.StoreParams{Name: "Over", MaxMemoryBytes: 1000})
	_, dir := e.mountStore(t, st, Options{})
	p := filepath.Join(dir, "m.txt")
	write(t, p, "old")
	mem := e.memory(t, st.ID, "/m.txt")

	headKept := func(t *testing.T) {
		t.Helper()
		vs := e.versionsOf(t, st.ID, mem.ID)
		got := e.memory(t, st.ID, "/m.txt")
		if len(vs) != 1 || got.Content == nil || *got.Content != "old" {
			t.Errorf("after the refused save: head %q, history %s; want \"old\" alone", *got.Content, ops(vs))
		}
		if b, err := os.ReadFile(p); err != nil || string(b) != "old" {
			t.Errorf("read through the mount: %q, %v; want \"old\"", b, err)
		}
	}
	open := func(t *testing.T, flags int) int {
		t.Helper()
		fd, err := syscall.Open(p, flags, 0)
		if err != nil {
			t.Fatal(err)
		}
		return fd
	}
	cases := []struct {
		name string
		do   func(t *testing.T, fd int)
		flag int
	}{
		{"OneBigWrite", func(t *testing.T, fd int) {
			_, err := syscall.Write(fd, bytes.Repeat([]byte("a"), 1200))
			wantErrno(t, "write", err, syscall.EFBIG)
		}, syscall.O_WRONLY | syscall.O_TRUNC},
		{"SmallWritesPastIt", func(t *testing.T, fd int) {
			if _, err := syscall.Write(fd, bytes.Repeat([]byte("b"), 600)); err != nil {
				t.Fatalf("first write: %v", err)
			}
			_, err := syscall.Write(fd, bytes.Repeat([]byte("b"), 600))
			wantErrno(t, "second write", err, syscall.EFBIG)
			wantErrno(t, "fsync", syscall.Fsync(fd), syscall.EFBIG)
		}, syscall.O_WRONLY | syscall.O_TRUNC},
		{"Append", func(t *testing.T, fd int) {
			if _, err := syscall.Write(fd, bytes.Repeat([]byte("c"), 990)); err != nil {
				t.Fatalf("first append: %v", err)
			}
			_, err := syscall.Write(fd, bytes.Repeat([]byte("c"), 10))
			wantErrno(t, "append past the limit", err, syscall.EFBIG)
		}, syscall.O_WRONLY | syscall.O_APPEND},
		{"Ftruncate", func(t *testing.T, fd int) {
			if _, err := syscall.Write(fd, []byte("new")); err != nil {
				t.Fatal(err)
			}
			wantErrno(t, "ftruncate", syscall.Ftruncate(fd, 1001), syscall.EFBIG)
		}, syscall.O_RDWR},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fd := open(t, c.flag)
			c.do(t, fd)
			wantErrno(t, "close", syscall.Close(fd), syscall.EFBIG)
			headKept(t)
		})
	}
	t.Run("Truncate", func(t *testing.T) {
		wantErrno(t, "truncate", os.Truncate(p, 5000), syscall.EFBIG)
		headKept(t)
	})
	log := e.log.String()
	if !strings.Contains(log, "/m.txt") || !strings.Contains(log, "at most 1000 bytes") || !strings.Contains(log, "EFBIG") {
		t.Errorf("the daemon log does not name the path and the limit:\n%s", log)
	}
	checkAlive(t, dir)
}
