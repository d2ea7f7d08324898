package versions_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/memfs/memfs/versions"
)

// tree renders a directory recursively: files as path=content, directories
// as path/.
func tree(t *testing.T, db *versions.DB, storeID, dir string) string {
	t.Helper()
	entries, err := db.ReadDir(ctx, storeID, dir)
	ok(t, err)
	var out []string
	for _, e := range entries {
		if e.Dir {
			out = append(out, e.Path+"/")
			if sub := tree(t, db, storeID, e.Path); sub != "" {
				out = append(out, sub)
			}
			continue
		}
		m, err := db.GetMemory(ctx, storeID, e.Memory.ID)
		ok(t, err)
		out = append(out, e.Path+"="+*m.Content)
	}
	return strings.Join(out, " ")
}

func TestStat(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	m := create(t, db, s.ID, "/dir/sub/file.md", "x")
	ok(t, db.MakeDir(ctx, s.ID, "/empty"))
	cases := []struct {
		path string
		dir  bool
		code versions.Code // CodeInternal: found
	}{
		{"/", true, versions.CodeInternal},
		{"/dir", true, versions.CodeInternal},
		{"/dir/sub", true, versions.CodeInternal},
		{"/dir/sub/file.md", false, versions.CodeInternal},
		{"/empty", true, versions.CodeInternal},
		{"/di", false, versions.CodeNotFound},
		{"/dir/sub/file", false, versions.CodeNotFound},
		{"/dir/sub/file.md/x", false, versions.CodeNotFound},
		{"/dir-x", false, versions.CodeNotFound},
		{"/bad//path", false, versions.CodeInvalid},
		{"/" + strings.Repeat("n", 256), false, versions.CodeNameTooLong},
	}
	for _, c := range cases {
		t.Run(c.path[:min(len(c.path), 20)], func(t *testing.T) {
			e, err := db.Stat(ctx, s.ID, c.path)
			if c.code != versions.CodeInternal {
				wantCode(t, err, c.code)
				return
			}
			ok(t, err)
			if e.Dir != c.dir || e.Path != c.path {
				t.Fatalf("Stat = %+v", e)
			}
			if !c.dir && (e.Memory == nil || e.Memory.ID != m.ID || e.Name != "file.md" || e.Memory.Ino != m.Ino || e.Memory.ContentSize != 1) {
				t.Fatalf("file entry %+v", e)
			}
		})
	}
	t.Run("unknown-store", func(t *testing.T) {
		_, err := db.Stat(ctx, "memstore_nope", "/")
		wantCode(t, err, versions.CodeNotFound)
	})
}

func TestReadDir(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	for _, p := range []string{"/b.md", "/a/x", "/a/y/z", "/a.md", "/c/d/e/f", "/a-b"} {
		create(t, db, s.ID, p, "x")
	}
	ok(t, db.MakeDir(ctx, s.ID, "/empty"))
	ok(t, db.MakeDir(ctx, s.ID, "/a/y/also"))
	names := func(dir string) string {
		es, err := db.ReadDir(ctx, s.ID, dir)
		ok(t, err)
		var out []string
		for _, e := range es {
			n := e.Name
			if e.Dir {
				n += "/"
			}
			out = append(out, n)
		}
		return strings.Join(out, " ")
	}
	t.Run("root", func(t *testing.T) {
		if got, want := names("/"), "a/ a-b a.md b.md c/ empty/"; got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
	t.Run("nested", func(t *testing.T) {
		if got, want := names("/a"), "x y/"; got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
		if got, want := names("/a/y"), "also/ z"; got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
		if got, want := names("/c/d"), "e/"; got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
		if got := names("/empty"); got != "" {
			t.Fatalf("empty dir lists %q", got)
		}
	})
	t.Run("not-found", func(t *testing.T) {
		_, err := db.ReadDir(ctx, s.ID, "/nope")
		wantCode(t, err, versions.CodeNotFound)
	})
	t.Run("not-dir", func(t *testing.T) {
		_, err := db.ReadDir(ctx, s.ID, "/a.md")
		wantCode(t, err, versions.CodeNotDir)
	})
	t.Run("many-in-subdirs", func(t *testing.T) {
		for i := range 30 {
			create(t, db, s.ID, fmt.Sprintf("/many/d%02d/f%d", i%10, i), "x")
		}
		es, err := db.ReadDir(ctx, s.ID, "/many")
		ok(t, err)
		if len(es) != 10 || !es[0].Dir || es[9].Name != "d09" {
			t.Fatalf("got %d entries", len(es))
		}
	})
}

func TestMakeRemoveDir(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	create(t, db, s.ID, "/file", "x")
	create(t, db, s.ID, "/implicit/f", "x")

	t.Run("mkdir", func(t *testing.T) {
		ok(t, db.MakeDir(ctx, s.ID, "/d"))
		ok(t, db.MakeDir(ctx, s.ID, "/d/e"))
		ok(t, db.MakeDir(ctx, s.ID, "/implicit/g"))
	})
	t.Run("mkdir-existing-refused", func(t *testing.T) {
		wantCode(t, db.MakeDir(ctx, s.ID, "/d"), versions.CodePathConflict)
		wantCode(t, db.MakeDir(ctx, s.ID, "/implicit"), versions.CodePathConflict)
		e := wantCode(t, db.MakeDir(ctx, s.ID, "/file"), versions.CodePathConflict)
		if e.ConflictingMemoryID == "" {
			t.Fatalf("conflict does not name the memory")
		}
		wantCode(t, db.MakeDir(ctx, s.ID, "/"), versions.CodePathConflict)
	})
	t.Run("mkdir-parent-missing", func(t *testing.T) {
		wantCode(t, db.MakeDir(ctx, s.ID, "/no/such"), versions.CodeNotFound)
	})
	t.Run("mkdir-parent-is-file", func(t *testing.T) {
		wantCode(t, db.MakeDir(ctx, s.ID, "/file/sub"), versions.CodeNotDir)
		wantCode(t, db.MakeDir(ctx, s.ID, "/file/sub/deeper"), versions.CodeNotDir)
	})
	t.Run("rmdir-not-empty", func(t *testing.T) {
		wantCode(t, db.RemoveDir(ctx, s.ID, "/d"), versions.CodeNotEmpty)
		wantCode(t, db.RemoveDir(ctx, s.ID, "/implicit"), versions.CodeNotEmpty)
	})
	t.Run("rmdir-file", func(t *testing.T) {
		wantCode(t, db.RemoveDir(ctx, s.ID, "/file"), versions.CodeNotDir)
	})
	t.Run("rmdir-missing", func(t *testing.T) {
		wantCode(t, db.RemoveDir(ctx, s.ID, "/nope"), versions.CodeNotFound)
	})
	t.Run("rmdir-root", func(t *testing.T) {
		wantCode(t, db.RemoveDir(ctx, s.ID, "/"), versions.CodeInvalid)
	})
	t.Run("rmdir", func(t *testing.T) {
		ok(t, db.RemoveDir(ctx, s.ID, "/d/e"))
		if _, err := db.Stat(ctx, s.ID, "/d"); err != nil {
			t.Fatalf("parent vanished with its child: %v", err)
		}
		ok(t, db.RemoveDir(ctx, s.ID, "/d"))
		_, err := db.Stat(ctx, s.ID, "/d")
		wantCode(t, err, versions.CodeNotFound)
	})
	t.Run("delete-keeps-parent-when-asked", func(t *testing.T) {
		create(t, db, s.ID, "/keep/f", "x")
		create(t, db, s.ID, "/drop/f", "x")
		ok(t, db.DeleteMemory(ctx, s.ID, "/keep/f", versions.MemoryDelete{KeepParentDir: true}, me))
		ok(t, db.DeleteMemory(ctx, s.ID, "/drop/f", versions.MemoryDelete{}, me))
		if e, err := db.Stat(ctx, s.ID, "/keep"); err != nil || !e.Dir {
			t.Fatalf("kept parent: %v %v", e, err)
		}
		_, err := db.Stat(ctx, s.ID, "/drop")
		wantCode(t, err, versions.CodeNotFound)
	})
	t.Run("dirs-survive-their-parent-memories", func(t *testing.T) {
		// /implicit exists through /implicit/f and the explicit /implicit/g.
		ok(t, db.DeleteMemory(ctx, s.ID, "/implicit/f", versions.MemoryDelete{}, me))
		if e, err := db.Stat(ctx, s.ID, "/implicit"); err != nil || !e.Dir {
			t.Fatalf("/implicit: %v %v", e, err)
		}
	})
}

func TestRename(t *testing.T) {
	setup := func(t *testing.T) (*versions.DB, *versions.Store) {
		db := openDB(t)
		s := newStore(t, db, versions.StoreParams{})
		for _, p := range []string{"/f", "/g", "/dir/a", "/dir/sub/b", "/full/x"} {
			create(t, db, s.ID, p, "content"+p)
		}
		ok(t, db.MakeDir(ctx, s.ID, "/dir/emptysub"))
		ok(t, db.MakeDir(ctx, s.ID, "/emptydir"))
		return db, s
	}

	t.Run("file-to-new-path", func(t *testing.T) {
		db, s := setup(t)
		before, err := db.GetMemory(ctx, s.ID, "/dir/a")
		ok(t, err)
		moved, err := db.Rename(ctx, s.ID, "/dir/a", "/moved", false, me)
		ok(t, err)
		after, err := db.GetMemory(ctx, s.ID, "/moved")
		ok(t, err)
		if after.ID != before.ID || after.Ino != before.Ino || *after.Content != "content/dir/a" {
			t.Fatalf("moved %+v", after)
		}
		after.Content, after.Seq = nil, moved.Seq // a read has no feed position
		if !reflect.DeepEqual(moved, after) {
			t.Fatalf("Rename returned %+v, the memory is %+v", moved, after)
		}
		h := history(t, db, s.ID, after.ID)
		if len(h) != 2 || h[0].Operation != versions.OpModified || *h[0].Path != "/moved" {
			t.Fatalf("history %+v", h[0])
		}
	})
	t.Run("file-onto-file", func(t *testing.T) {
		db, s := setup(t)
		src, _ := db.GetMemory(ctx, s.ID, "/f")
		dst, _ := db.GetMemory(ctx, s.ID, "/g")
		moved, err := db.Rename(ctx, s.ID, "/f", "/g", false, me)
		ok(t, err)
		got, err := db.GetMemory(ctx, s.ID, "/g")
		ok(t, err)
		if got.ID != dst.ID || *got.Content != "content/f" {
			t.Fatalf("destination %+v", got)
		}
		got.Content, got.Seq = nil, moved.Seq
		if !reflect.DeepEqual(moved, got) {
			t.Fatalf("Rename returned %+v, the memory is %+v", moved, got)
		}
		if h := history(t, db, s.ID, dst.ID); len(h) != 2 || h[0].Operation != versions.OpModified || *h[0].Path != "/g" {
			t.Fatalf("destination history %+v", h)
		}
		if h := history(t, db, s.ID, src.ID); len(h) != 2 || h[0].Operation != versions.OpDeleted || *h[0].Path != "/f" {
			t.Fatalf("source history %+v", h)
		}
		_, err = db.GetMemory(ctx, s.ID, "/f")
		wantCode(t, err, versions.CodeNotFound)
	})
	t.Run("file-onto-file-noreplace", func(t *testing.T) {
		db, s := setup(t)
		wantCode(t, errOf(db.Rename(ctx, s.ID, "/f", "/g", true, me)), versions.CodePathConflict)
	})
	t.Run("file-onto-dir", func(t *testing.T) {
		db, s := setup(t)
		wantCode(t, errOf(db.Rename(ctx, s.ID, "/f", "/dir", false, me)), versions.CodeIsDir)
		wantCode(t, errOf(db.Rename(ctx, s.ID, "/f", "/emptydir", false, me)), versions.CodeIsDir)
	})
	t.Run("dir-onto-file", func(t *testing.T) {
		db, s := setup(t)
		wantCode(t, errOf(db.Rename(ctx, s.ID, "/dir", "/f", false, me)), versions.CodeNotDir)
	})
	t.Run("dir-into-own-subtree", func(t *testing.T) {
		db, s := setup(t)
		wantCode(t, errOf(db.Rename(ctx, s.ID, "/dir", "/dir/sub/x", false, me)), versions.CodeInvalid)
	})
	t.Run("dir-onto-nonempty-dir", func(t *testing.T) {
		db, s := setup(t)
		wantCode(t, errOf(db.Rename(ctx, s.ID, "/dir", "/full", false, me)), versions.CodeNotEmpty)
	})
	t.Run("dir-onto-dir-noreplace", func(t *testing.T) {
		db, s := setup(t)
		wantCode(t, errOf(db.Rename(ctx, s.ID, "/dir", "/emptydir", true, me)), versions.CodePathConflict)
	})
	t.Run("missing-source", func(t *testing.T) {
		db, s := setup(t)
		wantCode(t, errOf(db.Rename(ctx, s.ID, "/nope", "/x", false, me)), versions.CodeNotFound)
	})
	t.Run("missing-destination-parent", func(t *testing.T) {
		db, s := setup(t)
		wantCode(t, errOf(db.Rename(ctx, s.ID, "/f", "/no/such/f", false, me)), versions.CodeNotFound)
		wantCode(t, errOf(db.Rename(ctx, s.ID, "/f", "/g/f", false, me)), versions.CodeNotDir)
	})
	t.Run("root", func(t *testing.T) {
		db, s := setup(t)
		wantCode(t, errOf(db.Rename(ctx, s.ID, "/", "/x", false, me)), versions.CodeInvalid)
	})
	t.Run("same-path", func(t *testing.T) {
		db, s := setup(t)
		ok(t, errOf(db.Rename(ctx, s.ID, "/f", "/f", false, me)))
		ok(t, errOf(db.Rename(ctx, s.ID, "/dir", "/dir", false, me)))
		if n := countVersions(t, db, s.ID); n != 5 {
			t.Fatalf("%d versions after no-op renames", n)
		}
	})
	t.Run("dir-moves-everything-below", func(t *testing.T) {
		db, s := setup(t)
		a, _ := db.GetMemory(ctx, s.ID, "/dir/a")
		ok(t, errOf(db.Rename(ctx, s.ID, "/dir", "/new", false, me)))
		if got, want := tree(t, db, s.ID, "/new"), "/new/a=content/dir/a /new/emptysub/ /new/sub/ /new/sub/b=content/dir/sub/b"; got != want {
			t.Fatalf("moved tree %q, want %q", got, want)
		}
		_, err := db.Stat(ctx, s.ID, "/dir")
		wantCode(t, err, versions.CodeNotFound)
		moved, _ := db.GetMemory(ctx, s.ID, "/new/a")
		if moved.ID != a.ID {
			t.Fatalf("id changed")
		}
		if h := history(t, db, s.ID, a.ID); *h[0].Path != "/new/a" || h[0].Operation != versions.OpModified {
			t.Fatalf("no modified version for the move")
		}
	})
	t.Run("dir-onto-empty-dir", func(t *testing.T) {
		db, s := setup(t)
		ok(t, errOf(db.Rename(ctx, s.ID, "/dir", "/emptydir", false, me)))
		if got := tree(t, db, s.ID, "/emptydir"); !strings.Contains(got, "/emptydir/sub/b=") {
			t.Fatalf("tree %q", got)
		}
	})
	t.Run("move-keeps-emptied-parent", func(t *testing.T) {
		db, s := setup(t)
		ok(t, errOf(db.Rename(ctx, s.ID, "/full/x", "/x", false, me)))
		if e, err := db.Stat(ctx, s.ID, "/full"); err != nil || !e.Dir {
			t.Fatalf("emptied parent vanished: %v", err)
		}
		ok(t, errOf(db.Rename(ctx, s.ID, "/dir/sub", "/sub", false, me)))
		ok(t, errOf(db.Rename(ctx, s.ID, "/dir/a", "/a", false, me)))
		ok(t, errOf(db.Rename(ctx, s.ID, "/dir/emptysub", "/emptysub", false, me)))
		if e, err := db.Stat(ctx, s.ID, "/dir"); err != nil || !e.Dir {
			t.Fatalf("emptied parent vanished: %v", err)
		}
	})
	t.Run("move-over-path-limit", func(t *testing.T) {
		db, s := setup(t)
		deep := strings.Repeat("/d", 19)
		ok(t, db.MakeDir(ctx, s.ID, "/d"))
		for p := "/d"; p != deep; {
			p += "/d"
			ok(t, db.MakeDir(ctx, s.ID, p))
		}
		wantCode(t, errOf(db.Rename(ctx, s.ID, "/dir", deep+"/dir", false, me)), versions.CodeNameTooLong)
		if _, err := db.GetMemory(ctx, s.ID, "/dir/sub/b"); err != nil {
			t.Fatalf("refused move changed something: %v", err)
		}
	})
	t.Run("archived", func(t *testing.T) {
		db, s := setup(t)
		_, err := db.ArchiveStore(ctx, s.ID)
		ok(t, err)
		wantCode(t, errOf(db.Rename(ctx, s.ID, "/f", "/h", false, me)), versions.CodeReadOnly)
	})
}
