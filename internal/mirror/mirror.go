package mirror

import (
	"path"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/memfs/memfs/versions"
)

// fileModeBits are the mode bits a file keeps of a create or chmod: the
// permissions only. With no setuid or setgid bit (and no security
// attribute) a file has no privileges for a write to clear, which the
// mount tells the kernel it does itself (internal/fusemount).
const fileModeBits = 0o777

// State is what a file name of the mount is (the table in doc.go).
type State uint8

const (
	// Memory: a memory the store has, at the file's path.
	StateMemory State = iota + 1
	// New: created in this mount, nothing saved yet.
	StateNew
	// Temporary: a temporary name (an atomic saver's), saved as a pending
	// row only this mount shows.
	StateTemporary
	// Scratch: an editor's swap or backup name, never stored.
	StateScratch
	// Held: a memory renamed to a scratch name; the store keeps it at its
	// old path until the grace ends or a save there takes it.
	StateHeld
	// Unlinked: removed or replaced while open; its handles still read it.
	StateUnlinked
	// gone is no state: the file left the mirror. It names the end of a
	// transition in the table.
	gone
)

var stateNames = [...]string{StateMemory: "memory", StateNew: "new", StateTemporary: "temporary", StateScratch: "scratch", StateHeld: "held", StateUnlinked: "unlinked", gone: "gone"}

func (s State) String() string {
	if int(s) < len(stateNames) && stateNames[s] != "" {
		return stateNames[s]
	}
	return "none"
}

// ID names a file in the mirror for its life; HandleID an open file
// description.
type (
	ID       uint64
	HandleID uint64
)

// File is one file of the mount: everything the kernel's node and handles
// would otherwise keep.
type File struct {
	ID    ID
	Ino   uint64
	Path  string // "" once unlinked
	State State
	MemID string // StateMemory and StateHeld: the memory; "" otherwise
	Head  string // the memory's head version, as last learnt
	// Pending is a Temporary file's row (0 before its first save).
	Pending int64
	// HeldAt is a Held file's old path, where the store still has it.
	HeldAt string
	// Siblings are, for a file created with a temporary name, the heads
	// the memories beside it had then, kept as each changes afterwards
	// (headChanging; a name not in it is unchanged since): an atomic
	// save's base when the renaming process opened nothing.
	Siblings map[string]string

	Buf      []byte
	Loaded   bool   // Buf holds the content
	Base     string // the version Buf started from
	Dirty    bool   // Buf differs from what the store has
	Stored   string // while loaded: the content at Base
	StoredAt string // the version Stored is the content of
	Size     int64  // when no buffer is loaded
	// Stale: the buffer is clean and another writer saved since; the
	// next open loads it again (never under a reader in the middle of its
	// reads, so a reader sees one save or another, not a mix).
	Stale bool
	// Saved is what a Temporary file's pending row holds, or what a Due
	// file's close confirmed: the content it goes back to when a later
	// save fails and is discarded.
	Saved string
	// Due: a New file with a temporary name was closed; its pending row
	// is written when Options.Settle ends, unless a rename saves it (in
	// one commit, with no row) or an unlink drops it first.
	Due bool
	// Refused is sticky: a write was refused (past the size of a memory,
	// not UTF-8, the guard, the quota, the backend offline, the mount's
	// unsaved budget) and every save of this content fails so until it is
	// written again from its start.
	Refused syscall.Errno
	// Charged is what the buffer holds of the mount's unsaved budget.
	Charged int64

	// Mode and times, kept in the mount's memory only (chmod, utimensat).
	Mode                uint32
	Atime, Mtime, Ctime time.Time
	// KernelSize is the size the kernel may believe: the last reported
	// to it, grown by writes; -1 when it must not be trusted.
	KernelSize int64
	// PagesSync: the kernel's page cache of the inode holds nothing but
	// the file's content, so an open may keep it.
	PagesSync bool

	handles map[HandleID]*Handle
}

// Open reports whether a handle of the file is open.
func (f *File) Open() bool { return len(f.handles) > 0 }

// Attr is what the kernel is told of a file.
type Attr struct {
	Ino                 uint64
	Mode                uint32
	Size                int64
	Nlink               uint32
	Atime, Mtime, Ctime time.Time
}

// Handle is one open file description: what the open and its writes did.
type Handle struct {
	ID     HandleID
	File   ID
	Write  bool
	Append bool
	// Wrote: data was written through it since its last save.
	Wrote bool
	// Truncated: it emptied the file (O_TRUNC, ftruncate) and wrote
	// nothing since. Its flush saves nothing yet: a shell's `> f` closes a
	// duplicate of the descriptor before the write that follows.
	Truncated bool
	// Users are the threads that opened it for writing or wrote through
	// it: a flush from another process (a forked child dropping its
	// inherited copy) saves nothing.
	Users map[uint32]bool
}

// Options are a store mount's names and limits.
type Options struct {
	Temp    func(name string) bool // atomic savers' temporary names
	Scratch func(name string) bool // editors' scratch names
	Grace   time.Duration          // how long StateTemporary and StateHeld last
	Strict  bool                   // a save over a newer head fails (ESTALE)
	// Settle is how long a closed new file with a temporary name waits
	// for its rename before its pending row is written (0: at close). A
	// daemon killed meanwhile loses it, as an atomic save cut short.
	Settle time.Duration
	// Attach is the session's attachment of the store: read_only, or
	// writable only below its write prefix (Writable).
	Attach versions.Attachment
	// Shared is what the mount's stores share (nil: the mirror's own,
	// unbounded).
	*Shared
	// Now is the clock of the files' times.
	Now func() time.Time
	// Start is the time of directories nothing has changed since.
	Start time.Time
	// OnMove, when set, is told of each change of a file's state, under
	// the mirror's lock (the transition table's test).
	OnMove func(Transition)
}

// Mirror is one store as this mount shows it. Apply is the only way its
// state changes; its lock is a leaf, never held while the plan is carried
// out.
type Mirror struct {
	mu sync.Mutex
	// origin names this mirror's writes in the feed (versions.WithOrigin):
	// a change of that origin is its own.
	origin versions.Origin
	// inflight are the engine requests being carried out (flights.go).
	inflight flights
	o        Options
	files    map[ID]*File
	names    pathNames
	hs       map[HandleID]*Handle
	// held are the memories renamed to scratch names, by the path the
	// store keeps them at.
	held map[string]*hold
	// memIno and dirIno are the inode numbers handed out: a memory's and
	// a directory's stay theirs while the mount runs. memIno holds only
	// the memories whose number is not their own (keepIno).
	memIno map[string]uint64
	dirIno map[string]uint64
	opened *LastOpened
	// row is the store's row as the mount knows it (store.go); gone:
	// the store was deleted.
	row    versions.Store
	gone   atomic.Bool // read by every lookup, without the mirror's lock
	nextID ID
	nextH  HandleID
	idx    *Index
	// local are the files only this mount has (new, temporary, scratch,
	// held): what listings add, what a directory's removal or move must
	// know of.
	local map[ID]*File
	dirs  map[string]dirMeta
	// liveOK: row.MemoryCount is the store's count of memories as far as
	// the mount knows (changes from elsewhere make it count again).
	liveOK bool
	going  bool // the mount is going away: no timer is set any more
	tried  map[ID]bool
	serial serial
}

type hold struct {
	memID, head string
	file        ID // the scratch file that holds it, 0 once removed
}

// Origin is what this mirror's writes are to record as their origin
// (Engine.Origin).
func (m *Mirror) Origin() versions.Origin { return m.origin }

// Transition is one change of state: from, the event that caused it, to.
type Transition struct {
	From, To State
	Event    string
}

// New returns an empty mirror.
func New(o Options) *Mirror {
	if o.Temp == nil {
		o.Temp = func(string) bool { return false }
	}
	if o.Scratch == nil {
		o.Scratch = func(string) bool { return false }
	}
	if o.Shared == nil {
		o.Shared = NewShared(0, 0)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Start.IsZero() {
		o.Start = o.Now()
	}
	return &Mirror{origin: versions.NewOrigin(), o: o, files: map[ID]*File{}, names: pathNames{}, hs: map[HandleID]*Handle{},
		held: map[string]*hold{}, memIno: map[string]uint64{}, dirIno: map[string]uint64{},
		opened: NewLastOpened(256, 1024), idx: NewIndex(), local: map[ID]*File{}, dirs: map[string]dirMeta{}}
}

// Index is the store's listings as the mount knows them.
func (m *Mirror) Index() *Index { return m.idx }

// File returns a copy of the file's record, for the kernel's attributes
// and the tests.
func (m *Mirror) File(id ID) (File, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[id]
	if !ok {
		return File{}, false
	}
	c := *f
	c.Buf = append([]byte(nil), f.Buf...)
	c.handles = nil
	return c, true
}

// At returns the id of the file shown at p.
func (m *Mirror) At(p string) (ID, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.names[p]
	return id, ok
}

// IsHeld reports whether the store's memory at p is held: the mount hides it.
func (m *Mirror) IsHeld(p string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.held[p]
	return ok
}

// DirIno is the inode number of the directory at p: allocated on first
// sight, kept by the directory while it stays there; a directory moved
// away takes its number along, so the next one at p gets a new one.
func (m *Mirror) DirIno(p string) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dirInoLocked(p)
}

func (m *Mirror) dirInoLocked(p string) uint64 {
	if ino, ok := m.dirIno[p]; ok {
		return ino
	}
	ino := m.o.Inos.dir()
	m.dirIno[p] = ino
	return ino
}

// ListEntry is a name a directory's listing shows, with its inode number.
type ListEntry struct {
	Name string
	Dir  bool
	Ino  uint64
}

// Local is what the mount shows in a directory beside the store's
// entries: its own files (new, temporary, scratch, held backups), and the
// store's names it hides (held at, or shadowed by a scratch file). It is
// taken before the store's listing is read: a file published in between is
// then in one or the other, never neither.
type Local struct {
	dir    string
	files  []ListEntry
	hidden map[string]bool
}

func (m *Mirror) Local(dir string) Local {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := Local{dir: dir, hidden: map[string]bool{}}
	for p := range m.held {
		if path.Dir(p) == dir {
			l.hidden[path.Base(p)] = true
		}
	}
	for _, f := range m.local {
		if f.Path == "" || path.Dir(f.Path) != dir {
			continue
		}
		l.files = append(l.files, ListEntry{Name: path.Base(f.Path), Ino: f.Ino})
		l.hidden[path.Base(f.Path)] = true
	}
	return l
}

// Listing is the directory's listing: the store's entries, as local
// shows them, then the mount's own files.
func (m *Mirror) Listing(local Local, entries []versions.Entry) []ListEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]ListEntry, 0, len(entries)+len(local.files))
	for _, e := range entries {
		switch {
		case local.hidden[e.Name]:
		case e.Dir:
			out = append(out, ListEntry{Name: e.Name, Dir: true, Ino: m.dirInoLocked(e.Path)})
		case e.Memory != nil:
			out = append(out, ListEntry{Name: e.Name, Ino: m.memoryIno(e.Memory)})
		}
	}
	return append(out, local.files...)
}

func (m *Mirror) scratchUnder(dir string) bool {
	for _, f := range m.local {
		if (f.State == StateScratch || f.State == StateHeld) && Below(f.Path, dir) {
			return true
		}
	}
	return false
}

// pendingLocked is how many files created in the mount are not memories
// yet.
func (m *Mirror) pendingLocked() int {
	n := 0
	for _, f := range m.local {
		if f.State == StateNew || f.State == StateTemporary {
			n++
		}
	}
	return n
}

// memoryIno is the number of memory mem, kept while the mount runs.
func (m *Mirror) memoryIno(mem *versions.Memory) uint64 {
	if ino, ok := m.memIno[mem.ID]; ok {
		return ino
	}
	return ownIno(mem)
}

// keepIno makes ino mem's inode number while the mount runs. Only a
// number other than the memory's own (a file created in this mount) is
// kept: the rest follow from the memory.
func (m *Mirror) keepIno(mem *versions.Memory, ino uint64) {
	if ino == ownIno(mem) {
		delete(m.memIno, mem.ID)
		return
	}
	m.memIno[mem.ID] = ino
}

func (m *Mirror) newFile(p string, s State) *File {
	m.nextID++
	now := m.o.Now()
	f := &File{ID: m.nextID, Path: p, State: s, Mode: 0o644, Atime: now, Mtime: now, Ctime: now, KernelSize: -1}
	m.files[f.ID] = f
	m.names.set(p, f.ID)
	return f
}

// move changes f's state and records it. Scratch and held files count
// against the mount's cap, and a file that leaves the mirror gives back
// its budget.
func (m *Mirror) move(f *File, to State, event string) {
	if m.o.OnMove != nil {
		m.o.OnMove(Transition{From: f.State, To: to, Event: event})
	}
	scratch := func(s State) bool { return s == StateScratch || s == StateHeld }
	switch {
	case scratch(to) && !scratch(f.State):
		m.o.ScratchCap.n.Add(1)
	case !scratch(to) && scratch(f.State):
		m.o.ScratchCap.n.Add(-1)
	}
	if to == StateNew || to == StateTemporary || to == StateScratch || to == StateHeld {
		m.local[f.ID] = f
	} else {
		delete(m.local, f.ID)
	}
	if to == gone {
		m.drop(f)
		return
	}
	if to != StateNew {
		f.Due = false
	}
	f.State = to
}

// drop takes f out of the mirror.
func (m *Mirror) drop(f *File) {
	m.names.remove(f.Path, f.ID)
	for h := range f.handles {
		delete(m.hs, h)
	}
	delete(m.files, f.ID)
	f.State = gone
	f.Buf, f.Loaded = nil, false
	m.settle(f)
}

// setPath moves f to p, replacing nothing (the caller dealt with what was
// there).
func (m *Mirror) setPath(f *File, p string) {
	m.names.remove(f.Path, f.ID)
	f.Path = p
	m.names.set(p, f.ID)
}

func (m *Mirror) isTemp(p string) bool    { return m.o.Temp(path.Base(p)) }
func (m *Mirror) isScratch(p string) bool { return m.o.Scratch(path.Base(p)) }

// headChanging keeps f's head, about to change or leave its name, for the
// temporary files beside it that have no record of that name yet: an
// atomic save whose renaming process opened nothing is based on the
// target's head when its temporary file was created (File.Siblings).
func (m *Mirror) headChanging(f *File) {
	if f.Path == "" || f.State != StateMemory {
		return
	}
	dir, name := path.Dir(f.Path), path.Base(f.Path)
	for _, t := range m.local {
		if t != f && t.Siblings != nil && path.Dir(t.Path) == dir {
			if _, ok := t.Siblings[name]; !ok {
				t.Siblings[name] = f.Head
			}
		}
	}
}
