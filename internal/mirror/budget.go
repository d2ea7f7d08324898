package mirror

import (
	"fmt"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Shared is what a mount's stores share: the inode numbers handed out
// (inos.go), the budget of unsaved bytes, the cap on scratch files and the
// cache of versions' content kept between opens.
type Shared struct {
	Inos       *Inos
	Budget     *Budget
	ScratchCap *Cap
	Contents   *Contents
}

// NewShared bounds a mount's unsaved bytes and scratch files (0:
// unbounded).
func NewShared(maxUnsaved, maxScratch int64) *Shared {
	if maxUnsaved <= 0 {
		maxUnsaved = 1 << 62
	}
	if maxScratch <= 0 {
		maxScratch = 1 << 62
	}
	return &Shared{Inos: NewInos(), Budget: &Budget{Max: maxUnsaved}, ScratchCap: &Cap{Max: maxScratch}, Contents: NewContents()}
}

// Budget bounds the bytes of content a mount holds that is not a saved
// version: the content loaded for open files, what writes and truncates
// add, files unlinked while open, scratch files and held backups (their
// buffer is their only copy). It takes no lock; a mount's stores share it.
type Budget struct {
	Max  int64
	used atomic.Int64
	// full is set by a refusal and cleared once bytes are given back, so
	// that a burst of refused writes is logged once.
	full atomic.Bool
}

func (b *Budget) take(n int64) bool {
	if n <= 0 {
		return true
	}
	for {
		u := b.used.Load()
		if u+n > b.Max {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

func (b *Budget) reason() string {
	return fmt.Sprintf("the mount holds at most %d bytes of unsaved data (the content of open files, files deleted while open, scratch files); close open files or remove scratch files, then try again", b.Max)
}

// Cap bounds the scratch and held files of a mount (shared by its stores).
type Cap struct {
	Max int64
	n   atomic.Int64
}

// grow reserves what taking f's buffer to size bytes adds to its charge.
func (m *Mirror) grow(f *File, size int64) (syscall.Errno, string) {
	if b := m.o.Budget; !b.take(size - f.Charged) {
		if !b.full.CompareAndSwap(false, true) {
			return syscall.ENOSPC, "" // refused in this burst already: not logged again
		}
		return syscall.ENOSPC, b.reason()
	}
	f.Charged = max(f.Charged, size)
	return 0, ""
}

// settle makes f's charge what its buffer holds: it gives back what the
// buffer no longer holds, and takes, even past the budget, what a buffer
// put back (restoreDue, a Temporary file's row) holds again.
func (m *Mirror) settle(f *File) {
	size := int64(len(f.Buf))
	if !f.Loaded {
		size = 0
	}
	if size == f.Charged {
		return
	}
	m.o.Budget.used.Add(size - f.Charged)
	if size < f.Charged {
		m.o.Budget.full.Store(false)
	}
	f.Charged = size
}

// scratchRoom refuses one more scratch file once the mount holds its cap.
func (m *Mirror) scratchRoom() (syscall.Errno, string) {
	if m.o.ScratchCap.n.Load() < m.o.ScratchCap.Max {
		return 0, ""
	}
	return syscall.ENOSPC, fmt.Sprintf("the mount holds at most %d scratch files (editors' swap, lock and backup files, kept only in the daemon's memory): remove some, then try again", m.o.ScratchCap.Max)
}

// dirMeta is what chmod and utimensat set on a directory, and when its
// entries last changed.
type dirMeta struct {
	mode                uint32
	atime, mtime, ctime time.Time
}

// DirAttr is directory p's mode and times: those set or moved there, else
// a 0755 directory as old as the mount.
func (m *Mirror) DirAttr(p string) (mode uint32, atime, mtime, ctime time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.dirMeta(p)
	return d.mode, d.atime, d.mtime, d.ctime
}

func (m *Mirror) dirMeta(p string) dirMeta {
	if d, ok := m.dirs[p]; ok {
		return d
	}
	return dirMeta{mode: 0o755, atime: m.o.Start, mtime: m.o.Start, ctime: m.o.Start}
}

// entriesChanged moves the mtime and ctime of directories whose entries
// changed (POSIX: creating, removing or renaming a name in them).
func (m *Mirror) entriesChanged(dirs ...string) {
	now := m.o.Now()
	for _, p := range dirs {
		d := m.dirMeta(p)
		d.mtime, d.ctime = now, now
		m.dirs[p] = d
	}
}

// Below reports whether p is below directory dir.
func Below(p, dir string) bool {
	if dir == "/" {
		return p != "/"
	}
	return strings.HasPrefix(p, dir+"/")
}

// moved is q with prefix from replaced by to, when q is from or below it.
func moved(q, from, to string) (string, bool) {
	if q == from {
		return to, true
	}
	if Below(q, from) {
		return path.Join(to, strings.TrimPrefix(q, from)), true
	}
	return q, false
}

// serial orders the engine calls of one file: a request holds its file's
// lock from its first Apply until its plan is carried out. It is not the
// mirror's lock, which is a leaf.
type serial struct {
	mu    sync.Mutex
	locks map[ID]*fileLock
}

type fileLock struct {
	sync.Mutex
	n int
}

// Lock takes file id's lock (0: none) and returns its unlock.
func (m *Mirror) Lock(id ID) func() {
	unlock, _ := m.lockFile(id, false)
	return unlock
}

// lockFile takes file id's lock, or with try only if it is free (ok
// false: not taken), and returns its unlock.
func (m *Mirror) lockFile(id ID, try bool) (unlock func(), ok bool) {
	if id == 0 {
		return func() {}, true
	}
	s := &m.serial
	s.mu.Lock()
	if s.locks == nil {
		s.locks = map[ID]*fileLock{}
	}
	l := s.locks[id]
	if l == nil {
		l = &fileLock{}
		s.locks[id] = l
	}
	l.n++
	s.mu.Unlock()
	forget := func() {
		s.mu.Lock()
		if l.n--; l.n == 0 {
			delete(s.locks, id)
		}
		s.mu.Unlock()
	}
	if !try {
		l.Lock()
	} else if !l.TryLock() {
		forget()
		return nil, false
	}
	return func() {
		l.Unlock()
		forget()
	}, true
}
