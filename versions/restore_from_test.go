package versions_test

import (
	"testing"

	"github.com/memfs/memfs/versions"
)

// A restore records which version it took the content from, onto a live
// memory and for a deleted one (which returns as a new memory).
func TestRestoreRecordsSource(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	m := create(t, db, s.ID, "/r.md", "v1")
	first := m.VersionID
	update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("v2")})

	live, err := db.Restore(ctx, s.ID, first, "", me)
	ok(t, err)
	v, err := db.GetVersion(ctx, s.ID, live.VersionID)
	ok(t, err)
	if v.RestoredFrom != first {
		t.Errorf("restore onto the live memory: restored_from %q, want %s", v.RestoredFrom, first)
	}
	// Restoring what the memory already holds appends nothing and marks
	// nothing.
	again, err := db.Restore(ctx, s.ID, first, "", me)
	ok(t, err)
	if again.VersionID != live.VersionID {
		t.Fatalf("a restore that changes nothing appended %s", again.VersionID)
	}

	ok(t, db.DeleteMemory(ctx, s.ID, m.ID, versions.MemoryDelete{}, me))
	back, err := db.Restore(ctx, s.ID, first, "", me)
	ok(t, err)
	v, err = db.GetVersion(ctx, s.ID, back.VersionID)
	ok(t, err)
	if back.ID == m.ID || v.Operation != versions.OpCreated || v.RestoredFrom != first {
		t.Errorf("restore of a deleted memory: memory %s, version %s %s restored_from %q; want a new memory created from %s", back.ID, v.ID, v.Operation, v.RestoredFrom, first)
	}
	for _, old := range history(t, db, s.ID, m.ID) {
		if old.RestoredFrom != "" && old.ID != live.VersionID {
			t.Errorf("version %s (%s) says it was restored from %s", old.ID, old.Operation, old.RestoredFrom)
		}
	}
}
