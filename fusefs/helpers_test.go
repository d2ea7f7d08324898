package fusefs

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// env is a real database file in a temporary directory.
type env struct {
	db  *versions.DB
	dir string
	log *logBuffer
	// servers are the mounts made, which settle() lets publish.
	servers []*Server
}

// settle publishes what the mounts hold pending, as the end of the grace
// period would, so that the store can be checked at once.
func (e *env) settle() {
	for _, s := range e.servers {
		for _, sm := range s.stores {
			sm.flush()
		}
	}
}

type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	return envOn(t, filepath.Join(dir, "memfs.db"), dir)
}

// envOn is an env on the database dsn (a SQLite file or a PostgreSQL
// URL), its mounts made below dir.
func envOn(t *testing.T, dsn, dir string) *env {
	t.Helper()
	e := &env{db: openOn(t, dsn), dir: dir, log: &logBuffer{}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("daemon log:\n%s", e.log.String())
		}
	})
	return e
}

// openOn opens a handle on the database dsn, closed at the end.
func openOn(t *testing.T, dsn string) *versions.DB {
	t.Helper()
	db, err := versions.Open(dsn, versions.Options{})
	if err != nil {
		t.Fatalf("open database: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func (e *env) store(t *testing.T, name string) *versions.Store {
	t.Helper()
	return e.storeWith(t, versions.StoreParams{Name: name})
}

func (e *env) storeWith(t *testing.T, p versions.StoreParams) *versions.Store {
	t.Helper()
	st, err := e.db.CreateStore(context.Background(), p)
	if err != nil {
		t.Fatalf("create store %q: %v", p.Name, err)
	}
	return st
}

// mounted is a session mounted on a fresh directory.
type mounted struct {
	srv  *Server
	sess *versions.Session
	root string
}

// dir is the directory of the session's i-th attachment.
func (m *mounted) dir(i int) string {
	return filepath.Join(m.root, m.sess.Resources[i].Slug)
}

// mount creates a session with the attachments and mounts it; Cleanup
// unmounts it even when the test fails.
func (e *env) mount(t *testing.T, o Options, attach ...versions.AttachmentParams) *mounted {
	t.Helper()
	sess, err := e.db.CreateSession(context.Background(), attach)
	if err != nil {
		t.Fatalf("create session: %v", err)
	}
	return e.mountSession(t, e.db, sess, o)
}

func (e *env) mountSession(t *testing.T, db *versions.DB, sess *versions.Session, o Options) *mounted {
	t.Helper()
	root := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	return e.mountOn(t, root, db, sess, o)
}

func (e *env) mountOn(t *testing.T, root string, db *versions.DB, sess *versions.Session, o Options) *mounted {
	t.Helper()
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(e.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	e.settle()
	srv, err := Mount(root, db, sess, o)
	if err != nil {
		t.Fatalf("mount: %v", err)
	}
	e.servers = append(e.servers, srv)
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	return &mounted{srv: srv, sess: sess, root: root}
}

// mountStore mounts one read_write store and returns its directory.
func (e *env) mountStore(t *testing.T, st *versions.Store, o Options) (*mounted, string) {
	t.Helper()
	m := e.mount(t, o, versions.AttachmentParams{StoreID: st.ID})
	return m, m.dir(0)
}

// wantErrno fails unless err is the errno want.
func wantErrno(t *testing.T, what string, err error, want syscall.Errno) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: got error %v, want %v (%s)", what, err, want, errnoName(want))
	}
}

// checkAlive does an ordinary save and read in dir: the mount must keep
// working after any refusal.
func checkAlive(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, "alive.txt")
	want := "alive " + time.Now().Format(time.RFC3339Nano)
	if err := os.WriteFile(p, []byte(want), 0o644); err != nil {
		t.Fatalf("the mount stopped working: write: %v", err)
	}
	got, err := os.ReadFile(p)
	if err != nil || string(got) != want {
		t.Fatalf("the mount stopped working: read %q, %v; want %q", got, err, want)
	}
}

// versionsOf lists a memory's versions, newest first.
func (e *env) versionsOf(t *testing.T, storeID, memoryID string) []versions.Version {
	t.Helper()
	e.settle()
	page, err := e.db.ListVersions(context.Background(), storeID, versions.VersionListOptions{MemoryID: memoryID, View: versions.ViewFull, Limit: versions.MaxFullViewPage})
	if err != nil {
		t.Fatalf("list versions: %v", err)
	}
	return page.Data
}

// allVersions lists a store's versions, newest first.
func (e *env) allVersions(t *testing.T, storeID string) []versions.Version {
	t.Helper()
	e.settle()
	page, err := e.db.ListVersions(context.Background(), storeID, versions.VersionListOptions{Limit: versions.MaxPageSize})
	if err != nil {
		t.Fatalf("list versions: %v", err)
	}
	return page.Data
}

func (e *env) memory(t *testing.T, storeID, path string) *versions.Memory {
	t.Helper()
	e.settle()
	m, err := e.db.GetMemory(context.Background(), storeID, path)
	if err != nil {
		t.Fatalf("get memory %s: %v", path, err)
	}
	return m
}

// ops renders versions oldest first as "created /a, modified /b" for
// comparisons.
func ops(vs []versions.Version) string {
	var parts []string
	for i := len(vs) - 1; i >= 0; i-- {
		p := ""
		if vs[i].Path != nil {
			p = *vs[i].Path
		}
		parts = append(parts, string(vs[i].Operation)+" "+p)
	}
	return strings.Join(parts, ", ")
}

// eventually retries check until it returns nil or limit passes.
func eventually(limit time.Duration, check func() error) error {
	deadline := time.Now().Add(limit)
	for {
		err := check()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// visibilityLimit is how soon a change made elsewhere must show (one second).
const visibilityLimit = time.Second

// errOf keeps the error of a call that also returns a value.
func errOf[T any](_ T, err error) error { return err }
