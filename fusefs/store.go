package fusefs

import (
	"context"
	"hash/fnv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/memfs/memfs/versions"
)

// storeMount is one attached store: its directory in the mount root, the
// cached store row (limits, archived) and what the mount must remember
// between requests.
type storeMount struct {
	srv      *Server
	id       string
	slug     string
	readOnly bool             // a read_only attachment
	seq      versions.FeedPos // the change feed's position this mount has applied (watcher only)
	top      *dirNode
	idx      *index

	mu      sync.Mutex
	store   versions.Store
	live    int  // memories in the store, valid when liveOK
	liveOK  bool // false after changes from elsewhere: recount before relying on it
	pending int  // files created in the mount and not saved yet
	// own counts this mount's recent changes per path, so the watcher
	// does not invalidate what the kernel already knows (watch.go).
	own map[string]ownMark
	// gen tells apart the kernel identities of a directory path ("d"+path)
	// or a memory ("m"+id) from those of nodes that left it: a directory
	// moved away keeps its inode number, a file replaced by a rename keeps
	// standing for the destination memory. New lookups must not reuse them.
	gen map[string]uint64
	// meta is the mode and times set on files and directories (meta.go).
	meta *metaTable
	// pub publishes pending files and holds renamed-away ones (pending.go).
	pub     *publisher
	scratch scratchNames
}

type ownMark struct {
	n    int
	when time.Time
}

func newStoreMount(s *Server, a versions.Attachment, st *versions.Store, seq versions.FeedPos) *storeMount {
	sm := &storeMount{srv: s, id: a.StoreID, seq: seq, slug: a.Slug, readOnly: a.Access == versions.ReadOnly,
		store: *st, own: map[string]ownMark{}, gen: map[string]uint64{}, meta: newMetaTable(s.started)}
	if sm.slug == "" {
		sm.slug = strings.TrimPrefix(a.MountPath, "/mnt/memory/")
	}
	sm.top = &dirNode{sm: sm}
	sm.pub = newPublisher(sm, s.opts.Grace)
	sm.scratch = scratchNames(s.opts.ScratchPatterns)
	sm.idx = newIndex()
	return sm
}

// writable is 0 when the store may be changed through this mount, EROFS
// for a read_only attachment or an archived store.
func (sm *storeMount) writable(op, path string) syscall.Errno {
	if sm.readOnly {
		return sm.srv.refuse(op, path, syscall.EROFS, "the store is attached read_only to this session")
	}
	sm.mu.Lock()
	archived := sm.store.ArchivedAt != nil
	sm.mu.Unlock()
	if archived {
		return sm.srv.refuse(op, path, syscall.EROFS, "the store is archived: archived stores are read-only")
	}
	return 0
}

func (sm *storeMount) limits() (maxMemories, maxBytes int) {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	maxMemories, maxBytes = sm.store.MaxMemories, sm.store.MaxMemoryBytes
	if maxMemories <= 0 {
		maxMemories = versions.DefaultMaxMemories
	}
	if maxBytes <= 0 {
		maxBytes = versions.DefaultMaxMemoryBytes
	}
	return
}

// setStore replaces the cached store row (the watcher refreshes it).
func (sm *storeMount) setStore(st *versions.Store) {
	sm.mu.Lock()
	sm.store = *st
	sm.mu.Unlock()
}

// markArchived records an archive noticed through a refused write.
func (sm *storeMount) markArchived() {
	sm.mu.Lock()
	if sm.store.ArchivedAt == nil {
		now := time.Now()
		sm.store.ArchivedAt = &now
	}
	sm.mu.Unlock()
}

// liveCount returns how many memories the store holds, reading the
// engine's count again when changes from elsewhere made ours unreliable.
func (sm *storeMount) liveCount(ctx context.Context) (int, error) {
	sm.mu.Lock()
	if sm.liveOK {
		n := sm.live
		sm.mu.Unlock()
		return n, nil
	}
	sm.mu.Unlock()
	st, err := sm.srv.db.GetStore(detach(ctx), sm.id)
	if err != nil {
		return 0, err
	}
	sm.setStore(st)
	sm.mu.Lock()
	sm.live, sm.liveOK = st.MemoryCount, true
	sm.mu.Unlock()
	return st.MemoryCount, nil
}

// reserveCreate admits one more pending file unless the store is full
// (creating fails with ENOSPC, existing memories stay editable). The
// engine has the last word when the file is saved.
func (sm *storeMount) reserveCreate(ctx context.Context, path string) syscall.Errno {
	n, err := sm.liveCount(ctx)
	if err != nil {
		return sm.srv.errnoOf("create", path, err)
	}
	maxMemories, _ := sm.limits()
	sm.mu.Lock()
	defer sm.mu.Unlock()
	if n+sm.pending >= maxMemories {
		return sm.srv.refuse("create", path, syscall.ENOSPC, "the store holds its maximum of memories; delete some first")
	}
	sm.pending++
	return 0
}

// hasPending reports files created in the mount and not saved yet.
func (sm *storeMount) hasPending() bool {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	return sm.pending > 0
}

// adjust records own creates (+1), deletes (-1) and pending files ending.
func (sm *storeMount) adjust(live, pending int) {
	sm.mu.Lock()
	sm.live += live
	sm.pending += pending
	sm.mu.Unlock()
}

// noteOwn remembers that this mount changed paths, so the watcher skips
// the matching entries of the change feed.
func (sm *storeMount) noteOwn(paths ...string) {
	now := time.Now()
	sm.mu.Lock()
	for _, p := range paths {
		m := sm.own[p]
		sm.own[p] = ownMark{n: m.n + 1, when: now}
	}
	sm.mu.Unlock()
}

// takeOwn consumes one own mark for path.
func (sm *storeMount) takeOwn(path string) bool {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	m, ok := sm.own[path]
	if !ok {
		return false
	}
	if m.n <= 1 {
		delete(sm.own, path)
	} else {
		sm.own[path] = ownMark{n: m.n - 1, when: m.when}
	}
	return true
}

// expireOwn forgets marks the feed never matched (an operation that logged
// fewer changes than expected), so they cannot hide a later foreign change.
func (sm *storeMount) expireOwn(olderThan time.Duration) {
	cut := time.Now().Add(-olderThan)
	sm.mu.Lock()
	for p, m := range sm.own {
		if m.when.Before(cut) {
			delete(sm.own, p)
		}
	}
	sm.mu.Unlock()
}

// dirIno is a directory's inode number: stable for a path, with the top
// bit set so it never equals a memory's Ino.
func (sm *storeMount) dirIno(path string) uint64 {
	sm.mu.Lock()
	gen := sm.gen["d"+path]
	sm.mu.Unlock()
	h := fnv.New64a()
	h.Write([]byte(sm.id))
	h.Write([]byte{0})
	h.Write([]byte(path))
	if gen > 0 {
		h.Write([]byte{0, byte(gen), byte(gen >> 8), byte(gen >> 16), byte(gen >> 24)})
	}
	return h.Sum64() | 1<<63
}

// bumpDirGen gives the next directory at path a new inode number, because a
// node that keeps the old one now lives elsewhere or is gone.
func (sm *storeMount) bumpDirGen(path string) {
	sm.mu.Lock()
	sm.gen["d"+path]++
	sm.mu.Unlock()
}

// memGen is the generation of a memory's kernel identity (StableAttr.Gen).
func (sm *storeMount) memGen(id string) uint64 {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	return sm.gen["m"+id]
}

// bumpMemGen makes the next lookup of memory id a new inode, because the
// node that had it was replaced by a rename onto its path.
func (sm *storeMount) bumpMemGen(id string) {
	sm.mu.Lock()
	sm.gen["m"+id]++
	sm.mu.Unlock()
}

// childPath joins a directory path and a name.
func childPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// detach keeps a request's values but not its cancellation for engine
// calls. The kernel interrupts a request whenever the calling thread gets a
// signal (Go programs get SIGURG for preemption all the time), and a save
// cancelled while committing would report failure for a version that was
// written.
func detach(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }
