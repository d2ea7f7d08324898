package mirror

import (
	"path"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// A change made elsewhere drops the listings of the changed path and its
// ancestors, keeps the others, and a listing read before the change is not
// kept after it.
func TestIndexForget(t *testing.T) {
	x := NewIndex()
	dirs := []string{"/", "/a", "/a/b", "/a/b/c", "/a/x", "/y"}
	for _, d := range dirs {
		x.Load(d, nil, x.Now())
	}
	before := x.Now()
	x.Forget("/a/b")
	for _, d := range dirs {
		_, r := x.Lookup(d, "any")
		want := Unloaded
		if d == "/a/b/c" || d == "/a/x" || d == "/y" {
			want = Absent // still loaded: an empty listing
		}
		if r != want {
			t.Errorf("after forget(/a/b), %s is %v, want %v", d, r, want)
		}
	}
	for d, keep := range map[string]bool{"/": false, "/a": false, "/a/b": false, "/a/x/y": true, "/y/z": true} {
		x.Load(d, nil, before)
		if _, r := x.Lookup(d, "any"); (r != Unloaded) != keep {
			t.Errorf("a listing of %s read before forget(/a/b): kept %v, want %v", d, r != Unloaded, keep)
		}
	}
	x.Forget("/")
	if _, r := x.Lookup("/y", "any"); r != Unloaded {
		t.Errorf("after forget(/), /y is still loaded")
	}
}

// A save made elsewhere of a listed file changes what its listing says of
// it and keeps the listing whole, when it is newer than what the listing
// holds; a name the listing holds as another memory, or doubts, or a
// directory not listed, or an older save, is left to forget; a listing
// read before the save is not kept.
func TestIndexResaved(t *testing.T) {
	x := NewIndex()
	mem := &versions.Memory{ID: "mem_a", VersionID: "v1", ContentSize: 1, Ino: 7, Seq: 10}
	x.Load("/d", []versions.Entry{{Name: "a", Path: "/d/a", Memory: mem}, {Name: "b", Path: "/d/b", Memory: &versions.Memory{ID: "mem_b", Seq: 11}}}, x.Now())
	before := x.Now()
	at := time.Unix(1700000000, 0)
	if !x.Resaved("/d/a", &versions.Memory{ID: "mem_a", VersionID: "v2", ContentSize: 22, UpdatedAt: at, Seq: 12}) {
		t.Fatal("a listed file saved elsewhere was not recorded")
	}
	e, r := x.Lookup("/d", "a")
	if r != Found || e.Memory.VersionID != "v2" || e.Memory.ContentSize != 22 || !e.Memory.UpdatedAt.Equal(at) || e.Memory.Ino != 7 || e.Memory.Seq != 12 {
		t.Errorf("after the save elsewhere, lookup(/d, a) = %v %+v, want v2 of 22 bytes at its time, ino 7", r, e.Memory)
	}
	if mem.VersionID != "v1" {
		t.Errorf("the listing's earlier memory was changed in place: %+v", mem)
	}
	if _, r := x.Lookup("/d", "none"); r != Absent {
		t.Errorf("after the save elsewhere, lookup(/d, none) = %v, want Absent: the listing stays whole", r)
	}
	for _, c := range []struct {
		p, id string
		seq   int64
	}{{"/d/b", "mem_other", 20}, {"/d/none", "mem_a", 20}, {"/e/a", "mem_a", 20}, {"/d/a", "mem_a", 11}, {"/d/a", "mem_a", 12}} {
		if x.Resaved(c.p, &versions.Memory{ID: c.id, VersionID: "v9", Seq: c.seq}) {
			t.Errorf("resaved(%s, %s at %d) recorded what the listing does not hold there, or an older save", c.p, c.id, c.seq)
		}
	}
	x.Load("/d", nil, before)
	if _, r := x.Lookup("/d", "a"); r != Found {
		t.Errorf("a listing read before the save elsewhere replaced the one it changed (lookup(/d, a) = %v)", r)
	}
	x.Forget("/d/b")
	if x.Resaved("/d/b", &versions.Memory{ID: "mem_b", VersionID: "v2", Seq: 30}) {
		t.Error("recorded a save elsewhere of a name the listing doubts")
	}
}

// What a listing said stays known for when the engine cannot be reached,
// except the names changed elsewhere since it was read; the mount's own
// change of such a name makes it known again.
func TestIndexLastKnown(t *testing.T) {
	x := NewIndex()
	file := func(p string) versions.Entry {
		return versions.Entry{Name: path.Base(p), Path: p, Memory: &versions.Memory{ID: "mem" + p, VersionID: "v1"}}
	}
	x.Load("/", []versions.Entry{{Name: "a", Path: "/a", Dir: true}, file("/top.txt")}, x.Now())
	x.Load("/a", []versions.Entry{file("/a/x.txt"), file("/a/y.txt")}, x.Now())
	x.Forget("/a/x.txt")
	for _, c := range []struct {
		dir, name string
		want      Listed
	}{
		{"/", "a", Unloaded}, {"/", "top.txt", Found}, {"/", "none", Absent},
		{"/a", "x.txt", Unloaded}, {"/a", "y.txt", Found}, {"/a", "none", Absent},
		{"/b", "any", Unloaded},
	} {
		if _, r := x.LastKnown(c.dir, c.name); r != c.want {
			t.Errorf("after forget(/a/x.txt), lastKnown(%s, %s) = %v, want %v", c.dir, c.name, r, c.want)
		}
		if _, r := x.Lookup(c.dir, c.name); r != Unloaded {
			t.Errorf("after forget(/a/x.txt), lookup(%s, %s) = %v, want it asked of the engine", c.dir, c.name, r)
		}
	}
	x.Saved("/a/x.txt", file("/a/x.txt").Memory)
	if _, r := x.LastKnown("/a", "x.txt"); r != Found {
		t.Errorf("after this mount saved /a/x.txt, lastKnown = %v, want Found", r)
	}
	if _, r := x.Lookup("/a", "y.txt"); r != Found {
		t.Errorf("after this mount saved the one name changed elsewhere, lookup(/a, y.txt) = %v, want Found", r)
	}
	if _, r := x.LastKnown("/", "a"); r != Found {
		t.Errorf("after this mount saved below /a, lastKnown(/, a) = %v, want Found", r)
	}
	x.Drop()
	if _, r := x.LastKnown("/a", "y.txt"); r != Unloaded {
		t.Errorf("after drop, lastKnown(/a, y.txt) = %v, want Unloaded", r)
	}
}
