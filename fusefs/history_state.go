package fusefs

import (
	"container/list"
	"hash/fnv"
	"sync"
	"syscall"

	"github.com/memfs/memfs/internal/mirror"
)

// What the history tree holds in the daemon is bounded per mount, however
// many entries an agent opens and holds open:
//
//   - historyMaxOpen open files and directories of the tree at once; an
//     open past it fails with ENFILE (and is logged as a refusal);
//   - historyCacheBytes of versions' content, shared by every handle: an
//     open handle holds no content of its own, and reads take it from one
//     copy per version, read again from the engine once it has been let go.
//
// Held, 3,000 handles on one 100 KiB entry cost one copy and the handles'
// bookkeeping; 10,000 cost 4,096 handles and 5,904 ENFILEs.
const (
	historyMaxOpen    = 4096
	historyCacheBytes = 16 << 20
)

// historyState is what one mount's history tree keeps: its open handles
// and the shared copies of versions' content, least recently used first
// out. Its lock is a leaf.
type historyState struct {
	mu    sync.Mutex
	open  int
	bytes int
	lru   list.List // of *historyContent, most recently used first
	byID  map[string]*list.Element
}

// historyContent is one version's content as the tree shows it (empty when
// redacted, a deletion or withheld).
type historyContent struct {
	id   string
	data []byte
}

func newHistoryState() *historyState {
	return &historyState{byID: map[string]*list.Element{}}
}

// acquire counts an open handle; false: the mount holds historyMaxOpen.
func (st *historyState) acquire() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.open >= historyMaxOpen {
		return false
	}
	st.open++
	return true
}

func (st *historyState) release() {
	st.mu.Lock()
	st.open--
	st.mu.Unlock()
}

// get is the shared copy of version id's content, nil when none is held.
func (st *historyState) get(id string) *historyContent {
	st.mu.Lock()
	defer st.mu.Unlock()
	if el := st.byID[id]; el != nil {
		st.lru.MoveToFront(el)
		return el.Value.(*historyContent)
	}
	return nil
}

// put keeps c as the shared copy of version id's content, letting go of
// the least recently used ones past historyCacheBytes, and returns the
// copy to read from (one put by another reader in the meantime wins). A
// content larger than the whole budget is read from c and not kept.
func (st *historyState) put(id string, c *historyContent) *historyContent {
	c.id = id
	st.mu.Lock()
	defer st.mu.Unlock()
	if el := st.byID[id]; el != nil {
		st.lru.MoveToFront(el)
		return el.Value.(*historyContent)
	}
	if len(c.data) > historyCacheBytes {
		return c
	}
	st.byID[id] = st.lru.PushFront(c)
	st.bytes += len(c.data)
	for st.bytes > historyCacheBytes {
		st.removeLocked(st.lru.Back())
	}
	return c
}

// drop lets go of version id's copy: it may have been redacted.
func (st *historyState) drop(id string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if el := st.byID[id]; el != nil {
		st.removeLocked(el)
	}
}

func (st *historyState) removeLocked(el *list.Element) {
	c := st.lru.Remove(el).(*historyContent)
	delete(st.byID, c.id)
	st.bytes -= len(c.data)
}

// tooManyHistoryHandles is the refusal of an open past historyMaxOpen.
func (s *Server) tooManyHistoryHandles(op, path string) syscall.Errno {
	return s.refuse(op, path, syscall.ENFILE, "the mount holds 4096 open files and directories of the history tree, its limit: close some and try again")
}

// historyDirIno is the number of a directory of the history tree; store
// "" is the tree's top (internal/mirror/inos.go has the mount's layout).
func historyDirIno(store, path string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(".history\x00"))
	h.Write([]byte(store))
	h.Write([]byte{0})
	h.Write([]byte(path))
	return h.Sum64() | mirror.DirInoBit
}

// historyEntryIno is the number of a version's file in the history tree:
// the numbers of files created in the mount count up from 1 and never
// reach 2^61.
func historyEntryIno(versionID string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(versionID))
	return mirror.LocalInoBit | mirror.LowMemoryInoBit | h.Sum64()&(mirror.LowMemoryInoBit-1)
}
