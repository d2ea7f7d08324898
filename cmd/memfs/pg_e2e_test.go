package main

// End to end on PostgreSQL: two `memfs mount` processes of the built binary
// stand for two hosts sharing one store on one server, with the CLI beside
// them. They run when MEMFS_TEST_POSTGRES names a server (scripts/test
// runs them by their TestPostgres prefix) and skip otherwise. Latencies
// are logged, not asserted beyond visibilityLimit.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
	"github.com/memfs/memfs/versions/pgtest"
)

// pgEnv is an e2eEnv on a fresh database of the test server.
func pgEnv(t *testing.T, dsn string) *e2eEnv {
	t.Helper()
	if memfsBin == "" {
		t.Fatal("memfsBin is empty: TestMain in main_test.go must build the binary")
	}
	return &e2eEnv{dbPath: dsn}
}

func TestPostgresTwoMounts(t *testing.T) {
	env := pgEnv(t, pgtest.Database(t))
	storeID, slug := env.createStore(t, "Shared")
	env.cli(t, "store", "create", "--name", "Full", "--max-memories", "12")
	mntA, mntB := mountDir(t), mountDir(t)
	env.startMount(t, mntA, "--store", "Shared", "--store", "Full")
	env.startMount(t, mntB, "--store", "Shared", "--store", "Full")
	dirA, dirB := filepath.Join(mntA, slug), filepath.Join(mntB, slug)

	t.Run("SavesBothWays", func(t *testing.T) {
		const saves = 100
		for _, dir := range []struct{ name, from, to string }{{"A→B", dirA, dirB}, {"B→A", dirB, dirA}} {
			from, to := filepath.Join(dir.from, "vis.txt"), filepath.Join(dir.to, "vis.txt")
			var lat []time.Duration
			for i := range saves {
				want := fmt.Sprintf("%s save %04d\n", dir.name, i)
				if err := os.WriteFile(from, []byte(want), 0o644); err != nil {
					t.Fatalf("%s: save %d: %v", dir.name, i, err)
				}
				d, ok := waitContent(to, want, time.Now(), visibilityLimit)
				if !ok {
					got, err := os.ReadFile(to)
					t.Fatalf("%s: save %d not visible after %v: reads %q, %v", dir.name, i, visibilityLimit, got, err)
				}
				lat = append(lat, d)
			}
			logLatencies(t, "PostgreSQL "+dir.name+" save-to-visible", lat)
		}
	})

	t.Run("CLIBeside", func(t *testing.T) {
		// A save through a mount is in the database once close returns.
		if err := os.WriteFile(filepath.Join(dirA, "cli.txt"), []byte("from A\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := env.cli(t, "memory", "get", storeID, "/cli.txt"); got != "from A\n" {
			t.Fatalf("memory get right after the save in mount A = %q", got)
		}
		var lat []time.Duration
		for i := range 20 {
			want := fmt.Sprintf("cli save %02d\n", i)
			start := time.Now()
			env.cli(t, "memory", "update", storeID, "/cli.txt", "--content", want)
			for _, dir := range []string{dirA, dirB} {
				d, ok := waitContent(filepath.Join(dir, "cli.txt"), want, start, visibilityLimit)
				if !ok {
					t.Fatalf("memory update %d not visible in %s after %v", i, dir, visibilityLimit)
				}
				lat = append(lat, d)
			}
		}
		logLatencies(t, "PostgreSQL CLI → mounts save-to-visible (from the CLI's start)", lat)
	})

	t.Run("CreatesAtTheLimit", func(t *testing.T) {
		// 12 fit; 2 mounts × 12 creators and 4 CLI processes try 28.
		const limit = 12
		var mu sync.Mutex
		var made []string
		var wg sync.WaitGroup
		for _, m := range []struct{ name, dir string }{{"a", filepath.Join(mntA, "full")}, {"b", filepath.Join(mntB, "full")}} {
			for i := range limit {
				wg.Add(1)
				go func() {
					defer wg.Done()
					name := fmt.Sprintf("%s%02d.txt", m.name, i)
					err := os.WriteFile(filepath.Join(m.dir, name), []byte(name), 0o644)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						made = append(made, "/"+name)
					case !errors.Is(err, syscall.ENOSPC):
						t.Errorf("create %s in mount %s: %v, want success or ENOSPC", name, m.name, err)
					}
				}()
			}
		}
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				name := fmt.Sprintf("/cli%d.txt", i)
				_, errs, code := env.run(t, "memory", "create", "Full", "--path", name, "--content", name)
				mu.Lock()
				defer mu.Unlock()
				switch code {
				case 0:
					made = append(made, name)
				case exitInvalid:
				default:
					t.Errorf("memory create %s exited %d: %s", name, code, errs)
				}
			}()
		}
		wg.Wait()
		live := env.memoryList(t, "Full")
		if len(live) > limit {
			t.Errorf("the store of %d holds %d memories: the limit overshot", limit, len(live))
		}
		if len(made) != limit || len(live) != limit {
			t.Errorf("%d creates succeeded and %d memories are live, want exactly %d of each", len(made), len(live), limit)
		}
		for _, p := range made {
			if _, ok := live[p]; !ok {
				t.Errorf("create of %s succeeded but the store has no memory there", p)
			}
		}
	})
}

// saveStorm runs writers on mounts, each saving unique content over a few
// files of its own until stop is closed, and records every save's
// outcome.
type saveStorm struct {
	mu    sync.Mutex
	acked map[string]string   // sha256 of the content → where it was saved
	order map[string][]string // file → sha256 of its acknowledged saves, in order
	fails []saveFail
	ok    []time.Time // when each acknowledged save began
	wg    sync.WaitGroup
	stop  chan struct{}
}

type saveFail struct {
	mount string
	at    time.Time
	err   error
}

func newSaveStorm() *saveStorm {
	return &saveStorm{acked: map[string]string{}, order: map[string][]string{}, stop: make(chan struct{})}
}

// writers starts n writers in dir; name labels them and their files.
func (s *saveStorm) writers(name, dir string, n int) {
	for w := range n {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-s.stop:
					return
				default:
				}
				file := filepath.Join(dir, fmt.Sprintf("%s-w%d-f%d.txt", name, w, i%4))
				content := fmt.Sprintf("%s writer %d save %d\n%s\n", name, w, i, strings.Repeat("s", i%300))
				start := time.Now()
				err := os.WriteFile(file, []byte(content), 0o644)
				sum := sha256.Sum256([]byte(content))
				s.mu.Lock()
				if err == nil {
					s.acked[hex.EncodeToString(sum[:])] = file
					s.order[file] = append(s.order[file], hex.EncodeToString(sum[:]))
					s.ok = append(s.ok, start)
				} else {
					s.fails = append(s.fails, saveFail{name, start, err})
				}
				s.mu.Unlock()
				if err != nil {
					time.Sleep(20 * time.Millisecond) // not a busy loop while the database is away
				}
			}
		}()
	}
}

func (s *saveStorm) end() {
	close(s.stop)
	s.wg.Wait()
}

// missing waits until the mounts have published their pending files, then
// returns the acknowledged saves that are no version of the store. The
// saves of a new file within its grace are one version, its last
// (docs/design.md): a save that a later acknowledged save of
// the same file superseded before the file's first version is no loss.
func (s *saveStorm) missing(t *testing.T, dsn, storeID string) []string {
	t.Helper()
	db, err := versions.Open(dsn, versions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		pending, err := db.HasPending(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !pending {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("files saved through the mounts are still pending 15s after the storm: none of the live mounts published them")
			break
		}
	}
	have := map[string]bool{}
	err = db.Export(context.Background(), storeID, func(x any) error {
		if v, ok := x.(versions.Version); ok && v.ContentSHA256 != nil {
			have[*v.ContentSHA256] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var lost []string
	superseded := 0
	for file, sums := range s.order {
		first := slices.IndexFunc(sums, func(sum string) bool { return have[sum] })
		if first < 0 {
			lost = append(lost, fmt.Sprintf("%s: none of its %d acknowledged saves", file, len(sums)))
			continue
		}
		superseded += first
		for _, sum := range sums[first:] {
			if !have[sum] {
				lost = append(lost, fmt.Sprintf("%s (sha256 %s)", file, sum))
			}
		}
	}
	t.Logf("%d acknowledged saves of %d files; %d of them superseded by a later save within the file's grace", len(s.acked), len(s.order), superseded)
	return lost
}

// kill -9 of one daemon mid-storm loses none of its acknowledged saves, and
// the other daemon goes on.
func TestPostgresKill9(t *testing.T) {
	env := pgEnv(t, pgtest.Database(t))
	storeID, slug := env.createStore(t, "Storm")
	mntA, mntB := mountDir(t), mountDir(t)
	a := env.startMount(t, mntA, "--store", "Storm")
	env.startMount(t, mntB, "--store", "Storm")

	s := newSaveStorm()
	s.writers("a", filepath.Join(mntA, slug), 4)
	s.writers("b", filepath.Join(mntB, slug), 4)
	time.Sleep(2 * time.Second)
	a.kill9(t)
	time.Sleep(500 * time.Millisecond)
	s.end()
	if err := syscall.Unmount(mntA, syscall.MNT_DETACH); err != nil {
		t.Errorf("detach the dead mount %s: %v", mntA, err)
	}
	// What the dead daemon left pending, the next mount on its mountpoint
	// publishes.
	env.startMount(t, mntA, "--store", "Storm")
	t.Logf("%d saves acknowledged, %d failed (mount a's after its kill)", len(s.acked), len(s.fails))
	for _, f := range s.fails {
		if f.mount == "b" {
			t.Errorf("a save in mount b failed: %v", f.err)
		}
	}
	if lost := s.missing(t, env.dbPath, storeID); len(lost) > 0 {
		t.Errorf("%d acknowledged saves are not in the store:\n%s", len(lost), strings.Join(lost, "\n"))
	}
	want := "after the kill\n"
	if err := os.WriteFile(filepath.Join(mntB, slug, "after.txt"), []byte(want), 0o644); err != nil {
		t.Fatalf("save in mount b after a's kill: %v", err)
	}
	if got := env.cli(t, "memory", "get", storeID, "/after.txt"); got != want {
		t.Errorf("memory get /after.txt = %q, want %q", got, want)
	}
}

// The database crashes (pg_ctl stop -m immediate) during a save storm from
// two daemons and comes back: every acknowledged save is there, the saves
// that met the outage failed with EIO, and both mounts save and see each
// other's saves again, with no restart. While it is down the mounts serve
// what they had read: every open reaches the daemon, which answers from
// its own caches (fusefs's TestPostgresOutageServesWhatIsCached also makes the
// kernel forget the names it holds).
func TestPostgresRestart(t *testing.T) {
	srv := pgtest.NewPrivate(t)
	env := pgEnv(t, srv.URL)
	storeID, slug := env.createStore(t, "Storm")
	mntA, mntB := mountDir(t), mountDir(t)
	a := env.startMount(t, mntA, "--store", "Storm")
	b := env.startMount(t, mntB, "--store", "Storm")
	// A third mount saves before the outage and not during it: its
	// connections, idle across the restart, must not fail its next save.
	mntC := mountDir(t)
	env.startMount(t, mntC, "--store", "Storm")
	dirA, dirB, dirC := filepath.Join(mntA, slug), filepath.Join(mntB, slug), filepath.Join(mntC, slug)
	if err := os.WriteFile(filepath.Join(dirA, "cached.txt"), []byte("cached\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirC, "idle.txt"), []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A directory the storm does not touch, read by mounts A and C.
	kept := map[string]string{"k1.txt": "kept one\n", "k2.txt": "kept two\n"}
	if err := os.Mkdir(filepath.Join(dirA, "kept"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range kept {
		if err := os.WriteFile(filepath.Join(dirA, "kept", name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range kept {
		if _, ok := waitContent(filepath.Join(dirC, "kept", name), content, time.Now(), visibilityLimit); !ok {
			t.Fatalf("mount C: kept/%s does not read %q", name, content)
		}
	}

	s := newSaveStorm()
	s.writers("a", dirA, 4)
	s.writers("b", dirB, 4)
	time.Sleep(1500 * time.Millisecond)
	// Read again now that mount C has long applied A's saves to kept/
	// from the change feed: a listing or file read before the feed said it
	// changed counts as changed since.
	for _, dir := range []string{dirA, dirC} {
		for name, content := range kept {
			if got, err := os.ReadFile(filepath.Join(dir, "kept", name)); err != nil || string(got) != content {
				t.Fatalf("before the outage, %s/kept/%s reads %q, %v; want %q", dir, name, got, err, content)
			}
		}
	}
	if got, err := os.ReadFile(filepath.Join(dirA, "cached.txt")); err != nil || string(got) != "cached\n" {
		t.Fatalf("read cached.txt before the outage = %q, %v", got, err)
	}
	downAt := time.Now()
	srv.Stop(t, "immediate")
	// The storm's saves meet the outage for a while before the reads.
	time.Sleep(1500 * time.Millisecond)
	if got, err := os.ReadFile(filepath.Join(dirA, "cached.txt")); err != nil || string(got) != "cached\n" {
		t.Errorf("during the outage, mount A reads cached.txt (read before) as %q, %v; want its content", got, err)
	}
	for _, dir := range []string{dirA, dirC} {
		if err := sameListing(filepath.Join(dir, "kept"), slices.Sorted(maps.Keys(kept))); err != nil {
			t.Errorf("during the outage: %v", err)
		}
		for name, content := range kept {
			if got, err := os.ReadFile(filepath.Join(dir, "kept", name)); err != nil || string(got) != content {
				t.Errorf("during the outage, %s/kept/%s (read before) reads %q, %v; want %q", dir, name, got, err, content)
			}
		}
	}
	k1 := filepath.Join(dirA, "kept", "k1.txt")
	for _, change := range []struct {
		what string
		err  error
	}{
		{"save kept/k1.txt", os.WriteFile(k1, []byte("never saved\n"), 0o644)},
		{"create kept/new.txt", os.WriteFile(filepath.Join(dirA, "kept", "new.txt"), []byte("new\n"), 0o644)},
		{"mkdir kept/sub", os.Mkdir(filepath.Join(dirA, "kept", "sub"), 0o755)},
		{"remove kept/k2.txt", os.Remove(filepath.Join(dirA, "kept", "k2.txt"))},
	} {
		if !errors.Is(change.err, syscall.EIO) {
			t.Errorf("during the outage, %s in mount A: %v, want EIO", change.what, change.err)
		}
	}
	// The refused content stays in the shared buffer until the kernel
	// releases the writer's handle, which it does after close() returns.
	if _, ok := waitContent(k1, kept["k1.txt"], time.Now(), visibilityLimit); !ok {
		got, err := os.ReadFile(k1)
		t.Errorf("during the outage, after its save failed, kept/k1.txt reads %q, %v; want the previous version", got, err)
	}
	srv.Start(t)
	upAt := time.Now()
	time.Sleep(3 * time.Second)
	s.end()
	t.Logf("server down %v after the storm began, back %v later", 1500*time.Millisecond, upAt.Sub(downAt).Round(time.Millisecond))
	if got := env.cli(t, "memory", "get", storeID, "/kept/k1.txt"); got != kept["k1.txt"] {
		t.Errorf("after the restart, the store's kept/k1.txt is %q, want %q (its save during the outage failed)", got, kept["k1.txt"])
	}
	if err := sameListing(filepath.Join(dirA, "kept"), slices.Sorted(maps.Keys(kept))); err != nil {
		t.Errorf("after the restart: %v", err)
	}

	var duringOutage, afterUp int
	var lastFail time.Time
	for _, f := range s.fails {
		if !errors.Is(f.err, syscall.EIO) {
			t.Errorf("a save in mount %s failed with %v, want EIO", f.mount, f.err)
		}
		if f.at.After(upAt) {
			afterUp++
		} else {
			duringOutage++
		}
		if f.at.After(lastFail) {
			lastFail = f.at
		}
	}
	okAfter := 0
	for _, at := range s.ok {
		if at.After(upAt) {
			okAfter++
		}
	}
	t.Logf("%d saves acknowledged (%d begun after the restart), %d failed with EIO (%d begun after the restart, the last %v after it)",
		len(s.acked), okAfter, len(s.fails), afterUp, lastFail.Sub(upAt).Round(time.Millisecond))
	if duringOutage == 0 {
		t.Errorf("no save failed while the server was down: the test did not meet the outage")
	}
	if afterUp > 0 {
		t.Errorf("%d saves begun after the server was back failed", afterUp)
	}
	if lost := s.missing(t, env.dbPath, storeID); len(lost) > 0 {
		t.Errorf("%d acknowledged saves are not in the store:\n%s", len(lost), strings.Join(lost, "\n"))
	}
	for _, d := range []*daemon{a, b} {
		if log := d.stderr.String(); !strings.Contains(log, "cannot reach the database") {
			t.Errorf("mount %s's log does not say why saves failed (cannot reach the database …):\n%s", d.mnt, lastLines(log, 20))
		}
	}

	// The mounts, not restarted, save and see each other's saves.
	for _, dir := range []struct{ name, from, to string }{{"C→A", dirC, dirA}, {"A→B", dirA, dirB}, {"B→C", dirB, dirC}} {
		want := dir.name + " after the restart\n"
		if err := os.WriteFile(filepath.Join(dir.from, "after.txt"), []byte(want), 0o644); err != nil {
			t.Fatalf("%s: save after the restart: %v", dir.name, err)
		}
		if _, ok := waitContent(filepath.Join(dir.to, "after.txt"), want, time.Now(), visibilityLimit); !ok {
			t.Errorf("%s: a save after the restart is not visible after %v", dir.name, visibilityLimit)
		}
	}
}

// sameListing compares a directory's names with want.
func sameListing(dir string, want []string) error {
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

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
