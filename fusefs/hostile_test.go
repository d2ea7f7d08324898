package fusefs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/versions"
)

// Renames use unix.Rename: os.Rename answers EEXIST itself, without asking
// the file system, when the destination is a directory.

// hostileRow is one thing an agent (perhaps steered by a prompt injection)
// may try through the mount, and what it must get back.
type hostileRow struct {
	name string
	op   func(h *hostileMount) error
	want syscall.Errno // 0: must succeed
	// logs is what the daemon's refusal must name (the path's last
	// segment); "" when the operation succeeds or the kernel's VFS answers
	// without asking the daemon (a directory renamed into its own subtree,
	// a file renamed over a directory).
	logs string
	// check runs after a success to verify what the operation left.
	check func(t *testing.T, h *hostileMount)
}

// hostileMount is a session with a writable store, a second writable store
// (for cross-store renames), a read_only one and a full one (2,000
// memories, the default limit).
type hostileMount struct {
	e                   *env
	m                   *mounted
	root                string
	rw, other, ro, full string // directories in the mount
	rwID, fullID        string
	limit               int
}

func newHostileMount(t *testing.T) *hostileMount {
	e := newEnv(t)
	rw, other, ro, full := e.store(t, "hostile"), e.store(t, "other"), e.store(t, "readonly"), e.store(t, "full")
	ctx := context.Background()
	if _, err := e.db.CreateMemory(ctx, ro.ID, "/kept.md", "read me", versions.UserActor("t")); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < versions.DefaultMaxMemories; i++ {
		if _, err := e.db.CreateMemory(ctx, full.ID, fmt.Sprintf("/m/%04d.md", i), "x", versions.UserActor("t")); err != nil {
			t.Fatalf("filling the full store, memory %d: %v", i, err)
		}
	}
	m := e.mount(t, Options{},
		versions.AttachmentParams{StoreID: rw.ID},
		versions.AttachmentParams{StoreID: other.ID},
		versions.AttachmentParams{StoreID: ro.ID, Access: versions.ReadOnly},
		versions.AttachmentParams{StoreID: full.ID})
	return &hostileMount{e: e, m: m, root: m.root, rw: m.dir(0), other: m.dir(1), ro: m.dir(2), full: m.dir(3),
		rwID: rw.ID, fullID: full.ID, limit: versions.DefaultMaxMemoryBytes}
}

func (h *hostileMount) path(name string) string { return filepath.Join(h.rw, name) }

// create makes a file holding content and reports the first error of
// open, write and close: refusals of a save surface at close.
func create(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(content)
	return errors.Join(werr, f.Close())
}

// roundTrip checks that name is listed verbatim in its directory and reads
// back what was written: names that look like traversal are plain names.
func roundTrip(name string) func(t *testing.T, h *hostileMount) {
	return func(t *testing.T, h *hostileMount) {
		got, err := os.ReadFile(h.path(name))
		if err != nil || string(got) != "content of "+name {
			t.Fatalf("read %q back: %q, %v", name, got, err)
		}
		ents, err := os.ReadDir(h.rw)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range ents {
			found = found || e.Name() == name
		}
		if !found {
			t.Fatalf("%q is not listed in its directory", name)
		}
		h.e.settle()
		if _, err := h.e.db.GetMemory(context.Background(), h.rwID, "/"+name); err != nil {
			t.Fatalf("the store has no memory at %q: %v", "/"+name, err)
		}
	}
}

func mkdirs(base string, segs ...string) (string, error) {
	p := filepath.Join(append([]string{base}, segs...)...)
	return p, os.MkdirAll(p, 0o755)
}

func repeatSegs(n int, seg string) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = seg
	}
	return s
}

func hostileRows() []hostileRow {
	n255, n256, n1024 := strings.Repeat("a", 255), strings.Repeat("b", 256), strings.Repeat("c", 1025)
	return []hostileRow{
		{name: "Name255", op: func(h *hostileMount) error { return create(h.path(n255), "content of "+n255) }, check: roundTrip(n255)},
		{name: "Name256", op: func(h *hostileMount) error { return create(h.path(n256), "x") }, want: syscall.ENAMETOOLONG, logs: n256},
		{name: "Name1025", op: func(h *hostileMount) error { return create(h.path(n1024), "x") }, want: syscall.ENAMETOOLONG, logs: n1024},
		{name: "Depth21File", op: func(h *hostileMount) error {
			d, err := mkdirs(h.rw, repeatSegs(20, "d")...)
			if err != nil {
				return fmt.Errorf("setup: 20 levels must be allowed: %w", err)
			}
			return create(filepath.Join(d, "deep21.md"), "x")
		}, want: syscall.ENAMETOOLONG, logs: "deep21.md"},
		{name: "Depth21Mkdir", op: func(h *hostileMount) error {
			return os.Mkdir(filepath.Join(append([]string{h.rw}, append(repeatSegs(20, "d"), "dir21")...)...), 0o755)
		}, want: syscall.ENAMETOOLONG, logs: "dir21"},
		{name: "PathOver1024Bytes", op: func(h *hostileMount) error {
			d, err := mkdirs(h.rw, repeatSegs(4, strings.Repeat("p", 250))...)
			if err != nil {
				return fmt.Errorf("setup: a 1,004-byte directory path must be allowed: %w", err)
			}
			return create(filepath.Join(d, "over-1024-bytes-in-all.md"), "x")
		}, want: syscall.ENAMETOOLONG, logs: "over-1024-bytes-in-all.md"},
		{name: "ControlChar", op: func(h *hostileMount) error { return create(h.path("bell\x07.md"), "x") }, want: syscall.EINVAL, logs: "bell\\a.md"},
		{name: "Newline", op: func(h *hostileMount) error { return create(h.path("new\nline.md"), "x") }, want: syscall.EINVAL, logs: "new\\nline.md"},
		{name: "Escape", op: func(h *hostileMount) error { return os.Mkdir(h.path("esc\x1b[31m"), 0o755) }, want: syscall.EINVAL, logs: "esc\\x1b[31m"},
		{name: "InvalidUTF8", op: func(h *hostileMount) error { return create(h.path("bad\xff.md"), "x") }, want: syscall.EINVAL, logs: "bad\\xff.md"},
		{name: "LineSeparator", op: func(h *hostileMount) error { return create(h.path("ls\u2028.md"), "x") }, want: syscall.EINVAL, logs: "ls\u2028.md"},
		{name: "NotNFC", op: func(h *hostileMount) error { return create(h.path("cafe\u0301.md"), "x") }, want: syscall.EINVAL, logs: "cafe\u0301.md"},
		{name: "PercentDotDot", op: func(h *hostileMount) error { return create(h.path("%2e%2e%2f"), "content of %2e%2e%2f") }, check: roundTrip("%2e%2e%2f")},
		{name: "DotDotBackslash", op: func(h *hostileMount) error { return create(h.path(`..\`), `content of ..\`) }, check: roundTrip(`..\`)},
		{name: "LeadingDash", op: func(h *hostileMount) error { return create(h.path("-rf"), "content of -rf") }, check: roundTrip("-rf")},
		{name: "Symlink", op: func(h *hostileMount) error { return os.Symlink("/etc/passwd", h.path("sym")) }, want: syscall.EPERM, logs: "sym"},
		{name: "HardLink", op: func(h *hostileMount) error {
			if err := create(h.path("linksrc.md"), "x"); err != nil {
				return fmt.Errorf("setup: %w", err)
			}
			return os.Link(h.path("linksrc.md"), h.path("hardlink"))
		}, want: syscall.EPERM, logs: "hardlink"},
		{name: "MknodCharDevice", op: func(h *hostileMount) error {
			return unix.Mknod(h.path("null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3)))
		}, want: syscall.EPERM, logs: "null"},
		{name: "FIFO", op: func(h *hostileMount) error { return unix.Mkfifo(h.path("fifo"), 0o644) }, want: syscall.EPERM, logs: "fifo"},
		{name: "ChmodSetuid", op: func(h *hostileMount) error {
			if err := create(h.path("suid.sh"), "#!/bin/sh\n"); err != nil {
				return fmt.Errorf("setup: %w", err)
			}
			return os.Chmod(h.path("suid.sh"), 0o4755|os.ModeSetuid|os.ModeSetgid)
		}, check: func(t *testing.T, h *hostileMount) {
			keepsNoSetuid(t, h.path("suid.sh"))
		}},
		{name: "CreateSetuid", op: func(h *hostileMount) error {
			// No umask clears these bits; the mount must drop them.
			fd, err := unix.Open(h.path("suid-new.sh"), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o6755)
			if err != nil {
				return err
			}
			return unix.Close(fd)
		}, check: func(t *testing.T, h *hostileMount) {
			keepsNoSetuid(t, h.path("suid-new.sh"))
		}},
		{name: "Chown", op: func(h *hostileMount) error {
			if err := create(h.path("owned.md"), "x"); err != nil {
				return fmt.Errorf("setup: %w", err)
			}
			return os.Chown(h.path("owned.md"), 4242, 4242)
		}, check: func(t *testing.T, h *hostileMount) {
			var st unix.Stat_t
			if err := unix.Stat(h.path("owned.md"), &st); err != nil {
				t.Fatal(err)
			}
			if st.Uid == 4242 || st.Gid == 4242 {
				t.Fatalf("chown was stored: uid %d gid %d; ownership is the mount's", st.Uid, st.Gid)
			}
		}},
		{name: "SetxattrMemfsID", op: func(h *hostileMount) error {
			if err := create(h.path("xattr.md"), "x"); err != nil {
				return fmt.Errorf("setup: %w", err)
			}
			return unix.Setxattr(h.path("xattr.md"), "user.memfs.id", []byte("mem_forged"), 0)
		}, want: syscall.EPERM, logs: "xattr.md"},
		{name: "SetxattrMemfsWriter", op: func(h *hostileMount) error {
			return unix.Setxattr(h.path("xattr.md"), "user.memfs.writer", []byte("sesn_someone_else"), 0)
		}, want: syscall.EPERM, logs: "xattr.md"},
		{name: "SetxattrOther", op: func(h *hostileMount) error {
			return unix.Setxattr(h.path("xattr.md"), "user.comment", []byte("hi"), 0)
		}, want: syscall.ENOTSUP, logs: "xattr.md"},
		{name: "SetxattrTrusted", op: func(h *hostileMount) error {
			return unix.Setxattr(h.path("xattr.md"), "trusted.memfs.id", []byte("mem_forged"), 0)
		}, want: syscall.ENOTSUP, logs: "xattr.md"},
		{name: "SetxattrSecurity", op: func(h *hostileMount) error {
			return unix.Setxattr(h.path("xattr.md"), "security.memfs", []byte("x"), 0)
		}, want: syscall.ENOTSUP, logs: "xattr.md"},
		{name: "WritePastSizeLimit", op: func(h *hostileMount) error {
			return create(h.path("big.md"), strings.Repeat("z", versions.DefaultMaxMemoryBytes+1))
		}, want: syscall.EFBIG, logs: "big.md", check: func(t *testing.T, h *hostileMount) {
			m, err := h.e.db.GetMemory(context.Background(), h.rwID, "/big.md")
			if err == nil && m.ContentSize > versions.DefaultMaxMemoryBytes {
				t.Fatalf("a %d-byte memory was kept past the %d-byte limit", m.ContentSize, versions.DefaultMaxMemoryBytes)
			}
		}},
		{name: "PwriteAt2Pow40", op: func(h *hostileMount) error {
			f, err := os.OpenFile(h.path("sparse.md"), os.O_RDWR|os.O_CREATE, 0o644)
			if err != nil {
				return fmt.Errorf("setup: %w", err)
			}
			_, werr := f.WriteAt([]byte("x"), 1<<40)
			f.Close()
			return werr
		}, want: syscall.EFBIG, logs: "sparse.md"},
		{name: "TruncatePastLimit", op: func(h *hostileMount) error {
			if err := create(h.path("trunc.md"), "short"); err != nil {
				return fmt.Errorf("setup: %w", err)
			}
			return os.Truncate(h.path("trunc.md"), int64(versions.DefaultMaxMemoryBytes)+1)
		}, want: syscall.EFBIG, logs: "trunc.md"},
		{name: "InvalidUTF8Content", op: func(h *hostileMount) error {
			if err := create(h.path("text.md"), "good"); err != nil {
				return fmt.Errorf("setup: %w", err)
			}
			return create(h.path("text.md"), "bad \xff\xfe bytes")
		}, want: syscall.EILSEQ, logs: "text.md", check: func(t *testing.T, h *hostileMount) {
			if m := h.e.memory(t, h.rwID, "/text.md"); m.Content == nil || *m.Content != "good" {
				t.Fatalf("the refused save replaced the previous version: %+v", m)
			}
		}},
		{name: "RenameDirIntoItself", op: func(h *hostileMount) error {
			if _, err := mkdirs(h.rw, "loop", "sub"); err != nil {
				return fmt.Errorf("setup: %w", err)
			}
			return unix.Rename(h.path("loop"), h.path("loop/sub/loop"))
		}, want: syscall.EINVAL},
		{name: "RenameAcrossStores", op: func(h *hostileMount) error {
			if err := create(h.path("leave.md"), "x"); err != nil {
				return fmt.Errorf("setup: %w", err)
			}
			return unix.Rename(h.path("leave.md"), filepath.Join(h.other, "arrive.md"))
		}, want: syscall.EXDEV, logs: "leave.md"},
		{name: "RenameFileOverDir", op: func(h *hostileMount) error {
			if err := create(h.path("plain.md"), "x"); err != nil {
				return fmt.Errorf("setup: %w", err)
			}
			if _, err := mkdirs(h.rw, "adir", "child"); err != nil {
				return fmt.Errorf("setup: %w", err)
			}
			return unix.Rename(h.path("plain.md"), h.path("adir"))
		}, want: syscall.EISDIR},
		{name: "RenameDirOverNonEmptyDir", op: func(h *hostileMount) error {
			if _, err := mkdirs(h.rw, "src"); err != nil {
				return fmt.Errorf("setup: %w", err)
			}
			if _, err := mkdirs(h.rw, "dst"); err != nil {
				return fmt.Errorf("setup: %w", err)
			}
			if err := create(h.path("dst/keep.md"), "x"); err != nil {
				return fmt.Errorf("setup: %w", err)
			}
			return unix.Rename(h.path("src"), h.path("dst"))
		}, want: syscall.ENOTEMPTY, logs: "dst"},
		{name: "CreateInRoot", op: func(h *hostileMount) error { return create(filepath.Join(h.root, "escape.md"), "x") }, want: syscall.EROFS, logs: "escape.md"},
		{name: "MkdirInRoot", op: func(h *hostileMount) error { return os.Mkdir(filepath.Join(h.root, "newstore"), 0o755) }, want: syscall.EROFS, logs: "newstore"},
		{name: "RenameStoreDir", op: func(h *hostileMount) error { return unix.Rename(h.rw, filepath.Join(h.root, "renamed")) }, want: syscall.EROFS, logs: "hostile"},
		{name: "RemoveStoreDir", op: func(h *hostileMount) error { return os.Remove(h.other) }, want: syscall.EROFS, logs: "other"},
		{name: "CreateInReadOnlyStore", op: func(h *hostileMount) error { return create(filepath.Join(h.ro, "new.md"), "x") }, want: syscall.EROFS, logs: "new.md"},
		{name: "WriteReadOnlyMemory", op: func(h *hostileMount) error { return create(filepath.Join(h.ro, "kept.md"), "overwritten") }, want: syscall.EROFS, logs: "kept.md"},
		{name: "Memory2001", op: func(h *hostileMount) error { return create(filepath.Join(h.full, "m", "2001.md"), "x") }, want: syscall.ENOSPC, logs: "2001.md",
			check: func(t *testing.T, h *hostileMount) {
				if _, err := h.e.db.GetMemory(context.Background(), h.fullID, "/m/2001.md"); versions.ErrorCode(err) != versions.CodeNotFound {
					t.Fatalf("the 2,001st memory exists (err %v)", err)
				}
			}},
		{name: "FullStoreStillEditable", op: func(h *hostileMount) error { return create(filepath.Join(h.full, "m", "0000.md"), "edited") }},
	}
}

// logHas reports whether one line of the daemon's log names s (raw or as
// slog's text handler quotes it) with the errno and a reason.
func logHas(log, s string, errno syscall.Errno) bool {
	q := strconv.Quote(s)
	for _, line := range strings.Split(log, "\n") {
		named := strings.Contains(line, s) || strings.Contains(line, q[1:len(q)-1])
		if named && strings.Contains(line, "errno="+errnoName(errno)) && strings.Contains(line, "reason=") {
			return true
		}
	}
	return false
}

func TestHostileInput(t *testing.T) {
	h := newHostileMount(t)
	for _, row := range hostileRows() {
		t.Run(row.name, func(t *testing.T) {
			before := len(h.e.log.String())
			err := row.op(h)
			if err != nil && strings.HasPrefix(err.Error(), "setup:") {
				t.Fatalf("%v", err)
			}
			if row.want == 0 {
				if err != nil {
					t.Fatalf("got %v, want success", err)
				}
			} else if !errors.Is(err, row.want) {
				t.Fatalf("got %v, want %v (%s)", err, row.want, errnoName(row.want))
			}
			if row.logs != "" {
				if log := h.e.log.String()[before:]; !logHas(log, row.logs, row.want) {
					t.Errorf("the daemon logged no line naming %q with errno=%s and a reason; new log:\n%s", row.logs, errnoName(row.want), log)
				}
			}
			if row.check != nil {
				row.check(t, h)
			}
			checkAlive(t, h.rw)
		})
	}
}

// keepsNoSetuid fails unless path's mode has neither the setuid nor the
// setgid bit.
func keepsNoSetuid(t *testing.T, path string) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	if st.Mode&(unix.S_ISUID|unix.S_ISGID) != 0 {
		t.Fatalf("%s: mode %o keeps a setuid/setgid bit", path, st.Mode)
	}
}
