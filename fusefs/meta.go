package fusefs

import (
	"strings"
	"sync"
	"time"
)

// The store keeps a memory's path and content; POSIX lets a program set
// more: permission bits, access and modification times. A mount keeps these
// in memory for as long as it runs, so that every inode the kernel gets for
// a file or directory shows what chmod, utimensat or a change of entries
// made of it; none of it is stored, and a remount starts from the defaults
// (0644 files, 0755 directories, a file's mtime the created_at of its head
// version).

// attrs is what a mount remembers of one file or directory.
type attrs struct {
	mode                uint32
	atime, mtime, ctime time.Time
	// head is the version a file's times belong to: after another save
	// (here or elsewhere) the file shows that version's created_at again.
	head string
}

// metaTable holds the attrs of memories (by id) and directories (by path).
type metaTable struct {
	mu    sync.Mutex
	files map[string]attrs
	dirs  map[string]attrs
	// start is when the mount began: the time of directories nothing has
	// changed since.
	start time.Time
}

func newMetaTable(start time.Time) *metaTable {
	return &metaTable{files: map[string]attrs{}, dirs: map[string]attrs{}, start: start}
}

// file returns what was set on memory id while its head was head.
func (t *metaTable) file(id, head string) (attrs, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a, ok := t.files[id]
	if !ok {
		return attrs{}, false
	}
	if a.head != head {
		a.atime, a.mtime, a.ctime = time.Time{}, time.Time{}, time.Time{}
	}
	return a, true
}

func (t *metaTable) setFile(id string, a attrs) {
	if id == "" {
		return
	}
	t.mu.Lock()
	t.files[id] = a
	t.mu.Unlock()
}

func (t *metaTable) forgetFile(id string) {
	t.mu.Lock()
	delete(t.files, id)
	t.mu.Unlock()
}

// dir returns a directory's attrs: those set or moved here, else a 0755
// directory as old as the mount.
func (t *metaTable) dir(p string) attrs {
	t.mu.Lock()
	defer t.mu.Unlock()
	if a, ok := t.dirs[p]; ok {
		return a
	}
	return attrs{mode: 0o755, atime: t.start, mtime: t.start, ctime: t.start}
}

func (t *metaTable) setDir(p string, a attrs) {
	t.mu.Lock()
	t.dirs[p] = a
	t.mu.Unlock()
}

// entriesChanged moves the mtime and ctime of the directories whose entries
// changed (POSIX: creating, removing or renaming a name in a directory).
func (t *metaTable) entriesChanged(dirs ...string) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range dirs {
		a, ok := t.dirs[p]
		if !ok {
			a = attrs{mode: 0o755, atime: t.start}
		}
		a.mtime, a.ctime = now, now
		t.dirs[p] = a
	}
}

// movedDir carries what was set on a directory and its subdirectories to
// their new paths.
func (t *metaTable) movedDir(from, to string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	moved := map[string]attrs{}
	for p, a := range t.dirs {
		if p == from || strings.HasPrefix(p, from+"/") {
			delete(t.dirs, p)
			moved[to+strings.TrimPrefix(p, from)] = a
		}
	}
	for p, a := range moved {
		t.dirs[p] = a
	}
}

// removedDir forgets a directory that is gone.
func (t *metaTable) removedDir(p string) {
	t.mu.Lock()
	delete(t.dirs, p)
	t.mu.Unlock()
}
