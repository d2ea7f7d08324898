package fusefs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// The kernel keeps what a mount told it for as long as it is not told
// otherwise: names, absent names, attributes, pages across opens and
// listings. Each is warmed here before a change is made elsewhere, so that
// a missed invalidation leaves it stale far beyond the visibility bound;
// the change must show through stat, listing and read within the bound.
// Elsewhere is the engine (what the CLI and the HTTP API call) and a
// second mount with its own database handle.
func TestKernelCachesSeeChangesElsewhere(t *testing.T) {
	for _, by := range []string{"engine", "mount"} {
		t.Run(by, func(t *testing.T) {
			e := newEnv(t)
			st := e.store(t, "Cached")
			ctx := context.Background()
			cli := versions.UserActor("cli")
			for p, c := range map[string]string{
				"/d/edit.txt": "first", "/d/same.txt": "size-A", "/d/move.txt": "moving",
				"/d/gone.txt": "to be deleted", "/d/over.txt": "replaced", "/t/in.txt": "in a tree",
			} {
				if _, err := e.db.CreateMemory(ctx, st.ID, p, c, cli); err != nil {
					t.Fatal(err)
				}
			}
			_, dir := e.mountStore(t, st, Options{})
			w := newElsewhere(t, e, st, by)
			c := &cacheCheck{t: t, dir: dir}
			c.warm("/d/edit.txt", "/d/same.txt", "/d/move.txt", "/d/moved.txt", "/d/gone.txt",
				"/d/over.txt", "/d/new.txt", "/t/in.txt", "/u/in.txt")
			// The kernel caches pages only for a file it read again
			// since its last change.
			c.warm("/d/edit.txt", "/d/same.txt")

			w.save("/d/edit.txt", "second, and longer")
			c.seen("a save", "/d", []string{"edit.txt", "gone.txt", "move.txt", "over.txt", "same.txt"},
				map[string]string{"/d/edit.txt": "second, and longer"})

			before := c.mtime("/d/same.txt")
			w.save("/d/same.txt", "size-B")
			c.seen("a save of the same size", "/d", nil, map[string]string{"/d/same.txt": "size-B"})
			if err := eventually(visibilityLimit, func() error {
				if m := c.mtime("/d/same.txt"); m.Equal(before) {
					return fmt.Errorf("mtime still %v", m)
				}
				return nil
			}); err != nil {
				t.Errorf("a save of the same size: stat's mtime: %v", err)
			}

			// A save in this mount leaves its content in the kernel's
			// pages (storePages); a save elsewhere must replace it.
			write(t, c.path("/d/own.txt"), "mine-1")
			if err := eventually(visibilityLimit, func() error {
				_, err := e.db.GetMemory(ctx, st.ID, "/d/own.txt")
				return err
			}); err != nil {
				t.Fatalf("a file saved in the mount was not published: %v", err)
			}
			c.warm("/d/own.txt")
			w.save("/d/own.txt", "them-2")
			c.seen("a save over one made in this mount", "/d", nil, map[string]string{"/d/own.txt": "them-2"})
			w.remove("/d/own.txt")
			c.seen("a delete of a file made in this mount", "/d", nil, map[string]string{"/d/own.txt": ""})

			c.warm("/d/move.txt", "/d/moved.txt")
			w.rename("/d/move.txt", "/d/moved.txt")
			c.seen("a rename", "/d", []string{"edit.txt", "gone.txt", "moved.txt", "over.txt", "same.txt"},
				map[string]string{"/d/move.txt": "", "/d/moved.txt": "moving"})

			c.warm("/d/moved.txt", "/d/over.txt")
			w.rename("/d/moved.txt", "/d/over.txt")
			c.seen("a rename over a file", "/d", []string{"edit.txt", "gone.txt", "over.txt", "same.txt"},
				map[string]string{"/d/moved.txt": "", "/d/over.txt": "moving"})

			c.warm("/d/gone.txt")
			w.remove("/d/gone.txt")
			c.seen("a delete", "/d", []string{"edit.txt", "over.txt", "same.txt"},
				map[string]string{"/d/gone.txt": ""})

			c.warm("/d/new.txt")
			w.create("/d/new.txt", "made after a failed lookup")
			c.seen("a create after a negative lookup", "/d", []string{"edit.txt", "new.txt", "over.txt", "same.txt"},
				map[string]string{"/d/new.txt": "made after a failed lookup"})

			// A name the kernel was never asked about: only the cached
			// listing can be stale.
			c.list("/d")
			w.create("/d/unseen.txt", "listed first")
			c.seen("a create of a name never looked up", "/d", []string{"edit.txt", "new.txt", "over.txt", "same.txt", "unseen.txt"},
				map[string]string{"/d/unseen.txt": "listed first"})

			c.list("/")
			c.warm("/e/deep.txt")
			w.create("/e/deep.txt", "in a new directory")
			c.seen("a create in a new directory", "/", []string{"d", "e", "t"},
				map[string]string{"/e/deep.txt": "in a new directory"})

			c.warm("/t/in.txt", "/u/in.txt")
			c.list("/t")
			w.moveTree("/t", "/u")
			top := []string{"d", "e", "u"}
			c.seen("a directory moved", "/", top,
				map[string]string{"/t/in.txt": "", "/u/in.txt": "in a tree"})

			c.warm("/e/deep.txt")
			c.list("/e")
			w.deleteTree("/e")
			top = slices.DeleteFunc(top, func(n string) bool { return n == "e" })
			c.seen("a directory deleted", "/", top,
				map[string]string{"/e/deep.txt": ""})
		})
	}
}

// elsewhere makes changes outside the mount under test.
type elsewhere struct {
	t     *testing.T
	db    *versions.DB
	store string
	dir   string // the second mount's directory; "" for the engine
}

func newElsewhere(t *testing.T, e *env, st *versions.Store, by string) *elsewhere {
	w := &elsewhere{t: t, db: e.db, store: st.ID}
	if by == "mount" {
		db2, err := versions.Open(filepath.Join(e.dir, "memfs.db"), versions.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db2.Close() })
		sess, err := db2.CreateSession(context.Background(), []versions.AttachmentParams{{StoreID: st.ID}})
		if err != nil {
			t.Fatal(err)
		}
		// A short grace, so that a file created there is published well
		// within the visibility bound.
		m := e.mountSession(t, db2, sess, Options{Grace: 20 * time.Millisecond})
		w.dir = m.dir(0)
	}
	return w
}

var elsewhereActor = versions.UserActor("elsewhere")

func (w *elsewhere) memoryID(p string) string {
	m, err := w.db.GetMemory(context.Background(), w.store, p)
	if err != nil {
		w.t.Fatal(err)
	}
	return m.ID
}

func (w *elsewhere) save(p, content string) {
	w.t.Helper()
	if w.dir != "" {
		write(w.t, filepath.Join(w.dir, p), content)
		return
	}
	if _, err := w.db.UpdateMemory(context.Background(), w.store, w.memoryID(p), versions.MemoryUpdate{Content: &content}, elsewhereActor); err != nil {
		w.t.Fatal(err)
	}
}

func (w *elsewhere) create(p, content string) {
	w.t.Helper()
	if w.dir != "" {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(w.dir, p)), 0o755); err != nil {
			w.t.Fatal(err)
		}
		write(w.t, filepath.Join(w.dir, p), content)
		return
	}
	if _, err := w.db.CreateMemory(context.Background(), w.store, p, content, elsewhereActor); err != nil {
		w.t.Fatal(err)
	}
}

func (w *elsewhere) rename(from, to string) {
	w.t.Helper()
	if w.dir != "" {
		if err := os.Rename(filepath.Join(w.dir, from), filepath.Join(w.dir, to)); err != nil {
			w.t.Fatal(err)
		}
		return
	}
	if _, err := w.db.Rename(context.Background(), w.store, from, to, false, elsewhereActor); err != nil {
		w.t.Fatal(err)
	}
}

func (w *elsewhere) remove(p string) {
	w.t.Helper()
	if w.dir != "" {
		if err := os.Remove(filepath.Join(w.dir, p)); err != nil {
			w.t.Fatal(err)
		}
		return
	}
	if err := w.db.DeleteMemory(context.Background(), w.store, w.memoryID(p), versions.MemoryDelete{}, elsewhereActor); err != nil {
		w.t.Fatal(err)
	}
}

// moveTree and deleteTree are the memory tool's whole-directory
// operations; a second mount does them as rename(2) and rm -r.
func (w *elsewhere) moveTree(from, to string) {
	w.t.Helper()
	if w.dir != "" {
		w.rename(from, to)
		return
	}
	if err := w.db.MoveTree(context.Background(), w.store, from, to, elsewhereActor); err != nil {
		w.t.Fatal(err)
	}
}

func (w *elsewhere) deleteTree(p string) {
	w.t.Helper()
	if w.dir != "" {
		if err := os.RemoveAll(filepath.Join(w.dir, p)); err != nil {
			w.t.Fatal(err)
		}
		return
	}
	if _, err := w.db.DeleteTree(context.Background(), w.store, p, elsewhereActor); err != nil {
		w.t.Fatal(err)
	}
}

// cacheCheck looks at the mount under test; paths are store paths.
type cacheCheck struct {
	t   *testing.T
	dir string
}

func (c *cacheCheck) path(p string) string { return filepath.Join(c.dir, p) }

// warm stats, reads and lists each path (missing ones too, for the
// kernel's negative entries) twice.
func (c *cacheCheck) warm(paths ...string) {
	for range 2 {
		for _, p := range paths {
			os.Stat(c.path(p))
			os.ReadFile(c.path(p))
			c.list(filepath.Dir(p))
		}
	}
}

func (c *cacheCheck) list(dir string) ([]string, error) {
	entries, err := os.ReadDir(c.path(dir))
	names := []string{}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names, err
}

func (c *cacheCheck) mtime(p string) time.Time {
	fi, err := os.Stat(c.path(p))
	if err != nil {
		c.t.Fatal(err)
	}
	return fi.ModTime()
}

// seen waits until dir lists exactly names (nil: not checked) and each
// path stats with its content's size and reads as its content ("": is
// absent), in that order: a lookup does not refresh a cached listing.
func (c *cacheCheck) seen(what, dir string, names []string, files map[string]string) {
	c.t.Helper()
	err := eventually(visibilityLimit, func() error {
		if names != nil {
			got, err := c.list(dir)
			if err != nil {
				return fmt.Errorf("list %s: %v", dir, err)
			}
			if !slices.Equal(got, names) {
				return fmt.Errorf("%s lists %q, want %q", dir, got, names)
			}
		}
		for p, want := range files {
			fi, err := os.Stat(c.path(p))
			if want == "" {
				if !errors.Is(err, fs.ErrNotExist) {
					return fmt.Errorf("stat %s: %v, want it gone", p, err)
				}
				if _, err := os.ReadFile(c.path(p)); !errors.Is(err, syscall.ENOENT) {
					return fmt.Errorf("read %s: %v, want it gone", p, err)
				}
				continue
			}
			if err != nil {
				return fmt.Errorf("stat %s: %v", p, err)
			}
			if fi.Size() != int64(len(want)) {
				return fmt.Errorf("stat %s: size %d, want %d", p, fi.Size(), len(want))
			}
			got, err := os.ReadFile(c.path(p))
			if err != nil || string(got) != want {
				return fmt.Errorf("read %s: %q, %v; want %q", p, got, err, want)
			}
		}
		return nil
	})
	if err != nil {
		c.t.Errorf("%s made elsewhere not seen within %v: %v", what, visibilityLimit, err)
	}
}

// A file created in the mount keeps the inode number programs saw after it
// was published and the kernel forgot its inode (editors compare st_ino
// before they save over a file).
func TestCreatedFileKeepsItsNumber(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Numbers")
	_, dir := e.mountStore(t, st, Options{})
	p := filepath.Join(dir, "notes.md")
	write(t, p, "line one\n")
	before := statOf(t, p).Ino
	e.settle()
	forgetInodes(t)
	if after := statOf(t, p).Ino; after != before {
		t.Errorf("st_ino %d after publication and a new inode, want %d", after, before)
	}
}

// A store deleted elsewhere is gone from the mount within the visibility
// bound, whatever the kernel and the mount cached of it (names, pages,
// listings, content); imported again, its files show again, names the
// kernel cached as absent meanwhile included.
func TestStoreDeletedElsewhere(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Deleted")
	ctx := context.Background()
	files := map[string]string{"/d/a.txt": "in a directory", "/top.txt": "at the top"}
	for p, content := range files {
		if _, err := e.db.CreateMemory(ctx, st.ID, p, content, elsewhereActor); err != nil {
			t.Fatal(err)
		}
	}
	var export bytes.Buffer
	enc := json.NewEncoder(&export)
	if err := e.db.Export(ctx, st.ID, func(v any) error { return enc.Encode(v) }); err != nil {
		t.Fatal(err)
	}
	_, dir := e.mountStore(t, st, Options{})
	c := &cacheCheck{t: t, dir: dir}
	c.warm("/d/a.txt", "/top.txt", "/d/absent.txt")
	c.warm("/d/a.txt", "/top.txt")

	if err := e.db.DeleteStore(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	c.seen("a store deleted", "/", nil, map[string]string{"/d/a.txt": "", "/top.txt": ""})
	if err := eventually(visibilityLimit, func() error {
		if _, err := c.list("/d"); !errors.Is(err, syscall.ENOENT) {
			return fmt.Errorf("list /d: %v, want ENOENT", err)
		}
		return nil
	}); err != nil {
		t.Errorf("a store deleted: %v", err)
	}

	// Looked up while the store is gone: absent names the kernel keeps.
	c.warm("/d/a.txt", "/top.txt")
	if _, err := e.db.Import(ctx, &export); err != nil {
		t.Fatal(err)
	}
	c.seen("a deleted store imported again", "/d", []string{"a.txt"}, files)
	c.seen("a deleted store imported again", "/", []string{"d", "top.txt"}, nil)
}
