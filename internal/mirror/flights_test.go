package mirror

import (
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// A change made elsewhere waits for the mount's requests in flight that
// it touches, and only for those; the mount's own changes wait for none.
func TestLandedWaitsForWhatTheChangesTouch(t *testing.T) {
	const own = "7"
	save := Request{Kind: AskSave, Path: "/d/f.md", MemID: "mem_f"}
	elsewhere := func(c versions.Change) versions.Change { c.Origin = "8"; return c }
	cases := []struct {
		name  string
		r     Request
		c     versions.Change
		waits bool
	}{
		{"same path", save, elsewhere(versions.Change{Path: "/d/f.md", MemoryID: "mem_f"}), true},
		{"same memory, moved here", save, elsewhere(versions.Change{Path: "/e/f.md", PrevPath: "/x.md", MemoryID: "mem_f"}), true},
		{"moved away from it", save, elsewhere(versions.Change{Path: "/e/g.md", PrevPath: "/d/f.md", MemoryID: "mem_g"}), true},
		{"a directory above it", save, elsewhere(versions.Change{Path: "/d"}), true},
		{"another file", save, elsewhere(versions.Change{Path: "/d/g.md", MemoryID: "mem_g"}), false},
		{"a name it prefixes", save, elsewhere(versions.Change{Path: "/d/f.md.bak", MemoryID: "mem_h"}), false},
		{"the mount's own", save, versions.Change{Path: "/d/f.md", MemoryID: "mem_f", Origin: own}, false},
		{"below a directory moved", Request{Kind: AskMoveDir, From: "/a", Path: "/b"}, elsewhere(versions.Change{Path: "/b/c/x.md", MemoryID: "mem_x"}), true},
		{"the count, any memory", Request{Kind: AskCount, Path: "/new.md"}, elsewhere(versions.Change{Path: "/z.md", MemoryID: "mem_z"}), true},
		{"the count, a directory", Request{Kind: AskCount, Path: "/new.md"}, elsewhere(versions.Change{Path: "/zz"}), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var f flights
			id := f.begin(tc.r)
			landed := make(chan struct{})
			go func() {
				f.landed(own, []versions.Change{tc.c})
				close(landed)
			}()
			select {
			case <-landed:
				if tc.waits {
					t.Fatal("applied before the answer of the request it touches")
				}
				f.end(id)
			case <-time.After(50 * time.Millisecond):
				if !tc.waits {
					t.Fatal("waited for a request it does not touch")
				}
				f.end(id)
				select {
				case <-landed:
				case <-time.After(5 * time.Second):
					t.Fatal("still waiting after the answer")
				}
			}
		})
	}
}

// Requests begun after the changes were read are not waited for: they
// began after the changes committed.
func TestLandedWaitsOnlyForEarlierRequests(t *testing.T) {
	var f flights
	save := Request{Kind: AskSave, Path: "/f.md"}
	first := f.begin(save)
	landed := make(chan struct{})
	go func() {
		f.landedUpTo(first, "7", []versions.Change{{Path: "/f.md", Origin: "8"}})
		close(landed)
	}()
	f.begin(save) // the next save of the file, still in flight
	f.end(first)
	select {
	case <-landed:
	case <-time.After(5 * time.Second):
		t.Fatal("waited for a request begun after the changes were read")
	}
}
