package mirror

import (
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/memfs/memfs/versions"
)

// index caches a store's directory listings so that lookup and readdir,
// the most frequent requests, are answered without a query. It is exact for
// the mount's own changes, which update it after the engine committed them;
// a change made elsewhere drops the listings it can have changed when the
// watcher reports it: another writer's change is seen after one poll,
// as with the kernel's own caches.
type Index struct {
	mu sync.Mutex
	// dirs maps a directory's path to its listing.
	dirs map[string]*listing
	// sorted caches list's answer per directory until it changes.
	sorted map[string][]versions.Entry
	// clock orders loads against changes: a listing read from the engine
	// is kept only if nothing touched its directory since the read began.
	clock   uint64
	touched map[string]uint64
	reset   uint64
	// doubt names, per listed directory, the entries changed elsewhere
	// since it was listed. Such a listing answers nothing while the engine
	// can be asked; when it cannot, its other entries still do (lastKnown).
	doubt map[string]map[string]bool
}

func NewIndex() *Index {
	return &Index{dirs: map[string]*listing{}, sorted: map[string][]versions.Entry{}, touched: map[string]uint64{},
		doubt: map[string]map[string]bool{}}
}

// Listed says what the index knows of a name.
type Listed int

const (
	Unloaded Listed = iota // the directory is not in the index
	Found
	Absent
)

func (x *Index) Lookup(dir, name string) (versions.Entry, Listed) {
	x.mu.Lock()
	defer x.mu.Unlock()
	d, ok := x.dirs[dir]
	if !ok || len(x.doubt[dir]) > 0 {
		return versions.Entry{}, Unloaded
	}
	e, ok := d.entries[name]
	if !ok {
		return e, Absent
	}
	return e, Found
}

// listing is one directory's entries by name, and how many of them are
// directories: a directory's GETATTR, which follows every create, rename
// and delete in it, reads its link count without walking the entries.
type listing struct {
	entries map[string]versions.Entry
	subdirs int
}

func newListing(capacity int) *listing {
	return &listing{entries: make(map[string]versions.Entry, capacity)}
}

func (l *listing) put(e versions.Entry) {
	l.remove(e.Name)
	l.entries[e.Name] = e
	if e.Dir {
		l.subdirs++
	}
}

func (l *listing) remove(name string) {
	if old, ok := l.entries[name]; ok {
		delete(l.entries, name)
		if old.Dir {
			l.subdirs--
		}
	}
}

// Shown is what the index said of one name.
type Shown struct {
	Entry  versions.Entry
	Listed Listed
}

// Along is what the index says of each name on path p, from the top.
func (x *Index) Along(p string) []Shown {
	if p == "/" || p == "" {
		return nil
	}
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	out := make([]Shown, len(segs))
	dir := "/"
	for i, seg := range segs {
		out[i].Entry, out[i].Listed = x.Lookup(dir, seg)
		dir = path.Join(dir, seg)
	}
	return out
}

// list returns dir's entries sorted by name, or false when not loaded. The
// slice is shared: callers must not change it.
func (x *Index) List(dir string) ([]versions.Entry, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if out, ok := x.sorted[dir]; ok {
		return out, true
	}
	d, ok := x.dirs[dir]
	if !ok || len(x.doubt[dir]) > 0 {
		return nil, false
	}
	out := make([]versions.Entry, 0, len(d.entries))
	for _, e := range d.entries {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b versions.Entry) int { return strings.Compare(a.Name, b.Name) })
	x.sorted[dir] = out
	return out, true
}

// Subdirs counts dir's subdirectories (its link count is 2 plus them), or
// false when not loaded.
func (x *Index) Subdirs(dir string) (int, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	d, ok := x.dirs[dir]
	if !ok || len(x.doubt[dir]) > 0 {
		return 0, false
	}
	return d.subdirs, true
}

// lastKnown is what dir's listing said of name, doubted or not, unless
// name itself changed elsewhere since (Unloaded then): the answer when the
// engine cannot be reached.
func (x *Index) LastKnown(dir, name string) (versions.Entry, Listed) {
	x.mu.Lock()
	defer x.mu.Unlock()
	d, ok := x.dirs[dir]
	if !ok || x.doubt[dir][name] {
		return versions.Entry{}, Unloaded
	}
	e, ok := d.entries[name]
	if !ok {
		return e, Absent
	}
	return e, Found
}

// now is the clock before an engine read whose result is to be kept.
func (x *Index) Now() uint64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.clock
}

// fresh reports whether nothing touched dir since the clock read at.
func (x *Index) freshLocked(dir string, at uint64) bool {
	return x.reset <= at && x.touched[dir] <= at
}

func (x *Index) touchLocked(dir string) {
	x.clock++
	x.touched[dir] = x.clock
	delete(x.sorted, dir)
}

// load keeps a listing read from the engine since the clock read at.
func (x *Index) Load(dir string, entries []versions.Entry, at uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.freshLocked(dir, at) {
		return
	}
	d := newListing(len(entries))
	for _, e := range entries {
		e.Memory = bare(e.Memory)
		d.put(e)
	}
	x.dirs[dir] = d
	delete(x.doubt, dir)
	delete(x.sorted, dir)
}

// saved records a memory this mount created or changed at p.
func (x *Index) Saved(p string, m *versions.Memory) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.addDirsLocked(path.Dir(p))
	x.setLocked(p, versions.Entry{Name: path.Base(p), Path: p, Memory: bare(m)})
}

// madeDir records a directory this mount made.
func (x *Index) MadeDir(p string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.addDirsLocked(p)
	x.dirs[p] = newListing(0)
	delete(x.doubt, p)
	x.touchLocked(p)
}

// removed records that this mount deleted the file or empty directory at p;
// its parent stays (the engine keeps it).
func (x *Index) Removed(p string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	dir := path.Dir(p)
	x.deleteLocked(dir, path.Base(p))
	x.touchLocked(dir)
	delete(x.dirs, p)
	delete(x.doubt, p)
	x.touchLocked(p)
}

// renamedFile records a file this mount moved: m is the memory now at to.
// The source's directory stays (the engine keeps it).
func (x *Index) RenamedFile(from, to string, m *versions.Memory) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.deleteLocked(path.Dir(from), path.Base(from))
	x.touchLocked(path.Dir(from))
	x.addDirsLocked(path.Dir(to))
	x.setLocked(to, versions.Entry{Name: path.Base(to), Path: to, Memory: bare(m)})
}

// Resaved records a save made elsewhere of memory m at p, whose name and
// identity stay, and reports whether the listing of p's directory held
// it at an earlier version (else the caller forgets p): only what it says
// of the content changes. A save older than what the listing holds (read
// after it committed, or this mount's own, answered before the feed
// brought the other) is not put back.
func (x *Index) Resaved(p string, m *versions.Memory) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	dir, name := path.Dir(p), path.Base(p)
	d, ok := x.dirs[dir]
	if !ok || x.doubt[dir][name] {
		return false
	}
	e, ok := d.entries[name]
	if !ok || e.Memory == nil || e.Memory.ID != m.ID || e.Memory.Seq == 0 || m.Seq <= e.Memory.Seq {
		return false
	}
	now := *e.Memory
	now.VersionID, now.ContentSize, now.UpdatedAt, now.Seq = m.VersionID, m.ContentSize, m.UpdatedAt, m.Seq
	e.Memory = &now
	x.setLocked(p, e)
	return true
}

// forget drops the listings a change made elsewhere at p can have changed:
// p's own, should it be a directory, and its ancestors', where names appear,
// vanish or change size (directories are implied by the memories below
// them). An ancestor's listing stays, with the name on the way to p
// doubted, for when the engine cannot be reached. What a change moved
// below p has changes of its own (versions.Change).
func (x *Index) Forget(p string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if p == "/" {
		x.dropLocked()
		return
	}
	delete(x.dirs, p)
	delete(x.doubt, p)
	x.touchLocked(p)
	for child := p; child != "/"; child = path.Dir(child) {
		d := path.Dir(child)
		if _, ok := x.dirs[d]; ok {
			if x.doubt[d] == nil {
				x.doubt[d] = map[string]bool{}
			}
			x.doubt[d][path.Base(child)] = true
		}
		x.touchLocked(d)
	}
}

// drop forgets everything, after an error that shows the index wrong in a
// way not worth working out.
func (x *Index) Drop() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.dropLocked()
}

func (x *Index) dropLocked() {
	x.clock++
	x.reset = x.clock
	clear(x.dirs)
	clear(x.sorted)
	clear(x.touched)
	clear(x.doubt)
}

// setLocked and deleteLocked apply this mount's own change to a listing:
// it is exact for that name again, changed elsewhere before or not (a
// change committed after it reaches forget later).
func (x *Index) setLocked(p string, e versions.Entry) {
	dir := path.Dir(p)
	if d, ok := x.dirs[dir]; ok {
		d.put(e)
		x.believeLocked(dir, e.Name)
	}
	x.touchLocked(dir)
}

func (x *Index) deleteLocked(dir, name string) {
	if d, ok := x.dirs[dir]; ok {
		d.remove(name)
		x.believeLocked(dir, name)
	}
}

func (x *Index) believeLocked(dir, name string) {
	if doubt := x.doubt[dir]; doubt != nil {
		delete(doubt, name)
		if len(doubt) == 0 {
			delete(x.doubt, dir)
		}
	}
}

// addDirsLocked makes sure dir and its ancestors are listed in their
// parents (a save creates the directories of its path).
func (x *Index) addDirsLocked(dir string) {
	for dir != "/" {
		parent := path.Dir(dir)
		if d, ok := x.dirs[parent]; ok {
			name := path.Base(dir)
			if e, ok := d.entries[name]; ok && e.Dir && !x.doubt[parent][name] {
				return
			}
			d.put(versions.Entry{Name: name, Path: dir, Dir: true})
			x.believeLocked(parent, name)
		}
		x.touchLocked(parent)
		dir = parent
	}
}

// bare is what the mount uses of a memory's attributes (identity, head,
// size, time): the index holds thousands, and not their content.
func bare(m *versions.Memory) *versions.Memory {
	if m == nil {
		return nil
	}
	return &versions.Memory{ID: m.ID, VersionID: m.VersionID, ContentSize: m.ContentSize, UpdatedAt: m.UpdatedAt, Ino: m.Ino, Seq: m.Seq}
}
