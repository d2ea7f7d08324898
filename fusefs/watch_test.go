package fusefs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
	"github.com/memfs/memfs/versions/pgtest"
)

// pauseFeed stops the watcher at the first change it applies after armed,
// until the test lets it go on: the test can then break the database
// between the watcher's read of the feed and its questions about a path.
type pauseFeed struct {
	noObserver
	mu     sync.Mutex
	armed  bool
	fired  chan struct{}
	resume chan struct{}
}

func (p *pauseFeed) FeedLag(time.Duration) {
	p.mu.Lock()
	armed := p.armed
	p.armed = false
	p.mu.Unlock()
	if armed {
		close(p.fired)
		<-p.resume
	}
}

// The watcher treats a path as gone only when the engine says so: the
// database becoming unreachable between its read of the feed and its
// question about the changed path drops nothing and changes no inode
// number; the change is applied once the database is back.
func TestPostgresWatcherRetriesWhenTheEngineFails(t *testing.T) {
	e, srv := newPrivatePostgresEnv(t)
	db := e.db
	ctx := context.Background()
	st := e.store(t, "Retries")
	m, err := db.CreateMemory(ctx, st.ID, "/d/e/f.txt", "first", elsewhereActor)
	if err != nil {
		t.Fatal(err)
	}
	obs := &pauseFeed{fired: make(chan struct{}), resume: make(chan struct{})}
	_, dir := e.mountStore(t, st, Options{Observer: obs})
	c := &cacheCheck{t: t, dir: dir}
	c.warm("/d/e/f.txt")
	inoD, inoE := statOf(t, c.path("/d")).Ino, statOf(t, c.path("/d/e")).Ino

	obs.mu.Lock()
	obs.armed = true
	obs.mu.Unlock()
	second := "second, saved elsewhere"
	if _, err := db.UpdateMemory(ctx, st.ID, m.ID, versions.MemoryUpdate{Content: &second}, elsewhereActor); err != nil {
		t.Fatal(err)
	}
	select {
	case <-obs.fired:
	case <-time.After(10 * time.Second):
		t.Fatal("the watcher did not apply the save made elsewhere")
	}
	srv.Stop(t, "immediate")
	close(obs.resume)
	if err := eventually(10*time.Second, func() error {
		if !strings.Contains(e.log.String(), "reading the change feed failed") {
			return fmt.Errorf("the watcher reported no failure")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	srv.Start(t)
	c.seen("a save applied again once the database is back", "/d/e", []string{"f.txt"}, map[string]string{"/d/e/f.txt": second})
	forgetInodes(t)
	if got := statOf(t, c.path("/d")).Ino; got != inoD {
		t.Errorf("/d: st_ino %d after the watcher failed, want %d: it was taken as gone", got, inoD)
	}
	if got := statOf(t, c.path("/d/e")).Ino; got != inoE {
		t.Errorf("/d/e: st_ino %d after the watcher failed, want %d: it was taken as gone", got, inoE)
	}
	if _, err := os.Stat(filepath.Join(dir, "d", "e", "f.txt")); err != nil {
		t.Error(err)
	}
}

// feedCount counts the changes the watcher applied as others'.
type feedCount struct {
	noObserver
	mu sync.Mutex
	n  int
}

func (f *feedCount) FeedLag(time.Duration) {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
}

func (f *feedCount) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// The watcher skips the mount's own memory changes by the origin their
// commits record: creates, saves, renames (onto another file too),
// removals and held backups made here are none of others' changes, and a
// save made elsewhere right after them at the same path is.
func TestOwnChangesSkippedByOrigin(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Own")
	obs := &feedCount{}
	_, dir := e.mountStore(t, st, Options{Observer: obs})
	p := func(name string) string { return filepath.Join(dir, name) }
	write(t, p("a.md"), "a1")
	write(t, p("a.md"), "a2")
	write(t, p("b.md"), "b1")
	if err := os.Rename(p("b.md"), p("c.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p("c.md"), p("a.md")); err != nil {
		t.Fatal(err)
	}
	write(t, p("d.md"), "d1")
	if err := os.Remove(p("d.md")); err != nil {
		t.Fatal(err)
	}
	write(t, p("e.md"), "e1")
	if err := os.Rename(p("e.md"), p("e.md~")); err != nil {
		t.Fatal(err)
	}
	write(t, p("e.md"), "e2") // a version of the held memory
	e.settle()
	// A change from elsewhere at a path this mount just changed: the
	// watcher applies it, and has applied nothing else as others'.
	other := "from elsewhere"
	if _, err := e.db.UpdateMemory(context.Background(), st.ID, "/a.md", versions.MemoryUpdate{Content: &other}, elsewhereActor); err != nil {
		t.Fatal(err)
	}
	if err := eventually(visibilityLimit, func() error {
		b, err := os.ReadFile(p("a.md"))
		if err == nil && string(b) != other {
			err = fmt.Errorf("reads %q", b)
		}
		return err
	}); err != nil {
		t.Fatalf("the save made elsewhere: %v", err)
	}
	// Changes are applied in commit order: once the save made elsewhere
	// is counted, every change of this mount before it was seen.
	if err := eventually(visibilityLimit, func() error {
		if obs.count() == 0 {
			return fmt.Errorf("the watcher has not applied the save made elsewhere")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n := obs.count(); n != 1 {
		t.Errorf("the watcher applied %d changes as others', want 1 (the save made elsewhere)", n)
	}
}

// On PostgreSQL a mount of several stores learns which of them another
// host changed from the notification alone, and sees each one's saves:
// those of its first store, of its last, and of both in turn, while
// commits to a store it does not mount wake it for nothing.
func TestPostgresMountOfSeveralStoresSeesEach(t *testing.T) {
	dsn := pgtest.Database(t)
	e := envOn(t, dsn, t.TempDir())
	elsewhere := openOn(t, dsn)
	ctx := context.Background()
	stores := []*versions.Store{e.store(t, "First"), e.store(t, "Middle"), e.store(t, "Last")}
	other := e.store(t, "Not mounted")
	var attach []versions.AttachmentParams
	for _, st := range stores {
		attach = append(attach, versions.AttachmentParams{StoreID: st.ID, Access: versions.ReadWrite})
	}
	m := e.mount(t, Options{}, attach...)
	mems := make([]*versions.Memory, len(stores))
	for i, st := range stores {
		var err error
		if mems[i], err = elsewhere.CreateMemory(ctx, st.ID, "/note.md", "one", elsewhereActor); err != nil {
			t.Fatal(err)
		}
	}
	see := func(i int, want string) {
		t.Helper()
		p := filepath.Join(m.dir(i), "note.md")
		if err := eventually(visibilityLimit, func() error {
			got, err := os.ReadFile(p)
			if err != nil || string(got) != want {
				return fmt.Errorf("%s reads %q (%v), want %q", p, got, err, want)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range stores {
		see(i, "one")
	}
	save := func(i int, content string) {
		t.Helper()
		if _, err := elsewhere.UpdateMemory(ctx, stores[i].ID, mems[i].ID, versions.MemoryUpdate{Content: &content}, elsewhereActor); err != nil {
			t.Fatal(err)
		}
	}
	for n := range 3 {
		if _, err := elsewhere.CreateMemory(ctx, other.ID, fmt.Sprintf("/unrelated-%d.md", n), "x", elsewhereActor); err != nil {
			t.Fatal(err)
		}
	}
	save(2, "two in the last store")
	see(2, "two in the last store")
	save(0, "two in the first store")
	see(0, "two in the first store")
	save(0, "three in the first store")
	save(1, "two in the middle store")
	see(0, "three in the first store")
	see(1, "two in the middle store")
	see(2, "two in the last store")
}

// On PostgreSQL the watcher lets a mount's own saves pass unread, until
// someone looks at the store's history tree: from then on the tree shows
// each of them within the visibility bound, as it shows others' saves,
// also at a name the kernel had been told was absent.
func TestPostgresHistoryShowsOwnSaves(t *testing.T) {
	e := envOn(t, pgtest.Database(t), t.TempDir())
	st := e.store(t, "Own")
	m, dir := e.mountStore(t, st, Options{})
	write(t, filepath.Join(dir, "note.md"), "one\n")
	hist := filepath.Join(m.root, ".history", m.sess.Resources[0].Slug)
	for _, name := range []string{"later.md", "last.md"} {
		if _, err := os.Stat(filepath.Join(hist, name)); !os.IsNotExist(err) {
			t.Fatalf("%s before its save: %v, want it absent", name, err)
		}
		write(t, filepath.Join(dir, name), "saved\n")
		if err := eventually(visibilityLimit, func() error {
			_, err := os.Stat(filepath.Join(hist, name))
			return err
		}); err != nil {
			t.Fatalf("the history of a save through the mount: %v", err)
		}
	}
}

// On PostgreSQL a mount's own saves do not wake its watcher: each costs
// the save's one statement, and no read of the change feed.
func TestPostgresOwnSavesAreNotReadBack(t *testing.T) {
	e := envOn(t, pgtest.Database(t), t.TempDir())
	st := e.store(t, "Own")
	_, dir := e.mountStore(t, st, Options{})
	note := filepath.Join(dir, "note.md")
	write(t, note, "first\n")
	time.Sleep(300 * time.Millisecond) // the watcher reads the create's feed
	const saves = 20
	before := e.db.Statements()
	for i := range saves {
		write(t, note, fmt.Sprintf("save %d\n", i))
	}
	time.Sleep(300 * time.Millisecond)
	// A little room for what the daemon does on its own: a lease's
	// renewal, the feed's 5 s read.
	if n := e.db.Statements() - before; n > saves+4 {
		t.Errorf("%d saves through the mount took %d statements, want about one each", saves, n)
	}
}

// With several stores mounted, changes elsewhere to one store end the
// watcher's waits, and its wait never comes to read another store's own
// saves: that one is still read within ownUnreadFor, so that what piles
// up stays small.
func TestPostgresOwnSavesAreReadInTime(t *testing.T) {
	dsn := pgtest.Database(t)
	e := envOn(t, dsn, t.TempDir())
	elsewhere := openOn(t, dsn)
	mine, busy := e.store(t, "Mine"), e.store(t, "Busy")
	m := e.mount(t, Options{}, versions.AttachmentParams{StoreID: mine.ID, Access: versions.ReadWrite},
		versions.AttachmentParams{StoreID: busy.ID, Access: versions.ReadWrite})
	for i := range 5 {
		write(t, filepath.Join(m.dir(0), "note.md"), fmt.Sprintf("save %d\n", i))
	}
	sm := m.srv.stores[0]
	start, begun := m.srv.sinceStart(), time.Now()
	for i := 0; time.Since(begun) < ownUnreadFor+time.Second; i++ {
		if _, err := elsewhere.CreateMemory(context.Background(), busy.ID, fmt.Sprintf("/busy-%d.md", i), "x", elsewhereActor); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if time.Duration(sm.read.Load()) < start {
		t.Errorf("the store saved to through the mount was not read in the %v others changed another store", time.Since(begun).Round(time.Second))
	}
}
