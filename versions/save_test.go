package versions_test

import (
	"testing"

	"github.com/memfs/memfs/guard/guardtest"
	"github.com/memfs/memfs/versions"
)

// TestSaveCreatesAndUpdates: a save at a free path creates a memory, the
// next save at it is a version of it, an exclusive save there fails, and
// the change each returns is the one the feed carries.
func TestSaveCreatesAndUpdates(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	head, err := db.FeedHead(ctx, s.ID)
	ok(t, err)
	c1, err := db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: "/a.md", Content: "one", By: me})
	ok(t, err)
	if c1.Op != versions.ChangeCreated || c1.Seq == 0 || c1.MemoryID == "" || c1.Conflict {
		t.Fatalf("first save: %+v, want a created memory with a feed position", c1)
	}
	c2, err := db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: "/a.md", Content: "two", By: me})
	ok(t, err)
	if c2.Op != versions.ChangeModified || c2.MemoryID != c1.MemoryID || c2.Seq <= c1.Seq {
		t.Fatalf("second save: %+v, want a version of %s after %d", c2, c1.MemoryID, c1.Seq)
	}
	wantCode(t, errOf(db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: "/a.md", Content: "x", By: me, Exclusive: true})), versions.CodePathConflict)
	feed, _, err := db.Changes(ctx, s.ID, head)
	ok(t, err)
	if len(feed) != 2 {
		t.Fatalf("feed: %+v, want the two saves", feed)
	}
	for i, want := range []versions.Change{c1, c2} {
		got := feed[i]
		if got.Seq != want.Seq || got.Op != want.Op || got.VersionID != want.VersionID || got.MemoryID != want.MemoryID || got.SHA256 != want.SHA256 || got.Size != want.Size {
			t.Errorf("feed[%d] = %+v, Save returned %+v", i, got, want)
		}
	}
	// Saving the head's content again writes nothing.
	c3, err := db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: "/a.md", Content: "two", By: me})
	ok(t, err)
	if c3.Seq != 0 || c3.VersionID != c2.VersionID {
		t.Errorf("unchanged save: %+v, want no feed position and the head %s", c3, c2.VersionID)
	}
	if n := countVersions(t, db, s.ID); n != 2 {
		t.Errorf("%d versions, want 2", n)
	}
}

// TestSaveKnownHead: a save that passes the head it knows writes on it;
// one whose known head is stale reads everything again and marks the
// version a conflict (its base is not the head), or with Strict fails
// CodeStale and saves nothing.
func TestSaveKnownHead(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	m := create(t, db, s.ID, "/x.md", "v1")
	v1 := m.VersionID
	known := func(content string, base string, strict bool) versions.SaveReq {
		return versions.SaveReq{StoreID: s.ID, Path: "/x.md", Content: content, By: me, MemoryID: m.ID,
			HeadVersionID: v1, HeadSHA256: m.ContentSHA256, HeadContent: ptr("v1"), BaseVersionID: base, Strict: strict}
	}
	c, err := db.Save(ctx, known("v2", v1, false))
	ok(t, err)
	if c.Conflict || c.MemoryID != m.ID {
		t.Fatalf("save on the known head: %+v", c)
	}
	// Another writer saved v2 meanwhile; this one still knows v1.
	wantCode(t, errOf(db.Save(ctx, known("v3", v1, true))), versions.CodeStale)
	got, err := db.GetMemory(ctx, s.ID, m.ID)
	ok(t, err)
	if *got.Content != "v2" {
		t.Fatalf("a refused strict save changed the content to %q", *got.Content)
	}
	c3, err := db.Save(ctx, known("v3", v1, false))
	ok(t, err)
	if !c3.Conflict || c3.Seq <= c.Seq {
		t.Fatalf("save on a stale head: %+v, want a conflict after %d", c3, c.Seq)
	}
	h := history(t, db, s.ID, m.ID)
	if len(h) != 3 || !h[0].Conflict || h[1].Conflict || *h[0].Content != "v3" {
		t.Fatalf("history: %d versions, newest conflict=%v, want 3 with only the newest a conflict", len(h), len(h) > 0 && h[0].Conflict)
	}
	// A memory gone meanwhile: CodeNotFound, which a mount maps to ESTALE.
	ok(t, db.DeleteMemory(ctx, s.ID, m.ID, versions.MemoryDelete{}, me))
	wantCode(t, errOf(db.Save(ctx, known("v4", v1, false))), versions.CodeNotFound)
}

// TestSaveOverConsumesPending: an atomic save (a temporary file renamed
// over a target) is one version of the target, marked a conflict when the
// target moved on since the renaming writer's base, and consumes the
// temporary file's pending row in the same commit.
func TestSaveOverConsumesPending(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	holdLease(t, db, "mount-b")
	owner := owned("mount-b")
	m := create(t, db, s.ID, "/x.md", "v3")
	base := m.VersionID
	tmp, err := db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: "/.tmp-1-abc", Content: "mine", By: me, Pending: true, Owner: owner})
	ok(t, err)
	if tmp.Op != versions.ChangePending || tmp.PendingID == 0 || tmp.Seq != 0 {
		t.Fatalf("pending save: %+v", tmp)
	}
	other := update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("theirs")}) // A saves v4
	c, err := db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: "/x.md", Content: "mine", By: me, MemoryID: m.ID,
		HeadVersionID: base, HeadSHA256: m.ContentSHA256, HeadContent: ptr("v3"), BaseVersionID: base, PendingID: tmp.PendingID, Owner: owner})
	ok(t, err)
	if !c.Conflict || c.MemoryID != m.ID || c.Op != versions.ChangeModified {
		t.Fatalf("atomic save over a target that moved on (%s): %+v, want a conflicting version of %s", other.VersionID, c, m.ID)
	}
	if has, err := db.HasPending(ctx); err != nil || has {
		t.Fatalf("the pending row outlived the save (has=%v, err=%v)", has, err)
	}
	if n := countVersions(t, db, s.ID); n != 3 {
		t.Errorf("%d versions, want 3 (created, theirs, mine)", n)
	}
	// The row is gone: saving over with it again fails and saves nothing.
	wantCode(t, errOf(db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: "/x.md", Content: "again", By: me, PendingID: tmp.PendingID, Owner: owner})), versions.CodeNotFound)
	// Strict: the rename fails CodeStale and the pending row stays.
	tmp2, err := db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: "/.tmp-2", Content: "late", By: me, Pending: true, Owner: owner})
	ok(t, err)
	wantCode(t, errOf(db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: "/x.md", Content: "late", By: me, BaseVersionID: base, Strict: true, PendingID: tmp2.PendingID, Owner: owner})), versions.CodeStale)
	if has, _ := db.HasPending(ctx); !has {
		t.Error("a refused strict save consumed the pending row")
	}
	// Publishing the row at its own path, with the content and actor it
	// was saved with: a new memory in the row's slot.
	var out versions.Memory
	pub, err := db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: "/.tmp-2", PendingID: tmp2.PendingID, Owner: owner, FromPending: true, Memory: &out})
	ok(t, err)
	if pub.Op != versions.ChangeCreated || out.Content == nil || *out.Content != "late" || out.ID != pub.MemoryID {
		t.Fatalf("publication: %+v, memory %+v", pub, out)
	}
	if h := history(t, db, s.ID, pub.MemoryID); len(h) != 1 || h[0].CreatedBy == nil || h[0].CreatedBy.ID != me.ID {
		t.Errorf("published version: %+v, want one by %s", h, me.ID)
	}
}

// TestSaveGuardUsesKnownHead: the guard checks what a save adds to the
// head content the caller passes, so a credential already in the head
// does not refuse every later save, and a new one is refused.
func TestSaveGuardUsesKnownHead(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	m := create(t, db, s.ID, "/n.md", "notes\n")
	secret := guardtest.All()[0].Text
	req := versions.SaveReq{StoreID: s.ID, Path: "/n.md", Content: "notes\n" + secret, By: me, MemoryID: m.ID,
		HeadVersionID: m.VersionID, HeadSHA256: m.ContentSHA256, HeadContent: ptr("notes\n")}
	wantCode(t, errOf(db.Save(ctx, req)), versions.CodeCredential)
	// As if the head held it already (a store whose guard was off then).
	req.HeadContent = ptr("notes\n" + secret)
	req.Content = "notes\n" + secret + "more\n"
	if _, err := db.Save(ctx, req); err != nil {
		t.Fatalf("a save adding no credential to the head the caller knows: %v", err)
	}
}
