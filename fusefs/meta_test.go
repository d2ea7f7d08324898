package fusefs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func statOf(t *testing.T, p string) *syscall.Stat_t {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatalf("stat %s: %v", p, err)
	}
	return &st
}

func mtimeOf(st *syscall.Stat_t) time.Time { return time.Unix(st.Mtim.Unix()) }
func ctimeOf(st *syscall.Stat_t) time.Time { return time.Unix(st.Ctim.Unix()) }
func atimeOf(st *syscall.Stat_t) time.Time { return time.Unix(st.Atim.Unix()) }

// forgetInodes makes the kernel drop the dentries and inodes it does not
// use, so that the next stat is a fresh lookup and a new inode in the mount.
func forgetInodes(t *testing.T) {
	t.Helper()
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("2"), 0); err != nil {
		t.Skipf("cannot drop the kernel's inode cache: %v", err)
	}
}

// Times set with utimensat (touch -d, cp -p, rsync -a, tar x) are kept, on
// files and directories, also for a new inode of the same file, and follow a
// temporary file renamed onto its target (rsync's way).
func TestTimesKept(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Times")
	_, dir := e.mountStore(t, st, Options{})
	f := filepath.Join(dir, "f.txt")
	write(t, f, "x")
	at := time.Date(2001, 2, 3, 4, 5, 6, 7000, time.UTC)
	mt := time.Date(2002, 3, 4, 5, 6, 7, 8000, time.UTC)
	if err := os.Chtimes(f, at, mt); err != nil {
		t.Fatal(err)
	}
	check := func(what, p string) {
		t.Helper()
		s := statOf(t, p)
		if !atimeOf(s).Equal(at) || !mtimeOf(s).Equal(mt) {
			t.Errorf("%s: atime %v mtime %v, want %v %v", what, atimeOf(s), mtimeOf(s), at, mt)
		}
	}
	check("after utimensat", f)
	forgetInodes(t)
	check("on a new inode", f)

	if out, err := exec.Command("touch", "-d", "2002-03-04 05:06:07.000008 UTC", "-a", "-m", filepath.Join(dir, "g.txt")).CombinedOutput(); err != nil {
		t.Fatalf("touch -d: %v %s", err, out)
	}
	if s := statOf(t, filepath.Join(dir, "g.txt")); !mtimeOf(s).Equal(mt) {
		t.Errorf("touch -d on a new file: mtime %v, want %v", mtimeOf(s), mt)
	}

	tmp := filepath.Join(dir, ".f.txt.XXXX")
	write(t, tmp, "y")
	if err := os.Chtimes(tmp, at, mt); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, f); err != nil {
		t.Fatal(err)
	}
	check("after the rename onto the target", f)

	d := filepath.Join(dir, "d")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(d, at, mt); err != nil {
		t.Fatal(err)
	}
	check("directory", d)
	forgetInodes(t)
	check("directory on a new inode", d)

	// A new save is a new modification.
	write(t, f, "z")
	if s := statOf(t, f); !mtimeOf(s).After(mt.Add(time.Hour)) {
		t.Errorf("after a save: mtime %v, want now", mtimeOf(s))
	}
}

// A directory's mtime and ctime move when entries are created, removed or
// renamed in it; chmod moves a file's and a directory's ctime.
func TestDirectoryTimesMove(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "DirTimes")
	_, dir := e.mountStore(t, st, Options{})
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	moved := func(what string, dirs []string, op func() error) {
		t.Helper()
		before := map[string]*syscall.Stat_t{}
		for _, d := range dirs {
			before[d] = statOf(t, d)
		}
		time.Sleep(20 * time.Millisecond)
		if err := op(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for _, d := range dirs {
			s := statOf(t, d)
			if !mtimeOf(s).After(mtimeOf(before[d])) || !ctimeOf(s).After(ctimeOf(before[d])) {
				t.Errorf("%s: %s mtime %v ctime %v, unchanged from %v %v", what, filepath.Base(d), mtimeOf(s), ctimeOf(s), mtimeOf(before[d]), ctimeOf(before[d]))
			}
		}
	}
	moved("create", []string{a}, func() error { return os.WriteFile(filepath.Join(a, "f"), []byte("f"), 0o644) })
	moved("rename", []string{a, b}, func() error { return os.Rename(filepath.Join(a, "f"), filepath.Join(b, "f")) })
	moved("unlink", []string{b}, func() error { return os.Remove(filepath.Join(b, "f")) })
	moved("mkdir", []string{a}, func() error { return os.Mkdir(filepath.Join(a, "sub"), 0o755) })
	moved("rmdir", []string{a}, func() error { return os.Remove(filepath.Join(a, "sub")) })
	moved("create at the top", []string{dir}, func() error { return os.WriteFile(filepath.Join(dir, "top"), []byte("t"), 0o644) })

	for _, p := range []string{filepath.Join(dir, "top"), a} {
		before := statOf(t, p)
		time.Sleep(20 * time.Millisecond)
		if err := os.Chmod(p, 0o700); err != nil {
			t.Fatal(err)
		}
		s := statOf(t, p)
		if !ctimeOf(s).After(ctimeOf(before)) {
			t.Errorf("chmod %s: ctime %v unchanged", filepath.Base(p), ctimeOf(s))
		}
		if !mtimeOf(s).Equal(mtimeOf(before)) {
			t.Errorf("chmod %s changed mtime: %v -> %v", filepath.Base(p), mtimeOf(before), mtimeOf(s))
		}
	}
}

// asNobody runs a command as uid/gid 65534 and returns its combined output
// and error.
func asNobody(name string, args ...string) (string, error) {
	c := exec.Command(name, args...)
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := c.CombinedOutput()
	return string(out), err
}

// openToOthers lets another user reach the mount: t.TempDir's directories
// are 0700.
func openToOthers(t *testing.T, m *mounted) {
	t.Helper()
	for p := filepath.Dir(m.root); p != "/" && p != os.TempDir(); p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// Mode bits are shown as set, 0000 and the sticky bit included, and the
// kernel enforces them (default_permissions) against another user.
func TestModesEnforcedForAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a command as another user")
	}
	e := newEnv(t)
	st := e.store(t, "Modes")
	m, dir := e.mountStore(t, st, Options{})
	openToOthers(t, m)
	f := filepath.Join(dir, "secret.txt")
	write(t, f, "secret")
	if out, err := asNobody("cat", f); err != nil || out != "secret" {
		t.Fatalf("another user cannot read a 0644 file: %q, %v", out, err)
	}
	if err := os.Chmod(f, 0); err != nil {
		t.Fatal(err)
	}
	if s := statOf(t, f); s.Mode&0o7777 != 0 {
		t.Errorf("after chmod 000: mode %o", s.Mode&0o7777)
	}
	if out, err := asNobody("cat", f); err == nil || !strings.Contains(out, "Permission denied") {
		t.Errorf("another user read a 0000 file: %q, %v", out, err)
	}

	shared := filepath.Join(dir, "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Chmod(shared, 0o1777); err != nil {
		t.Fatal(err)
	}
	if s := statOf(t, shared); s.Mode&0o7777 != 0o1777 {
		t.Errorf("after chmod 1777: mode %o", s.Mode&0o7777)
	}
	mine := filepath.Join(shared, "owners.txt")
	write(t, mine, "the owner's")
	if out, err := asNobody("rm", "-f", mine); err == nil {
		t.Errorf("another user deleted a file in a sticky directory: %q", out)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("the file in the sticky directory is gone: %v", err)
	}
}

// Every attribute reply carries the inode number: the kernel takes a
// setattr's reply as the new attributes, and an ino of 0 there showed for
// up to a second.
func TestInodeNumberAfterSetattr(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Ino")
	_, dir := e.mountStore(t, st, Options{})
	d := filepath.Join(dir, "d")
	f := filepath.Join(dir, "f")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, f, "f")
	for _, p := range []string{d, f, dir} {
		ino := statOf(t, p).Ino
		if ino == 0 {
			t.Fatalf("%s: ino 0", p)
		}
		if err := os.Chtimes(p, time.Now(), time.Now()); err != nil {
			t.Fatal(err)
		}
		if got := statOf(t, p).Ino; got != ino {
			t.Errorf("%s: ino %d after utimensat, was %d", filepath.Base(p), got, ino)
		}
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if got := statOf(t, p).Ino; got != ino {
			t.Errorf("%s: ino %d after chmod, was %d", filepath.Base(p), got, ino)
		}
	}
}

// A directory's link count is 2 plus its subdirectories.
func TestDirectoryLinkCount(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Nlink")
	_, dir := e.mountStore(t, st, Options{})
	d := filepath.Join(dir, "d")
	for _, p := range []string{d, filepath.Join(d, "x"), filepath.Join(d, "y"), filepath.Join(d, "x", "z")} {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(d, "file"), "not a directory")
	want := map[string]uint64{d: 4, filepath.Join(d, "x"): 3, filepath.Join(d, "y"): 2, dir: 3}
	for p, n := range want {
		if got := statOf(t, p).Nlink; got != n {
			t.Errorf("%s: nlink %d, want %d", p, got, n)
		}
	}
	if err := os.Remove(filepath.Join(d, "y")); err != nil {
		t.Fatal(err)
	}
	if got := statOf(t, d).Nlink; got != 3 {
		t.Errorf("after rmdir: nlink %d, want 3", got)
	}
	forgetInodes(t)
	if got := statOf(t, d).Nlink; got != 3 {
		t.Errorf("on a new inode: nlink %d, want 3", got)
	}
}
