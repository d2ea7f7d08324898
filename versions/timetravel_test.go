package versions_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// snapshotPaths lists path=content of a store as of when.
func snapshotPaths(t *testing.T, db *versions.DB, storeID, when string) map[string]string {
	t.Helper()
	_, files, err := db.StoreAsOf(ctx, storeID, when, versions.SnapshotOptions{Content: true})
	if err != nil {
		t.Fatalf("StoreAsOf %s: %v", when, err)
	}
	out := map[string]string{}
	for _, f := range files {
		c := "<redacted>"
		if f.Memory.Content != nil {
			c = *f.Memory.Content
		}
		out[f.Memory.Path] = c
	}
	return out
}

func livePaths(t *testing.T, db *versions.DB, storeID string) map[string]string {
	t.Helper()
	page, err := db.ListMemories(ctx, storeID, versions.MemoryListOptions{View: versions.ViewFull, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for {
		for _, it := range page.Data {
			out[it.Memory.Path] = *it.Memory.Content
		}
		if page.NextPage == nil {
			return out
		}
		if page, err = db.ListMemories(ctx, storeID, versions.MemoryListOptions{View: versions.ViewFull, Limit: 20, Page: *page.NextPage}); err != nil {
			t.Fatal(err)
		}
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestCheckpointsAndAsOf(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	a := create(t, db, s.ID, "/a.md", "one")
	create(t, db, s.ID, "/b.md", "bee")
	cp, err := db.CreateCheckpoint(ctx, s.ID, versions.CheckpointOptions{Name: "before", Note: "n"}, me)
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]string{"/a.md": "one", "/b.md": "bee"}
	update(t, db, s.ID, a.ID, versions.MemoryUpdate{Content: ptr("two"), Path: ptr("/dir/a2.md")})
	b, _ := db.GetMemory(ctx, s.ID, "/b.md")
	if err := db.DeleteMemory(ctx, s.ID, b.ID, versions.MemoryDelete{}, me); err != nil {
		t.Fatal(err)
	}
	create(t, db, s.ID, "/c.md", "sea")

	if got := snapshotPaths(t, db, s.ID, "before"); !equalMaps(got, before) {
		t.Errorf("as of the checkpoint: %v, want %v", got, before)
	}
	now := map[string]string{"/dir/a2.md": "two", "/c.md": "sea"}
	if got := snapshotPaths(t, db, s.ID, time.Now().UTC().Format(time.RFC3339Nano)); !equalMaps(got, now) {
		t.Errorf("as of now: %v, want %v", got, now)
	}
	list, err := db.ListCheckpoints(ctx, s.ID)
	if err != nil || len(list) != 1 || list[0].Name != "before" || list[0].Pos != cp.Pos || list[0].VersionID == "" {
		t.Errorf("ListCheckpoints = %+v, %v", list, err)
	}

	t.Run("BadInput", func(t *testing.T) {
		for _, when := range []string{"not-a-thing", "2001-01-01", time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "sesn_01NOPE"} {
			if _, err := db.ResolveAsOf(ctx, s.ID, when); err == nil {
				t.Errorf("ResolveAsOf(%q) succeeded", when)
			}
		}
		for _, name := range []string{"2026-12-01", "1abc", "sesn_x", "a/b", "a b", "", strings.Repeat("a", 101)} {
			if _, err := db.CreateCheckpoint(ctx, s.ID, versions.CheckpointOptions{Name: name}, me); versions.ErrorCode(err) != versions.CodeInvalid && name != "" {
				t.Errorf("CreateCheckpoint(%q) = %v, want invalid", name, err)
			}
		}
		if _, err := db.CreateCheckpoint(ctx, s.ID, versions.CheckpointOptions{Name: "before"}, me); versions.ErrorCode(err) != versions.CodeConflict {
			t.Errorf("a second checkpoint named before: %v, want a conflict", err)
		}
		if _, err := db.DeleteCheckpoint(ctx, s.ID, "nope"); versions.ErrorCode(err) != versions.CodeNotFound {
			t.Errorf("DeleteCheckpoint(nope) = %v", err)
		}
	})

	t.Run("Restore", func(t *testing.T) {
		dry, err := db.RestoreAsOf(ctx, s.ID, "before", true, me)
		if err != nil {
			t.Fatal(err)
		}
		if dry.Applied || dry.Count(versions.ActModify) != 1 || dry.Count(versions.ActRecreate) != 1 || dry.Count(versions.ActDelete) != 1 {
			t.Fatalf("dry run plan: %+v", dry)
		}
		if got := livePaths(t, db, s.ID); !equalMaps(got, now) {
			t.Fatalf("a dry run changed the store: %v", got)
		}
		p, err := db.RestoreAsOf(ctx, s.ID, "before", false, me)
		if err != nil {
			t.Fatal(err)
		}
		if !p.Applied || p.Safety == nil || p.Writes() != 3 {
			t.Fatalf("plan: %+v", p)
		}
		if got := livePaths(t, db, s.ID); !equalMaps(got, before) {
			t.Errorf("after restore: %v, want %v", got, before)
		}
		if got, _ := db.GetMemory(ctx, s.ID, "/a.md"); got == nil || got.ID != a.ID {
			t.Errorf("the modified memory lost its id: %+v", got)
		}
		again, err := db.RestoreAsOf(ctx, s.ID, "before", false, me)
		if err != nil || again.Applied || len(again.Changes) != 0 {
			t.Errorf("second restore: %+v, %v", again, err)
		}
		if got := snapshotPaths(t, db, s.ID, p.Safety.Name); !equalMaps(got, now) {
			t.Errorf("the safety checkpoint shows %v, want %v", got, now)
		}
	})
}

func TestUndoSession(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	keep := create(t, db, s.ID, "/keep.md", "k1")
	other := create(t, db, s.ID, "/other.md", "o1")
	moved := create(t, db, s.ID, "/moved.md", "m1")
	sess, err := db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: s.ID, Access: versions.ReadWrite}})
	if err != nil {
		t.Fatal(err)
	}
	by := versions.SessionActor(sess.ID)
	if _, err := db.UndoSession(ctx, s.ID, sess.ID, versions.UndoOptions{Force: true}, me); !versions.SessionWroteNothing(err) {
		t.Fatalf("undo of a session that wrote nothing: %v", err)
	}
	if _, err := db.UpdateMemory(ctx, s.ID, keep.ID, versions.MemoryUpdate{Content: ptr("k2")}, by); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateMemory(ctx, s.ID, other.ID, versions.MemoryUpdate{Content: ptr("o2")}, by); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateMemory(ctx, s.ID, moved.ID, versions.MemoryUpdate{Path: ptr("/new/place.md")}, by); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateMemory(ctx, s.ID, "/made.md", "x", by); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UndoSession(ctx, s.ID, sess.ID, versions.UndoOptions{}, me); versions.ErrorCode(err) != versions.CodeConflict {
		t.Fatalf("undo of a running session: %v, want a conflict", err)
	}
	if _, err := db.EndSession(ctx, sess.ID); err != nil {
		t.Fatal(err)
	}
	// Someone else changes /other.md after the session.
	update(t, db, s.ID, other.ID, versions.MemoryUpdate{Content: ptr("o3")})

	p, err := db.UndoSession(ctx, s.ID, sess.ID, versions.UndoOptions{}, me)
	if err != nil {
		t.Fatal(err)
	}
	if p.Count(versions.ActSkip) != 1 || p.Count(versions.ActModify) != 2 || p.Count(versions.ActDelete) != 1 {
		t.Fatalf("plan: %+v", p.Changes)
	}
	want := map[string]string{"/keep.md": "k1", "/other.md": "o3", "/moved.md": "m1"}
	if got := livePaths(t, db, s.ID); !equalMaps(got, want) {
		t.Errorf("after undo: %v, want %v", got, want)
	}
	again, err := db.UndoSession(ctx, s.ID, sess.ID, versions.UndoOptions{}, me)
	if err != nil || again.Writes() != 0 {
		t.Errorf("second undo: %+v, %v", again, err)
	}
	forced, err := db.UndoSession(ctx, s.ID, sess.ID, versions.UndoOptions{Force: true}, me)
	if err != nil || forced.Count(versions.ActModify) != 1 {
		t.Fatalf("forced undo: %+v, %v", forced, err)
	}
	if got, _ := db.GetMemory(ctx, s.ID, "/other.md"); got == nil || *got.Content != "o1" {
		t.Errorf("forced undo left /other.md as %+v", got)
	}
}

func TestForkStore(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{Name: "orig"})
	a := create(t, db, s.ID, "/a.md", "one")
	if _, err := db.CreateCheckpoint(ctx, s.ID, versions.CheckpointOptions{Name: "cp"}, me); err != nil {
		t.Fatal(err)
	}
	update(t, db, s.ID, a.ID, versions.MemoryUpdate{Content: ptr("two")})
	create(t, db, s.ID, "/b.md", "bee")

	f, err := db.ForkStore(ctx, s.ID, versions.ForkOptions{Name: "plain"}, me)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := livePaths(t, db, f.Store.ID), livePaths(t, db, s.ID); !equalMaps(got, want) {
		t.Errorf("fork holds %v, want %v", got, want)
	}
	old, err := db.ForkStore(ctx, s.ID, versions.ForkOptions{Name: "old", When: "cp", WithHistory: true}, me)
	if err != nil {
		t.Fatal(err)
	}
	if got := livePaths(t, db, old.Store.ID); !equalMaps(got, map[string]string{"/a.md": "one"}) {
		t.Errorf("fork as of cp holds %v", got)
	}
	if old.Versions != 1 || f.Versions != 2 {
		t.Errorf("versions: fork %d, fork with history %d", f.Versions, old.Versions)
	}
	// Independent: a change to the fork leaves the original alone.
	fa, _ := db.GetMemory(ctx, old.Store.ID, "/a.md")
	update(t, db, old.Store.ID, fa.ID, versions.MemoryUpdate{Content: ptr("forked")})
	if got, _ := db.GetMemory(ctx, s.ID, "/a.md"); *got.Content != "two" {
		t.Errorf("the original changed with its fork: %q", *got.Content)
	}
	if _, err := db.ForkStore(ctx, s.ID, versions.ForkOptions{Name: "orig"}, me); versions.ErrorCode(err) != versions.CodeConflict {
		t.Errorf("fork onto an existing name: %v", err)
	}
	if _, err := db.ForkStore(ctx, s.ID, versions.ForkOptions{Name: "orig", AllowDuplicate: true}, me); err != nil {
		t.Errorf("fork with --allow-duplicate: %v", err)
	}
}

func TestPruneKeepsCheckpointsAndExportCarriesThem(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	a := create(t, db, s.ID, "/a.md", "v1")
	if _, err := db.CreateCheckpoint(ctx, s.ID, versions.CheckpointOptions{Name: "keep"}, me); err != nil {
		t.Fatal(err)
	}
	update(t, db, s.ID, a.ID, versions.MemoryUpdate{Content: ptr("v2")})
	update(t, db, s.ID, a.ID, versions.MemoryUpdate{Content: ptr("v3")})
	sess, err := db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: s.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if cps, err := db.CheckpointSession(ctx, sess.ID); err != nil || len(cps) != 1 {
		t.Fatalf("CheckpointSession = %+v, %v", cps, err)
	}
	if cps, err := db.CheckpointSession(ctx, sess.ID); err != nil || len(cps) != 0 {
		t.Fatalf("a second CheckpointSession took %+v, %v", cps, err)
	}
	kept, expiring, err := db.PruneReport(ctx, s.ID, 0, 1)
	if err != nil || len(kept) != 1 || kept[0].Checkpoints[0] != "keep" || len(expiring) != 1 || expiring[0].Name != sess.ID {
		t.Fatalf("PruneReport = %+v, %+v, %v", kept, expiring, err)
	}
	removed, err := db.PruneVersions(ctx, s.ID, 0, 1)
	if err != nil || len(removed) != 1 {
		t.Fatalf("PruneVersions removed %d, %v; want only v2", len(removed), err)
	}
	if _, err := db.GetCheckpoint(ctx, s.ID, sess.ID); versions.ErrorCode(err) != versions.CodeNotFound {
		t.Errorf("the session checkpoint past the window survived the prune: %v", err)
	}
	if got := snapshotPaths(t, db, s.ID, "keep"); got["/a.md"] != "v1" {
		t.Errorf("as of keep after prune: %v", got)
	}

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if err := db.Export(ctx, s.ID, func(v any) error { return enc.Encode(v) }); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"type":"memory_checkpoint"`) {
		t.Fatalf("export holds no checkpoint:\n%s", buf.String())
	}
	db2 := openDB(t)
	if _, err := db2.Import(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	if got := snapshotPaths(t, db2, s.ID, "keep"); got["/a.md"] != "v1" {
		t.Errorf("imported as of keep: %v", got)
	}
}
