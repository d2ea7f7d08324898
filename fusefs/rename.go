package fusefs

import (
	"context"
	"path"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"

	"github.com/memfs/memfs/versions"
)

const (
	renameNoReplace = 0x1 // RENAME_NOREPLACE
	renameExchange  = 0x2 // RENAME_EXCHANGE
	renameWhiteout  = 0x4 // RENAME_WHITEOUT
)

// Rename moves a file or directory inside one store, keeping memory ids.
// Onto an existing file the engine records the content as a version
// of the destination's memory and the source as deleted; the node that
// moved then stands for the destination's memory.
func (n *dirNode) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	sm, s := n.sm, n.sm.srv
	dir, ok := n.path()
	if !ok {
		return syscall.ENOENT
	}
	from := childPath(dir, name)
	nd, ok := newParent.(*dirNode)
	if !ok || nd.sm != sm {
		return sm.refuse("rename", from, syscall.EXDEV, "files cannot move between stores or into the mount root; copy and delete instead")
	}
	if flags&(renameExchange|renameWhiteout) != 0 {
		return sm.refuse("rename", from, syscall.EINVAL, "exchanging or whiteout renames are not supported")
	}
	ndir, ok := nd.path()
	if !ok {
		return syscall.ENOENT
	}
	to := childPath(ndir, newName)
	if e := sm.writable("rename", from); e != 0 {
		return e
	}
	if err := versions.ValidatePath(to); err != nil {
		return sm.errnoOf("rename", to, err)
	}
	src, dst := n.GetChild(name), nd.GetChild(newName)
	// Scratch files by the mount's own record (scratch.go): the kernel
	// looks both names up first, but the mount's word is the one to trust.
	if f := sm.scratchFiles.get(from); f != nil {
		src = &f.Inode
	}
	if f := sm.scratchFiles.get(to); f != nil {
		dst = &f.Inode
	}
	var sf, df *fileNode
	if src != nil {
		sf, _ = src.Operations().(*fileNode)
	}
	if dst != nil {
		df, _ = dst.Operations().(*fileNode)
	}
	if sf != nil {
		if done, e := sm.renameLocal(ctx, sf, df, from, to, newName); done {
			if e == 0 {
				sm.meta.entriesChanged(path.Dir(from), path.Dir(to))
			}
			return e
		}
		if e := sf.saveBeforeRename(ctx); e != 0 {
			return e
		}
	}
	srcMemory, destMemory := "", ""
	if sf != nil {
		srcMemory = sf.memoryID()
	}
	if df != nil {
		destMemory = df.memoryID()
	}
	// Directories moved away keep their inode numbers: find them now,
	// while the tree still shows them at their old paths.
	var movedDirs []string
	var movedFiles []movedFile
	if dst != nil && df == nil && sm.scratchFiles.under(to) {
		return sm.refuse("rename", to, syscall.ENOTEMPTY, "the target directory holds scratch files (editors' swap or backup files); remove them first")
	}
	if src != nil && sf == nil {
		// What only this mount has below the directories moves with
		// them once it is in the store.
		sm.pub.publishNow()
		collectMoved(src, from, to, &movedDirs, &movedFiles)
	}
	wctx, pos := versions.WithPositions(detach(ctx))
	moved, err := s.db.Rename(wctx, sm.id, from, to, flags&renameNoReplace != 0, s.actor)
	if err != nil {
		return sm.failed("rename", from+" -> "+to, err)
	}
	// The directories the rename made, removed or kept, and the versions
	// it wrote (onto another file: the destination modified, the source
	// deleted), each at its own feed position.
	sm.own.noteDirSeq(pos.Seqs()...)
	if moved != nil {
		sm.own.noteSeq(moved.Seq, moved.ReplacedSeq)
	}
	sm.meta.entriesChanged(path.Dir(from), path.Dir(to))
	if moved != nil {
		sm.idx.renamedFile(from, to, moved)
		if srcMemory != "" && srcMemory != moved.ID {
			s.contents.forget(srcMemory) // deleted: its content went to the destination's memory
		}
	} else {
		// A directory: everything below it moved.
		sm.meta.movedDir(from, to)
		sm.scratchFiles.movedDir(from, to)
		sm.idx.forget(from)
		sm.idx.forget(to)
	}
	if df != nil {
		if destMemory != "" {
			sm.count.adjust(-1, 0)
			sm.ino.bumpMem(destMemory)
		}
		df.markUnlinked()
	}
	if dst != nil && df == nil {
		sm.ino.bumpDir(to) // an empty directory replaced by a directory
	}
	for _, p := range movedDirs {
		sm.ino.bumpDir(p)
	}
	// Each moved memory has a new head (a "modified" version with the
	// new path): the node must start from it, or its next save would look
	// like a conflict.
	if sf != nil && moved != nil {
		sf.adopt(moved)
	}
	for _, mf := range movedFiles {
		if e, err := s.db.Stat(detach(ctx), sm.id, mf.path); err == nil && e.Memory != nil {
			mf.f.adopt(e.Memory)
		}
	}
	return 0
}

type movedFile struct {
	f    *fileNode
	path string
}

// collectMoved lists the kernel-known directories under a directory being
// moved (by old path) and its files that have a loaded buffer (by new path);
// the other files forget their head.
func collectMoved(in *fs.Inode, from, to string, dirs *[]string, files *[]movedFile) {
	*dirs = append(*dirs, from)
	for name, ch := range in.Children() {
		switch op := ch.Operations().(type) {
		case *dirNode:
			collectMoved(ch, childPath(from, name), childPath(to, name), dirs, files)
		case *fileNode:
			op.mu.Lock()
			open := op.buf != nil && op.memID != ""
			if !open {
				op.head = "" // unknown: the next open reads the new head
			}
			op.mu.Unlock()
			if open {
				*files = append(*files, movedFile{op, childPath(to, name)})
			}
		}
	}
}

// renameLocal does the renames the store must not see as renames (pending.go):
// a file only this mount shows (new, pending or scratch) moved to a scratch
// name stays local; moved to any other name it is published there, as a
// version of the memory at the destination or as a new memory; a stored file
// moved to a scratch name is held. done is false for every other rename.
func (sm *storeMount) renameLocal(ctx context.Context, sf, df *fileNode, from, to, newName string) (done bool, errno syscall.Errno) {
	toScratch := sm.scratch.match(newName)
	dfLocal := df != nil && df.pendingLive()
	dfStored := df != nil && df.memoryID() != ""
	sf.mu.Lock()
	defer sf.mu.Unlock()
	local := sf.localLocked() && !sf.unlinked
	if toScratch && !sf.scratch && (local || sf.memID != "") {
		if e := sm.scratchRoom("rename", to); e != 0 {
			return true, e
		}
	}
	switch {
	case local && toScratch:
		// The row first: a file the store would publish later must not
		// look renamed away.
		if err := sf.dropPendingLocked(); err != nil {
			return true, sm.failed("rename", from, err)
		}
		if sf.pending || sf.unpublished {
			sf.pending, sf.unpublished, sf.pendSaved = false, false, ""
			sm.count.adjust(0, -1)
		}
		sf.scratch = true
		if sf.buf == nil {
			sf.buf = &buffer{}
		}
		sm.scratchFiles.put(to, sf)
		if dfLocal {
			df.markUnlinked() // a scratch file replaced
		}
	case local:
		if sf.scratch {
			// A scratch file given a real name is a new file there.
			sf.scratch, sf.pending = false, true
			sm.count.adjust(0, 1)
		}
		if sf.pendID != 0 && sf.buf != nil && (sf.buf.dirty || sf.pending) {
			if e := sf.saveLocked(ctx, "rename"); e != 0 {
				return true, e
			}
		}
		if dfLocal {
			if df.isUnpublished() {
				// A saved file of this mount is the target: its save
				// is a version, the renamed content the next one.
				df.publish(ctx)
				dfStored = df.memoryID() != ""
			} else {
				df.markUnlinked()
			}
		}
		base := sm.atomicBase(ctx, sf, df, to, newName)
		if sf.pendID == 0 {
			// Never saved: its first save is at its new name, so that the
			// old one leaves nothing in the history.
			if sf.buf == nil {
				sf.buf = &buffer{}
			}
			sf.renameBase = base
			e := sf.saveAtLocked(ctx, "rename", to)
			sf.renameBase = ""
			if e != 0 {
				return true, e
			}
		} else if _, e := sf.publishLocked(ctx, to, base); e != 0 {
			return true, e
		}
		sm.scratchFiles.drop(sf) // a file of the store now
		if id := sf.memID; dfStored && id != "" && df.memoryID() == id {
			sm.ino.bumpMem(id)
			df.markUnlinked()
		}
	case sf.memID != "" && toScratch && !dfStored:
		// An editor's backup of the original (vim, emacs): the store
		// keeps the memory until the grace ends; a new file saved at its
		// path meanwhile is its next version.
		if e := sf.loadLocked(ctx, false); e != 0 {
			return true, e
		}
		// Its copy is now only in the daemon's memory.
		if e := sf.growLocked("rename", from, int64(len(sf.buf.data))); e != 0 {
			return true, e
		}
		sm.pub.hold(from, sf.memID, sf.head)
		sm.ino.renumber(sf.memID, sm.srv.pendingIno.next()) // sf keeps the old one
		sf.memID, sf.head, sf.scratch = "", "", true
		sf.buf.dirty = false
		sm.scratchFiles.put(to, sf) // the kernel may forget it: the mount keeps it
		if dfLocal {
			df.markUnlinked()
		}
	default:
		return false, 0
	}
	return true, 0
}

// atomicBase is the version an atomic save of sf over the file at to
// started from: the version at to that the renaming process (its thread
// group: a runtime may read and rename from different threads) last
// opened; else the head of the memory there when sf was created with a
// temporary name beside it; else the head of df, the node the kernel has
// there; "" when nothing is known (no conflict can be told). Called under
// sf's lock; takes df's (source then destination, doc.go).
func (sm *storeMount) atomicBase(ctx context.Context, sf, df *fileNode, to, newName string) string {
	if v, ok := sm.opened.Version(int(callerTID(ctx)), to); ok {
		return v
	}
	if v, ok := sf.siblings[newName]; ok {
		return v
	}
	if df == nil {
		return ""
	}
	df.mu.Lock()
	defer df.mu.Unlock()
	if df.localLocked() {
		return ""
	}
	return df.head
}
