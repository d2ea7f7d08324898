package fusefs

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/versions"
)

// The root holds one directory per store, named by slug, and the history
// tree, and nothing can be created, renamed or removed in it.
func TestRootReadOnly(t *testing.T) {
	e := newEnv(t)
	a, b := e.store(t, "Demo Memory"), e.store(t, "R&D Notes")
	m := e.mount(t, Options{}, versions.AttachmentParams{StoreID: a.ID}, versions.AttachmentParams{StoreID: b.ID})
	names, err := os.ReadDir(m.root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range names {
		got = append(got, n.Name())
	}
	sort.Strings(got)
	if want := ".history,demo-memory,r-d-notes"; strings.Join(got, ",") != want {
		t.Errorf("root lists %v, want %s", got, want)
	}
	root := m.root
	wantErrno(t, "create in root", os.WriteFile(filepath.Join(root, "x"), []byte("x"), 0o644), syscall.EROFS)
	wantErrno(t, "mkdir in root", os.Mkdir(filepath.Join(root, "d"), 0o755), syscall.EROFS)
	wantErrno(t, "rename a store dir", os.Rename(filepath.Join(root, "demo-memory"), filepath.Join(root, "other")), syscall.EROFS)
	wantErrno(t, "rmdir a store dir", syscall.Rmdir(filepath.Join(root, "demo-memory")), syscall.EROFS)
	wantErrno(t, "rename the history", os.Rename(filepath.Join(root, ".history"), filepath.Join(root, "other")), syscall.EROFS)
	wantErrno(t, "rmdir the history", syscall.Rmdir(filepath.Join(root, ".history")), syscall.EROFS)
	wantErrno(t, "chmod root", os.Chmod(root, 0o700), syscall.EROFS)
	wantErrno(t, "symlink in root", os.Symlink("x", filepath.Join(root, "l")), syscall.EROFS)
	checkAlive(t, m.dir(0))
	checkAlive(t, m.dir(1))
	if !strings.Contains(e.log.String(), "mount root is read-only") {
		t.Errorf("refusals in the root are not logged")
	}
}

// A read_only attachment refuses every mutation with EROFS.
func TestReadOnlyAttachment(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Reference")
	ctx := context.Background()
	if _, err := e.db.CreateMemory(ctx, st.ID, "/r.txt", "hello\n", versions.UserActor("t")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.CreateMemory(ctx, st.ID, "/docs/a.txt", "a\n", versions.UserActor("t")); err != nil {
		t.Fatal(err)
	}
	m := e.mount(t, Options{}, versions.AttachmentParams{StoreID: st.ID, Access: versions.ReadOnly})
	checkReadOnly(t, m.dir(0))
	if got := len(e.allVersions(t, st.ID)); got != 2 {
		t.Errorf("%d versions after refused mutations, want 2", got)
	}
}

// checkReadOnly tries every kind of mutation in dir, which holds /r.txt
// and /docs/a.txt, and expects EROFS; reading still works.
func checkReadOnly(t *testing.T, dir string) {
	t.Helper()
	r := filepath.Join(dir, "r.txt")
	if got, err := os.ReadFile(r); err != nil || string(got) != "hello\n" {
		t.Errorf("read r.txt: %q, %v", got, err)
	}
	openErr := func(flags int) error {
		f, err := os.OpenFile(r, flags, 0)
		if err == nil {
			f.Close()
		}
		return err
	}
	wantErrno(t, "create", os.WriteFile(filepath.Join(dir, "new"), []byte("x"), 0o644), syscall.EROFS)
	wantErrno(t, "open O_WRONLY", openErr(os.O_WRONLY), syscall.EROFS)
	wantErrno(t, "open O_RDWR", openErr(os.O_RDWR), syscall.EROFS)
	wantErrno(t, "open O_WRONLY|O_TRUNC", openErr(os.O_WRONLY|os.O_TRUNC), syscall.EROFS)
	wantErrno(t, "open O_APPEND", openErr(os.O_WRONLY|os.O_APPEND), syscall.EROFS)
	wantErrno(t, "truncate", os.Truncate(r, 0), syscall.EROFS)
	wantErrno(t, "unlink", os.Remove(r), syscall.EROFS)
	wantErrno(t, "rename", os.Rename(r, filepath.Join(dir, "s.txt")), syscall.EROFS)
	wantErrno(t, "mkdir", os.Mkdir(filepath.Join(dir, "d"), 0o755), syscall.EROFS)
	wantErrno(t, "rmdir", syscall.Rmdir(filepath.Join(dir, "docs")), syscall.EROFS)
	wantErrno(t, "chmod", os.Chmod(r, 0o600), syscall.EROFS)
	wantErrno(t, "setxattr", unix.Setxattr(r, "user.other", []byte("v"), 0), syscall.EROFS)
	if got, err := os.ReadFile(filepath.Join(dir, "docs", "a.txt")); err != nil || string(got) != "a\n" {
		t.Errorf("read docs/a.txt after refusals: %q, %v", got, err)
	}
}

// Archiving a mounted store makes it read-only in the mount.
func TestArchivedStore(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Old")
	ctx := context.Background()
	for _, p := range []string{"/r.txt", "/docs/a.txt"} {
		content := "hello\n"
		if p != "/r.txt" {
			content = "a\n"
		}
		if _, err := e.db.CreateMemory(ctx, st.ID, p, content, versions.UserActor("t")); err != nil {
			t.Fatal(err)
		}
	}
	_, dir := e.mountStore(t, st, Options{})
	checkAlive(t, dir)
	if _, err := e.db.ArchiveStore(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	// Opening for writing is refused by the mount itself, from the store
	// row the watcher refreshes.
	err := eventually(visibilityLimit, func() error {
		f, err := os.OpenFile(filepath.Join(dir, "r.txt"), os.O_WRONLY, 0)
		if err == nil {
			f.Close()
			return errors.New("open for writing still succeeds")
		}
		if !errors.Is(err, syscall.EROFS) {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatalf("archive not seen by the mount within %v: %v", visibilityLimit, err)
	}
	checkReadOnly(t, dir)
}

// The sandbox runs the agent as another user: files are owned by the uid
// and gid given, and that user can read and write through the mount.
func TestAgentAsAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a command as another user")
	}
	e := newEnv(t)
	st := e.store(t, "Agent")
	m, dir := e.mountStore(t, st, Options{UID: 4242, GID: 4242})
	// The test's temporary directories are private to root.
	for p := filepath.Dir(m.root); p != os.TempDir() && p != "/"; p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(dir, "mine.txt"), "hello")
	var s syscall.Stat_t
	if err := syscall.Stat(filepath.Join(dir, "mine.txt"), &s); err != nil {
		t.Fatal(err)
	}
	if s.Uid != 4242 || s.Gid != 4242 || s.Mode&0o777 != 0o644 {
		t.Errorf("owner %d:%d mode %o, want 4242:4242 644", s.Uid, s.Gid, s.Mode&0o777)
	}
	cmd := exec.Command("sh", "-c", "cat mine.txt && echo more >> mine.txt && mkdir sub && echo x > sub/new.txt")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 4242, Gid: 4242}}
	if out, err := cmd.CombinedOutput(); err != nil || string(out) != "hello" {
		t.Fatalf("as uid 4242: %q, %v", out, err)
	}
	if got := *e.memory(t, st.ID, "/mine.txt").Content; got != "hellomore\n" {
		t.Errorf("after the other user's append: %q", got)
	}
	other := exec.Command("sh", "-c", "echo x >> mine.txt")
	other.Dir = dir
	other.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 4343, Gid: 4343}}
	if out, err := other.CombinedOutput(); err == nil {
		t.Errorf("a third user could write a 0644 file it does not own: %s", out)
	}
}
