package versions_test

import (
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// A pending file is durable and invisible; publishing it is one version:
// "created" at a free path, or "modified" of the memory at the path with its
// id kept; dropping it leaves nothing.
func TestPending(t *testing.T) {
	db := openDB(t)
	st := newStore(t, db, versions.StoreParams{Name: "Pending"})
	target := create(t, db, st.ID, "/notes.md", "v1")
	id, err := db.SavePending(ctx, st.ID, "mount-a", "/sedAbc123", "half", me, 0)
	ok(t, err)
	again, err := db.SavePending(ctx, st.ID, "mount-a", "/sedAbc123", "v2", me, id)
	ok(t, err)
	if again != id {
		t.Errorf("a second save of pending file %d made %d", id, again)
	}
	wantCode(t, errOf(db.GetMemory(ctx, st.ID, "/sedAbc123")), versions.CodeNotFound)
	if n := countVersions(t, db, st.ID); n != 1 {
		t.Errorf("%d versions after pending saves, want 1", n)
	}
	m, err := db.PublishPending(ctx, st.ID, id, "/notes.md")
	ok(t, err)
	if m.ID != target.ID {
		t.Errorf("published onto /notes.md as %s, want the target's id %s", m.ID, target.ID)
	}
	got, err := db.GetMemory(ctx, st.ID, "/notes.md")
	ok(t, err)
	if *got.Content != "v2" {
		t.Errorf("content %q, want v2", *got.Content)
	}
	if h := history(t, db, st.ID, target.ID); len(h) != 2 || h[0].Operation != versions.OpModified {
		t.Errorf("history %+v, want created then modified", h)
	}
	wantCode(t, errOf(db.PublishPending(ctx, st.ID, id, "/notes.md")), versions.CodeNotFound)

	id2, err := db.SavePending(ctx, st.ID, "mount-a", "/new.md", "new", me, 0)
	ok(t, err)
	id3, err := db.SavePending(ctx, st.ID, "mount-b", "/gone.md", "gone", me, 0)
	ok(t, err)
	left, err := db.ListPending(ctx, st.ID, "mount-a", time.Now().Add(-time.Hour))
	ok(t, err)
	if len(left) != 1 || left[0].ID != id2 || left[0].Content != "new" || left[0].By != me {
		t.Errorf("mount-a's pending files: %+v", left)
	}
	m2, err := db.PublishPending(ctx, st.ID, id2, "/new.md")
	ok(t, err)
	if h := history(t, db, st.ID, m2.ID); len(h) != 1 || h[0].Operation != versions.OpCreated {
		t.Errorf("a new file published: %+v, want one created", h)
	}
	ok(t, db.DropPending(ctx, st.ID, id3))
	if left, _ := db.ListPending(ctx, st.ID, "mount-b", time.Now().Add(time.Hour)); len(left) != 0 {
		t.Errorf("after drop: %+v", left)
	}
	if n := countVersions(t, db, st.ID); n != 3 {
		t.Errorf("%d versions, want 3", n)
	}
	wantCode(t, errOf(db.SavePending(ctx, st.ID, "mount-a", "/bad.md", "\xff", me, 0)), versions.CodeNotUTF8)
}
