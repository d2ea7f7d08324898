package fusefs

import (
	"context"
	pathpkg "path"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/memfs/memfs/versions"
)

// saveLocked turns the buffer into one version attributed to the
// session: a new memory for a file created in the mount, otherwise a
// content update based on the head the buffer was loaded from, so that a
// save racing another writer's is marked as a conflict, or refused with
// ESTALE in strict mode. On failure the content stays in the buffer:
// close() reports the error, and an fsync() on a handle still open retries.
func (n *fileNode) saveLocked(ctx context.Context, op string) syscall.Errno {
	if n.scratch {
		n.buf.dirty = false // never stored (scratch.go)
		return 0
	}
	if n.unlinked || (n.memID == "" && !n.pending && !n.unpublished) {
		// Writes to a deleted or replaced file vanish, as on any
		// POSIX file system.
		n.buf.dirty = false
		return 0
	}
	path, ok := n.path()
	if !ok {
		n.buf.dirty = false
		return 0
	}
	return n.saveAtLocked(ctx, op, path)
}

// saveAtLocked is saveLocked at path: the node's own, or the name a rename
// gives a new file before it was ever saved.
func (n *fileNode) saveAtLocked(ctx context.Context, op, path string) syscall.Errno {
	sm, s := n.sm, n.sm.srv
	if n.buf.overLimit {
		_, maxBytes := sm.row.limits()
		return sm.refuse(op, path, syscall.EFBIG, tooLarge(maxBytes)+"; a write or truncate of this content went past it, so nothing of this save was kept and the previous version stays the head")
	}
	if n.buf.refused != 0 {
		return sm.refuse(op, path, n.buf.refused, "a write of this content was refused (see the write's error): nothing of this save was kept and the previous version stays the head; write the file again from its start")
	}
	if n.buf.notText || !utf8.Valid(n.buf.data) {
		return sm.refuse(op, path, syscall.EILSEQ, "content is not valid UTF-8: nothing was saved, the previous version is intact; write UTF-8 text")
	}
	content := string(n.buf.data)
	var m *versions.Memory
	var err error
	created := n.pending || n.unpublished
	fresh := false // a new memory, not a version of one already there
	held, wasHeld := (*heldMemory)(nil), false
	if created {
		held, wasHeld = sm.pub.take(path)
	}
	switch {
	case created && !wasHeld && n.pendID == 0 && !sm.temp.match(pathpkg.Base(path)):
		// Final at close (pending.go): the memory and its "created"
		// version in one commit.
		m, err = s.db.CreateMemory(detach(ctx), sm.id, path, content, s.actor)
		fresh = err == nil
		if versions.ErrorCode(err) == versions.CodePathConflict {
			// Created elsewhere since the kernel looked: as an open with
			// O_CREAT of a file that exists, this save is its next version.
			// Over a memory by a rename, the save is based on what the
			// renaming process read (renameBase).
			u := versions.MemoryUpdate{Content: &content, BaseVersionID: n.renameBase, Strict: s.opts.Strict}
			if m2, err2 := s.db.UpdateMemory(detach(ctx), sm.id, path, u, s.actor); versions.ErrorCode(err2) != versions.CodeNotFound {
				m, err = m2, err2
			}
		}
	case wasHeld:
		// An editor renamed the file away and saves a new one in its
		// place: a version of the same memory.
		m, err = s.db.UpdateMemory(detach(ctx), sm.id, held.id, versions.MemoryUpdate{
			Content: &content, BaseVersionID: held.head, Strict: s.opts.Strict}, s.actor)
		if err != nil {
			sm.pub.hold(path, held.id, held.head)
		} else {
			s.log.Debug("a held file was saved over", "path", path, "held_for", time.Since(held.since))
			n.forgetPendingLocked()
		}
	case created:
		// Durable now, published after the grace period or at a rename
		// (pending.go).
		id, err := s.db.SavePending(detach(ctx), sm.id, s.owner(), path, content, s.actor, n.pendID)
		if versions.IsPendingLost(err) {
			if n.pendID == 0 {
				return sm.refuse(op, path, syscall.EIO, "the mount's lease lapsed (the daemon was stopped or cut off from the database) and it is taking a new one: nothing was saved; save again in a moment")
			}
			n.lostLocked(ctx, path, err)
			return sm.lostErrno(op, path)
		}
		if err != nil {
			return sm.failed(op, path, err)
		}
		if n.pendID == 0 {
			n.pendAt = time.Now()
		}
		n.pendID, n.pending, n.unpublished, n.pendSaved = id, false, true, content
		n.buf.dirty = false
		sm.pub.schedule(n)
		return 0
	default:
		m, err = s.db.UpdateMemory(detach(ctx), sm.id, n.memID, versions.MemoryUpdate{
			Content:       &content,
			BaseVersionID: n.buf.base,
			Strict:        s.opts.Strict,
		}, s.actor)
	}
	if err != nil {
		if versions.ErrorCode(err) == versions.CodeNotFound && !created {
			return sm.refuse(op, path, syscall.ESTALE, "the memory was deleted or replaced elsewhere while open: nothing was saved; open the file again")
		}
		return sm.failed(op, path, err)
	}
	if created {
		n.pending, n.unpublished, n.pendSaved = false, false, ""
		sm.count.published(fresh)
		if fresh {
			// The memory keeps the number the kernel and programs saw, also
			// in a new node once the kernel forgot this one (an editor
			// compares st_ino before it saves), and in listings.
			sm.ino.renumber(m.ID, n.StableAttr().Ino)
		}
		n.ForgetPersistent()
	}
	if created || m.VersionID != n.buf.base {
		sm.own.noteSeq(m.Seq)
		s.opts.Observer.Saved()
	}
	sm.idx.saved(path, m)
	sm.row.addHistory(versionCost(len(content), path))
	s.contents.put(m.ID, m.VersionID, content)
	n.memID, n.head = m.ID, m.VersionID
	n.buf.base, n.buf.dirty, n.buf.stale, n.buf.truncOnly = m.VersionID, false, false, false
	n.size = int64(m.ContentSize)
	n.keepMetaLocked()
	return 0
}

// saveBeforeRename commits a file's pending or unsaved content so that the
// rename moves what the writer wrote (the write-temp-then-rename pattern).
func (n *fileNode) saveBeforeRename(ctx context.Context) syscall.Errno {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.buf == nil || !(n.buf.dirty || n.pending) {
		return 0
	}
	return n.saveLocked(ctx, "rename")
}

// adopt makes the node stand for memory m after a rename moved it (m's head
// is now a "modified" version the node did not write) or moved it onto m's
// path (the destination's memory lives on with this node's content).
func (n *fileNode) adopt(m *versions.Memory) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.memID, n.head = m.ID, m.VersionID
	n.size = int64(m.ContentSize)
	if n.buf != nil && !n.buf.dirty {
		n.buf.base = m.VersionID
	}
	n.ctime = time.Now() // a rename changes the file's ctime
	n.keepMetaLocked()
}
