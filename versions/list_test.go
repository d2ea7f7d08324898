package versions_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/memfs/memfs/versions"
)

// itemPaths renders a page as paths, prefixes marked by their trailing /.
func itemPaths(items []versions.MemoryItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		if it.Memory != nil {
			out[i] = it.Memory.Path
		} else {
			out[i] = it.Prefix
		}
	}
	return out
}

// listAll pages through a listing and returns every item's path and the
// number of pages.
func listAll(t *testing.T, db *versions.DB, storeID string, o versions.MemoryListOptions) ([]string, int) {
	t.Helper()
	var all []string
	pages := 0
	for {
		p, err := db.ListMemories(ctx, storeID, o)
		ok(t, err)
		pages++
		all = append(all, itemPaths(p.Data)...)
		if p.NextPage == nil {
			return all, pages
		}
		if len(p.Data) == 0 {
			t.Fatalf("empty page with a next page")
		}
		o.Page = *p.NextPage
	}
}

func TestS6ListMemories(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	paths := []string{
		"/a.md", "/notes-archive/old.md", "/notes.md", "/notes/b.md", "/notes/a.md",
		"/notes/deep/x.md", "/notes/deep/er/y.md", "/notes/zz/z.md", "/z.md",
	}
	for _, p := range paths {
		create(t, db, s.ID, p, "content of "+p)
	}
	sorted := slices.Clone(paths)
	slices.Sort(sorted)

	t.Run("depth0-all-in-byte-order", func(t *testing.T) {
		got, _ := listAll(t, db, s.ID, versions.MemoryListOptions{})
		if !slices.Equal(got, sorted) {
			t.Fatalf("got %v, want %v", got, sorted)
		}
	})
	t.Run("prefix-matches-whole-segments", func(t *testing.T) {
		got, _ := listAll(t, db, s.ID, versions.MemoryListOptions{PathPrefix: "/notes/"})
		want := []string{"/notes/a.md", "/notes/b.md", "/notes/deep/er/y.md", "/notes/deep/x.md", "/notes/zz/z.md"}
		if !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
	t.Run("depth1-rolls-up-prefixes", func(t *testing.T) {
		got, _ := listAll(t, db, s.ID, versions.MemoryListOptions{Depth: 1})
		want := []string{"/a.md", "/notes-archive/", "/notes.md", "/notes/", "/z.md"}
		if !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		got, _ = listAll(t, db, s.ID, versions.MemoryListOptions{Depth: 1, PathPrefix: "/notes/"})
		want = []string{"/notes/a.md", "/notes/b.md", "/notes/deep/", "/notes/zz/"}
		if !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
	t.Run("depth1-prefixes-count-toward-page", func(t *testing.T) {
		got, pages := listAll(t, db, s.ID, versions.MemoryListOptions{Depth: 1, Limit: 1})
		if want := []string{"/a.md", "/notes-archive/", "/notes.md", "/notes/", "/z.md"}; !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		if pages != 5 {
			t.Fatalf("%d pages of 1, want 5", pages)
		}
	})
	t.Run("cursor-over-several-pages", func(t *testing.T) {
		got, pages := listAll(t, db, s.ID, versions.MemoryListOptions{Limit: 2})
		if !slices.Equal(got, sorted) || pages != 5 {
			t.Fatalf("got %v in %d pages", got, pages)
		}
	})
	t.Run("exact-page-has-no-next", func(t *testing.T) {
		p, err := db.ListMemories(ctx, s.ID, versions.MemoryListOptions{Limit: len(paths)})
		ok(t, err)
		if len(p.Data) != len(paths) || p.NextPage != nil {
			t.Fatalf("%d items, next %v", len(p.Data), p.NextPage)
		}
	})
	t.Run("stable-while-changing", func(t *testing.T) {
		p, err := db.ListMemories(ctx, s.ID, versions.MemoryListOptions{Limit: 3})
		ok(t, err)
		// A memory created before the cursor does not shift the next page.
		create(t, db, s.ID, "/0-first.md", "x")
		next, err := db.ListMemories(ctx, s.ID, versions.MemoryListOptions{Limit: 3, Page: *p.NextPage})
		ok(t, err)
		if got, want := itemPaths(next.Data), sorted[3:6]; !slices.Equal(got, want) {
			t.Fatalf("next page %v, want %v", got, want)
		}
		ok(t, db.DeleteMemory(ctx, s.ID, "/0-first.md", versions.MemoryDelete{}, me))
	})
	t.Run("views", func(t *testing.T) {
		p, err := db.ListMemories(ctx, s.ID, versions.MemoryListOptions{})
		ok(t, err)
		if p.Data[0].Memory.Content != nil {
			t.Fatalf("basic view carries content")
		}
		p, err = db.ListMemories(ctx, s.ID, versions.MemoryListOptions{View: versions.ViewFull})
		ok(t, err)
		if c := p.Data[0].Memory.Content; c == nil || *c != "content of /a.md" {
			t.Fatalf("full view content = %v", c)
		}
	})
	t.Run("full-view-page-at-most-20", func(t *testing.T) {
		big := newStore(t, db, versions.StoreParams{Name: "big"})
		for i := range 45 {
			create(t, db, big.ID, fmt.Sprintf("/m%02d", i), "x")
		}
		p, err := db.ListMemories(ctx, big.ID, versions.MemoryListOptions{View: versions.ViewFull, Limit: 100})
		ok(t, err)
		if len(p.Data) != versions.MaxFullViewPage || p.NextPage == nil {
			t.Fatalf("full view page of %d items", len(p.Data))
		}
		got, pages := listAll(t, db, big.ID, versions.MemoryListOptions{View: versions.ViewFull})
		if len(got) != 45 || pages != 3 {
			t.Fatalf("%d items in %d pages", len(got), pages)
		}
		p, err = db.ListMemories(ctx, big.ID, versions.MemoryListOptions{})
		ok(t, err)
		if len(p.Data) != 45 {
			t.Fatalf("basic view page of %d items", len(p.Data))
		}
	})
	t.Run("bad-prefix-refused", func(t *testing.T) {
		for _, pre := range []string{"/notes", "notes/", "x"} {
			_, err := db.ListMemories(ctx, s.ID, versions.MemoryListOptions{PathPrefix: pre})
			wantCode(t, err, versions.CodeInvalid)
		}
	})
	t.Run("bad-depth-refused", func(t *testing.T) {
		for _, d := range []int{-1, 2, 3} {
			_, err := db.ListMemories(ctx, s.ID, versions.MemoryListOptions{Depth: d})
			wantCode(t, err, versions.CodeInvalid)
		}
	})
	t.Run("limits/page-size", func(t *testing.T) {
		_, err := db.ListMemories(ctx, s.ID, versions.MemoryListOptions{Limit: -1})
		wantCode(t, err, versions.CodeInvalid)
		p, err := db.ListMemories(ctx, s.ID, versions.MemoryListOptions{Limit: versions.MaxPageSize + 1})
		ok(t, err)
		if len(p.Data) != len(paths) {
			t.Fatalf("%d items", len(p.Data))
		}
		_, err = db.ListMemories(ctx, s.ID, versions.MemoryListOptions{View: "everything"})
		wantCode(t, err, versions.CodeInvalid)
	})
	t.Run("bad-cursor-refused", func(t *testing.T) {
		_, err := db.ListMemories(ctx, s.ID, versions.MemoryListOptions{Page: "!!"})
		wantCode(t, err, versions.CodeInvalid)
	})
	t.Run("unknown-store", func(t *testing.T) {
		_, err := db.ListMemories(ctx, "memstore_nope", versions.MemoryListOptions{})
		wantCode(t, err, versions.CodeNotFound)
	})
}
