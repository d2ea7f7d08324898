package fusefs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
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
