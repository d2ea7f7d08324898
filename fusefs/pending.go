package fusefs

import (
	"context"
	"sync"
	"syscall"
	"time"

	"github.com/memfs/memfs/versions"
)

// New files and temporary names. A file created in the mount is final at
// its first close() or fsync(): that save is one transaction, the memory's
// "created" version, and once it returns every other mount, the CLI, the
// HTTP API and the memory tool read it. Only files with a temporary name
// (DefaultTempPatterns) wait, because atomic savers (sed -i, perl -pi,
// Python's tempfile then os.replace, the SDK memory tools, cp then mv, git's
// x.lock) write one, close it and rename it over the target a moment later,
// and editors rename the target to a backup name and write a new file in
// its place. Each of these must be one version of the target, and nothing
// of the temporary file may reach the store's history. So:
//
//   - A file with a temporary name is saved durably at close() but as a
//     pending file (versions.SavePending), not a memory: only this mount
//     shows it. Renamed onto a target it is published there (one
//     "modified" version of the target, its id kept), in the same
//     transaction that drops the pending row; removed first, it leaves
//     nothing; when it outlives the grace it is published where it is (one
//     "created" version). The rows of a mount that died are published by
//     whoever uses the database once its lease lapsed (versions/leases.go).
//   - A stored file renamed to a scratch name (editor backups) is held:
//     this mount stops showing it at its path, and the store keeps it
//     unchanged for the grace period. A file saved at that path meanwhile is
//     a "modified" version of it; otherwise its deletion is committed then.
//   - Files with scratch names (scratch.go) are never stored.

// DefaultTempPatterns are the names atomic savers give the file they
// write before renaming it over the target (path.Match patterns on the
// file's name, as each tool makes them). A file with such a name stays
// pending until it is renamed, removed or outlives the grace; every other
// new file is final at close().
var DefaultTempPatterns = []string{
	"sed??????",   // GNU sed -i: sedAbC123
	"XX??????",    // perl -pi (5.28 and later): XXAbC123
	"tmp????????", // Python's tempfile.mkstemp and NamedTemporaryFile: tmpab_12cd3
	".tmp-*",      // the SDK memory tools: .tmp-<pid>-<uuid>
	"*.tmp",       // cp notes.md notes.md.tmp && mv notes.md.tmp notes.md
	"*.new",       // …the same with .new
	"*.lock",      // git-style locks renamed over their file: index.lock
}

// DefaultGrace is how long a file with a temporary name stays pending, and
// a renamed-away file held, before the store records it.
const DefaultGrace = 500 * time.Millisecond

// publisher times the pending files and held memories of one store mount.
// Its lock is a leaf: it is never held while taking a node's lock or while
// calling the engine.
type publisher struct {
	sm    *storeMount
	grace time.Duration
	mu    sync.Mutex
	files map[*fileNode]*time.Timer
	held  map[string]*heldMemory
	// timers counts the timers set and not yet stopped or run through, so
	// that Unmount can wait for the ones already running.
	timers sync.WaitGroup
	// flushed: the mount is going away, a failed publication is not
	// retried.
	flushed bool
}

// heldMemory is a stored file renamed to a scratch name: the store still
// has it at its path.
type heldMemory struct {
	id, head string
	since    time.Time
	timer    *time.Timer
}

func newPublisher(sm *storeMount, grace time.Duration) *publisher {
	return &publisher{sm: sm, grace: grace, files: map[*fileNode]*time.Timer{}, held: map[string]*heldMemory{}}
}

// publishRetry is how soon a publication the database could not take is
// tried again.
const publishRetry = time.Second

// retry publishes n again later, and reports false when the mount is going
// away (others publish it once its lease ends).
func (p *publisher) retry(n *fileNode) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.flushed {
		return false
	}
	p.scheduleLocked(n, publishRetry)
	return true
}

// schedule publishes n when the grace period ends, unless it is already
// scheduled.
func (p *publisher) schedule(n *fileNode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.scheduleLocked(n, p.grace)
}

func (p *publisher) scheduleLocked(n *fileNode, d time.Duration) {
	if _, ok := p.files[n]; ok || p.flushed {
		// Once the mount is going away its pending files are left to
		// recovery, which publishes them when the mount gives up its
		// lease; a timer now would race flush's wait for the timers.
		return
	}
	p.timers.Add(1)
	p.files[n] = time.AfterFunc(d, func() {
		defer p.timers.Done()
		p.mu.Lock()
		delete(p.files, n)
		p.mu.Unlock()
		n.publish(context.Background())
	})
}

// unschedule stops n's timer: it was published or dropped by other means.
func (p *publisher) unschedule(n *fileNode) {
	p.mu.Lock()
	t, ok := p.files[n]
	if ok && t.Stop() {
		delete(p.files, n)
		p.timers.Done()
	}
	p.mu.Unlock()
}

// hold hides the memory at path in this mount and deletes it from the
// store when the grace period ends, unless a save at path takes it first.
func (p *publisher) hold(at, id, head string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if old, ok := p.held[at]; ok && old.timer.Stop() {
		p.timers.Done()
	}
	h := &heldMemory{id: id, head: head, since: time.Now()}
	p.timers.Add(1)
	h.timer = time.AfterFunc(p.grace, func() {
		defer p.timers.Done()
		p.mu.Lock()
		if p.held[at] != h {
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		ctx := context.Background()
		deleted := p.sm.deleteHeld(ctx, at, h)
		p.mu.Lock()
		if p.held[at] == h {
			delete(p.held, at)
		}
		p.mu.Unlock()
		if !deleted {
			p.sm.reshow(ctx, at)
		}
	})
	p.held[at] = h
}

// take returns the memory held at path and ends the hold, so that a save
// at path becomes a version of it.
func (p *publisher) take(at string) (*heldMemory, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h, ok := p.held[at]
	if !ok || !h.timer.Stop() {
		return nil, false
	}
	p.timers.Done()
	delete(p.held, at)
	return h, true
}

func (p *publisher) isHeld(at string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.held[at]
	return ok
}

// publishNow publishes every pending file now, before a directory is
// removed or moved: the store must know what is in it.
func (p *publisher) publishNow() {
	p.mu.Lock()
	var files []*fileNode
	for n, t := range p.files {
		if t.Stop() {
			files = append(files, n)
			delete(p.files, n)
			p.timers.Done()
		}
	}
	p.mu.Unlock()
	for _, n := range files {
		n.publish(context.Background())
	}
}

// flush publishes every pending file and commits every held deletion now,
// and waits for the timers already running: the mount is going away.
func (p *publisher) flush() {
	p.mu.Lock()
	p.flushed = true
	var files []*fileNode
	for n, t := range p.files {
		if t.Stop() {
			files = append(files, n)
			delete(p.files, n)
			p.timers.Done()
		}
	}
	held := map[string]*heldMemory{}
	for at, h := range p.held {
		if h.timer.Stop() {
			held[at] = h
			delete(p.held, at)
			p.timers.Done()
		}
	}
	p.mu.Unlock()
	ctx := context.Background()
	for _, n := range files {
		n.publish(ctx)
	}
	for at, h := range held {
		if !p.sm.deleteHeld(ctx, at, h) {
			p.sm.reshow(ctx, at)
		}
	}
	p.timers.Wait()
}

// deleteHeld commits the deletion of a memory renamed to a scratch name;
// false when it stays in the store.
func (sm *storeMount) deleteHeld(ctx context.Context, at string, h *heldMemory) bool {
	s := sm.srv
	var seq int64
	err := s.db.DeleteMemory(ctx, sm.id, h.id, versions.MemoryDelete{KeepParentDir: true, Seq: &seq}, s.actor)
	if err != nil && versions.ErrorCode(err) != versions.CodeNotFound {
		s.log.Error("a file renamed to a scratch name could not be deleted from the store; it stays there", "path", at, "err", err)
		return false
	}
	s.contents.forget(h.id)
	sm.meta.forgetFile(h.id)
	if err == nil {
		sm.own.noteSeq(seq)
		sm.count.adjust(-1, 0)
	}
	sm.idx.removed(at)
	return true
}

// reshow makes the kernel look up again a path this mount hid while it
// was held: the kernel keeps the name's absence as long as any name's.
func (sm *storeMount) reshow(ctx context.Context, at string) {
	sm.invalidate(ctx, at, sm.shownAlong(at), nil)
}

// publish makes a pending file a memory at its path once its grace ended.
func (n *fileNode) publish(ctx context.Context) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.unpublished || n.unlinked {
		return
	}
	p, ok := n.path()
	if !ok {
		return
	}
	n.publishLocked(ctx, p, "")
}

// publishLocked publishes the pending file at path: a new memory, or a
// version of the memory already there, based on version base (an atomic
// save: a conflict when the head moved on, ESTALE in strict mode; "" for
// none). One commit drops the row and writes the version.
func (n *fileNode) publishLocked(ctx context.Context, at, base string) (*versions.Memory, syscall.Errno) {
	sm, s := n.sm, n.sm.srv
	// Over a held memory, the publication is a version of it.
	sm.pub.take(at)
	var m *versions.Memory
	var created bool
	var err error
	if base == "" {
		m, created, err = s.db.PublishPending(detach(ctx), sm.id, s.owner(), n.pendID, at)
	} else {
		m, created, err = sm.saveOverPending(ctx, n.pendID, at, base)
	}
	if versions.IsPendingLost(err) {
		n.lostLocked(ctx, at, err)
		return nil, sm.lostErrno("publish", at)
	}
	if isUnavailable(err) && sm.pub.retry(n) {
		// Saved durably already: it is published once the database is back.
		s.opts.Observer.Refused(syscall.EIO)
		s.log.Warn("a file saved in this mount cannot be published yet: the database cannot be reached; it stays pending and is published when it is back", "path", at, "err", err)
		return nil, syscall.EIO
	}
	if err != nil {
		s.log.Error("a file saved in this mount could not be published; it stays pending, and is published by others once this mount's lease ends", "path", at, "err", err)
		return nil, sm.failed("publish", at, err)
	}
	sm.pub.unschedule(n)
	// How long temporary files stay pending tells whether the grace fits
	// the tools (TestMeasureTempGaps).
	s.log.Debug("a temporary file was published", "path", at, "pending_for", time.Since(n.pendAt))
	n.unpublished, n.pendID, n.pendSaved = false, 0, ""
	sm.count.published(created)
	n.memID, n.head = m.ID, m.VersionID
	n.size = int64(m.ContentSize)
	// The memory keeps the number the kernel and programs saw, also in
	// a new node once the kernel forgot this one (an editor compares
	// st_ino before it saves), and in listings.
	sm.ino.renumber(m.ID, n.StableAttr().Ino)
	if n.buf != nil {
		if !n.buf.dirty {
			s.contents.put(m.ID, m.VersionID, string(n.buf.data))
		}
		n.buf.base = m.VersionID
		if n.opens == 0 {
			n.buf = nil
			n.settleLocked()
			n.offerPagesLocked()
		}
	}
	sm.own.noteSeq(m.Seq)
	s.opts.Observer.Saved()
	sm.idx.saved(at, m)
	n.keepMetaLocked()
	n.ForgetPersistent() // a memory now: the kernel may forget it
	return m, 0
}

func (n *fileNode) isUnpublished() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.unpublished && !n.unlinked
}

// unlinkLocal removes a file only this mount shows, and reports false when
// it is no longer one (published meanwhile). Its pending row goes first: a
// removal the database did not take fails rather than come back when the
// mount starts again.
func (n *fileNode) unlinkLocal(ctx context.Context) (bool, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.localLocked() || n.unlinked {
		return false, nil
	}
	if err := n.dropPendingLocked(); err != nil {
		return true, err
	}
	n.unlinkedLocked()
	return true, nil
}

// dropPendingLocked deletes the pending row of a file that loses its name
// before it was published; on failure the file keeps it.
func (n *fileNode) dropPendingLocked() error {
	if n.pendID == 0 {
		return nil
	}
	sm := n.sm
	err := sm.srv.db.DropPending(detach(context.Background()), sm.id, sm.srv.owner(), n.pendID)
	if versions.IsPendingLost(err) {
		// Not this mount's to drop any more: recovery publishes it.
		sm.srv.log.Warn("a removed temporary file saved before the mount's lease lapsed is published by others at its path; this mount does not drop it", "pending", n.pendID, "err", err)
	} else if err != nil {
		return err
	}
	sm.pub.unschedule(n)
	sm.srv.log.Debug("a temporary file was dropped", "pending_for", time.Since(n.pendAt))
	n.pendID = 0
	return nil
}

// forgetPendingLocked is dropPendingLocked for a file whose name is gone
// already: a row left behind is logged, and published by the next mount.
func (n *fileNode) forgetPendingLocked() {
	if err := n.dropPendingLocked(); err != nil {
		n.sm.srv.log.Error("dropping a removed temporary file failed; others publish it once this mount's lease ends", "err", err)
		n.sm.pub.unschedule(n)
		n.pendID = 0
	}
}

// saveOverPending is an atomic save: the pending row id's content saved
// over the memory at path as a version based on base, the row consumed in
// the same commit (versions.Save).
func (sm *storeMount) saveOverPending(ctx context.Context, id int64, at, base string) (*versions.Memory, bool, error) {
	s := sm.srv
	var m versions.Memory
	ch, err := s.db.Save(detach(ctx), versions.SaveReq{StoreID: sm.id, Path: at, By: s.actor, PendingID: id, FromPending: true, Owner: s.owner(),
		BaseVersionID: base, Strict: s.opts.Strict, Memory: &m})
	if err != nil {
		return nil, false, err
	}
	m.Seq, m.Content = ch.Seq, nil
	return &m, ch.Op == versions.ChangeCreated, nil
}
