package fusefs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
	"github.com/memfs/memfs/versions/pgtest"
)

// A GitHub token as the guard's rules find it, built at run time so that
// no scanner flags this file.
var testToken = "ghp_" + strings.Repeat("Zq8Xw2Lm4N", 4)[:36]

// TestBuiltinsSeeRefusals: a bash built-in's `> f` drops close()'s error,
// so what the save would refuse is refused at write(): echo exits
// non-zero and nothing is saved, for the guard and the history quota.
// The same scenarios run without a mount in internal/mirror
// (RefusedAtWrite).
func TestBuiltinsSeeRefusals(t *testing.T) {
	e := newEnv(t)
	run := func(t *testing.T, dir, script string) (string, error) {
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Run("guard", func(t *testing.T) {
		st := e.store(t, "Guarded")
		_, dir := e.mountStore(t, st, Options{})
		if out, err := run(t, dir, `echo "token: `+testToken+`" > s.md`); err == nil {
			t.Errorf("bash's echo of a token into a new file exited 0: %s", out)
		}
		// The refused new file goes at its release, which the kernel sends
		// after close returns.
		if err := eventually(5*time.Second, func() error {
			if _, err := os.Stat(filepath.Join(dir, "s.md")); !os.IsNotExist(err) {
				return fmt.Errorf("the refused new file is still shown: %v", err)
			}
			return nil
		}); err != nil {
			t.Error(err)
		}
		if _, err := e.db.GetMemory(t.Context(), st.ID, "/s.md"); versions.ErrorCode(err) != versions.CodeNotFound {
			t.Errorf("the refused file is in the store: %v", err)
		}
		if out, err := run(t, dir, `echo safe > k.md; echo "token: `+testToken+`" > k.md`); err == nil {
			t.Errorf("bash's echo of a token over a file exited 0: %s", out)
		}
		m := e.memory(t, st.ID, "/k.md")
		if vs := e.versionsOf(t, st.ID, m.ID); len(vs) != 1 || *vs[0].Content != "safe\n" {
			t.Errorf("after the refused echo: %s", ops(vs))
		}
		// The refused content is let go at its release, which the kernel
		// sends after close returns.
		if err := eventually(5*time.Second, func() error {
			if b, _ := os.ReadFile(filepath.Join(dir, "k.md")); string(b) != "safe\n" {
				return fmt.Errorf("the mount reads %q after the refused echo", b)
			}
			return nil
		}); err != nil {
			t.Error(err)
		}
		checkAlive(t, dir)
	})
	t.Run("quota", func(t *testing.T) {
		st := e.storeWith(t, versions.StoreParams{Name: "Quota", MaxHistoryBytes: 4000})
		_, dir := e.mountStore(t, st, Options{})
		if out, err := run(t, dir, `printf '%3000s' x > q.md`); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if out, err := run(t, dir, `printf '%2000s' y > q.md`); err == nil {
			t.Errorf("bash's printf past the history quota exited 0: %s", out)
		}
		m := e.memory(t, st.ID, "/q.md")
		if vs := e.versionsOf(t, st.ID, m.ID); len(vs) != 1 {
			t.Errorf("after the refused printf: %s", ops(vs))
		}
	})
}

// TestBuiltinsSeeOutage: while PostgreSQL is stopped, bash's `echo > f`
// exits non-zero (EIO at write) and the file keeps its version.
func TestBuiltinsSeeOutage(t *testing.T) {
	if pgtest.Server() == "" {
		t.Skip("set MEMFS_TEST_POSTGRES: the test stops a PostgreSQL server of its own")
	}
	e, srv := newPrivatePostgresEnv(t)
	st := e.store(t, "Outage built-ins")
	m, dir := e.mountStore(t, st, Options{})
	if err := os.WriteFile(filepath.Join(dir, "k.md"), []byte("safe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv.Stop(t, "immediate")
	if err := eventually(5*time.Second, func() error {
		if !m.srv.offline.Load() {
			return fmt.Errorf("the mount has not noticed the outage")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", "echo new > k.md")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("bash's echo during the outage exited 0: %s", out)
	}
	srv.Start(t)
	mem := e.memory(t, st.ID, "/k.md")
	if vs := e.versionsOf(t, st.ID, mem.ID); len(vs) != 1 || *vs[0].Content != "safe\n" {
		t.Errorf("after the outage: %s", ops(vs))
	}
}

// TestRefusedSaveLetGoAtClose: the close that reports a refused save lets
// the content go, before the kernel releases the handle (here held by a
// duplicate descriptor): a file opened next reads the head, so that sed -i
// rewriting the file at once does not save the truncated content.
func TestRefusedSaveLetGoAtClose(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Guarded")
	_, dir := e.mountStore(t, st, Options{})
	path := filepath.Join(dir, "notes.md")
	if err := os.WriteFile(path, []byte("# notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	held, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(held)
	if _, err := f.WriteString("# notes\ntoken: " + testToken + "\n"); !errors.Is(err, syscall.EACCES) {
		t.Fatalf("writing a token: %v, want EACCES", err)
	}
	if err := f.Close(); !errors.Is(err, syscall.EACCES) {
		t.Fatalf("closing after the refused write: %v, want EACCES", err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "# notes\n" {
		t.Fatalf("reading the file while the refused handle is held: %q, %v; want the head", b, err)
	}
	m := e.memory(t, st.ID, "/notes.md")
	if vs := e.versionsOf(t, st.ID, m.ID); len(vs) != 1 {
		t.Errorf("after the refused save: %s", ops(vs))
	}
}

// TestRefusedRewriteOfTemporaryFile: a temporary file closed, then opened
// again with O_TRUNC, written a line and then a token the guard refuses.
// Its close fails, and it goes back to what its first close confirmed:
// read through the mount, and published when its grace ends. The line
// written before the token is never stored. (The mirror's scenarios
// RefusedWriteNotSettled and RefusedWriteAtUnmount play the rest.)
func TestRefusedRewriteOfTemporaryFile(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Rewrite")
	_, dir := e.mountStore(t, st, Options{Grace: 300 * time.Millisecond})
	p := filepath.Join(dir, "notes.md.tmp")
	if err := os.WriteFile(p, []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("part\n")); err != nil {
		f.Close()
		t.Fatal(err)
	}
	_, err = f.Write([]byte("token: " + testToken + "\n"))
	wantErrno(t, "write of a token", err, syscall.EACCES)
	time.Sleep(2 * Settle) // Settle ends while the file is open
	wantErrno(t, "close after a refused write", f.Close(), syscall.EACCES)
	if err := eventually(5*time.Second, func() error {
		if got, err := os.ReadFile(p); err != nil || string(got) != "before\n" {
			return fmt.Errorf("the file after its failed close reads %q, %v; want what its first close confirmed", got, err)
		}
		m, err := e.db.GetMemory(t.Context(), st.ID, "/notes.md.tmp")
		if err != nil || *m.Content != "before\n" {
			return fmt.Errorf("the store after the grace: %v, %v", m, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	m := e.memory(t, st.ID, "/notes.md.tmp")
	if vs := e.versionsOf(t, st.ID, m.ID); len(vs) != 1 {
		t.Errorf("versions: %s, want the confirmed content alone", ops(vs))
	}
}
