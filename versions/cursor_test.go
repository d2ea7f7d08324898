package versions_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// A page cursor is bound to the listing that issued it: used with another
// store or other filters it is refused, not read as a position in a
// different listing.
func TestCursorBoundToParameters(t *testing.T) {
	db := openDB(t)
	a := newStore(t, db, versions.StoreParams{Name: "A"})
	b := newStore(t, db, versions.StoreParams{Name: "B"})
	for i := range 3 {
		create(t, db, a.ID, fmt.Sprintf("/n/%d.md", i), "x")
		create(t, db, b.ID, fmt.Sprintf("/n/%d.md", i), "x")
	}
	next := func(p *string, err error) string {
		t.Helper()
		ok(t, err)
		if p == nil {
			t.Fatal("no next page")
		}
		return *p
	}
	t.Run("Versions", func(t *testing.T) {
		p, err := db.ListVersions(ctx, a.ID, versions.VersionListOptions{Limit: 1})
		cur := next(p.NextPage, err)
		_, err = db.ListVersions(ctx, a.ID, versions.VersionListOptions{Limit: 2, Page: cur})
		ok(t, err) // another page size is the same listing
		wantCode(t, errOf(db.ListVersions(ctx, b.ID, versions.VersionListOptions{Limit: 1, Page: cur})), versions.CodeInvalid)
		wantCode(t, errOf(db.ListVersions(ctx, a.ID, versions.VersionListOptions{Limit: 1, Page: cur, Operation: versions.OpCreated})), versions.CodeInvalid)
		wantCode(t, errOf(db.ListVersions(ctx, a.ID, versions.VersionListOptions{Limit: 1, Page: cur, CreatedGTE: time.Now().Add(-time.Hour)})), versions.CodeInvalid)
	})
	t.Run("Memories", func(t *testing.T) {
		p, err := db.ListMemories(ctx, a.ID, versions.MemoryListOptions{Limit: 1})
		cur := next(p.NextPage, err)
		ok(t, errOf(db.ListMemories(ctx, a.ID, versions.MemoryListOptions{Limit: 1, Page: cur})))
		wantCode(t, errOf(db.ListMemories(ctx, b.ID, versions.MemoryListOptions{Limit: 1, Page: cur})), versions.CodeInvalid)
		wantCode(t, errOf(db.ListMemories(ctx, a.ID, versions.MemoryListOptions{Limit: 1, Page: cur, PathPrefix: "/n/"})), versions.CodeInvalid)
	})
	t.Run("Stores", func(t *testing.T) {
		p, err := db.ListStores(ctx, versions.StoreListOptions{Limit: 1})
		cur := next(p.NextPage, err)
		ok(t, errOf(db.ListStores(ctx, versions.StoreListOptions{Limit: 1, Page: cur})))
		wantCode(t, errOf(db.ListStores(ctx, versions.StoreListOptions{Limit: 1, Page: cur, IncludeArchived: true})), versions.CodeInvalid)
	})
	t.Run("Sessions", func(t *testing.T) {
		for range 2 {
			ok(t, errOf(db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: a.ID}})))
		}
		p, err := db.ListSessions(ctx, versions.SessionListOptions{Limit: 1})
		cur := next(p.NextPage, err)
		ok(t, errOf(db.ListSessions(ctx, versions.SessionListOptions{Limit: 1, Page: cur})))
		vp, err := db.ListVersions(ctx, a.ID, versions.VersionListOptions{Limit: 1})
		wantCode(t, errOf(db.ListSessions(ctx, versions.SessionListOptions{Limit: 1, Page: next(vp.NextPage, err)})), versions.CodeInvalid)
	})
}
