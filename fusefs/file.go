package fusefs

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/memfs/memfs/guard"
	"github.com/memfs/memfs/versions"
)

// fileNode is a memory as the kernel sees it. While any handle is open its
// content lives in one buffer shared by all handles, so readers in the
// mount see unsaved writes; the buffer becomes a version on flush/fsync
// and is dropped when the last handle is released.
type fileNode struct {
	fs.Inode
	sm *storeMount

	mu      sync.Mutex
	memID   string // "" while pending or after the node was replaced
	head    string // the memory's head version, as last learnt
	pending bool   // created in the mount, not saved yet
	// unpublished: saved as the pending file pendID, not a memory yet
	// (pending.go); its buffer is kept until it is published.
	unpublished bool
	pendID      int64
	pendAt      time.Time // when the pending row was first written
	// pendSaved is what the pending row holds: the content an unpublished
	// file goes back to when a later save fails and is discarded.
	pendSaved string
	// scratch: never stored, its buffer is its only copy (scratch.go).
	scratch  bool
	unlinked bool   // Nlink 0: deleted, or replaced by a rename onto its path
	mode     uint32 // permission bits; kept in memory only (meta.go)
	size     int64  // content size when no buffer is loaded
	// kernelSize is the size the kernel may believe: the last one reported
	// to it, grown by writes (the kernel grows it itself).
	kernelSize int64
	// pagesSync: the kernel's page cache of the inode holds nothing but
	// the node's content (the buffer, else the head version), so an open
	// may keep it (FOPEN_KEEP_CACHE). Writes through the kernel keep it so;
	// a change of content it did not see (another writer's save, a
	// refused save dropped) ends it, and the next open drops the pages.
	pagesSync           bool
	atime, mtime, ctime time.Time
	buf                 *buffer
	opens               int
	// charged is what the buffer holds of the mount's unsaved budget
	// (budget.go).
	charged int64
	// siblings: for a file created with a temporary name, the heads of
	// the memories beside it then. Renamed over one of them, the save is
	// based on that head when the renaming process opened none (rename.go).
	siblings map[string]string
	// renameBase is the base of the save a rename over a memory makes of
	// a file never saved (saveAtLocked).
	renameBase string
}

// buffer is the content of an open file.
type buffer struct {
	data  []byte
	base  string // the head version the content started from
	dirty bool   // written since the last save
	stale bool   // clean, and another writer saved since: the next open reloads it
	// overLimit: a write or truncate went past the per-memory size. Every
	// save fails with EFBIG until the content starts over (truncated to
	// nothing), so that no prefix of an oversized save becomes the head.
	overLimit bool
	// notText: a write was refused as not UTF-8. Every save fails with
	// EILSEQ until the content starts over, as for overLimit: what was
	// written around the refused bytes is not a version either.
	notText bool
	// refused: a write was refused as its save would be (the guard, the
	// history quota, the backend offline: refuse.go); every save fails
	// with this errno until the content starts over, as for overLimit.
	refused syscall.Errno
	// truncOnly: the change since the last save is an O_TRUNC or a
	// truncation to nothing, with no write since. A close saves nothing
	// yet (a shell's `> f` closes a duplicate of the descriptor before the
	// write that follows); the write's close, or the last release, saves.
	truncOnly bool
}

// handle is one open file description. Handles are used by one request at
// a time per file (the node's lock), which guards these fields.
type handle struct {
	wrote  bool // this handle changed the content: its flush saves
	append bool
	users  map[uint32]bool // threads that opened or wrote through it (owner.go)
}

func newFileNode(sm *storeMount, m *versions.Memory) *fileNode {
	n := &fileNode{sm: sm, memID: m.ID, head: m.VersionID, mode: 0o644, size: int64(m.ContentSize)}
	n.atime, n.mtime, n.ctime = m.UpdatedAt, m.UpdatedAt, m.UpdatedAt
	if a, ok := sm.meta.file(m.ID, m.VersionID); ok {
		n.mode = a.mode
		if !a.mtime.IsZero() {
			n.atime, n.mtime, n.ctime = a.atime, a.mtime, a.ctime
		}
	}
	return n
}

// keepMetaLocked records the node's mode and times for the next inode of
// its memory.
func (n *fileNode) keepMetaLocked() {
	n.sm.meta.setFile(n.memID, attrs{mode: n.mode, atime: n.atime, mtime: n.mtime, ctime: n.ctime, head: n.head})
}

// modifiedLocked is a change of content: mtime and ctime move.
func (n *fileNode) modifiedLocked() {
	now := time.Now()
	n.mtime, n.ctime = now, now
}

// newPendingFile is a file made by create(2): it is saved as a new memory
// by the first flush of its creating handle.
func newPendingFile(ctx context.Context, sm *storeMount, mode, flags uint32, scratch bool) (*fileNode, *handle) {
	now := time.Now()
	f := &fileNode{sm: sm, pending: !scratch, scratch: scratch, mode: mode, atime: now, mtime: now, ctime: now, buf: &buffer{}, opens: 1, pagesSync: true}
	h := &handle{wrote: true, append: flags&syscall.O_APPEND != 0}
	h.noteUser(ctx)
	return f, h
}

func (n *fileNode) memoryID() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.memID
}

// pendingLive reports a file that only this mount shows and that still has
// its name: created and not saved yet, saved but not published, or scratch.
func (n *fileNode) pendingLive() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.localLocked() && !n.unlinked
}

// nameState is the state of a file name (the table in doc.go). A held
// backup is a scratch node; the publisher holds its memory by the path it
// left (pending.go).
type nameState uint8

const (
	stateMemory    nameState = iota // a memory
	stateNew                        // created here, no save yet
	stateTemporary                  // a temporary name, saved as a pending row
	stateScratch                    // never stored
	stateUnlinked                   // removed or replaced while open
)

func (n *fileNode) stateLocked() nameState {
	switch {
	case n.unlinked:
		return stateUnlinked
	case n.scratch:
		return stateScratch
	case n.unpublished:
		return stateTemporary
	case n.pending:
		return stateNew
	default:
		return stateMemory
	}
}

// localLocked: only this mount has the file (new, temporary or scratch).
func (n *fileNode) localLocked() bool {
	switch n.stateLocked() {
	case stateNew, stateTemporary, stateScratch:
		return true
	}
	return false
}

func (n *fileNode) path() (string, bool) { return n.sm.pathOf(&n.Inode) }

// markUnlinked records that the node lost its name: its content stays
// readable through open handles but is never saved again.
func (n *fileNode) markUnlinked() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.unlinkedLocked()
}

func (n *fileNode) unlinkedLocked() {
	if n.pending || n.unpublished {
		n.pending, n.unpublished, n.pendSaved = false, false, ""
		n.sm.count.adjust(0, -1)
	}
	n.forgetPendingLocked()
	n.sm.scratchFiles.drop(n)
	n.ForgetPersistent()
	n.unlinked = true
	n.pagesSync = false
	n.memID = ""
	if n.opens == 0 {
		// No handle can reach the content any more.
		n.buf = nil
		n.settleLocked()
	}
}

// refresh takes the memory's attributes from the engine; a loaded buffer
// that is clean is reloaded on next use when the content changed.
func (n *fileNode) refresh(m *versions.Memory, foreign bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.buf != nil && n.buf.dirty {
		return
	}
	if foreign || n.head != m.VersionID {
		n.pagesSync = false
	}
	n.head = m.VersionID
	if n.buf != nil && n.buf.base != m.VersionID {
		n.buf.stale = true
	}
	if n.buf == nil || foreign {
		n.size = int64(m.ContentSize)
		if a, ok := n.sm.meta.file(m.ID, m.VersionID); ok && !a.mtime.IsZero() {
			n.atime, n.mtime, n.ctime = a.atime, a.mtime, a.ctime
		} else if foreign || n.mtime.Before(m.UpdatedAt) {
			n.atime, n.mtime, n.ctime = m.UpdatedAt, m.UpdatedAt, m.UpdatedAt
		}
	}
}

// offerPagesLocked gives the kernel the head's content as the file's
// pages once the last handle is closed, so that the next open of the
// unchanged file reads nothing from the daemon: a write of less than a page
// leaves the kernel's page incomplete, to be read again. It runs after the
// request (storePages), and only while the pages hold the node's content.
func (n *fileNode) offerPagesLocked() {
	if n.opens > 0 || !n.pagesSync || n.memID == "" || n.localLocked() || n.unlinked {
		return
	}
	id, head := n.memID, n.head
	n.sm.srv.notes.async(func() { n.storePages(id, head) })
}

// storePages stores version head of memory id in the kernel's page cache
// (FUSE_NOTIFY_STORE) if it is still the node's content and no handle is
// open. It holds the file's lock while the kernel stores: with no handle
// open no read or write can hold the pages while it waits for that lock
// (doc.go).
func (n *fileNode) storePages(id, head string) {
	data, ok := n.sm.srv.contents.get(id, head)
	if !ok || data == "" {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.opens > 0 || n.buf != nil || !n.pagesSync || n.unlinked || n.memID != id || n.head != head || n.kernelSize != int64(len(data)) {
		return
	}
	n.WriteCache(0, []byte(data))
}

// forgetPages records that the kernel's pages may hold another content.
func (n *fileNode) forgetPages() {
	n.mu.Lock()
	n.pagesSync = false
	n.mu.Unlock()
}

func (n *fileNode) fillAttr(a *fuse.Attr) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.fillAttrLocked(a)
}

func (n *fileNode) fillAttrLocked(a *fuse.Attr) {
	size := n.size
	if n.buf != nil {
		size = int64(len(n.buf.data))
	}
	n.kernelSize = size
	a.Ino = n.StableAttr().Ino
	a.Mode = syscall.S_IFREG | n.mode
	a.Size = uint64(size)
	a.Nlink = 1
	if n.unlinked {
		a.Nlink = 0
	}
	a.Uid, a.Gid = n.sm.srv.opts.UID, n.sm.srv.opts.GID
	a.SetTimes(&n.atime, &n.mtime, &n.ctime)
}

func (n *fileNode) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	n.fillAttr(&out.Attr)
	return 0
}

// loadLocked makes sure a buffer is loaded. A stale one is reloaded only
// when a handle opens (reload), never under a reader in the middle of its
// reads, so a reader sees one save or another, not a mix.
func (n *fileNode) loadLocked(ctx context.Context, reload bool) syscall.Errno {
	if n.buf != nil && !(reload && n.buf.stale) {
		return 0
	}
	if n.localLocked() || n.memID == "" {
		if n.buf == nil {
			n.buf = &buffer{}
			n.pagesSync = false
		}
		n.buf.stale = false
		return 0
	}
	if n.sm.row.isGone() {
		p, _ := n.path()
		return n.sm.refuseGone("open", p)
	}
	contents := n.sm.srv.contents
	content, ok := contents.get(n.memID, n.head)
	if !ok {
		m, err := n.sm.srv.db.GetMemory(detach(ctx), n.sm.id, n.memID)
		if err != nil {
			p, _ := n.path()
			return n.sm.errnoOf("open", p, err)
		}
		if m.Content != nil {
			content = *m.Content
		}
		if m.VersionID != n.head {
			n.pagesSync = false
		}
		n.head = m.VersionID
		contents.put(m.ID, m.VersionID, content)
	}
	// A loaded buffer is held for the mount as much as written bytes are
	// (budget.go): open files are what grows the daemon.
	if int64(len(content)) > n.charged {
		p, _ := n.path()
		if e := n.growLocked("open", p, int64(len(content))); e != 0 {
			return e
		}
	}
	if n.buf == nil {
		n.buf = &buffer{}
	}
	n.buf.data, n.buf.base, n.buf.stale = []byte(content), n.head, false
	n.size = int64(len(content))
	n.settleLocked()
	return 0
}

func (n *fileNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY || flags&syscall.O_TRUNC != 0 {
		p, _ := n.path()
		if e := n.sm.writable("open", p); e != 0 {
			return nil, 0, e
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if e := n.loadLocked(ctx, true); e != 0 {
		return nil, 0, e
	}
	var fuseFlags uint32
	switch {
	case flags&syscall.O_TRUNC != 0:
		n.kernelSize = 0
		n.pagesSync = true // an open without FOPEN_KEEP_CACHE drops them
	case int64(len(n.buf.data)) != n.kernelSize:
		// Another writer's save changed the size before our notification
		// reached the kernel: read past the size it believes, and make it
		// forget that size (not from inside this request).
		fuseFlags = fuse.FOPEN_DIRECT_IO
		n.pagesSync = false
		n.sm.srv.notifyContent(&n.Inode)
	case n.pagesSync:
		fuseFlags = fuse.FOPEN_KEEP_CACHE
	default:
		n.pagesSync = true
	}
	if flags&syscall.O_ACCMODE == syscall.O_RDONLY {
		// Its close has nothing to save: no FLUSH request.
		fuseFlags |= fuse.FOPEN_NOFLUSH
	}
	n.opens++
	if n.memID != "" && !n.localLocked() {
		// By path: the rename that ends an atomic save names the target
		// by path, and the kernel may have a new node for it by then.
		if p, ok := n.path(); ok {
			n.sm.opened.Note(int(callerTID(ctx)), p, n.buf.base)
		}
	}
	h := &handle{append: flags&syscall.O_APPEND != 0}
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		h.noteUser(ctx) // only a handle that can write ever saves
	}
	if flags&syscall.O_TRUNC != 0 {
		n.buf.overLimit, n.buf.notText, n.buf.refused = false, false, 0
		if len(n.buf.data) > 0 {
			n.buf.data = n.buf.data[:0]
			n.buf.dirty = true
			n.buf.truncOnly = true
			n.modifiedLocked()
		}
		n.settleLocked()
	}
	return h, fuseFlags, 0
}

func (n *fileNode) Read(ctx context.Context, f fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if e := n.loadLocked(ctx, false); e != 0 {
		return nil, e
	}
	data := n.buf.data
	if off >= int64(len(data)) {
		return fuse.ReadResultData(nil), 0
	}
	k := copy(dest, data[off:])
	return fuse.ReadResultData(dest[:k]), 0
}

// Write changes the shared buffer. A write that would take the content past
// the store's per-memory size fails with EFBIG, writes nothing, and makes
// every later save of this content fail too: nothing of an oversized save
// is kept, the previous version stays the head.
func (n *fileNode) Write(ctx context.Context, f fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	h, _ := f.(*handle)
	n.mu.Lock()
	defer n.mu.Unlock()
	if e := n.loadLocked(ctx, false); e != 0 {
		return 0, e
	}
	if h != nil && h.append {
		off = int64(len(n.buf.data))
	}
	if len(data) == 0 {
		return 0, 0
	}
	_, maxBytes := n.sm.row.limits()
	if off+int64(len(data)) > int64(maxBytes) {
		n.buf.overLimit, n.buf.dirty = true, true
		if h != nil {
			h.wrote = true
			h.noteUser(ctx)
		}
		p, _ := n.path()
		return 0, n.sm.refuse("write", p, syscall.EFBIG, tooLarge(maxBytes)+"; this save fails whole and the previous version stays the head")
	}
	if !n.scratch && !utf8Write(n.buf.data, data, off) {
		n.buf.notText, n.buf.dirty = true, true
		if h != nil {
			h.wrote = true
			h.noteUser(ctx)
		}
		p, _ := n.path()
		return 0, n.sm.refuse("write", p, syscall.EILSEQ, "the written bytes are not valid UTF-8: the write was refused, and this save fails whole (the previous version stays the head); write UTF-8 text")
	}
	if !n.scratch {
		if e := n.refuseWriteLocked(ctx, h, data, off); e != 0 {
			return 0, e
		}
	}
	if end := off + int64(len(data)); end > int64(len(n.buf.data)) {
		p, _ := n.path()
		if e := n.growLocked("write", p, end); e != 0 {
			return 0, e
		}
	}
	n.resizeLocked(max(int64(len(n.buf.data)), off+int64(len(data))))
	copy(n.buf.data[off:], data)
	n.kernelSize = max(n.kernelSize, off+int64(len(data)))
	n.buf.dirty = true
	n.buf.truncOnly = false
	n.modifiedLocked()
	if h != nil {
		h.wrote = true
		h.noteUser(ctx)
	}
	return uint32(len(data)), 0
}

// utf8Write reports whether writing data at off into buf leaves the
// written range valid UTF-8. The runes it touches are checked from the
// start of the one it begins in. An incomplete sequence at the end of data
// passes, since the next write may complete it: a writer's chunks need not
// end on a rune. The check of the whole content at the save stays.
func utf8Write(buf, data []byte, off int64) bool {
	var w []byte
	if off <= int64(len(buf)) {
		lo := off
		for lo > 0 && off-lo < utf8.UTFMax && !utf8.RuneStart(buf[lo-1]) {
			lo--
		}
		if lo > 0 && off-lo < utf8.UTFMax {
			lo-- // the lead byte of the rune data may continue
		}
		w = append(append(w, buf[lo:off]...), data...)
		if !utf8.RuneStart(w[0]) {
			// Continuation bytes of a rune that starts further back
			// than a rune is long: invalid before this write.
			for len(w) > len(data) && !utf8.RuneStart(w[0]) {
				w = w[1:]
			}
		}
	} else {
		w = data // after a hole of zero bytes
	}
	for len(w) > 0 {
		r, size := utf8.DecodeRune(w)
		if r == utf8.RuneError && size <= 1 {
			return !utf8.FullRune(w) && len(w) < utf8.UTFMax
		}
		w = w[size:]
	}
	return true
}

func tooLarge(maxBytes int) string {
	return fmt.Sprintf("a memory holds at most %d bytes in this store; write less or split it into several files", maxBytes)
}

// resizeLocked truncates or zero-extends the buffer.
func (n *fileNode) resizeLocked(size int64) {
	b := n.buf.data
	switch {
	case size <= int64(len(b)):
		n.buf.data = b[:size]
	case size <= int64(cap(b)):
		old := len(b)
		b = b[:size]
		clear(b[old:])
		n.buf.data = b
	default:
		nb := make([]byte, size, max(size, 2*int64(cap(b))))
		copy(nb, b)
		n.buf.data = nb
	}
}

// Flush saves what this handle wrote. A file created in the mount and
// not written yet is not created here: a shell's `> f` closes a dup of the
// descriptor before writing, and that must not make an empty version. It is
// created by the release of its last handle instead. Until the kernel looks
// a created file up again it keeps the inode number it had while pending.
func (n *fileNode) Flush(ctx context.Context, f fs.FileHandle) syscall.Errno {
	h, _ := f.(*handle)
	n.mu.Lock()
	defer n.mu.Unlock()
	if h == nil || !h.wrote || n.buf == nil || !n.buf.dirty || !h.flushSaves(ctx) {
		return 0
	}
	e := n.saveLocked(ctx, "close")
	if e == syscall.EFBIG && n.buf.overLimit && !n.pending && !n.unpublished {
		// The oversized content is refused for good: the next open
		// (maybe before this handle's release arrives) reads the head
		// again, and the kernel forgets the pages it was given.
		n.buf.dirty, n.buf.overLimit, n.buf.stale = false, false, true
		n.kernelSize = -1
		n.pagesSync = false
		n.sm.srv.notifyContent(&n.Inode)
	}
	return e
}

func (n *fileNode) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.buf == nil || !(n.buf.dirty || n.pending) || n.scratch {
		return 0
	}
	return n.saveLocked(ctx, "fsync")
}

// Release drops the buffer with the last handle. A file created in the
// mount and still unsaved is created now (`touch`, `open(…, "w").close()`);
// if that fails, or content whose save failed was left, it is discarded and
// a never-saved file disappears.
func (n *fileNode) Release(ctx context.Context, f fs.FileHandle) syscall.Errno {
	n.mu.Lock()
	n.opens--
	ghost, discarded := false, false
	if n.opens <= 0 {
		n.opens = 0
		if n.buf != nil && !n.unlinked && (n.pending || n.buf.dirty && n.buf.truncOnly) {
			// Created and never saved (touch), or emptied and not
			// written since (`: > f`): saved once, now.
			n.saveLocked(ctx, "release")
		}
		if n.buf != nil && n.buf.dirty && !n.unlinked {
			p, _ := n.path()
			// As many as the refused saves before it, so rate-limited
			// like them.
			sm := n.sm
			sm.srv.refusals.log(sm.srv.log, slog.LevelWarn, refusalKind{"release", 0, sm.slug}, "unsaved content discarded: its save failed and the last handle closed", sm.where(), "path", guard.NameShown(p))
			// The kernel's pages and size hold the refused content: the
			// next open reads past them (direct I/O), and they are dropped.
			n.kernelSize = -1
			n.pagesSync = false
			discarded = true
			if n.unpublished {
				n.buf.data, n.buf.dirty, n.buf.overLimit, n.buf.notText, n.buf.refused = []byte(n.pendSaved), false, false, false, 0
			}
		}
		if !(n.unpublished || n.scratch) || n.unlinked {
			n.buf = nil
			if h, _ := f.(*handle); h != nil && h.wrote && !discarded {
				n.offerPagesLocked()
			}
		}
		n.settleLocked()
		if n.pending && !n.unlinked {
			ghost = true
			n.unlinkedLocked()
		}
	}
	n.mu.Unlock()
	if discarded {
		n.sm.srv.notifyContent(&n.Inode)
	}
	if ghost {
		if name, parent := n.Parent(); parent != nil {
			n.sm.srv.notifyEntry(parent, name)
		}
	}
	return 0
}

// Setattr: a size change edits the buffer; without a file handle
// (truncate(2) on a path) it is saved at once. chmod and times are kept in
// the mount's memory (meta.go; setuid and setgid dropped), chown is
// accepted and ignored: every file belongs to the mount's owner.
func (n *fileNode) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	p, _ := n.path()
	if e := n.sm.writable("setattr", p); e != 0 {
		return e
	}
	h, _ := f.(*handle)
	n.mu.Lock()
	defer n.mu.Unlock()
	now := time.Now()
	if mode, ok := in.GetMode(); ok {
		n.mode = mode & 0o777
		n.ctime = now
	}
	if t, ok := in.GetATime(); ok {
		n.atime, n.ctime = t, now
	}
	if t, ok := in.GetMTime(); ok {
		n.mtime, n.ctime = t, now
	}
	if n.pending && n.buf != nil {
		// touch: the creating handle's close saves the file.
		n.buf.dirty = true
	}
	if size, ok := in.GetSize(); ok {
		if e := n.truncateLocked(ctx, h, p, size); e != 0 {
			return e
		}
	}
	n.keepMetaLocked()
	n.fillAttrLocked(&out.Attr)
	return 0
}

// truncateLocked sets the content's size. Past the per-memory size it fails
// with EFBIG and changes nothing; through a handle, that handle's save then
// fails too, as after an oversized write.
func (n *fileNode) truncateLocked(ctx context.Context, h *handle, p string, size uint64) syscall.Errno {
	_, maxBytes := n.sm.row.limits()
	if size > uint64(maxBytes) {
		if h != nil && n.buf != nil {
			n.buf.overLimit, n.buf.dirty = true, true
			h.wrote = true
			h.noteUser(ctx)
		}
		return n.sm.refuse("truncate", p, syscall.EFBIG, tooLarge(maxBytes)+"; nothing was changed, the previous version stays the head")
	}
	temporary := n.buf == nil
	if e := n.loadLocked(ctx, false); e != 0 {
		return e
	}
	if size == 0 {
		n.buf.overLimit, n.buf.notText, n.buf.refused = false, false, 0
	}
	if int64(size) > int64(len(n.buf.data)) {
		if e := n.growLocked("truncate", p, int64(size)); e != 0 {
			if temporary {
				n.buf = nil
			}
			return e
		}
	}
	defer n.settleLocked()
	if int64(size) != int64(len(n.buf.data)) {
		n.resizeLocked(int64(size))
		n.buf.dirty = true
		n.modifiedLocked()
	}
	switch {
	case h != nil:
		if size == 0 && n.buf.dirty && !h.wrote {
			n.buf.truncOnly = true // as an O_TRUNC: the write that follows decides
		} else if n.buf.dirty {
			h.wrote, n.buf.truncOnly = true, false
		}
		h.noteUser(ctx)
	case n.buf.dirty || n.pending:
		e := n.saveLocked(ctx, "truncate")
		if temporary {
			if e == 0 {
				n.size = int64(len(n.buf.data))
			}
			n.buf = nil
		}
		return e
	case temporary:
		n.buf = nil
	}
	return 0
}

func (n *fileNode) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	n.sm.statfs(ctx, out)
	return 0
}
