package versions_test

import (
	"errors"
	"testing"

	"github.com/memfs/memfs/versions"
)

func TestDeleteTree(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	create(t, db, s.ID, "/p/d/a", "a")
	create(t, db, s.ID, "/p/d/e/f", "f")
	create(t, db, s.ID, "/p/dx", "x")
	if err := db.MakeDir(ctx, s.ID, "/p/d/empty"); err != nil {
		t.Fatal(err)
	}
	n, err := db.DeleteTree(ctx, s.ID, "/p/d", me)
	if err != nil || n != 2 {
		t.Fatalf("DeleteTree /p/d = %d, %v; want 2 memories", n, err)
	}
	for _, p := range []string{"/p/d", "/p/d/a", "/p/d/e", "/p/d/empty"} {
		_, err := db.Stat(ctx, s.ID, p)
		wantCode(t, err, versions.CodeNotFound)
	}
	page, err := db.ListVersions(ctx, s.ID, versions.VersionListOptions{Operation: versions.OpDeleted})
	if err != nil || len(page.Data) != 2 {
		t.Fatalf("deleted versions: %d, %v; want one per memory", len(page.Data), err)
	}
	// The parent stays when the subtree was all it held.
	if _, err := db.DeleteTree(ctx, s.ID, "/p/dx", me); err != nil {
		t.Fatal(err)
	}
	if e, err := db.Stat(ctx, s.ID, "/p"); err != nil || !e.Dir {
		t.Errorf("Stat /p after emptying it: %+v, %v; want a directory", e, err)
	}
	_, err = db.DeleteTree(ctx, s.ID, "/nothing", me)
	wantCode(t, err, versions.CodeNotFound)
	_, err = db.DeleteTree(ctx, s.ID, "/", me)
	wantCode(t, err, versions.CodeInvalid)
	if _, err := db.ArchiveStore(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	_, err = db.DeleteTree(ctx, s.ID, "/p", me)
	wantCode(t, err, versions.CodeReadOnly)
}

func TestMoveTree(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	a := create(t, db, s.ID, "/d/a", "a")
	f := create(t, db, s.ID, "/d/e/f", "f")
	create(t, db, s.ID, "/taken", "t")
	if err := db.MoveTree(ctx, s.ID, "/d", "/new/parents/d2", me); err != nil {
		t.Fatalf("MoveTree of a directory into missing parents: %v", err)
	}
	for id, p := range map[string]string{a.ID: "/new/parents/d2/a", f.ID: "/new/parents/d2/e/f"} {
		m, err := db.GetMemory(ctx, s.ID, p)
		if err != nil || m.ID != id {
			t.Errorf("GetMemory %s: %+v, %v; want memory %s", p, m, err, id)
		}
	}
	if err := db.MoveTree(ctx, s.ID, "/new/parents/d2/a", "/x/y/a", me); err != nil {
		t.Fatalf("MoveTree of a file into missing parents: %v", err)
	}
	if e, err := db.Stat(ctx, s.ID, "/new/parents/d2"); err != nil || !e.Dir {
		t.Errorf("the directory a file left stays: %+v, %v", e, err)
	}
	for _, to := range []string{"/taken", "/taken/below", "/new"} {
		err := db.MoveTree(ctx, s.ID, "/x/y/a", to, me)
		wantCode(t, err, versions.CodePathConflict)
	}
	wantCode(t, db.MoveTree(ctx, s.ID, "/new", "/new/inside", me), versions.CodeInvalid)
	wantCode(t, db.MoveTree(ctx, s.ID, "/nothing", "/z", me), versions.CodeNotFound)
	page, err := db.ListVersions(ctx, s.ID, versions.VersionListOptions{Operation: versions.OpModified})
	if err != nil || len(page.Data) != 3 {
		t.Errorf("modified versions: %d, %v; want 3 (two moved by the directory, one file)", len(page.Data), err)
	}
}

func TestEditMemory(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{MaxMemoryBytes: 10})
	m := create(t, db, s.ID, "/n.md", "one")
	got, err := db.EditMemory(ctx, s.ID, "/n.md", func(c string) (string, error) { return c + " two", nil }, me)
	if err != nil || got.ID != m.ID || *got.Content != "one two" {
		t.Fatalf("EditMemory: %+v, %v", got, err)
	}
	refused := errors.New("no")
	if _, err := db.EditMemory(ctx, s.ID, "/n.md", func(string) (string, error) { return "", refused }, me); err != refused {
		t.Errorf("a refused edit returns %v, want the function's error", err)
	}
	_, err = db.EditMemory(ctx, s.ID, "/n.md", func(c string) (string, error) { return c + " three four", nil }, me)
	wantCode(t, err, versions.CodeTooLarge)
	if _, err := db.EditMemory(ctx, s.ID, "/n.md", func(c string) (string, error) { return c, nil }, me); err != nil {
		t.Errorf("an edit that changes nothing: %v", err)
	}
	page, err := db.ListVersions(ctx, s.ID, versions.VersionListOptions{})
	if err != nil || len(page.Data) != 2 {
		t.Errorf("%d versions (%v), want created and one modified", len(page.Data), err)
	}
	_, err = db.EditMemory(ctx, s.ID, "/missing", func(c string) (string, error) { return c, nil }, me)
	wantCode(t, err, versions.CodeNotFound)
}
