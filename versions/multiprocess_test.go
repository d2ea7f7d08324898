package versions_test

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// The helper mode of the test binary: when MEMFS_TEST_WRITER is set, the
// test below runs as a child process writing to a shared database.
const writerEnv = "MEMFS_TEST_WRITER"

const updatesPerProcess = 300

// TestWriterProcess is the child: it alternates updates of the shared memory
// and of its own, each with content no other update writes.
func TestWriterProcess(t *testing.T) {
	name := os.Getenv(writerEnv)
	if name == "" {
		t.Skip("helper process for TestTwoProcessesWriting")
	}
	db, err := versions.Open(os.Getenv("MEMFS_TEST_DB"), versions.Options{})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer db.Close()
	storeID, shared, own := os.Getenv("MEMFS_TEST_STORE"), os.Getenv("MEMFS_TEST_SHARED"), os.Getenv("MEMFS_TEST_OWN")
	by := versions.SessionActor("sesn_" + name)
	// Start together: announce readiness, wait for the parent's go.
	barrier := os.Getenv("MEMFS_TEST_BARRIER")
	if err := os.WriteFile(filepath.Join(barrier, "ready-"+name), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(filepath.Join(barrier, "go")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no start signal from the parent")
		}
	}
	for i := range updatesPerProcess {
		target := own
		if i%2 == 0 {
			target = shared
		}
		content := fmt.Sprintf("%s update %d", name, i)
		if _, err := db.UpdateMemory(ctx, storeID, target, versions.MemoryUpdate{Content: &content}, by); err != nil {
			t.Fatalf("update %d of %s: %v", i, target, err)
		}
	}
}

func TestTwoProcessesWriting(t *testing.T) {
	if os.Getenv(writerEnv) != "" {
		t.Skip("running as a helper")
	}
	path := testDSN(t)
	db, err := versions.Open(path, versions.Options{})
	ok(t, err)
	defer db.Close()
	s := newStore(t, db, versions.StoreParams{})
	shared := create(t, db, s.ID, "/shared.md", "start")
	names := []string{"one", "two"}
	own := map[string]*versions.Memory{}
	for _, n := range names {
		own[n] = create(t, db, s.ID, "/"+n+".md", "start")
	}

	barrier := t.TempDir()
	cmds := make([]*exec.Cmd, len(names))
	outs := make([]*strings.Builder, len(names))
	for i, n := range names {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWriterProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), writerEnv+"="+n, "MEMFS_TEST_DB="+path, "MEMFS_TEST_STORE="+s.ID,
			"MEMFS_TEST_SHARED="+shared.ID, "MEMFS_TEST_OWN="+own[n].ID, "MEMFS_TEST_BARRIER="+barrier)
		outs[i] = &strings.Builder{}
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		ok(t, cmd.Start())
		cmds[i] = cmd
	}
	for _, n := range names {
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
			if _, err := os.Stat(filepath.Join(barrier, "ready-"+n)); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("writer %s never got ready", n)
			}
		}
	}
	ok(t, os.WriteFile(filepath.Join(barrier, "go"), nil, 0o600))
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer %s failed: %v\n%s", names[i], err, outs[i])
		}
		if strings.Contains(outs[i].String(), "SKIP") || !strings.Contains(outs[i].String(), "PASS") {
			t.Fatalf("writer %s did not run:\n%s", names[i], outs[i])
		}
	}

	// Every update is exactly one version: count them by content.
	seen := map[string]int{}
	for _, m := range append([]*versions.Memory{shared}, own["one"], own["two"]) {
		for _, v := range history(t, db, s.ID, m.ID) {
			seen[*v.Content]++
		}
	}
	for _, n := range names {
		for i := range updatesPerProcess {
			c := n + " update " + strconv.Itoa(i)
			if seen[c] != 1 {
				t.Errorf("%q recorded %d times, want once", c, seen[c])
			}
		}
	}
	if got, want := countVersions(t, db, s.ID), 3+2*updatesPerProcess; got != want {
		t.Fatalf("%d versions, want %d", got, want)
	}
	sh := history(t, db, s.ID, shared.ID)
	if len(sh) != 1+updatesPerProcess {
		t.Fatalf("shared memory has %d versions, want %d", len(sh), 1+updatesPerProcess)
	}
	switches := 0
	for i := 1; i < len(sh); i++ {
		if sh[i].CreatedBy != nil && sh[i-1].CreatedBy != nil && *sh[i].CreatedBy != *sh[i-1].CreatedBy {
			switches++
		}
	}
	t.Logf("the shared memory's head passed between the two processes %d times", switches)
	head, err := db.GetMemory(ctx, s.ID, shared.ID)
	ok(t, err)
	if head.VersionID != sh[0].ID || *head.Content != *sh[0].Content {
		t.Fatalf("head %s is not the last version %s", head.VersionID, sh[0].ID)
	}
}

// A write that meets a lock held longer than the busy timeout is retried,
// not reported: the holder here is another connection, as another process
// would be.
func TestBusyBeyondTimeoutIsRetried(t *testing.T) {
	sqliteOnly(t)
	path := filepath.Join(t.TempDir(), "memfs.db")
	db, err := versions.Open(path, versions.Options{BusyTimeout: 20 * time.Millisecond})
	ok(t, err)
	defer db.Close()
	s := newStore(t, db, versions.StoreParams{})

	other, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000")
	ok(t, err)
	defer other.Close()
	conn, err := other.Conn(ctx)
	ok(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "BEGIN IMMEDIATE")
	ok(t, err)
	released := make(chan error, 1)
	go func() {
		time.Sleep(100 * time.Millisecond) // several busy timeouts of the writer
		_, err := conn.ExecContext(ctx, "COMMIT")
		released <- err
	}()
	m, err := db.CreateMemory(ctx, s.ID, "/after-the-lock.md", "x", me)
	ok(t, err)
	ok(t, <-released)
	if m.Path != "/after-the-lock.md" {
		t.Fatalf("created %+v", m)
	}
}
