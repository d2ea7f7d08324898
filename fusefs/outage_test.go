package fusefs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"

	"github.com/memfs/memfs/internal/mirror"
	"github.com/memfs/memfs/versions"
	"github.com/memfs/memfs/versions/pgtest"
)

// While its PostgreSQL server is down, a mount serves what it knows:
// names and attributes from its listings, contents it holds; a listing or
// a file changed elsewhere since it read them, and anything it never
// read, fail with EIO, as does every change, which leaves the previous
// version intact. Once the server is back the same mount saves again and
// catches up with what others saved.
func TestPostgresOutageServesWhatIsCached(t *testing.T) {
	e, srv := newPrivatePostgresEnv(t)
	db := e.db
	ctx := context.Background()
	st := e.store(t, "Outage")
	other := versions.UserActor("other-host")
	// Saved elsewhere: the mount lists it but never reads its content.
	if _, err := db.CreateMemory(ctx, st.ID, "/kept/unread.txt", "never read\n", other); err != nil {
		t.Fatal(err)
	}
	changed, err := db.CreateMemory(ctx, st.ID, "/changed.txt", "first\n", other)
	if err != nil {
		t.Fatal(err)
	}
	m, dir := e.mountStore(t, st, Options{})
	kept := filepath.Join(dir, "kept")
	for name, content := range map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"} {
		if err := os.WriteFile(filepath.Join(kept, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := os.ReadFile(filepath.Join(dir, "changed.txt")); err != nil || string(got) != "first\n" {
		t.Fatalf("read changed.txt = %q, %v", got, err)
	}
	// Published after the grace (not by settle(), which would end the
	// publisher's retries).
	if err := eventually(2*visibilityLimit, func() error {
		pending, err := db.HasPending(ctx)
		if err == nil && pending {
			err = fmt.Errorf("a.txt and b.txt are not published yet")
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	wantKept := []string{"a.txt", "b.txt", "unread.txt"}
	if err := sameNames(kept, wantKept); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(kept, "a.txt")); err != nil || string(got) != "alpha\n" {
		t.Fatalf("read kept/a.txt = %q, %v", got, err)
	}
	// Changed elsewhere: the mount learns its new version from the feed,
	// and does not read it.
	second := "second\n"
	updated, err := db.UpdateMemory(ctx, st.ID, changed.ID, versions.MemoryUpdate{Content: &second}, other)
	if err != nil {
		t.Fatal(err)
	}
	index := m.srv.stores[0].m.Index()
	if err := eventually(visibilityLimit, func() error {
		if e, r := index.Lookup("/", "changed.txt"); r != mirror.Found || e.Memory.VersionID != updated.VersionID {
			return fmt.Errorf("the mount's listing has not applied the change to /changed.txt: %v %+v", r, e.Memory)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Made elsewhere: the listing of its directory is no longer whole.
	if _, err := db.CreateMemory(ctx, st.ID, "/made.txt", "made\n", other); err != nil {
		t.Fatal(err)
	}
	if err := eventually(visibilityLimit, func() error {
		if _, r := index.Lookup("/", "made.txt"); r != mirror.Unloaded {
			return fmt.Errorf("the mount has not applied the creation of /made.txt")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// A second mount of the store saves a temporary file just before the outage:
	// durable, but pending for its (here longer) grace.
	_, dir2 := e.mountStore(t, st, Options{Grace: 2 * time.Second})
	fresh := filepath.Join(dir2, "fresh.tmp")
	if err := os.WriteFile(fresh, []byte("fresh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Durable once its pending row is written, Settle after its close.
	if err := eventually(5*time.Second, func() error {
		if files, err := e.db.PendingFiles(context.Background(), st.ID); err != nil || len(files) != 1 {
			return fmt.Errorf("pending rows %+v (%v), want fresh.tmp's", files, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	srv.Stop(t, "immediate")
	// The kernel forgets what it was told, as once its cache lapses:
	// each request below reaches the daemon.
	forgetKernel(m.srv)

	if got, err := os.ReadFile(filepath.Join(kept, "a.txt")); err != nil || string(got) != "alpha\n" {
		t.Errorf("during the outage, read kept/a.txt (read before) = %q, %v; want its content", got, err)
	}
	if err := sameNames(kept, wantKept); err != nil {
		t.Errorf("during the outage, ls kept: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(kept, "unread.txt")); err != nil || fi.Size() != int64(len("never read\n")) {
		t.Errorf("during the outage, stat kept/unread.txt = %v, %v; want its listed size", fi, err)
	}
	if _, err := os.Stat(filepath.Join(kept, "none.txt")); !os.IsNotExist(err) {
		t.Errorf("during the outage, stat of a name the listing has not: %v, want ENOENT", err)
	}
	_, err = os.ReadFile(filepath.Join(kept, "unread.txt"))
	wantErrno(t, "during the outage, read kept/unread.txt (content never held)", err, syscall.EIO)
	_, err = os.ReadFile(filepath.Join(dir, "changed.txt"))
	wantErrno(t, "during the outage, read changed.txt (changed elsewhere since read)", err, syscall.EIO)
	_, err = os.ReadDir(dir)
	wantErrno(t, "during the outage, ls of the top directory (a file made there elsewhere since listed)", err, syscall.EIO)

	wantErrno(t, "during the outage, save kept/a.txt", os.WriteFile(filepath.Join(kept, "a.txt"), []byte("lost\n"), 0o644), syscall.EIO)
	wantErrno(t, "during the outage, create kept/new.txt", os.WriteFile(filepath.Join(kept, "new.txt"), []byte("new\n"), 0o644), syscall.EIO)
	wantErrno(t, "during the outage, mkdir", os.Mkdir(filepath.Join(kept, "sub"), 0o755), syscall.EIO)
	wantErrno(t, "during the outage, rename", os.Rename(filepath.Join(kept, "b.txt"), filepath.Join(kept, "c.txt")), syscall.EIO)
	wantErrno(t, "during the outage, unlink", os.Remove(filepath.Join(kept, "b.txt")), syscall.EIO)
	// The refused content stays in the shared buffer until the kernel
	// releases the writer's handle, which it does after close() returns.
	if err := eventually(visibilityLimit, func() error { return readsAs(filepath.Join(kept, "a.txt"), "alpha\n") }); err != nil {
		t.Errorf("during the outage, after a failed save: %v; want the previous version", err)
	}
	if err := sameNames(kept, wantKept); err != nil {
		t.Errorf("during the outage, after failed changes, ls kept: %v", err)
	}
	// The pending file: its failed save goes back to what was saved, and
	// neither a rename to a scratch name nor a removal is taken for done.
	wantErrno(t, "during the outage, save the pending fresh.tmp", os.WriteFile(fresh, []byte("lost\n"), 0o644), syscall.EIO)
	if err := eventually(visibilityLimit, func() error { return readsAs(fresh, "fresh\n") }); err != nil {
		t.Errorf("during the outage, after a failed save of the pending fresh.tmp: %v; want what was saved", err)
	}
	wantErrno(t, "during the outage, rename the pending fresh.tmp to a scratch name", os.Rename(fresh, fresh+"~"), syscall.EIO)
	wantErrno(t, "during the outage, remove the pending fresh.tmp", os.Remove(fresh), syscall.EIO)
	if err := eventually(5*time.Second, func() error {
		if !strings.Contains(e.log.String(), "cannot be published yet") {
			return fmt.Errorf("the daemon's log does not say fresh.tmp could not be published yet")
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	log := e.log.String()
	for _, want := range []string{"serving what this mount has cached", "failed with EIO: the database cannot be reached", "cannot reach the database at"} {
		if !strings.Contains(log, want) {
			t.Errorf("the daemon's log does not say %q", want)
		}
	}

	srv.Start(t)
	if err := os.WriteFile(filepath.Join(kept, "a.txt"), []byte("after\n"), 0o644); err != nil {
		t.Fatalf("save after the restart: %v", err)
	}
	if got := e.memory(t, st.ID, "/kept/a.txt"); got.Content == nil || *got.Content != "after\n" {
		t.Errorf("the store's /kept/a.txt after the restart = %v, want the save made then", got.Content)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "changed.txt")); err != nil || string(got) != "second\n" {
		t.Errorf("after the restart, read changed.txt = %q, %v; want the version saved elsewhere", got, err)
	}
	if _, err := db.CreateMemory(ctx, st.ID, "/kept/later.txt", "later\n", other); err != nil {
		t.Fatal(err)
	}
	// The feed's notifications reconnect with a backoff of their own.
	if err := eventually(reconnectLimit, func() error {
		return sameNames(kept, []string{"a.txt", "b.txt", "later.txt", "unread.txt"})
	}); err != nil {
		t.Errorf("after the restart, a file saved elsewhere: %v", err)
	}
	// Published by the mount's retries.
	if err := eventually(reconnectLimit, func() error {
		got, err := db.GetMemory(ctx, st.ID, "/fresh.tmp")
		if err == nil && (got.Content == nil || *got.Content != "fresh\n") {
			err = fmt.Errorf("the store's /fresh.tmp holds %v, want %q", got.Content, "fresh\n")
		}
		return err
	}); err != nil {
		t.Errorf("after the restart, the file pending during the outage: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "fresh.tmp")); err != nil || string(got) != "fresh\n" {
		t.Errorf("after the restart, the other mount reads fresh.tmp = %q, %v", got, err)
	}
	if !strings.Contains(e.log.String(), "the database is reachable again") {
		t.Errorf("the daemon's log does not say the database is reachable again")
	}
}

// reconnectLimit bounds how long after the database is back the mount sees
// others' saves again: the feed's notifications reconnect with a backoff of
// at most 5s, and the feed is read at least every 5s without them.
const reconnectLimit = 11 * time.Second

// forgetKernel drops every name and attribute the kernel holds for the
// mount's stores.
func forgetKernel(s *Server) {
	var walk func(in *fs.Inode)
	walk = func(in *fs.Inode) {
		for name, ch := range in.Children() {
			walk(ch)
			ch.NotifyContent(0, 0)
			in.NotifyEntry(name)
		}
	}
	for _, sm := range s.stores {
		walk(&sm.top.Inode)
	}
}

// sameNames compares a directory's listing with want.
func sameNames(dir string, want []string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("ls %s = %v, want %v", dir, got, want)
	}
	return nil
}

func readsAs(p, want string) error {
	got, err := os.ReadFile(p)
	if err == nil && string(got) != want {
		err = fmt.Errorf("%s reads %q, want %q", p, got, want)
	}
	return err
}

// newPrivatePostgresEnv is an env on a PostgreSQL server of the test's
// own, which the test may stop and start; the daemon log is shown if the
// test fails.
func newPrivatePostgresEnv(t *testing.T) (*env, *pgtest.Private) {
	srv := pgtest.NewPrivate(t)
	return envOn(t, srv.URL, t.TempDir()), srv
}
