package fusefs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/versions"
)

// A change committed elsewhere (the engine, as the CLI does, and a
// second mount with its own database handle) shows within one second.
func TestVisibility(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Shared")
	_, dir := e.mountStore(t, st, Options{})
	ctx := context.Background()
	cli := versions.UserActor("cli")
	p := filepath.Join(dir, "note.txt")
	write(t, p, "v1")
	if got, err := os.ReadFile(p); err != nil || string(got) != "v1" {
		t.Fatalf("read: %q, %v", got, err)
	}
	mem := e.memory(t, st.ID, "/note.txt")
	waitContent := func(what, path, want string) {
		t.Helper()
		start := time.Now()
		err := eventually(visibilityLimit, func() error {
			got, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if string(got) != want {
				return fmt.Errorf("reads %q", got)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s not visible within %v: %v", what, visibilityLimit, err)
		}
		t.Logf("%s visible after %v", what, time.Since(start).Round(time.Millisecond))
	}
	v2 := "v2 from the CLI"
	if _, err := e.db.UpdateMemory(ctx, st.ID, mem.ID, versions.MemoryUpdate{Content: &v2}, cli); err != nil {
		t.Fatal(err)
	}
	waitContent("an engine update", p, v2)
	if err := eventually(visibilityLimit, func() error {
		var s syscall.Stat_t
		if err := syscall.Stat(p, &s); err != nil || s.Size != int64(len(v2)) {
			return fmt.Errorf("size %d, %v", s.Size, err)
		}
		return nil
	}); err != nil {
		t.Errorf("stat after the update within %v: %v; want size %d", visibilityLimit, err, len(v2))
	}
	if _, err := os.Stat(filepath.Join(dir, "made-elsewhere.txt")); !os.IsNotExist(err) {
		t.Fatalf("stat of a missing file: %v", err)
	}
	if _, err := e.db.CreateMemory(ctx, st.ID, "/made-elsewhere.txt", "new", cli); err != nil {
		t.Fatal(err)
	}
	waitContent("an engine create (after a negative lookup)", filepath.Join(dir, "made-elsewhere.txt"), "new")
	if err := e.db.DeleteMemory(ctx, st.ID, mem.ID, versions.MemoryDelete{}, cli); err != nil {
		t.Fatal(err)
	}
	if err := eventually(visibilityLimit, func() error {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			return fmt.Errorf("stat: %v", err)
		}
		return nil
	}); err != nil {
		t.Fatalf("an engine delete not visible within %v: %v", visibilityLimit, err)
	}

	// A second mount of the store through another database handle, as
	// another process would have.
	db2, err := versions.Open(filepath.Join(e.dir, "memfs.db"), versions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db2.Close() })
	sess2, err := db2.CreateSession(ctx, []versions.AttachmentParams{{StoreID: st.ID}})
	if err != nil {
		t.Fatal(err)
	}
	m2 := e.mountSession(t, db2, sess2, Options{})
	other := filepath.Join(m2.dir(0), "made-elsewhere.txt")
	if got, err := os.ReadFile(other); err != nil || string(got) != "new" {
		t.Fatalf("second mount reads %q, %v", got, err)
	}
	write(t, filepath.Join(dir, "made-elsewhere.txt"), "saved in mount A")
	waitContent("a save in another mount", other, "saved in mount A")
	if err := os.Mkdir(filepath.Join(m2.dir(0), "dir-from-b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := eventually(visibilityLimit, func() error {
		_, err := os.Stat(filepath.Join(dir, "dir-from-b"))
		return err
	}); err != nil {
		t.Errorf("a mkdir in another mount not visible within %v: %v", visibilityLimit, err)
	}

	// A third mount sharing mount A's database handle (as a test harness
	// or benchmark might): the change feed says the same origin for both.
	sess3, err := e.db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: st.ID}})
	if err != nil {
		t.Fatal(err)
	}
	m3 := e.mountSession(t, e.db, sess3, Options{})
	third := filepath.Join(m3.dir(0), "made-elsewhere.txt")
	if got, err := os.ReadFile(third); err != nil || string(got) != "saved in mount A" {
		t.Fatalf("third mount reads %q, %v", got, err)
	}
	write(t, filepath.Join(dir, "made-elsewhere.txt"), "saved again in mount A")
	waitContent("a save in a mount sharing the database handle", third, "saved again in mount A")
}

// Read-only extended attributes.
func TestXattrs(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Attrs")
	m, dir := e.mountStore(t, st, Options{})
	p := filepath.Join(dir, "f.txt")
	write(t, p, "content")
	mem := e.memory(t, st.ID, "/f.txt")
	for name, want := range map[string]string{
		xattrID:      mem.ID,
		xattrVersion: mem.VersionID,
		xattrSHA256:  mem.ContentSHA256,
		xattrWriter:  "session_actor:" + m.sess.ID,
	} {
		if got := getxattr(t, p, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	buf := make([]byte, 1024)
	n, err := unix.Listxattr(p, buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00"); len(got) != 4 {
		t.Errorf("listxattr: %q, want the four user.memfs attributes", got)
	}
	wantErrno(t, "set user.memfs.id", unix.Setxattr(p, xattrID, []byte("mem_x"), 0), syscall.EPERM)
	wantErrno(t, "remove user.memfs.sha256", unix.Removexattr(p, xattrSHA256), syscall.EPERM)
	wantErrno(t, "set another attribute", unix.Setxattr(p, "user.mine", []byte("v"), 0), syscall.ENOTSUP)
	if n, err := unix.Listxattr(dir, buf); err != nil || n != 0 {
		t.Errorf("listxattr of a directory: %d, %v; want none", n, err)
	}
	_, err = unix.Getxattr(dir, xattrID, buf)
	wantErrno(t, "getxattr on a directory", err, syscall.ENODATA)
	checkAlive(t, dir)
}

// A save that started from an old head is marked as a conflict, or
// refused with ESTALE in strict mode; nothing is lost.
func TestConflicts(t *testing.T) {
	for _, strict := range []bool{false, true} {
		t.Run(fmt.Sprintf("strict=%v", strict), func(t *testing.T) {
			e := newEnv(t)
			st := e.store(t, "Race")
			_, dir := e.mountStore(t, st, Options{Strict: strict})
			p := filepath.Join(dir, "f.txt")
			write(t, p, "base")
			mem := e.memory(t, st.ID, "/f.txt")
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString("mine"); err != nil {
				t.Fatal(err)
			}
			other := "theirs"
			if _, err := e.db.UpdateMemory(context.Background(), st.ID, mem.ID, versions.MemoryUpdate{Content: &other}, versions.UserActor("other")); err != nil {
				t.Fatal(err)
			}
			err = f.Close()
			vs := e.versionsOf(t, st.ID, mem.ID)
			if strict {
				wantErrno(t, "close in strict mode", err, syscall.ESTALE)
				if got := *e.memory(t, st.ID, "/f.txt").Content; got != "theirs" {
					t.Errorf("strict refusal changed the memory: %q", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("close: %v", err)
			}
			if len(vs) != 3 || !vs[0].Conflict || *vs[0].Content != "mine" {
				t.Errorf("history %s, newest conflict=%v; want the last save marked as a conflict", ops(vs), vs[0].Conflict)
			}
			checkAlive(t, dir)
		})
	}
}

func TestStatfs(t *testing.T) {
	e := newEnv(t)
	st := e.storeWith(t, versions.StoreParams{Name: "Sized", MaxMemories: 10, MaxMemoryBytes: 4096})
	_, dir := e.mountStore(t, st, Options{})
	write(t, filepath.Join(dir, "a"), "a")
	write(t, filepath.Join(dir, "b"), "b")
	var s unix.Statfs_t
	if err := unix.Statfs(dir, &s); err != nil {
		t.Fatal(err)
	}
	if s.Namelen != 255 || s.Bsize != 4096 || s.Files != 10 || s.Ffree != 8 || s.Blocks != 10 || s.Bfree != 8 {
		t.Errorf("statfs: namelen %d bsize %d files %d ffree %d blocks %d bfree %d; want 255 4096 10 8 10 8",
			s.Namelen, s.Bsize, s.Files, s.Ffree, s.Blocks, s.Bfree)
	}
}

func TestEndedSessionCannotMount(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Ended")
	ctx := context.Background()
	sess, err := e.db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: st.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if sess, err = e.db.EndSession(ctx, sess.ID); err != nil {
		t.Fatal(err)
	}
	srv, err := Mount(t.TempDir(), e.db, sess, Options{})
	if err == nil {
		srv.Unmount()
		t.Fatal("an ended session was mounted")
	}
	var ve *versions.Error
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "ended") {
		t.Errorf("error %v, want a versions.Error saying the session ended", err)
	}
}

// TestSaveRate measures create + write 2 KiB + close through the mount; it
// asserts nothing about time (the bench suite compares), it logs the rate.
func TestSaveRate(t *testing.T) {
	if testing.Short() {
		t.Skip("measurement")
	}
	e := newEnv(t)
	st := e.store(t, "Rate")
	_, dir := e.mountStore(t, st, Options{})
	content := []byte(strings.Repeat("0123456789abcdef", 128))
	const n = 1000
	start := time.Now()
	for i := 0; i < n; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d.txt", i)), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	el := time.Since(start)
	t.Logf("%d saves (create + write 2 KiB + close) in %v: %.0f files/s", n, el.Round(time.Millisecond), n/el.Seconds())
	if vs := e.allVersions(t, st.ID); len(vs) != n {
		t.Errorf("%d versions, want %d", len(vs), n)
	}
}
