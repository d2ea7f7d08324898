package mirror

import (
	"path"
	"sync"
	"time"
)

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
	// Siblings are the heads of the memories beside a file created with a
	// temporary name, as they were then: an atomic save's base when the
	// renaming process opened nothing.
	Siblings map[string]string

	Buf     []byte
	Loaded  bool   // Buf holds the content
	Base    string // the version Buf started from
	Dirty   bool   // Buf differs from what the store has
	Stored  string // while loaded: the content at Base
	Size    int64  // when no buffer is loaded
	handles map[HandleID]*Handle
}

// Handle is one open file description: what the open and its writes did.
type Handle struct {
	ID     HandleID
	File   ID
	Tgid   int
	Write  bool
	Append bool
	// Wrote: data was written through it since its last save.
	Wrote bool
	// Truncated: it emptied the file (O_TRUNC, ftruncate) and wrote
	// nothing since. Its flush saves nothing yet: a shell's `> f` closes a
	// duplicate of the descriptor before the write that follows.
	Truncated bool
}

// Options are a store mount's names and limits.
type Options struct {
	Temp    func(name string) bool // atomic savers' temporary names
	Scratch func(name string) bool // editors' scratch names
	Grace   time.Duration          // how long StateTemporary and StateHeld last
	Strict  bool                   // a save over a newer head fails (ESTALE)
	// FirstIno is the first inode number allocated.
	FirstIno uint64
}

// Mirror is one store as this mount shows it. Apply is the only way its
// state changes; its lock is a leaf, never held while the plan is carried
// out.
type Mirror struct {
	mu     sync.Mutex
	o      Options
	files  map[ID]*File
	byPath map[string]ID
	hs     map[HandleID]*Handle
	// held are the memories renamed to scratch names, by the path the
	// store keeps them at.
	held map[string]*hold
	// memIno and dirIno are the inode numbers handed out: a memory's and
	// a directory's stay theirs while the mount runs.
	memIno  map[string]uint64
	dirIno  map[string]uint64
	opened  *LastOpened
	own     ownSet
	store   StoreInfo
	nextID  ID
	nextH   HandleID
	nextIno uint64
	// moves records each change of state, checked against the table by
	// the tests (Moves).
	moves []Transition
}

type hold struct {
	memID, head string
	file        ID // the scratch file that holds it, 0 once removed
}

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
	if o.FirstIno == 0 {
		o.FirstIno = 2
	}
	return &Mirror{o: o, files: map[ID]*File{}, byPath: map[string]ID{}, hs: map[HandleID]*Handle{},
		held: map[string]*hold{}, memIno: map[string]uint64{}, dirIno: map[string]uint64{},
		opened: NewLastOpened(64, 256), nextIno: o.FirstIno}
}

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
	id, ok := m.byPath[p]
	return id, ok
}

// IsHeld reports whether the store's memory at p is held: the mount hides it.
func (m *Mirror) IsHeld(p string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.held[p]
	return ok
}

// DirIno is the inode number of the directory at p.
func (m *Mirror) DirIno(p string) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ino, ok := m.dirIno[p]; ok {
		return ino
	}
	ino := m.allocIno()
	m.dirIno[p] = ino
	return ino
}

// Moves returns the changes of state so far.
func (m *Mirror) Moves() []Transition {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Transition(nil), m.moves...)
}

func (m *Mirror) allocIno() uint64 {
	ino := m.nextIno
	m.nextIno++
	return ino
}

// memoryIno is the number of memory id, allocated on first sight.
func (m *Mirror) memoryIno(id string) uint64 {
	if ino, ok := m.memIno[id]; ok {
		return ino
	}
	ino := m.allocIno()
	m.memIno[id] = ino
	return ino
}

func (m *Mirror) newFile(p string, s State) *File {
	m.nextID++
	f := &File{ID: m.nextID, Path: p, State: s, handles: map[HandleID]*Handle{}}
	m.files[f.ID] = f
	if p != "" {
		m.byPath[p] = f.ID
	}
	return f
}

// move changes f's state and records it.
func (m *Mirror) move(f *File, to State, event string) {
	m.moves = append(m.moves, Transition{From: f.State, To: to, Event: event})
	if to == gone {
		m.drop(f)
		return
	}
	f.State = to
}

// drop takes f out of the mirror.
func (m *Mirror) drop(f *File) {
	if f.Path != "" && m.byPath[f.Path] == f.ID {
		delete(m.byPath, f.Path)
	}
	for h := range f.handles {
		delete(m.hs, h)
	}
	delete(m.files, f.ID)
	f.State = gone
}

// setPath moves f to p, replacing nothing (the caller dealt with what was
// there).
func (m *Mirror) setPath(f *File, p string) {
	if f.Path != "" && m.byPath[f.Path] == f.ID {
		delete(m.byPath, f.Path)
	}
	f.Path = p
	if p != "" {
		m.byPath[p] = f.ID
	}
}

func (m *Mirror) isTemp(p string) bool    { return m.o.Temp(path.Base(p)) }
func (m *Mirror) isScratch(p string) bool { return m.o.Scratch(path.Base(p)) }

// siblings are the heads of the memories the mirror knows in p's
// directory.
func (m *Mirror) siblings(p string) map[string]string {
	dir := path.Dir(p)
	out := map[string]string{}
	for q, id := range m.byPath {
		if f := m.files[id]; f != nil && f.State == StateMemory && path.Dir(q) == dir {
			out[path.Base(q)] = f.Head
		}
	}
	return out
}
