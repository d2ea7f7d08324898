package mirror_test

import (
	"testing"

	"github.com/memfs/memfs/internal/mirror"
	"github.com/memfs/memfs/versions"
)

// A load asks for a memory by id and names the path the mount knows it
// at, which another handle may have given to another memory since, or
// emptied: the content is the memory's wherever it is now.
func TestLoadFindsTheMemoryByID(t *testing.T) {
	r := newRig(t, versions.StoreParams{}, false)
	by := versions.UserActor("u")
	a, err := r.db.CreateMemory(ctx, r.store, "/a.md", "memory a", by)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.db.CreateMemory(ctx, r.store, "/b.md", "memory b", by); err != nil {
		t.Fatal(err)
	}
	for _, known := range []string{"/a.md", "/b.md", "/gone.md"} {
		ans := r.eng.Execute(ctx, mirror.Request{Kind: mirror.AskLoad, MemID: a.ID, Path: known})
		if ans.Err != nil || ans.Mem == nil || ans.Mem.ID != a.ID || ans.Content != "memory a" {
			t.Fatalf("load of %s known at %s: %+v %q %v", a.ID, known, ans.Mem, ans.Content, ans.Err)
		}
	}
}
