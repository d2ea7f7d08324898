package fusefs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memfs/memfs/versions"
)

// The mount answers lookups and listings from its index (index.go). After
// each of its own changes — every kind, in every directory it touches — what
// it shows must be exactly what the engine holds.
func TestIndexFollowsOwnChanges(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Index")
	_, dir := e.mountStore(t, st, Options{})
	at := func(p string) string { return filepath.Join(dir, p) }
	steps := []struct {
		what string
		do   func() error
	}{
		{"mkdir -p", func() error { return os.MkdirAll(at("a/b"), 0o755) }},
		{"create", func() error { return os.WriteFile(at("a/f"), []byte("1"), 0o644) }},
		{"create deep", func() error { return os.WriteFile(at("a/b/g"), []byte("2"), 0o644) }},
		{"overwrite", func() error { return os.WriteFile(at("a/f"), []byte("11"), 0o644) }},
		{"rename in dir", func() error { return os.Rename(at("a/f"), at("a/h")) }},
		{"rename across dirs", func() error { return os.Rename(at("a/h"), at("a/b/h")) }},
		{"rename onto a file", func() error {
			if err := os.WriteFile(at("a/tmp"), []byte("3"), 0o644); err != nil {
				return err
			}
			return os.Rename(at("a/tmp"), at("a/b/g"))
		}},
		{"rename a directory", func() error { return os.Rename(at("a/b"), at("c")) }},
		{"unlink", func() error { return os.Remove(at("c/h")) }},
		{"mkdir", func() error { return os.Mkdir(at("a/empty"), 0o755) }},
		{"rmdir", func() error { return os.Remove(at("a/empty")) }},
		{"rm -r", func() error { return os.RemoveAll(at("c")) }},
	}
	seen := map[string]bool{}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
		// What is gone must not be found by name (checked before
		// listing, which may reload the index).
		e.settle()
		for p := range seen {
			_, serr := e.db.Stat(context.Background(), st.ID, p)
			_, err := os.Lstat(at(p))
			if versions.ErrorCode(serr) == versions.CodeNotFound && !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("after %s: %s is gone from the store, the mount says %v", s.what, p, err)
			}
		}
		if err := sameTree(e.db, st.ID, dir); err != nil {
			t.Fatalf("after %s: %v", s.what, err)
		}
		for _, p := range []string{"/a", "/a/f", "/a/h", "/a/b", "/a/b/g", "/a/b/h", "/a/tmp", "/c", "/c/g", "/c/h", "/a/empty"} {
			seen[p] = true
		}
	}
}

// Changes made elsewhere reach the index through the change feed.
func TestIndexFollowsOtherWriters(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Index")
	_, dir := e.mountStore(t, st, Options{})
	ctx := context.Background()
	if err := os.MkdirAll(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := sameTree(e.db, st.ID, dir); err != nil { // loads the index
		t.Fatal(err)
	}
	m, err := e.db.CreateMemory(ctx, st.ID, "/d/new", "x", versions.UserActor("t"))
	if err != nil {
		t.Fatal(err)
	}
	if err := eventually(visibilityLimit, func() error { return sameTree(e.db, st.ID, dir) }); err != nil {
		t.Fatalf("a memory created elsewhere: %v", err)
	}
	if _, err := e.db.Rename(ctx, st.ID, "/d/new", "/moved", false, versions.UserActor("t")); err != nil {
		t.Fatal(err)
	}
	if err := eventually(visibilityLimit, func() error { return sameTree(e.db, st.ID, dir) }); err != nil {
		t.Fatalf("a memory moved elsewhere: %v", err)
	}
	if err := e.db.DeleteMemory(ctx, st.ID, m.ID, versions.MemoryDelete{}, versions.UserActor("t")); err != nil {
		t.Fatal(err)
	}
	if err := eventually(visibilityLimit, func() error { return sameTree(e.db, st.ID, dir) }); err != nil {
		t.Fatalf("a memory deleted elsewhere: %v", err)
	}
	// A change elsewhere drops only the listings it can have changed:
	// each step below is checked with every directory loaded before it.
	by := versions.UserActor("t")
	deep, err := e.db.CreateMemory(ctx, st.ID, "/a/b/c/deep", "1", by)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/a/b/side", "/a/other/f", "/z/f"} {
		if _, err := e.db.CreateMemory(ctx, st.ID, p, "x", by); err != nil {
			t.Fatal(err)
		}
	}
	longer := "longer content"
	steps := []struct {
		what string
		do   func() error
	}{
		{"a save elsewhere in a deep directory", func() error {
			return errOf(e.db.UpdateMemory(ctx, st.ID, deep.ID, versions.MemoryUpdate{Content: &longer}, by))
		}},
		{"a memory created elsewhere in new directories", func() error {
			return errOf(e.db.CreateMemory(ctx, st.ID, "/a/new1/new2/f", "new", by))
		}},
		{"a directory renamed elsewhere", func() error {
			return errOf(e.db.Rename(ctx, st.ID, "/a/b", "/z/b2", false, by))
		}},
		{"a directory's last memory deleted elsewhere", func() error {
			return e.db.DeleteMemory(ctx, st.ID, "/a/new1/new2/f", versions.MemoryDelete{}, by)
		}},
		{"a directory made elsewhere", func() error { return e.db.MakeDir(ctx, st.ID, "/z/b2/c/made") }},
		{"a directory removed elsewhere", func() error { return e.db.RemoveDir(ctx, st.ID, "/z/b2/c/made") }},
		{"a memory created elsewhere in a moved directory", func() error {
			return errOf(e.db.CreateMemory(ctx, st.ID, "/z/b2/c/extra", "e", by))
		}},
		{"a directory moved back elsewhere", func() error {
			return errOf(e.db.Rename(ctx, st.ID, "/z/b2", "/a/b", false, by))
		}},
		// No memory moves with an empty directory: the listings the mount
		// read below /m/n before it moved away are stale for what moves
		// back, and no change below /m/n says so.
		{"empty directories made elsewhere", func() error {
			for _, d := range []string{"/m", "/m/n", "/m/n/e"} {
				if err := e.db.MakeDir(ctx, st.ID, d); err != nil {
					return err
				}
			}
			return nil
		}},
		{"a directory of empty directories moved elsewhere", func() error {
			return errOf(e.db.Rename(ctx, st.ID, "/m/n", "/z/n2", false, by))
		}},
		{"a directory made elsewhere in a moved one", func() error { return e.db.MakeDir(ctx, st.ID, "/z/n2/e/sub") }},
		{"a directory of empty directories moved back elsewhere", func() error {
			return errOf(e.db.Rename(ctx, st.ID, "/z/n2", "/m/n", false, by))
		}},
	}
	for _, step := range steps {
		if err := eventually(visibilityLimit, func() error { return sameTree(e.db, st.ID, dir) }); err != nil {
			t.Fatalf("before %s: %v", step.what, err)
		}
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.what, err)
		}
		if err := eventually(visibilityLimit, func() error { return sameTree(e.db, st.ID, dir) }); err != nil {
			t.Fatalf("%s: %v", step.what, err)
		}
	}
}

// A change made elsewhere drops the listings of the changed path and its
// ancestors, keeps the others, and a listing read before the change is not
// kept after it.
func TestIndexForget(t *testing.T) {
	x := newIndex()
	dirs := []string{"/", "/a", "/a/b", "/a/b/c", "/a/x", "/y"}
	for _, d := range dirs {
		x.load(d, nil, x.now())
	}
	before := x.now()
	x.forget("/a/b")
	for _, d := range dirs {
		_, r := x.lookup(d, "any")
		want := unloaded
		if d == "/a/b/c" || d == "/a/x" || d == "/y" {
			want = absent // still loaded: an empty listing
		}
		if r != want {
			t.Errorf("after forget(/a/b), %s is %v, want %v", d, r, want)
		}
	}
	for d, keep := range map[string]bool{"/": false, "/a": false, "/a/b": false, "/a/x/y": true, "/y/z": true} {
		x.load(d, nil, before)
		if _, r := x.lookup(d, "any"); (r != unloaded) != keep {
			t.Errorf("a listing of %s read before forget(/a/b): kept %v, want %v", d, r != unloaded, keep)
		}
	}
	x.forget("/")
	if _, r := x.lookup("/y", "any"); r != unloaded {
		t.Errorf("after forget(/), /y is still loaded")
	}
}

// What a listing said stays known for when the engine cannot be reached,
// except the names changed elsewhere since it was read; the mount's own
// change of such a name makes it known again.
func TestIndexLastKnown(t *testing.T) {
	x := newIndex()
	file := func(p string) versions.Entry {
		return versions.Entry{Name: path.Base(p), Path: p, Memory: &versions.Memory{ID: "mem" + p, VersionID: "v1"}}
	}
	x.load("/", []versions.Entry{{Name: "a", Path: "/a", Dir: true}, file("/top.txt")}, x.now())
	x.load("/a", []versions.Entry{file("/a/x.txt"), file("/a/y.txt")}, x.now())
	x.forget("/a/x.txt")
	for _, c := range []struct {
		dir, name string
		want      lookupResult
	}{
		{"/", "a", unloaded}, {"/", "top.txt", found}, {"/", "none", absent},
		{"/a", "x.txt", unloaded}, {"/a", "y.txt", found}, {"/a", "none", absent},
		{"/b", "any", unloaded},
	} {
		if _, r := x.lastKnown(c.dir, c.name); r != c.want {
			t.Errorf("after forget(/a/x.txt), lastKnown(%s, %s) = %v, want %v", c.dir, c.name, r, c.want)
		}
		if _, r := x.lookup(c.dir, c.name); r != unloaded {
			t.Errorf("after forget(/a/x.txt), lookup(%s, %s) = %v, want it asked of the engine", c.dir, c.name, r)
		}
	}
	x.saved("/a/x.txt", file("/a/x.txt").Memory)
	if _, r := x.lastKnown("/a", "x.txt"); r != found {
		t.Errorf("after this mount saved /a/x.txt, lastKnown = %v, want found", r)
	}
	if _, r := x.lookup("/a", "y.txt"); r != found {
		t.Errorf("after this mount saved the one name changed elsewhere, lookup(/a, y.txt) = %v, want found", r)
	}
	if _, r := x.lastKnown("/", "a"); r != found {
		t.Errorf("after this mount saved below /a, lastKnown(/, a) = %v, want found", r)
	}
	x.drop()
	if _, r := x.lastKnown("/a", "y.txt"); r != unloaded {
		t.Errorf("after drop, lastKnown(/a, y.txt) = %v, want unloaded", r)
	}
}

// sameTree compares every directory listing and file size under the mount
// with the engine's.
func sameTree(db *versions.DB, storeID, mnt string) error {
	var walk func(p string) error
	walk = func(p string) error {
		want, err := db.ReadDir(context.Background(), storeID, p)
		if err != nil {
			return err
		}
		got, err := os.ReadDir(filepath.Join(mnt, p))
		if err != nil {
			return fmt.Errorf("list %s: %w", p, err)
		}
		var w, g []string
		for _, e := range want {
			w = append(w, entryString(e.Name, e.Dir))
		}
		for _, d := range got {
			g = append(g, entryString(d.Name(), d.IsDir()))
		}
		if !slices.Equal(w, g) {
			return fmt.Errorf("%s lists [%s], the store holds [%s]", p, strings.Join(g, " "), strings.Join(w, " "))
		}
		for _, e := range want {
			full := filepath.Join(mnt, e.Path)
			fi, err := os.Stat(full)
			if err != nil {
				return fmt.Errorf("stat %s: %w", e.Path, err)
			}
			if e.Dir {
				if err := walk(e.Path); err != nil {
					return err
				}
				continue
			}
			if fi.Size() != int64(e.Memory.ContentSize) {
				return fmt.Errorf("%s has size %d, the store %d", e.Path, fi.Size(), e.Memory.ContentSize)
			}
			m, err := db.GetMemory(context.Background(), storeID, e.Path)
			if err != nil {
				return err
			}
			if got, err := os.ReadFile(full); err != nil || string(got) != *m.Content {
				return fmt.Errorf("read %s: %q, %v; the store holds %q", e.Path, got, err, *m.Content)
			}
		}
		return nil
	}
	return walk("/")
}

func entryString(name string, dir bool) string {
	if dir {
		return name + "/"
	}
	return name
}

// A file created in the mount is listed before its first save, once, beside
// the stored ones, and not after it is removed unsaved.
func TestListingShowsUnsavedFiles(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Pending")
	_, dir := e.mountStore(t, st, Options{})
	for _, name := range []string{"a", "c"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	names := func() string {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range ents {
			out = append(out, d.Name())
		}
		return strings.Join(out, " ")
	}
	f, err := os.Create(filepath.Join(dir, "b"))
	if err != nil {
		t.Fatal(err)
	}
	if got := names(); got != "a b c" {
		t.Errorf("with b created and not saved: %q, want \"a b c\"", got)
	}
	if _, err := f.WriteString("b"); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := names(); got != "a b c" {
		t.Errorf("with b saved and still open: %q, want \"a b c\"", got)
	}
	f.Close()
	g, err := os.Create(filepath.Join(dir, "d"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	g.Close()
	if got := names(); got != "a b c" {
		t.Errorf("after d was removed unsaved: %q, want \"a b c\"", got)
	}
}
