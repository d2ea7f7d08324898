package versions_test

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/memfs/memfs/versions"
)

// The benchmark fixture: one store with 2,000 memories laid out as
// /dirNN/subN/fileNNNN.md (20 × 10 × 10) and 50 versions each (100,000 in
// all). It is built once per test binary, in one transaction, into a
// template file; each benchmark works on a copy of it through the public API.
const (
	fixtureMemories = 2000
	fixtureVersions = 50 // per memory
)

type fixture struct {
	once    sync.Once
	dir     string
	storeID string
	ids     []string
	paths   []string
	err     error
}

var benchFixture fixture

func fixturePath(i int) string {
	return fmt.Sprintf("/dir%02d/sub%d/file%04d.md", i/100, i/10%10, i)
}

func fixtureContent(i, v int) string {
	return fmt.Sprintf("memory %d, version %d\n%s", i, v, "a line of notes that makes the file a realistic size\n")
}

func (f *fixture) build() {
	f.dir, f.err = os.MkdirTemp("", "memfs-bench-")
	if f.err != nil {
		return
	}
	db, err := versions.Open(filepath.Join(f.dir, "memfs.db"), versions.Options{})
	if err != nil {
		f.err = err
		return
	}
	defer db.Close()
	s, err := db.CreateStore(ctx, versions.StoreParams{Name: "bench", MaxMemories: 1 << 30})
	if err != nil {
		f.err = err
		return
	}
	f.storeID = s.ID
	f.err = db.BulkSave(ctx, s.ID, fixtureMemories*fixtureVersions, func(n int) (string, string) {
		i, v := n%fixtureMemories, n/fixtureMemories
		return fixturePath(i), fixtureContent(i, v)
	}, me)
	if f.err != nil {
		return
	}
	for i := range fixtureMemories {
		m, err := db.GetMemory(ctx, s.ID, fixturePath(i))
		if err != nil {
			f.err = err
			return
		}
		f.ids, f.paths = append(f.ids, m.ID), append(f.paths, m.Path)
	}
}

// openFixture returns a private copy of the fixture database.
func openFixture(b *testing.B) (*versions.DB, *fixture) {
	b.Helper()
	benchFixture.once.Do(benchFixture.build)
	if benchFixture.err != nil {
		b.Fatalf("building the fixture: %v", benchFixture.err)
	}
	dst := filepath.Join(b.TempDir(), "memfs.db")
	if err := copyFile(filepath.Join(benchFixture.dir, "memfs.db"), dst); err != nil {
		b.Fatal(err)
	}
	db, err := versions.Open(dst, versions.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	// A daemon's first save reads the store; the saves timed are its later
	// ones, which may be one statement. The memory it makes goes again, so
	// that the store holds the fixture's memories only.
	if _, err := db.Save(ctx, versions.SaveReq{StoreID: benchFixture.storeID, Path: "/prime.md", Content: "prime", By: me}); err != nil {
		b.Fatal(err)
	}
	if err := db.DeleteMemory(ctx, benchFixture.storeID, "/prime.md", versions.MemoryDelete{}, me); err != nil {
		b.Fatal(err)
	}
	return db, &benchFixture
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// cpuTimer reports the process's CPU time per operation as "cpu-ns/op"
// beside the wall-clock ns/op, which other work on the machine inflates.
// Call it where the timer is reset; it reports when the benchmark ends.
func cpuTimer(b *testing.B) {
	b.Helper()
	b.ResetTimer()
	start := cpuNow(b)
	b.Cleanup(func() {
		b.ReportMetric(float64(cpuNow(b)-start)/float64(b.N), "cpu-ns/op")
	})
}

// walPages counts the WAL frames (pages) the writes of a benchmark add, as
// "wal-pages/op": it reads mxFrame, the WAL index header's count of valid
// frames (offset 16 of the -shm file), after every operation, so that a
// restart of the WAL by the checkpointer (mxFrame back to 0) loses nothing.
type walPages struct {
	b     *testing.B
	f     *os.File
	last  uint32
	total int64
}

func countWAL(b *testing.B, db *versions.DB) *walPages {
	b.Helper()
	f, err := os.Open(db.Path() + "-shm")
	if err != nil {
		b.Fatal(err)
	}
	w := &walPages{b: b, f: f}
	w.last = w.read()
	b.Cleanup(func() {
		b.ReportMetric(float64(w.total)/float64(b.N), "wal-pages/op")
		f.Close()
	})
	return w
}

func (w *walPages) read() uint32 {
	var buf [4]byte
	if _, err := w.f.ReadAt(buf[:], 16); err != nil {
		w.b.Fatal(err)
	}
	return binary.NativeEndian.Uint32(buf[:])
}

// op counts the frames since the previous call.
func (w *walPages) op() {
	n := w.read()
	if n >= w.last {
		w.total += int64(n - w.last)
	} else {
		w.total += int64(n)
	}
	w.last = n
}

func cpuNow(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchFixture.dir != "" {
		os.RemoveAll(benchFixture.dir)
	}
	os.Exit(code)
}

func BenchmarkCreateMemory(b *testing.B) {
	db, f := openFixture(b)
	wal := countWAL(b, db)
	countStatements(b, db)
	cpuTimer(b)
	for i := range b.N {
		if _, err := db.CreateMemory(ctx, f.storeID, fmt.Sprintf("/new/file%d.md", i), "new memory content\n", me); err != nil {
			b.Fatal(err)
		}
		wal.op()
	}
}

// BenchmarkUpdateMemory is a save as a mount makes it: new content with the
// content_sha256 precondition and the base version.
func BenchmarkUpdateMemory(b *testing.B) {
	db, f := openFixture(b)
	sha := make([]string, len(f.ids))
	base := make([]string, len(f.ids))
	for i := range f.ids {
		sum := sha256.Sum256([]byte(fixtureContent(i, fixtureVersions-1)))
		sha[i] = hex.EncodeToString(sum[:])
	}
	wal := countWAL(b, db)
	countStatements(b, db)
	cpuTimer(b)
	for n := range b.N {
		i := n % len(f.ids)
		c := fixtureContent(i, fixtureVersions+n)
		m, err := db.UpdateMemory(ctx, f.storeID, f.ids[i], versions.MemoryUpdate{Content: &c, IfSHA256: sha[i], BaseVersionID: base[i]}, me)
		if err != nil {
			b.Fatal(err)
		}
		sha[i], base[i] = m.ContentSHA256, m.VersionID
		wal.op()
	}
}

func benchList(b *testing.B, o versions.MemoryListOptions, want int) {
	db, f := openFixture(b)
	cpuTimer(b)
	for range b.N {
		p, err := db.ListMemories(ctx, f.storeID, o)
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Data) != want {
			b.Fatalf("%d items, want %d", len(p.Data), want)
		}
	}
}

func BenchmarkListMemoriesDepth0(b *testing.B) {
	benchList(b, versions.MemoryListOptions{}, versions.DefaultPageSize)
}

func BenchmarkListMemoriesDepth1(b *testing.B) {
	benchList(b, versions.MemoryListOptions{Depth: 1}, 20)
}

func BenchmarkListMemoriesDepth1Prefix(b *testing.B) {
	benchList(b, versions.MemoryListOptions{Depth: 1, PathPrefix: "/dir07/sub3/"}, 10)
}

func BenchmarkListVersionsOfMemory(b *testing.B) {
	db, f := openFixture(b)
	id := f.ids[len(f.ids)/2]
	cpuTimer(b)
	for range b.N {
		p, err := db.ListVersions(ctx, f.storeID, versions.VersionListOptions{MemoryID: id})
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Data) != fixtureVersions {
			b.Fatalf("%d versions", len(p.Data))
		}
	}
}

func BenchmarkListVersionsLatestPage(b *testing.B) {
	db, f := openFixture(b)
	cpuTimer(b)
	for range b.N {
		p, err := db.ListVersions(ctx, f.storeID, versions.VersionListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Data) != versions.DefaultPageSize {
			b.Fatalf("%d versions", len(p.Data))
		}
	}
}

// The calls a mount makes on every lookup.
func BenchmarkStatFile(b *testing.B) {
	db, f := openFixture(b)
	cpuTimer(b)
	for n := range b.N {
		if _, err := db.Stat(ctx, f.storeID, f.paths[n%len(f.paths)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStatDir(b *testing.B) {
	db, f := openFixture(b)
	cpuTimer(b)
	for range b.N {
		if _, err := db.Stat(ctx, f.storeID, "/dir07/sub3"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetMemory(b *testing.B) {
	db, f := openFixture(b)
	cpuTimer(b)
	for n := range b.N {
		if _, err := db.GetMemory(ctx, f.storeID, f.ids[n%len(f.ids)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadDir(b *testing.B) {
	db, f := openFixture(b)
	cpuTimer(b)
	for range b.N {
		es, err := db.ReadDir(ctx, f.storeID, "/dir07/sub3")
		if err != nil {
			b.Fatal(err)
		}
		if len(es) != 10 {
			b.Fatalf("%d entries", len(es))
		}
	}
}

func BenchmarkChanges(b *testing.B) {
	db, f := openFixture(b)
	top, err := db.FeedHead(ctx, f.storeID)
	if err != nil {
		b.Fatal(err)
	}
	cpuTimer(b)
	for range b.N {
		if _, _, err := db.Changes(ctx, f.storeID, top); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpdateSmallStore is the save path without the fixture: one
// memory in a fresh database, for comparing the cost of a big store.
func BenchmarkUpdateSmallStore(b *testing.B) {
	db := openDB(b)
	s := newStore(b, db, versions.StoreParams{})
	m := create(b, db, s.ID, "/a", "x")
	cpuTimer(b)
	for n := range b.N {
		c := fmt.Sprint("content ", n)
		if _, err := db.UpdateMemory(ctx, s.ID, m.ID, versions.MemoryUpdate{Content: &c}, me); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenameFile renames one file within its directory, as `mv` does
// through a mount: each memory goes to name~ and, on a second pass, back.
func BenchmarkRenameFile(b *testing.B) {
	db, f := openFixture(b)
	wal := countWAL(b, db)
	countStatements(b, db)
	cpuTimer(b)
	for n := range b.N {
		p := f.paths[n%len(f.paths)]
		from, to := p, p+"~"
		if n/len(f.paths)%2 == 1 {
			from, to = to, from
		}
		if _, err := db.Rename(ctx, f.storeID, from, to, false, me); err != nil {
			b.Fatal(err)
		}
		wal.op()
	}
}

// BenchmarkAtomicSave is an editor's save through a mount: a temporary file
// is created, then renamed onto the file it replaces (two calls per op).
func BenchmarkAtomicSave(b *testing.B) {
	db, f := openFixture(b)
	wal := countWAL(b, db)
	countStatements(b, db)
	cpuTimer(b)
	for n := range b.N {
		i := n % len(f.paths)
		tmp := f.paths[i] + ".tmp"
		if _, err := db.CreateMemory(ctx, f.storeID, tmp, fixtureContent(i, fixtureVersions+n), me); err != nil {
			b.Fatal(err)
		}
		if _, err := db.Rename(ctx, f.storeID, tmp, f.paths[i], false, me); err != nil {
			b.Fatal(err)
		}
		wal.op()
	}
}

// BenchmarkDeleteMemory deletes by id as `rm` does through a mount, from
// directories that other memories keep alive.
func BenchmarkDeleteMemory(b *testing.B) {
	db, f := openFixture(b)
	ids := make([]string, b.N)
	for n := range b.N {
		i := n % len(f.paths)
		m, err := db.CreateMemory(ctx, f.storeID, fmt.Sprintf("%s.%d", f.paths[i], n), "to delete\n", me)
		if err != nil {
			b.Fatal(err)
		}
		ids[n] = m.ID
	}
	wal := countWAL(b, db)
	countStatements(b, db)
	cpuTimer(b)
	for n := range b.N {
		if err := db.DeleteMemory(ctx, f.storeID, ids[n], versions.MemoryDelete{KeepParentDir: true}, me); err != nil {
			b.Fatal(err)
		}
		wal.op()
	}
}

// countStatements reports the statements each operation ran (besides
// BEGIN and COMMIT) as "stmts/op".
func countStatements(b *testing.B, db *versions.DB) {
	b.Helper()
	start := db.Statements()
	b.Cleanup(func() { b.ReportMetric(float64(db.Statements()-start)/float64(b.N), "stmts/op") })
}

// BenchmarkSaveKnownHead is an overwrite as a mount that knows the head
// makes it: Save with the memory's id, head version, hash and content,
// and its base, so that nothing is read back.
func BenchmarkSaveKnownHead(b *testing.B) {
	db, f := openFixture(b)
	type head struct{ version, sha, content string }
	heads := make([]head, len(f.ids))
	for i, id := range f.ids {
		m, err := db.GetMemory(ctx, f.storeID, id)
		if err != nil {
			b.Fatal(err)
		}
		heads[i] = head{m.VersionID, m.ContentSHA256, *m.Content}
	}
	wal := countWAL(b, db)
	countStatements(b, db)
	cpuTimer(b)
	for n := range b.N {
		i := n % len(f.ids)
		h := heads[i]
		c := fixtureContent(i, fixtureVersions+n)
		ch, err := db.Save(ctx, versions.SaveReq{StoreID: f.storeID, Path: f.paths[i], Content: c, By: me, MemoryID: f.ids[i],
			HeadVersionID: h.version, HeadSHA256: h.sha, HeadContent: &h.content, BaseVersionID: h.version})
		if err != nil {
			b.Fatal(err)
		}
		heads[i] = head{ch.VersionID, ch.SHA256, c}
		wal.op()
	}
}

// BenchmarkSaveByPath is a save that knows only the path: the engine
// reads the memory there and its head's content for the guard.
func BenchmarkSaveByPath(b *testing.B) {
	db, f := openFixture(b)
	wal := countWAL(b, db)
	countStatements(b, db)
	cpuTimer(b)
	for n := range b.N {
		i := n % len(f.ids)
		if _, err := db.Save(ctx, versions.SaveReq{StoreID: f.storeID, Path: f.paths[i], Content: fixtureContent(i, fixtureVersions+n), By: me}); err != nil {
			b.Fatal(err)
		}
		wal.op()
	}
}

// BenchmarkSaves2KiB makes the saves a mount makes (a create, an
// overwrite with the known head, a deletion by id) of files of 2 KiB, the
// size scripts/bench writes, to b.N memories spread over 20 directories.
// A version of 2 KiB fills a 4 KiB page of the versions table on its own,
// so each new version also writes the table's parent page and the
// database header (its page count), which the fixture's small versions do
// once per page of many.
func BenchmarkSaves2KiB(b *testing.B) {
	content := strings.Repeat("abcdefghijklmnopqrstuvwxyz012345", 64)
	name := func(i int) string { return fmt.Sprintf("/d%02d/f%06d.md", i%20, i) }
	for _, op := range []string{"create", "overwrite", "delete"} {
		b.Run(op, func(b *testing.B) {
			db, err := versions.Open(filepath.Join(b.TempDir(), "memfs.db"), versions.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			s, err := db.CreateStore(ctx, versions.StoreParams{Name: "bench", MaxMemories: 1 << 30})
			if err != nil {
				b.Fatal(err)
			}
			// A handle's first save reads the store; the saves timed are
			// its later ones. The create's store starts empty.
			if _, err := db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: "/prime.md", Content: "prime", By: me}); err != nil {
				b.Fatal(err)
			}
			heads := make([]versions.Change, b.N)
			first := "first " + content
			for i := range b.N {
				if op == "create" {
					break
				}
				if heads[i], err = db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: name(i), Content: first, By: me}); err != nil {
					b.Fatal(err)
				}
			}
			wal := countWAL(b, db)
			countStatements(b, db)
			cpuTimer(b)
			for i := range b.N {
				switch op {
				case "create":
					_, err = db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: name(i), Content: content, By: me})
				case "overwrite":
					h := heads[i]
					_, err = db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: name(i), Content: content, By: me, MemoryID: h.MemoryID,
						HeadVersionID: h.VersionID, HeadSHA256: h.SHA256, HeadContent: &first, BaseVersionID: h.VersionID})
				case "delete":
					// by id, as a mount deletes
					err = db.DeleteMemory(ctx, s.ID, heads[i].MemoryID, versions.MemoryDelete{KeepParentDir: true}, me)
				}
				if err != nil {
					b.Fatal(err)
				}
				wal.op()
			}
		})
	}
}
