package fusefs

import (
	"context"
	"github.com/memfs/memfs/internal/mirror"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/memfs/memfs/versions"
)

// storeMount is one attached store: its directory in the mount root and
// what the mount must remember about it between requests. Each part keeps
// its own lock (see doc.go for the order); storeMount's own methods only
// combine them with the engine.
type storeMount struct {
	srv      *Server
	id       string
	slug     string
	readOnly bool // a read_only attachment
	// attach is the session's attachment: its write prefix, if any, is
	// the only folder writable through this mount.
	attach versions.Attachment
	seq    versions.FeedPos // the change feed's position this mount has applied (watcher only)
	top    *dirNode
	idx    *index

	row   storeRow     // the cached store row: limits, archived
	count memoryCounts // memories in the store and files pending here
	// own counts this mount's recent changes per path, so the watcher
	// does not invalidate what the kernel already knows (watch.go).
	own ownChanges
	// ino numbers the store's directories and tells apart the kernel
	// identities of a path or memory from those of nodes that left it
	// (ino.go).
	ino inodes
	// meta is the mode and times set on files and directories (meta.go).
	meta *metaTable
	// pub publishes pending files and holds renamed-away ones (pending.go).
	pub     *publisher
	scratch namePatterns
	temp    namePatterns // temporary names, pending until renamed (pending.go)
	// scratchFiles are the scratch files the mount holds (scratch.go).
	scratchFiles *scratchFiles
	// history is the store's directory in the history tree, nil when the
	// mount shows none (history.go); set before the mount serves.
	history *historyDir
	// opened is the version of each memory each process last opened: an
	// atomic save's base (rename.go).
	opened *mirror.LastOpened
}

func newStoreMount(s *Server, a versions.Attachment, st *versions.Store, seq versions.FeedPos) *storeMount {
	sm := &storeMount{srv: s, id: a.StoreID, seq: seq, slug: a.Slug, readOnly: a.Access == versions.ReadOnly, attach: a,
		row: storeRow{st: *st}, ino: inodes{store: a.StoreID, gen: map[string]uint64{}}, meta: newMetaTable(s.started)}
	if sm.slug == "" {
		sm.slug = strings.TrimPrefix(a.MountPath, "/mnt/memory/")
	}
	sm.top = &dirNode{sm: sm}
	sm.opened = mirror.NewLastOpened(256, 1024)
	sm.pub = newPublisher(sm, s.opts.Grace)
	sm.scratch = namePatterns(s.opts.ScratchPatterns)
	sm.temp = namePatterns(s.opts.TempPatterns)
	sm.scratchFiles = newScratchFiles(s.scratchCap)
	sm.idx = newIndex()
	return sm
}

// writable is 0 when the store may be changed through this mount, EROFS
// for a read_only attachment or an archived store.
func (sm *storeMount) writable(op, path string) syscall.Errno {
	if sm.row.isGone() {
		return sm.refuseGone(op, path)
	}
	if sm.readOnly {
		return sm.refuse(op, path, syscall.EROFS, "the store is attached read_only to this session")
	}
	if !sm.attach.Writable(path) && !(op == "mkdir" && sm.attach.OnWritePath(path)) {
		return sm.refuse(op, path, syscall.EROFS, "only "+sm.attach.WritePrefix+" is writable to this session: the rest of the store is read-only")
	}
	if sm.row.archived() {
		return sm.refuse(op, path, syscall.EROFS, "the store is archived: archived stores are read-only")
	}
	return 0
}

// refuseGone is the ENOENT of any request in a store deleted elsewhere.
func (sm *storeMount) refuseGone(op, path string) syscall.Errno {
	return sm.refuse(op, path, syscall.ENOENT, "the store was deleted: nothing of it can be read or written any more; import it again to bring it back")
}

// liveCount returns how many memories the store holds, reading the
// engine's count again when changes from elsewhere made ours unreliable.
func (sm *storeMount) liveCount(ctx context.Context) (int, error) {
	if n, ok := sm.count.liveKnown(); ok {
		return n, nil
	}
	st, err := sm.srv.db.GetStore(detach(ctx), sm.id)
	if err != nil {
		return 0, err
	}
	sm.row.set(st)
	sm.count.setLive(st.MemoryCount)
	return st.MemoryCount, nil
}

// reserveCreate admits one more pending file unless the store is full
// (creating fails with ENOSPC, existing memories stay editable). The
// engine has the last word when the file is saved.
func (sm *storeMount) reserveCreate(ctx context.Context, path string) syscall.Errno {
	n, err := sm.liveCount(ctx)
	if err != nil {
		return sm.errnoOf("create", path, err)
	}
	maxMemories, _ := sm.row.limits()
	if !sm.count.reserve(n, maxMemories) {
		return sm.refuse("create", path, syscall.ENOSPC, "the store holds its maximum of memories; delete some first")
	}
	return 0
}

// storeRow is the store row as the mount last read it. Its lock is a leaf.
type storeRow struct {
	mu sync.Mutex
	st versions.Store
	// gone: the store was deleted. Nothing the mount or the kernel cached
	// of it may be served (a store deleted and imported again comes back
	// through set).
	gone bool
}

func (r *storeRow) isGone() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gone
}

// markGone records that the watcher found the store deleted.
func (r *storeRow) markGone() {
	r.mu.Lock()
	r.gone = true
	r.mu.Unlock()
}

func (r *storeRow) archived() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st.ArchivedAt != nil
}

func (r *storeRow) limits() (maxMemories, maxBytes int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	maxMemories, maxBytes = r.st.MaxMemories, r.st.MaxMemoryBytes
	if maxMemories <= 0 {
		maxMemories = versions.DefaultMaxMemories
	}
	if maxBytes <= 0 {
		maxBytes = versions.DefaultMaxMemoryBytes
	}
	return
}

// addHistory counts n more bytes of retained history (a save seen by the
// mount), so that writes past the quota are refused before their close.
func (r *storeRow) addHistory(n int) {
	r.mu.Lock()
	r.st.HistoryBytes += n
	r.mu.Unlock()
}

// overQuota records a save refused for the history quota.
func (r *storeRow) overQuota() {
	r.mu.Lock()
	r.st.HistoryBytes = max(r.st.HistoryBytes, r.st.MaxHistoryBytes)
	r.mu.Unlock()
}

// refusals is what a write is checked against before its close (refuse.go).
func (r *storeRow) refusals() mirror.StoreInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	return mirror.StoreInfo{Guard: r.st.Guard, MaxHistoryBytes: r.st.MaxHistoryBytes, HistoryBytes: r.st.HistoryBytes}
}

// set replaces the cached row (the watcher refreshes it).
func (r *storeRow) set(st *versions.Store) {
	r.mu.Lock()
	r.st = *st
	r.gone = false
	r.mu.Unlock()
}

// markArchived records an archive noticed through a refused write.
func (r *storeRow) markArchived() {
	r.mu.Lock()
	if r.st.ArchivedAt == nil {
		now := time.Now()
		r.st.ArchivedAt = &now
	}
	r.mu.Unlock()
}

// memoryCounts is how many memories the store holds, as far as this mount
// knows, and how many files created here are not memories yet: together
// they decide whether a create fits the store's limit. Its lock is a leaf.
type memoryCounts struct {
	mu      sync.Mutex
	live    int  // memories in the store, valid when liveOK
	liveOK  bool // false after changes from elsewhere: recount before relying on it
	pending int  // files created in the mount and not published yet
}

// liveKnown is the live count, unless it must be read again.
func (c *memoryCounts) liveKnown() (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.live, c.liveOK
}

// setLive takes the count from the store row just read.
func (c *memoryCounts) setLive(n int) {
	c.mu.Lock()
	c.live, c.liveOK = n, true
	c.mu.Unlock()
}

// stale makes the next liveCount read the engine's count: the store
// changed elsewhere.
func (c *memoryCounts) stale() {
	c.mu.Lock()
	c.liveOK = false
	c.mu.Unlock()
}

// reserve counts one more pending file unless live memories and pending
// files already reach maxMemories.
func (c *memoryCounts) reserve(live, maxMemories int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if live+c.pending >= maxMemories {
		return false
	}
	c.pending++
	return true
}

// pendingFiles is how many files created in the mount are not memories yet.
func (c *memoryCounts) pendingFiles() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pending
}

// adjust records own creates (+1), deletes (-1) and pending files ending.
func (c *memoryCounts) adjust(live, pending int) {
	c.mu.Lock()
	c.live += live
	c.pending += pending
	c.mu.Unlock()
}

// published records that a pending file became a new memory (created) or
// a version of one, as the engine reported it: no need to read the
// store's count again for the next create.
func (c *memoryCounts) published(created bool) {
	c.mu.Lock()
	c.pending--
	if created {
		c.live++
	}
	c.mu.Unlock()
}

// ownChanges remembers this mount's own changes by the feed positions
// their commits returned, so the watcher skips them in the change feed,
// exactly whatever else changed the path meanwhile: a memory's
// (Memory.Seq, Memory.ReplacedSeq, MemoryDelete.Seq) and a directory's
// (versions.WithPositions). Memories and directories have positions of
// their own. Its lock is a leaf.
type ownChanges struct {
	mu   sync.Mutex
	seqs map[int64]bool
	dirs map[int64]bool
}

// noteSeq records the feed positions of memory changes this mount
// committed; 0 (unknown) is ignored.
func (o *ownChanges) noteSeq(seqs ...int64) {
	o.mu.Lock()
	o.seqs = addSeqs(o.seqs, seqs)
	o.mu.Unlock()
}

// noteDirSeq records the feed positions of directory changes this mount
// committed.
func (o *ownChanges) noteDirSeq(seqs ...int64) {
	o.mu.Lock()
	o.dirs = addSeqs(o.dirs, seqs)
	o.mu.Unlock()
}

func addSeqs(set map[int64]bool, seqs []int64) map[int64]bool {
	for _, s := range seqs {
		if s > 0 {
			if set == nil {
				set = map[int64]bool{}
			}
			set[s] = true
		}
	}
	return set
}

// takeSeq reports whether the memory change at feed position seq is this
// mount's own, and forgets it.
func (o *ownChanges) takeSeq(seq int64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.seqs[seq] {
		return false
	}
	delete(o.seqs, seq)
	return true
}

// takeDirSeq is takeSeq for a directory change.
func (o *ownChanges) takeDirSeq(seq int64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.dirs[seq] {
		return false
	}
	delete(o.dirs, seq)
	return true
}

// passed forgets the positions up to mem and dir that the feed went past
// without them (a commit noted after the watcher had read its change): one
// store's changes of each kind come in commit order.
func (o *ownChanges) passed(mem, dir int64) {
	o.mu.Lock()
	for s := range o.seqs {
		if s <= mem {
			delete(o.seqs, s)
		}
	}
	for s := range o.dirs {
		if s <= dir {
			delete(o.dirs, s)
		}
	}
	o.mu.Unlock()
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
