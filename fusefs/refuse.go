package fusefs

import (
	"context"
	"syscall"

	"github.com/memfs/memfs/internal/mirror"
	"github.com/memfs/memfs/versions"
)

// Refusals at write(). A save is refused at close() for its content (a
// credential the store's guard refuses), for the store's history quota,
// or because the backend cannot be reached. A shell built-in's implicit
// close drops that error (`echo "$TOKEN" > f` in bash exits 0), so each of
// these is checked at write() too, where every writer sees it: the write
// fails, nothing of it is kept, and every later save of this content fails
// the same way until the file is written again from its start (truncated
// to nothing). What can still fail only at close() is listed in
// docs/mount.md.

// refuseWriteLocked checks a write of data at off before it changes the
// buffer (internal/mirror's CheckWrite, shared with the mirror).
func (n *fileNode) refuseWriteLocked(ctx context.Context, h *handle, data []byte, off int64) syscall.Errno {
	info := n.sm.row.refusals()
	info.Offline = n.sm.srv.offline.Load() && !n.sm.srv.backOnline(ctx, n.sm.id)
	base := ""
	if n.memID != "" && n.buf.base != "" {
		base, _ = n.sm.srv.contents.get(n.memID, n.buf.base)
	}
	p, _ := n.path()
	errno, why, found := mirror.CheckWrite(info, p, n.buf.data, data, off, base)
	if errno == 0 {
		return 0
	}
	if found != nil {
		n.sm.srv.db.NoteGuardRefusal(versions.GuardEvent{StoreID: n.sm.id, Path: p, Finding: *found, Refused: true})
	}
	n.buf.refused, n.buf.dirty = errno, true
	if h != nil {
		h.wrote = true
		h.noteUser(ctx)
	}
	return n.sm.refuse("write", p, errno, "memory store "+n.sm.id+": "+why+"; this save fails whole and the previous version stays the head")
}

// versionCost is about what a version of size bytes at path adds to the
// store's retained history (the engine counts the record's fields too).
func versionCost(size int, path string) int { return size + 2*len(path) }
