package fusefs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/versions"
)

// One version per save, attributed to the session.
func TestOneVersionPerSave(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Saves")
	m, dir := e.mountStore(t, st, Options{})
	actor := versions.SessionActor(m.sess.ID)

	t.Run("ManyWritesOneVersion", func(t *testing.T) {
		f, err := os.Create(filepath.Join(dir, "many.txt"))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 50; i++ {
			if _, err := f.WriteString("line\n"); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		mem := e.memory(t, st.ID, "/many.txt")
		vs := e.versionsOf(t, st.ID, mem.ID)
		if len(vs) != 1 || vs[0].Operation != versions.OpCreated || mem.ContentSize != 250 {
			t.Fatalf("versions %s, size %d; want one created of 250 bytes", ops(vs), mem.ContentSize)
		}
		if vs[0].CreatedBy == nil || *vs[0].CreatedBy != actor {
			t.Errorf("created by %+v, want %+v", vs[0].CreatedBy, actor)
		}
	})
	t.Run("EchoRedirect", func(t *testing.T) {
		if out, err := exec.Command("sh", "-c", "echo hi > "+filepath.Join(dir, "echo.txt")).CombinedOutput(); err != nil {
			t.Fatalf("echo: %v %s", err, out)
		}
		mem := e.memory(t, st.ID, "/echo.txt")
		if vs := e.versionsOf(t, st.ID, mem.ID); len(vs) != 1 || *mem.Content != "hi\n" {
			t.Errorf("echo hi > f: versions %s, content %q; want one created \"hi\\n\"", ops(vs), *mem.Content)
		}
	})
	t.Run("Touch", func(t *testing.T) {
		if out, err := exec.Command("touch", filepath.Join(dir, "touched")).CombinedOutput(); err != nil {
			t.Fatalf("touch: %v %s", err, out)
		}
		mem := e.memory(t, st.ID, "/touched")
		if vs := e.versionsOf(t, st.ID, mem.ID); len(vs) != 1 || *mem.Content != "" {
			t.Errorf("touch: versions %s, content %q; want one created \"\"", ops(vs), *mem.Content)
		}
		if out, err := exec.Command("touch", filepath.Join(dir, "touched")).CombinedOutput(); err != nil {
			t.Fatalf("touch again: %v %s", err, out)
		}
		if vs := e.versionsOf(t, st.ID, mem.ID); len(vs) != 1 {
			t.Errorf("touching an existing file wrote a version: %s", ops(vs))
		}
	})
	t.Run("CloseWithoutWriting", func(t *testing.T) {
		p := filepath.Join(dir, "many.txt")
		mem := e.memory(t, st.ID, "/many.txt")
		for _, flags := range []int{os.O_RDONLY, os.O_WRONLY, os.O_RDWR, os.O_WRONLY | os.O_APPEND} {
			f, err := os.OpenFile(p, flags, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if vs := e.versionsOf(t, st.ID, mem.ID); len(vs) != 1 {
			t.Errorf("closing without writing wrote versions: %s", ops(vs))
		}
	})
	t.Run("FsyncSaves", func(t *testing.T) {
		f, err := os.OpenFile(filepath.Join(dir, "many.txt"), os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString("one\n"); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		if got := *e.memory(t, st.ID, "/many.txt").Content; got != "one\n" {
			t.Errorf("after fsync the store holds %q, want %q", got, "one\n")
		}
		if _, err := f.WriteString("two\n"); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		mem := e.memory(t, st.ID, "/many.txt")
		if vs := e.versionsOf(t, st.ID, mem.ID); len(vs) != 3 || *mem.Content != "one\ntwo\n" {
			t.Errorf("versions %s, content %q; want created + 2 modified, \"one\\ntwo\\n\"", ops(vs), *mem.Content)
		}
	})
	t.Run("SharedBuffer", func(t *testing.T) {
		p := filepath.Join(dir, "shared.txt")
		w, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := w.WriteString("unsaved"); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != "unsaved" {
			t.Errorf("another handle reads %q, %v; want the unsaved write", got, err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		mem := e.memory(t, st.ID, "/shared.txt")
		if vs := e.versionsOf(t, st.ID, mem.ID); len(vs) != 1 {
			t.Errorf("a reader's close saved: versions %s", ops(vs))
		}
	})
	t.Run("TruncatePathIsASave", func(t *testing.T) {
		if err := os.Truncate(filepath.Join(dir, "echo.txt"), 1); err != nil {
			t.Fatal(err)
		}
		mem := e.memory(t, st.ID, "/echo.txt")
		if vs := e.versionsOf(t, st.ID, mem.ID); len(vs) != 2 || *mem.Content != "h" {
			t.Errorf("truncate(2): versions %s, content %q; want 2 versions, \"h\"", ops(vs), *mem.Content)
		}
	})
	t.Run("Attribution", func(t *testing.T) {
		for _, v := range e.allVersions(t, st.ID) {
			if v.CreatedBy == nil || *v.CreatedBy != actor {
				t.Errorf("version %s (%s %s) by %+v, want %+v", v.ID, v.Operation, *v.Path, v.CreatedBy, actor)
			}
		}
	})
	checkAlive(t, dir)
}

// Renames keep ids; the atomic-save pattern continues the target's
// lineage; the kernel's inode for the target stands for its memory.
func TestRenames(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Renames")
	_, dir := e.mountStore(t, st, Options{})
	write := func(name, content string) {
		t.Helper()
		write(t, filepath.Join(dir, name), content)
	}

	t.Run("KeepsID", func(t *testing.T) {
		write("a.txt", "A")
		before := e.memory(t, st.ID, "/a.txt")
		var s0 syscall.Stat_t
		if err := syscall.Stat(filepath.Join(dir, "a.txt"), &s0); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, "a.txt"), filepath.Join(dir, "sub", "b.txt")); err != nil {
			t.Fatal(err)
		}
		after := e.memory(t, st.ID, "/sub/b.txt")
		if after.ID != before.ID {
			t.Errorf("rename changed the id: %s -> %s", before.ID, after.ID)
		}
		var s syscall.Stat_t
		if err := syscall.Stat(filepath.Join(dir, "sub", "b.txt"), &s); err != nil {
			t.Fatal(err)
		}
		if s.Ino != s0.Ino {
			t.Errorf("ino %d after rename, want %d as before", s.Ino, s0.Ino)
		}
	})
	t.Run("AtomicSave", func(t *testing.T) {
		write("target.md", "v1\n")
		target := e.memory(t, st.ID, "/target.md")
		// Python's write-temp-then-os.replace, with the temp still open.
		tmp := filepath.Join(dir, ".target.md.tmp")
		f, err := os.Create(tmp)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString("v2\n"); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "target.md")); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		after := e.memory(t, st.ID, "/target.md")
		if after.ID != target.ID || *after.Content != "v2\n" {
			t.Errorf("after the atomic save: id %s content %q; want id %s content v2", after.ID, *after.Content, target.ID)
		}
		if vs := e.versionsOf(t, st.ID, target.ID); len(vs) != 2 || vs[0].Operation != versions.OpModified {
			t.Errorf("target history %s, want created + modified", ops(vs))
		}
		got, err := os.ReadFile(filepath.Join(dir, "target.md"))
		if err != nil || string(got) != "v2\n" {
			t.Errorf("reading the target: %q, %v", got, err)
		}
		if _, err := os.Stat(tmp); !os.IsNotExist(err) {
			t.Errorf("temp file still there: %v", err)
		}
	})
	t.Run("SedInPlace", func(t *testing.T) {
		write("sed.txt", "hello world\n")
		before := e.memory(t, st.ID, "/sed.txt")
		if out, err := exec.Command("sed", "-i", "s/world/there/", filepath.Join(dir, "sed.txt")).CombinedOutput(); err != nil {
			t.Fatalf("sed -i: %v %s", err, out)
		}
		after := e.memory(t, st.ID, "/sed.txt")
		if after.ID != before.ID || *after.Content != "hello there\n" {
			t.Errorf("sed -i: id %s content %q; want id %s, \"hello there\\n\"", after.ID, *after.Content, before.ID)
		}
		vs := e.versionsOf(t, st.ID, before.ID)
		if len(vs) != 2 {
			t.Errorf("sed -i history of the target: %s; want created + modified", ops(vs))
		}
		// The file is usable right after: its xattr id is the target's.
		if id := getxattr(t, filepath.Join(dir, "sed.txt"), xattrID); id != before.ID {
			t.Errorf("user.memfs.id after sed -i = %q, want %s", id, before.ID)
		}
		if err := os.WriteFile(filepath.Join(dir, "sed.txt"), []byte("again\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := e.memory(t, st.ID, "/sed.txt"); got.ID != before.ID || *got.Content != "again\n" {
			t.Errorf("save after sed -i went to %s (%q), want %s", got.ID, *got.Content, before.ID)
		}
	})
	t.Run("Errnos", func(t *testing.T) {
		if err := os.MkdirAll(filepath.Join(dir, "d1", "inner"), 0o755); err != nil {
			t.Fatal(err)
		}
		write("d1/inner/f", "f")
		write("file", "x")
		if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
			t.Fatal(err)
		}
		wantErrno(t, "file onto dir", syscall.Rename(filepath.Join(dir, "file"), filepath.Join(dir, "empty")), syscall.EISDIR)
		wantErrno(t, "dir onto file", syscall.Rename(filepath.Join(dir, "empty"), filepath.Join(dir, "file")), syscall.ENOTDIR)
		wantErrno(t, "dir onto non-empty dir", syscall.Rename(filepath.Join(dir, "empty"), filepath.Join(dir, "d1")), syscall.ENOTEMPTY)
		write("other", "y")
		wantErrno(t, "RENAME_EXCHANGE", unix.Renameat2(unix.AT_FDCWD, filepath.Join(dir, "file"), unix.AT_FDCWD, filepath.Join(dir, "other"), unix.RENAME_EXCHANGE), syscall.EINVAL)
		wantErrno(t, "RENAME_NOREPLACE onto a file", unix.Renameat2(unix.AT_FDCWD, filepath.Join(dir, "file"), unix.AT_FDCWD, filepath.Join(dir, "other"), unix.RENAME_NOREPLACE), syscall.EEXIST)
		if err := unix.Renameat2(unix.AT_FDCWD, filepath.Join(dir, "other"), unix.AT_FDCWD, filepath.Join(dir, "other2"), unix.RENAME_NOREPLACE); err != nil {
			t.Errorf("RENAME_NOREPLACE to a free name: %v", err)
		}
		wantErrno(t, "dir into itself", syscall.Rename(filepath.Join(dir, "d1"), filepath.Join(dir, "d1", "inner", "x")), syscall.EINVAL)
		checkAlive(t, dir)
	})
	t.Run("DirectoryWithOpenFile", func(t *testing.T) {
		write("d2/open.txt", "")
		f, err := os.OpenFile(filepath.Join(dir, "d2", "open.txt"), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, "d2"), filepath.Join(dir, "d3")); err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString("after move"); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		mem := e.memory(t, st.ID, "/d3/open.txt")
		vs := e.versionsOf(t, st.ID, mem.ID)
		if *mem.Content != "after move" || vs[0].Conflict {
			t.Errorf("save after the directory moved: %q, conflict %v (history %s)", *mem.Content, vs[0].Conflict, ops(vs))
		}
	})
	// Every memory moved with a directory has a new head: a file the
	// kernel knows, closed during the move, must save from it too.
	// A new file is final at its close: renamed, it is a memory moved.
	for _, move := range []struct {
		name, from, to, file string
		versions             int
	}{
		{"ClosedFileInMovedDirectory", "d4", "d5", "closed.txt", 3},
		{"ClosedFileMoved", "d6/closed.txt", "d6/renamed.txt", "", 3},
	} {
		t.Run(move.name, func(t *testing.T) {
			from, to := filepath.Join(dir, move.from, move.file), filepath.Join(dir, move.to, move.file)
			if err := os.MkdirAll(filepath.Dir(from), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(from, []byte("before"), 0o644); err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(from); err != nil || string(b) != "before" {
				t.Fatalf("read %q, %v", b, err)
			}
			if err := os.Rename(filepath.Join(dir, move.from), filepath.Join(dir, move.to)); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(to, []byte("after"), 0o644); err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(dir, to)
			mem := e.memory(t, st.ID, "/"+rel)
			vs := e.versionsOf(t, st.ID, mem.ID)
			if *mem.Content != "after" || vs[0].Conflict || len(vs) != move.versions {
				t.Errorf("save after the move: %q, conflict %v (history %s)", *mem.Content, vs[0].Conflict, ops(vs))
			}
		})
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A forked child closing its inherited copy of a descriptor (at exec) sends
// FLUSH too; it must not save a file its parent truncated and has not
// written yet.
func TestForkedChildCloseDoesNotSave(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Fork")
	_, dir := e.mountStore(t, st, Options{})
	p := filepath.Join(dir, "f.txt")
	write(t, p, "old")
	mem := e.memory(t, st.ID, "/f.txt")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if out, err := exec.Command("true").CombinedOutput(); err != nil {
			t.Fatalf("fork+exec: %v %s", err, out)
		}
	}
	if _, err := f.WriteString("new"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	vs := e.versionsOf(t, st.ID, mem.ID)
	if len(vs) != 2 || *vs[0].Content != "new" {
		t.Errorf("history %s (newest %q); want created + one modified \"new\"", ops(vs), *vs[0].Content)
	}
}

// `: > f` while a reader (tail -f, less) holds f open saves the empty
// file: the truncation is not lost when the reader closes.
func TestTruncateWhileReaderOpen(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Truncate")
	_, dir := e.mountStore(t, st, Options{})
	p := filepath.Join(dir, "log.txt")
	write(t, p, "old lines\n")
	mem := e.memory(t, st.ID, "/log.txt")
	reader, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	// The kernel sends the handle's release after close returns: the
	// save is made then, with the reader still open.
	saved := func() error {
		if vs := e.versionsOf(t, st.ID, mem.ID); len(vs) != 2 || vs[0].Content == nil || *vs[0].Content != "" {
			return fmt.Errorf("history %s; want created + one modified, empty", ops(vs))
		}
		return nil
	}
	if err := eventually(5*time.Second, saved); err != nil {
		t.Fatal(err)
	}
	if err := reader.Close(); err != nil {
		t.Fatal(err)
	}
	e.settle()
	if err := saved(); err != nil {
		t.Fatalf("after the reader closed: %v", err)
	}
	if got, err := os.ReadFile(p); err != nil || len(got) != 0 {
		t.Fatalf("the mount shows %q (%v) after the truncation, want it empty", got, err)
	}
}

// A directory renamed while a temporary file in it is renamed over
// another: the directory's rename takes the lock of each temporary file
// below, the file's rename those of both files, and neither may wait for
// the other for ever.
func TestDirRenameBesideTemporaryRename(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Locks")
	_, dir := e.mountStore(t, st, Options{Grace: time.Minute})
	done := make(chan error, 1)
	go func() {
		for i := range 40 {
			d := filepath.Join(dir, fmt.Sprintf("d%d", i))
			if err := os.Mkdir(d, 0o755); err != nil {
				done <- err
				return
			}
			for _, name := range []string{"a.tmp", "b.tmp", "c.tmp", "e.tmp"} {
				if err := os.WriteFile(filepath.Join(d, name), []byte(name), 0o644); err != nil {
					done <- err
					return
				}
			}
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); os.Rename(d, d+"-moved") }()
			go func() { defer wg.Done(); os.Rename(filepath.Join(d, "a.tmp"), filepath.Join(d, "b.tmp")) }()
			wg.Wait()
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("a directory's rename and a temporary file's rename in it waited for each other")
	}
	checkAlive(t, dir)
}
