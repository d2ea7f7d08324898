package mirror

import "github.com/memfs/memfs/versions"

// ownSet holds the feed positions of this mount's own commits, so that a
// change the feed brings back is told from a change made elsewhere exactly,
// whatever else changed the path meanwhile. Memories and directories have
// positions of their own in the feed (versions.Change.Seq).
type ownSet struct {
	mem, dir map[int64]bool
}

func (o *ownSet) add(mem, dir []int64) {
	for _, s := range mem {
		if s > 0 {
			if o.mem == nil {
				o.mem = map[int64]bool{}
			}
			o.mem[s] = true
		}
	}
	for _, s := range dir {
		if s > 0 {
			if o.dir == nil {
				o.dir = map[int64]bool{}
			}
			o.dir[s] = true
		}
	}
}

// take reports whether c is this mount's own, and forgets the positions
// up to it: one store's changes of each kind come in commit order, so a
// position the feed went past will not come.
func (o *ownSet) take(c versions.Change) bool {
	set := o.mem
	if c.MemoryID == "" {
		set = o.dir
	}
	own := set[c.Seq]
	for s := range set {
		if s <= c.Seq {
			delete(set, s)
		}
	}
	return own
}
