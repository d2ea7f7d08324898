package versions_test

import (
	"testing"

	"github.com/memfs/memfs/versions"
)

func TestPreviousVersion(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	m := create(t, db, s.ID, "/a.md", "one")
	other := create(t, db, s.ID, "/b.md", "other")
	two := "two"
	m2 := update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: &two})
	update(t, db, s.ID, other.ID, versions.MemoryUpdate{Content: &two})

	prev, err := db.PreviousVersion(ctx, s.ID, m2.VersionID)
	if err != nil {
		t.Fatal(err)
	}
	if prev == nil || prev.ID != m.VersionID {
		t.Fatalf("previous of %s = %+v, want %s (not the other memory's)", m2.VersionID, prev, m.VersionID)
	}
	if prev.Content == nil || *prev.Content != "one" {
		t.Errorf("previous version's content = %v, want one", prev.Content)
	}
	if prev, err := db.PreviousVersion(ctx, s.ID, m.VersionID); err != nil || prev != nil {
		t.Errorf("previous of a created version = %v, %v; want nil, nil", prev, err)
	}
	e := wantCode(t, errOf(db.PreviousVersion(ctx, s.ID, "memver_nope")), versions.CodeNotFound)
	if e.Object != versions.ObjectVersion || e.StoreID != s.ID {
		t.Errorf("not found names %q in %q, want the version in %s", e.Object, e.StoreID, s.ID)
	}
}

func TestSessionRules(t *testing.T) {
	t.Run("AttachmentCount", func(t *testing.T) {
		for n, ok := range map[int]bool{0: false, 1: true, versions.MaxAttachments: true, versions.MaxAttachments + 1: false} {
			if err := versions.CheckAttachmentCount(n); (err == nil) != ok {
				t.Errorf("CheckAttachmentCount(%d) = %v", n, err)
			} else if err != nil {
				wantCode(t, err, versions.CodeInvalid)
			}
		}
	})
	t.Run("Ended", func(t *testing.T) {
		db := openDB(t)
		s := newStore(t, db, versions.StoreParams{})
		sess, err := db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: s.ID}})
		if err != nil {
			t.Fatal(err)
		}
		if err := sess.CheckOpen(); err != nil {
			t.Fatalf("a new session is not open: %v", err)
		}
		if sess, err = db.EndSession(ctx, sess.ID); err != nil {
			t.Fatal(err)
		}
		wantCode(t, sess.CheckOpen(), versions.CodeConflict)
	})
	t.Run("Archived", func(t *testing.T) {
		db := openDB(t)
		s := newStore(t, db, versions.StoreParams{})
		if _, err := db.ArchiveStore(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
		wantCode(t, errOf(db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: s.ID}})), versions.CodeReadOnly)
	})
}
