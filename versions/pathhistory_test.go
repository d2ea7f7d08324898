package versions_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/memfs/memfs/versions"
)

func str(s string) *string { return &s }

// A path's history holds what was saved at it, whichever memory: three
// saves, a rename away and a delete of the memory that came next.
func TestPathHistory(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	m := create(t, db, s.ID, "/notes/todo.md", "one")
	update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: str("two")})
	update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: str("three")})
	update(t, db, s.ID, m.ID, versions.MemoryUpdate{Path: str("/notes/done.md")})
	n := create(t, db, s.ID, "/notes/todo.md", "again")
	if err := db.DeleteMemory(ctx, s.ID, n.ID, versions.MemoryDelete{}, me); err != nil {
		t.Fatal(err)
	}
	create(t, db, s.ID, "/notes.md", "a file beside the directory")
	create(t, db, s.ID, "/a/b/c.md", "deep")

	ops := func(path string, o versions.PathHistoryOptions) []string {
		t.Helper()
		var out []string
		for {
			p, err := db.PathHistory(ctx, s.ID, path, o)
			if err != nil {
				t.Fatalf("PathHistory %s: %v", path, err)
			}
			for _, v := range p.Data {
				c := ""
				if v.Content != nil {
					c = ":" + *v.Content
				}
				out = append(out, string(v.Operation)+c)
			}
			if p.NextPage == nil {
				return out
			}
			o.Page = *p.NextPage
		}
	}
	full := versions.PathHistoryOptions{OldestFirst: true, View: versions.ViewFull, Limit: 2}
	if got, want := ops("/notes/todo.md", full), []string{"created:one", "modified:two", "modified:three", "created:again", "deleted"}; !slices.Equal(got, want) {
		t.Errorf("history of /notes/todo.md = %v, want %v", got, want)
	}
	if got, want := ops("/notes/todo.md", versions.PathHistoryOptions{Limit: 1}), []string{"deleted", "created", "modified", "modified", "created"}; !slices.Equal(got, want) {
		t.Errorf("newest first = %v, want %v", got, want)
	}
	if got, want := ops("/notes/done.md", full), []string{"modified:three"}; !slices.Equal(got, want) {
		t.Errorf("history of /notes/done.md = %v, want %v", got, want)
	}
	if got := ops("/never.md", full); len(got) != 0 {
		t.Errorf("history of a path never saved at = %v", got)
	}

	dir := func(p string) versions.HistoryDir {
		t.Helper()
		d, err := db.HistoryChildren(ctx, s.ID, p)
		if err != nil {
			t.Fatalf("HistoryChildren %s: %v", p, err)
		}
		return *d
	}
	if d := dir("/"); !slices.Equal(d.Names, []string{"a", "notes", "notes.md"}) || d.HasFiles {
		t.Errorf("/ of the history = %+v", d)
	}
	if d := dir("/notes"); !slices.Equal(d.Names, []string{"done.md", "todo.md"}) || d.HasFiles {
		t.Errorf("/notes of the history = %+v", d)
	}
	if d := dir("/notes/todo.md"); len(d.Names) != 0 || !d.HasFiles {
		t.Errorf("/notes/todo.md of the history = %+v", d)
	}
	for p, want := range map[string]bool{"/notes": true, "/notes/todo.md": true, "/a/b": true, "/a/b/c.md": true, "/note": false, "/notes/x": false, "/a/b/c": false} {
		if got, err := db.InHistory(ctx, s.ID, p); err != nil || got != want {
			t.Errorf("InHistory(%s) = %v, %v; want %v", p, got, err, want)
		}
	}

	// A redacted version stays where it was saved, without content.
	p, err := db.PathHistory(ctx, s.ID, "/notes/todo.md", versions.PathHistoryOptions{OldestFirst: true})
	if err != nil {
		t.Fatal(err)
	}
	second := p.Data[1].ID
	if _, err := db.RedactVersion(ctx, s.ID, second, me); err != nil {
		t.Fatal(err)
	}
	if got, want := ops("/notes/todo.md", full), []string{"created:one", "modified", "modified:three", "created:again", "deleted"}; !slices.Equal(got, want) {
		t.Errorf("history after a redaction = %v, want %v", got, want)
	}
	v, err := db.HistoryVersion(ctx, s.ID, "/notes/todo.md", second)
	if err != nil || v.RedactedAt == nil || v.Content != nil {
		t.Errorf("HistoryVersion of the redacted one = %+v, %v", v, err)
	}
	if _, err := db.HistoryVersion(ctx, s.ID, "/notes/done.md", second); versions.ErrorCode(err) != versions.CodeNotFound {
		t.Errorf("HistoryVersion at another path: %v, want not found", err)
	}
	// The rename's version, redacted, stays at the path it moved to.
	last, err := db.PathHistory(ctx, s.ID, "/notes/done.md", versions.PathHistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: str("four")})
	if _, err := db.RedactVersion(ctx, s.ID, last.Data[0].ID, me); err != nil {
		t.Fatal(err)
	}
	if got, want := ops("/notes/done.md", full), []string{"modified", "modified:four"}; !slices.Equal(got, want) {
		t.Errorf("history of the rename's path after redacting it = %v, want %v", got, want)
	}
}

// A directory of the history lists each name once, however many versions
// and paths lie below it, also names that sort between a path and its
// subtree ("x", "x.md", "x/y").
func TestHistoryChildrenOrder(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	m := create(t, db, s.ID, "/x", "file first")
	if err := db.DeleteMemory(ctx, s.ID, m.ID, versions.MemoryDelete{}, me); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		create(t, db, s.ID, fmt.Sprintf("/x/%d.md", i), "below")
	}
	m = create(t, db, s.ID, "/x.md", "beside")
	for i := 0; i < 5; i++ {
		update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: str(fmt.Sprint(i))})
	}
	create(t, db, s.ID, "/x-y", "beside too")
	d, err := db.HistoryChildren(ctx, s.ID, "/")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"x", "x-y", "x.md"}; !slices.Equal(d.Names, want) {
		t.Errorf("names = %v, want %v", d.Names, want)
	}
	if d, err = db.HistoryChildren(ctx, s.ID, "/x"); err != nil || !d.HasFiles || !slices.Equal(d.Names, []string{"0.md", "1.md", "2.md"}) {
		t.Errorf("/x = %+v, %v: want its own versions and three names", d, err)
	}
}

// A run of redacted versions stays where it was saved, a redacted rename
// and a redacted deletion at the end of a memory included.
func TestPathHistoryRedactedRuns(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	m := create(t, db, s.ID, "/a.md", "1")
	var ids []string
	for _, c := range []string{"2", "3", "4"} {
		ids = append(ids, update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: str(c)}).VersionID)
	}
	update(t, db, s.ID, m.ID, versions.MemoryUpdate{Path: str("/b.md")})
	update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: str("5")})
	if err := db.DeleteMemory(ctx, s.ID, m.ID, versions.MemoryDelete{}, me); err != nil {
		t.Fatal(err)
	}
	all := func(path string) []versions.Version {
		t.Helper()
		p, err := db.PathHistory(ctx, s.ID, path, versions.PathHistoryOptions{OldestFirst: true})
		if err != nil {
			t.Fatal(err)
		}
		return p.Data
	}
	atB := all("/b.md") // the rename, "5", the deletion
	// "2", "3" and "4" in a run, the rename's version and the deletion.
	for _, id := range append(ids, atB[0].ID, atB[2].ID) {
		if _, err := db.RedactVersion(ctx, s.ID, id, me); err != nil {
			t.Fatal(err)
		}
	}
	count := func(vs []versions.Version) (n, redacted int) {
		for _, v := range vs {
			n++
			if v.RedactedAt != nil {
				redacted++
			}
		}
		return
	}
	if n, r := count(all("/a.md")); n != 4 || r != 3 {
		t.Errorf("/a.md: %d versions, %d redacted; want 4 and 3", n, r)
	}
	if n, r := count(all("/b.md")); n != 3 || r != 2 {
		t.Errorf("/b.md: %d versions, %d redacted; want 3 and 2", n, r)
	}
	for i, p := range []string{"/a.md", "/b.md"} {
		page, err := db.PathHistory(ctx, s.ID, p, versions.PathHistoryOptions{Limit: 1, OldestFirst: i == 0})
		if err != nil || len(page.Data) != 1 || page.NextPage == nil {
			t.Errorf("%s a version at a time: %+v, %v", p, page, err)
		}
	}
}

// HistoryNames pages a directory from one ordered scan: every name once,
// across pages, a name that was a file and later a directory included,
// though its paths do not sort together ("/d/n", "/d/n-x", "/d/n/a").
func TestHistoryNamesPages(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	m := create(t, db, s.ID, "/d/n", "a file first")
	if err := db.DeleteMemory(ctx, s.ID, m.ID, versions.MemoryDelete{}, me); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 7 {
		name := fmt.Sprintf("n%c%d", "-.x"[i%3], i)
		create(t, db, s.ID, "/d/"+name, "x")
		want = append(want, name)
	}
	create(t, db, s.ID, "/d/n/a.md", "then a directory")
	create(t, db, s.ID, "/d/n/b.md", "x")
	create(t, db, s.ID, "/d/z/deep/c.md", "x")
	want = append(want, "n", "z")
	slices.Sort(want)
	for _, limit := range []int{1, 2, 3, 100} {
		var got []string
		after := ""
		for pages := 0; ; pages++ {
			p, err := db.HistoryNames(ctx, s.ID, "/d", after, limit)
			if err != nil {
				t.Fatalf("HistoryNames: %v", err)
			}
			if len(p.Names) > limit || pages > len(want) {
				t.Fatalf("limit %d: page of %d names, %d pages", limit, len(p.Names), pages)
			}
			got = append(got, p.Names...)
			if p.Next == "" {
				break
			}
			after = p.Next
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("limit %d: names %v, want %v", limit, got, want)
		}
	}
}
