package fusefs

import (
	"bufio"
	"context"
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

// twoMounts mounts one store twice, each on its own database handle as two
// daemons would: on SQLite, or on PostgreSQL when MEMFS_TEST_POSTGRES is
// set.
func twoMounts(t *testing.T, o Options) (e *env, st *versions.Store, dirA, dirB string) {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), "memfs.db")
	if pgtest.Server() != "" {
		dsn = pgtest.Database(t)
	}
	open := func() *versions.DB {
		db, err := versions.Open(dsn, versions.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	e = &env{db: open(), dir: t.TempDir(), log: &logBuffer{}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("daemon log:\n%s", e.log.String())
		}
	})
	st = e.store(t, "Atomic")
	_, dirA = e.mountStore(t, st, o)
	sess, err := e.db.CreateSession(t.Context(), []versions.AttachmentParams{{StoreID: st.ID}})
	if err != nil {
		t.Fatal(err)
	}
	b := e.mountSession(t, open(), sess, o)
	return e, st, dirA, b.dir(0)
}

// atomicSavers are the tools that save by writing a temporary file and
// renaming it over the target. Each reads x.md, says "read" on stderr,
// waits for a line on stdin (meanwhile the other mount saves), then saves.
var atomicSavers = map[string][]string{
	// GNU sed -i: its `e` command runs a shell command while the input is
	// open and its temporary file written.
	"sed": {"sed", "-i", "-e", "1e echo read >&2; read x", "-e", "s/v1/v3 from v1/", "x.md"},
	"python": {"python3", "-c", `import os, sys, tempfile
open("x.md").read()
print("read", file=sys.stderr, flush=True)
sys.stdin.readline()
fd, tmp = tempfile.mkstemp(dir=".")
os.write(fd, b"v3 from v1\n")
os.close(fd)
os.replace(tmp, "x.md")`},
	// GNU sed -i~ moves x.md to its backup name x.md~ (a scratch name:
	// the memory is held there) before it renames its temporary file over
	// x.md.
	"sed-backup": {"sed", "-i~", "-e", "1e echo read >&2; read x", "-e", "s/v1/v3 from v1/", "x.md"},
	// An editor that keeps a backup by renaming (vim's backupcopy=no,
	// Emacs): x.md to x.md~, then a new x.md written whole.
	"editor-backup": {"python3", "-c", `import os, sys
open("x.md").read()
print("read", file=sys.stderr, flush=True)
sys.stdin.readline()
os.rename("x.md", "x.md~")
with open("x.md", "w") as f:
    f.write("v3 from v1\n")`},
	// The SDK memory tools' .tmp-<pid>-<uuid>.
	"sdk-tmp": {"python3", "-c", `import os, sys, uuid
open("x.md").read()
print("read", file=sys.stderr, flush=True)
sys.stdin.readline()
tmp = ".tmp-%d-%s" % (os.getpid(), uuid.uuid4())
with open(tmp, "w") as f:
    f.write("v3 from v1\n")
os.rename(tmp, "x.md")`},
}

// TestAtomicSaveConflict is the two-mount case: B's tool reads x.md (v1),
// A saves v2, then the tool renames its temporary file over x.md. The
// version it makes is flagged as a conflict, for each tool; in strict mode
// the rename fails with ESTALE and x.md keeps v2. The kernel retries a
// rename that failed with ESTALE once, after looking the names up again:
// the retry finds the base by the target's path, on whatever node the
// kernel has for it then. The same scenarios run
// without a mount in internal/mirror (AtomicSaveConflict).
func TestAtomicSaveConflict(t *testing.T) {
	for name, argv := range atomicSavers {
		for _, strict := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/strict=%v", name, strict), func(t *testing.T) {
				e, st, dirA, dirB := twoMounts(t, Options{Strict: strict})
				if err := os.WriteFile(filepath.Join(dirA, "x.md"), []byte("v1\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				// B sees v1.
				if err := eventually(5*time.Second, func() error {
					b, err := os.ReadFile(filepath.Join(dirB, "x.md"))
					if string(b) != "v1\n" {
						return fmt.Errorf("B reads %q, %v", b, err)
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.Dir = dirB
				stdin, _ := cmd.StdinPipe()
				said, _ := cmd.StderrPipe()
				var stderr strings.Builder
				cmd.Stdout = &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				if line, err := bufio.NewReader(said).ReadString('\n'); err != nil || line != "read\n" {
					t.Fatalf("the tool said %q, %v: %s", line, err, stderr.String())
				}
				if err := os.WriteFile(filepath.Join(dirA, "x.md"), []byte("v2 from A\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				head := e.memory(t, st.ID, "/x.md").VersionID
				// B learns of v2 before the tool renames: the base must
				// still be what the tool read.
				if err := eventually(5*time.Second, func() error {
					b, _ := os.ReadFile(filepath.Join(dirB, "x.md"))
					if string(b) != "v2 from A\n" {
						return fmt.Errorf("B reads %q", b)
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				fmt.Fprintln(stdin, "go")
				stdin.Close()
				err := cmd.Wait()
				m := e.memory(t, st.ID, "/x.md")
				vs := e.versionsOf(t, st.ID, m.ID)
				if strict {
					if err == nil {
						t.Errorf("%s succeeded in strict mode over a version it did not read", name)
					}
					if m.VersionID != head {
						t.Errorf("x.md's head moved on in strict mode: %s", ops(vs))
					}
					// A refused new file goes at its release, which the
					// kernel sends after close returned.
					if err := eventually(5*time.Second, func() error {
						if b, err := os.ReadFile(filepath.Join(dirB, "x.md")); err != nil || string(b) != "v2 from A\n" {
							return fmt.Errorf("B reads x.md as %q (%v) after the refused save, want A's v2", b, err)
						}
						return nil
					}); err != nil {
						t.Error(err)
					}
					time.Sleep(DefaultGrace + 200*time.Millisecond) // a backup's hold ends
					if m := e.memory(t, st.ID, "/x.md"); m.VersionID != head {
						t.Errorf("x.md after the grace: %s, want A's v2 kept", ops(e.versionsOf(t, st.ID, m.ID)))
					}
					return
				}
				if err != nil {
					t.Fatalf("%s: %v: %s", name, err, stderr.String())
				}
				// sed reads on from its descriptor after the wait: what
				// follows its first line is A's, as on any file system.
				if len(vs) != 3 || !strings.HasPrefix(*vs[0].Content, "v3 from v1\n") {
					t.Fatalf("versions %s, the last %q", ops(vs), *vs[0].Content)
				}
				if !vs[0].Conflict {
					t.Errorf("%s's atomic save over a version it did not read is not flagged as a conflict", name)
				}
			})
		}
	}
}

// A process's saves are based on what it saved last, not on what it
// opened before: atomic saves one after another, and an atomic save after
// an in-place one, without reading again, are no conflicts (and succeed in
// strict mode).
func TestAtomicSavesAfterOwnSave(t *testing.T) {
	for _, strict := range []bool{false, true} {
		t.Run(fmt.Sprintf("strict=%v", strict), func(t *testing.T) {
			e := newEnv(t)
			st := e.store(t, "Own")
			_, dir := e.mountStore(t, st, Options{Strict: strict})
			if err := os.WriteFile(filepath.Join(dir, "x.md"), []byte("v1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("python3", "-c", `import os
def replace(text):
    with open(".tmp-x", "w") as f:
        f.write(text)
    os.replace(".tmp-x", "x.md")
open("x.md").read()
replace("v2\n")
replace("v3\n")
with open("x.md", "w") as f:
    f.write("v4\n")
replace("v5\n")`)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("the saves: %v\n%s", err, out)
			}
			m := e.memory(t, st.ID, "/x.md")
			vs := e.versionsOf(t, st.ID, m.ID)
			if len(vs) != 5 || *vs[0].Content != "v5\n" {
				t.Fatalf("versions %s, the last %q; want 5, the last v5", ops(vs), *vs[0].Content)
			}
			for _, v := range vs {
				if v.Conflict {
					t.Errorf("%s (%q) is flagged as a conflict: its process saved the version before it", v.ID, *v.Content)
				}
			}
		})
	}
}

// TestAtomicSaveStrictRenameESTALE checks the errno itself: rename(2) of a
// temporary file over a memory changed since this process opened it fails
// with ESTALE in strict mode.
func TestAtomicSaveStrictRenameESTALE(t *testing.T) {
	e, st, dirA, dirB := twoMounts(t, Options{Strict: true})
	if err := os.WriteFile(filepath.Join(dirA, "x.md"), []byte("v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := eventually(5*time.Second, func() error {
		_, err := os.ReadFile(filepath.Join(dirB, "x.md"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirA, "x.md"), []byte("v2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dirB, ".tmp-1-abc")
	if err := os.WriteFile(tmp, []byte("v3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := os.Rename(tmp, filepath.Join(dirB, "x.md"))
	wantErrno(t, "rename over a memory changed since it was read", err, syscall.ESTALE)
	if got := e.memory(t, st.ID, "/x.md"); got.ContentSize != 3 {
		t.Errorf("x.md after the refused rename: %d bytes", got.ContentSize)
	}
}

// TestAtomicSaveOneCommit counts the commits of an atomic save's rename:
// one, the version and the temporary file's row consumed together (the
// close before it saved the row, so that the content was durable when
// close returned). The mirror's suite counts the same (AtomicSaveOneCommit).
func TestAtomicSaveOneCommit(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Commits")
	_, dir := e.mountStore(t, st, Options{})
	target := filepath.Join(dir, "x.md")
	if err := os.WriteFile(target, []byte("v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The whole save: the temporary file's create, write and close, then
	// its rename. The fewest of several: the lease's renewal, on a timer
	// of its own, may commit during one of them, and a rename later than
	// Settle after the close (a loaded machine) makes two.
	fewest := int64(-1)
	for i := range 5 {
		tmp := filepath.Join(dir, fmt.Sprintf(".tmp-%d-commits", i))
		before := e.db.Writes()
		if err := os.WriteFile(tmp, fmt.Appendf(nil, "v%d\n", i+2), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, target); err != nil {
			t.Fatal(err)
		}
		if got := e.db.Writes() - before; fewest < 0 || got < fewest {
			fewest = got
		}
	}
	if fewest != 1 {
		t.Errorf("an atomic save made at least %d commits, want 1", fewest)
	}
	m := e.memory(t, st.ID, "/x.md")
	if vs := e.versionsOf(t, st.ID, m.ID); len(vs) != 6 || vs[0].Conflict {
		t.Errorf("versions %s", ops(vs))
	}
	if files, err := e.db.PendingFiles(context.Background(), st.ID); err != nil || len(files) != 0 {
		t.Errorf("pending rows %+v (%v), want none", files, err)
	}
}

// TestOverwriteIsOneStatement counts the statements of an overwrite
// through the mount: the mount passes the head it holds, so the engine
// writes the version in one statement between BEGIN and COMMIT and reads
// nothing again.
func TestOverwriteIsOneStatement(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Statements")
	_, dir := e.mountStore(t, st, Options{})
	p := filepath.Join(dir, "x.md")
	if err := os.WriteFile(p, []byte("v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The fewest of several: the mount's lease renewal, on a timer of its
	// own, may run its statements during one of them.
	fewest := int64(-1)
	for i := range 5 {
		before := e.db.Statements()
		if err := os.WriteFile(p, fmt.Appendf(nil, "v%d\n", i+2), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := e.db.Statements() - before; fewest < 0 || got < fewest {
			fewest = got
		}
	}
	if fewest > 3 {
		t.Errorf("an overwrite made %d statements, want at most 3 (BEGIN, the version, COMMIT)", fewest)
	}
	m := e.memory(t, st.ID, "/x.md")
	if vs := e.versionsOf(t, st.ID, m.ID); len(vs) != 6 {
		t.Errorf("versions %s, want 6", ops(vs))
	}
}
