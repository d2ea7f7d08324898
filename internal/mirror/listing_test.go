package mirror_test

import (
	"testing"

	"github.com/memfs/memfs/internal/mirror"
	"github.com/memfs/memfs/versions"
)

// The listing takes a save made elsewhere of a file it lists from the
// feed, and never an older version over a newer one: here the mount's own
// conflicting save commits after the other's, is answered first, and the
// feed then brings the other's.
func TestListingKeepsTheNewerSave(t *testing.T) {
	r := newRig(t, versions.StoreParams{}, false)
	r.writeFile("/x.md", "v1\n", shell)
	r.feed()
	if _, err := r.eng.List(ctx, r.m.Index(), "/"); err != nil {
		t.Fatal(err)
	}
	r.other("/x.md", "v2 elsewhere, longer\n")
	r.feed()
	e, l := r.m.Index().Lookup("/", "x.md")
	if l != mirror.Found || e.Memory.ContentSize != len("v2 elsewhere, longer\n") {
		t.Fatalf("after a save elsewhere, the listing says %v %+v, want it found with the save's size", l, e.Memory)
	}

	h := r.open("/x.md", shell, true, false)
	r.other("/x.md", "v3 elsewhere, longer still\n") // committed first
	r.write(h, 0, "v4 here\n")
	if errno := r.close(h); errno != 0 { // committed second, a conflict
		t.Fatalf("close: %v", errno)
	}
	head, err := r.db.Stat(ctx, r.store, "/x.md")
	if err != nil {
		t.Fatal(err)
	}
	r.feed() // v3 (elsewhere), then v4 (own)
	e, l = r.m.Index().Lookup("/", "x.md")
	if l == mirror.Found && (e.Memory.VersionID != head.Memory.VersionID || e.Memory.ContentSize != head.Memory.ContentSize) {
		t.Errorf("after the feed the listing says version %s of %d bytes; the store's head is %s of %d bytes",
			e.Memory.VersionID, e.Memory.ContentSize, head.Memory.VersionID, head.Memory.ContentSize)
	}
}
