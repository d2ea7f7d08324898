package versions_test

import (
	"slices"
	"testing"

	"github.com/memfs/memfs/versions"
)

// TestWithPositions: a write's directory changes come back from the feed
// at the positions the writer was given, and a rename over a file names
// the source's deletion's own position.
func TestWithPositions(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	start, err := db.FeedHead(ctx, s.ID)
	ok(t, err)
	wctx, pos := versions.WithPositions(ctx)
	ok(t, db.MakeDir(wctx, s.ID, "/a"))
	wctx2, pos2 := versions.WithPositions(ctx)
	ok(t, db.MakeDir(ctx, s.ID, "/b"))
	if _, err := db.Rename(wctx2, s.ID, "/a", "/c", false, me); err != nil {
		t.Fatal(err)
	}
	f := create(t, db, s.ID, "/f", "f")
	g := create(t, db, s.ID, "/g", "g")
	moved, err := db.Rename(ctx, s.ID, "/f", "/g", false, me)
	ok(t, err)
	changes, _, err := db.Changes(ctx, s.ID, start)
	ok(t, err)
	var made, renamed []int64
	var deleted int64
	for _, c := range changes {
		switch {
		case c.MemoryID == "" && c.Path == "/a" && c.Op == versions.ChangeDirMade:
			made = append(made, c.Seq)
		case c.MemoryID == "" && (c.Path == "/a" || c.Path == "/c"):
			renamed = append(renamed, c.Seq)
		case c.MemoryID == f.ID && c.Op == versions.ChangeDeleted:
			deleted = c.Seq
		}
	}
	if got := pos.Seqs(); !slices.Equal(got, made) {
		t.Errorf("MakeDir's positions %v, the feed's %v", got, made)
	}
	if got := pos2.Seqs(); !slices.Equal(got, renamed) {
		t.Errorf("Rename's positions %v, the feed's %v", got, renamed)
	}
	if moved.ID != g.ID || moved.ReplacedSeq != deleted || deleted == 0 {
		t.Errorf("rename over a file: ReplacedSeq %d, the source's deletion at %d", moved.ReplacedSeq, deleted)
	}
}
