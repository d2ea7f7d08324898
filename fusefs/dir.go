package fusefs

import (
	"context"
	"errors"
	"path"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/memfs/memfs/versions"
)

// dirNode is a directory of a store: the store's top directory or a path
// prefix of its memories. Nothing about its children is kept here:
// the index answers Lookup and Readdir, its mode and times are in the
// mount's meta table by path.
type dirNode struct {
	fs.Inode
	sm *storeMount
}

func (n *dirNode) path() (string, bool) { return n.sm.pathOf(&n.Inode) }

// pathOf is the store path of a node, from the kernel-visible tree; false
// when the node is no longer reachable (removed, or replaced by a rename).
func (sm *storeMount) pathOf(in *fs.Inode) (string, bool) {
	top := &sm.top.Inode
	var segs []string
	for p := in; p != top; {
		name, parent := p.Parent()
		if parent == nil {
			return "", false
		}
		segs = append(segs, name)
		p = parent
	}
	if len(segs) == 0 {
		return "/", true
	}
	size := 0
	for _, s := range segs {
		size += len(s) + 1
	}
	b := make([]byte, 0, size)
	for i := len(segs) - 1; i >= 0; i-- {
		b = append(b, '/')
		b = append(b, segs[i]...)
	}
	return string(b), true
}

func (n *dirNode) fillAttr(ctx context.Context, a *fuse.Attr) {
	p, _ := n.path()
	n.sm.dirAttr(ctx, p, n.StableAttr().Ino, a)
}

// dirAttr fills a directory's attributes: its link count is 2 plus its
// subdirectories, as on any POSIX file system (find and du rely on it).
func (sm *storeMount) dirAttr(ctx context.Context, p string, ino uint64, a *fuse.Attr) {
	s := sm.srv
	m := sm.meta.dir(p)
	a.Ino = ino
	a.Mode = syscall.S_IFDIR | m.mode
	a.Nlink = 2
	if n, ok := sm.idx.subdirs(p); ok {
		a.Nlink += uint32(n)
	} else if entries, err := sm.listDir(ctx, p); err == nil {
		for _, e := range entries {
			if e.Dir {
				a.Nlink++
			}
		}
	}
	a.Size = 4096
	a.Uid, a.Gid = s.opts.UID, s.opts.GID
	a.SetTimes(&m.atime, &m.mtime, &m.ctime)
}

func (n *dirNode) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	n.fillAttr(ctx, &out.Attr)
	out.SetTimeout(cacheTimeout)
	return 0
}

// Setattr keeps chmod (the sticky bit too; setuid and setgid dropped) and
// times in the mount's memory, and ignores chown: directories are only path
// prefixes in the store.
func (n *dirNode) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	p, ok := n.path()
	if !ok {
		return syscall.ENOENT
	}
	if e := n.sm.writable("setattr", p); e != 0 {
		return e
	}
	if _, ok := in.GetSize(); ok {
		return n.sm.refuse("truncate", p, syscall.EISDIR, "a directory has no content")
	}
	a := n.sm.meta.dir(p)
	now := time.Now()
	if mode, ok := in.GetMode(); ok {
		a.mode, a.ctime = mode&0o1777, now
	}
	if t, ok := in.GetATime(); ok {
		a.atime, a.ctime = t, now
	}
	if t, ok := in.GetMTime(); ok {
		a.mtime, a.ctime = t, now
	}
	n.sm.meta.setDir(p, a)
	n.fillAttr(ctx, &out.Attr)
	out.SetTimeout(cacheTimeout)
	return 0
}

func (n *dirNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	dir, ok := n.path()
	if !ok || n.sm.row.isGone() {
		return nil, syscall.ENOENT
	}
	// A scratch file comes from the mount's own record, which outlives the
	// kernel forgetting its node (go-fuse then dropped it from the tree).
	if f := n.sm.scratchFiles.get(childPath(dir, name)); f != nil {
		f.fillAttr(&out.Attr)
		return &f.Inode, 0
	}
	if ch := n.GetChild(name); ch != nil {
		if f, ok := ch.Operations().(*fileNode); ok && f.pendingLive() {
			f.fillAttr(&out.Attr)
			return ch, 0
		}
	}
	if n.sm.pub.isHeld(childPath(dir, name)) {
		return nil, syscall.ENOENT // renamed to a scratch name (pending.go)
	}
	e, err := n.sm.lookupEntry(ctx, dir, name)
	if err == nil && !e.Dir && e.Memory == nil {
		err = errors.New("the engine returned a file entry without its memory")
	}
	if err != nil {
		return nil, n.sm.errnoOf("lookup", childPath(dir, name), err)
	}
	return n.entryNode(ctx, e, out), 0
}

// entryNode returns the inode for e, reusing the one the kernel knows under
// that name when it still stands for the same thing.
func (n *dirNode) entryNode(ctx context.Context, e *versions.Entry, out *fuse.EntryOut) *fs.Inode {
	sm := n.sm
	known := n.GetChild(e.Name)
	if e.Dir {
		if known != nil {
			if d, ok := known.Operations().(*dirNode); ok {
				d.fillAttr(ctx, &out.Attr)
				out.SetAttrTimeout(cacheTimeout)
				return known
			}
		}
		ino := sm.ino.dir(e.Path)
		sm.dirAttr(ctx, e.Path, ino, &out.Attr)
		out.SetAttrTimeout(cacheTimeout)
		return n.NewInode(ctx, &dirNode{sm: sm}, fs.StableAttr{Mode: syscall.S_IFDIR, Ino: ino})
	}
	m := e.Memory
	if known != nil {
		// Keep the kernel's inode while it stands for the memory, so that
		// its number does not change under a program that stat()ed it: a
		// file created here keeps the number it had before its first save
		// until the kernel forgets it.
		if f, ok := known.Operations().(*fileNode); ok && f.memoryID() == m.ID {
			f.refresh(m, false)
			f.fillAttr(&out.Attr)
			return known
		}
	}
	f := newFileNode(sm, m)
	f.fillAttr(&out.Attr)
	return n.NewInode(ctx, f, fs.StableAttr{Mode: syscall.S_IFREG, Ino: sm.ino.file(m), Gen: sm.ino.memGen(m.ID)})
}

func (n *dirNode) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	dir, ok := n.path()
	if !ok {
		return fs.NewListDirStream(nil), 0
	}
	if n.sm.row.isGone() {
		return nil, n.sm.refuseGone("readdir", dir)
	}
	// Files created in this mount exist before they are published (their
	// nodes are persistent), and scratch files only here (the mount's own
	// record, whatever the kernel forgot). They are taken before the
	// store's listing: one published in between is then in one or the
	// other, never neither. A scratch file hides a memory of its name, as
	// in Lookup.
	scratch := n.sm.scratchFiles.list(dir)
	var local []fuse.DirEntry
	for name, f := range scratch {
		local = append(local, fuse.DirEntry{Name: name, Mode: syscall.S_IFREG, Ino: f.StableAttr().Ino})
	}
	for name, ch := range n.Children() {
		if _, listed := scratch[name]; listed {
			continue
		}
		if f, ok := ch.Operations().(*fileNode); ok && f.pendingLive() {
			local = append(local, fuse.DirEntry{Name: name, Mode: syscall.S_IFREG, Ino: ch.StableAttr().Ino})
		}
	}
	entries, err := n.sm.listDir(ctx, dir)
	if err != nil {
		return nil, n.sm.errnoOf("readdir", dir, err)
	}
	list := make([]fuse.DirEntry, 0, len(entries)+len(local)+2)
	list = append(list, dotEntries(&n.Inode)...)
	for _, e := range entries {
		if _, hidden := scratch[e.Name]; hidden {
			continue
		}
		if e.Dir {
			list = append(list, fuse.DirEntry{Name: e.Name, Mode: syscall.S_IFDIR, Ino: n.sm.ino.dir(e.Path)})
		} else if e.Memory != nil && !n.sm.pub.isHeld(e.Path) {
			list = append(list, fuse.DirEntry{Name: e.Name, Mode: syscall.S_IFREG, Ino: n.sm.ino.file(e.Memory)})
		}
	}
	for _, e := range local {
		if _, stored := slices.BinarySearchFunc(entries, e.Name, func(e versions.Entry, name string) int { return strings.Compare(e.Name, name) }); !stored || scratch[e.Name] != nil {
			list = append(list, e)
		}
	}
	return fs.NewListDirStream(list), 0
}

// OpendirHandle lets the kernel keep the listing (FOPEN_CACHE_DIR), so
// that listing the directory again needs no READDIR. The kernel drops it
// itself when an entry changes through this mount; the watcher drops it
// when one changes elsewhere (watch.go).
func (n *dirNode) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	return &dirHandle{list: n.Readdir}, fuse.FOPEN_CACHE_DIR, 0
}

// dirHandle is an open directory. It lists at the first READDIR, which a
// kernel holding the listing never sends.
type dirHandle struct {
	list func(context.Context) (fs.DirStream, syscall.Errno)
	ds   fs.DirStream
}

func (h *dirHandle) load(ctx context.Context) syscall.Errno {
	if h.ds != nil {
		return 0
	}
	ds, e := h.list(ctx)
	if e != 0 {
		return e
	}
	h.ds = ds
	return 0
}

func (h *dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	if e := h.load(ctx); e != 0 {
		return nil, e
	}
	if !h.ds.HasNext() {
		return nil, 0
	}
	de, e := h.ds.Next()
	return &de, e
}

func (h *dirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	if e := h.load(ctx); e != 0 {
		return e
	}
	if sd, ok := h.ds.(fs.FileSeekdirer); ok {
		return sd.Seekdir(ctx, off)
	}
	return syscall.ENOTSUP
}

func (h *dirHandle) Releasedir(ctx context.Context, flags uint32) {
	if h.ds != nil {
		h.ds.Close()
	}
}

func (n *dirNode) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	p, e := n.writableChild("mkdir", name)
	if e != 0 {
		return nil, e
	}
	wctx, pos := versions.WithPositions(detach(ctx))
	if err := n.sm.srv.db.MakeDir(wctx, n.sm.id, p); err != nil {
		if versions.ErrorCode(err) == versions.CodePathConflict {
			// Made elsewhere since the kernel looked: it must look again
			// (not from inside this request, which holds the directory).
			n.sm.srv.notifyEntry(&n.Inode, name)
		}
		return nil, n.sm.failed("mkdir", p, err)
	}
	sm := n.sm
	sm.own.noteDirSeq(pos.Seqs()...)
	sm.idx.madeDir(p)
	now := time.Now()
	sm.meta.setDir(p, attrs{mode: mode & 0o1777, atime: now, mtime: now, ctime: now})
	sm.meta.entriesChanged(path.Dir(p))
	ino := sm.ino.dir(p)
	sm.dirAttr(ctx, p, ino, &out.Attr)
	out.SetAttrTimeout(cacheTimeout)
	return n.NewInode(ctx, &dirNode{sm: sm}, fs.StableAttr{Mode: syscall.S_IFDIR, Ino: ino}), 0
}

func (n *dirNode) Rmdir(ctx context.Context, name string) syscall.Errno {
	p, e := n.writableChild("rmdir", name)
	if e != 0 {
		return e
	}
	if n.sm.scratchFiles.under(p) {
		return n.sm.refuse("rmdir", p, syscall.ENOTEMPTY, "it holds scratch files (editors' swap or backup files); remove them first")
	}
	n.sm.pub.publishNow() // files only this mount has make it non-empty
	wctx, pos := versions.WithPositions(detach(ctx))
	if err := n.sm.srv.db.RemoveDir(wctx, n.sm.id, p); err != nil {
		return n.sm.failed("rmdir", p, err)
	}
	n.sm.own.noteDirSeq(pos.Seqs()...)
	n.sm.idx.removed(p)
	n.sm.ino.bumpDir(p)
	n.sm.meta.removedDir(p)
	n.sm.meta.entriesChanged(path.Dir(p))
	return 0
}

// Create makes a file that exists only in the mount until its first save
// (flush, fsync): then it becomes a memory with one "created" version
// holding what was written, so `echo hi > f` makes exactly one version.
func (n *dirNode) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	p, e := n.writableChild("create", name)
	if e != 0 {
		return nil, nil, 0, e
	}
	if err := versions.ValidatePath(p); err != nil {
		return nil, nil, 0, n.sm.errnoOf("create", p, err)
	}
	scratch := n.sm.scratch.match(name)
	if scratch {
		if e := n.sm.scratchRoom("create", p); e != 0 {
			return nil, nil, 0, e
		}
	} else if e := n.sm.reserveCreate(ctx, p); e != 0 {
		return nil, nil, 0, e
	}
	n.sm.meta.entriesChanged(path.Dir(p))
	f, h := newPendingFile(ctx, n.sm, mode&0o777, flags, scratch)
	if n.sm.temp.match(name) {
		f.siblings = n.siblingHeads()
	}
	f.fillAttr(&out.Attr)
	// Persistent while only this mount has it: the kernel forgetting the
	// inode must not lose the file (ForgetPersistent when it is published
	// or removed).
	ch := n.NewPersistentInode(ctx, f, fs.StableAttr{Mode: syscall.S_IFREG, Ino: n.sm.srv.pendingIno.next()})
	if scratch {
		n.sm.scratchFiles.put(p, f)
	}
	return ch, h, 0, 0
}

func (n *dirNode) Unlink(ctx context.Context, name string) syscall.Errno {
	p, e := n.writableChild("unlink", name)
	if e != 0 {
		return e
	}
	var f *fileNode
	if ch := n.GetChild(name); ch != nil {
		f, _ = ch.Operations().(*fileNode)
	}
	if sf := n.sm.scratchFiles.get(p); sf != nil {
		f = sf
	}
	if f != nil {
		if local, err := f.unlinkLocal(ctx); err != nil {
			return n.sm.failed("unlink", p, err)
		} else if local {
			n.sm.meta.entriesChanged(path.Dir(p))
			return 0
		}
	}
	id := ""
	if f != nil {
		id = f.memoryID()
	}
	db := n.sm.srv.db
	var seq int64
	del := versions.MemoryDelete{KeepParentDir: true, Seq: &seq}
	var derr error
	if id != "" {
		derr = db.DeleteMemory(detach(ctx), n.sm.id, id, del, n.sm.srv.actor)
	}
	if id == "" || versions.ErrorCode(derr) == versions.CodeNotFound {
		// The kernel's inode is not (or no longer) the memory at p.
		e, serr := db.Stat(detach(ctx), n.sm.id, p)
		if serr != nil {
			return n.sm.errnoOf("unlink", p, serr)
		}
		if e.Dir {
			return n.sm.refuse("unlink", p, syscall.EISDIR, "it is a directory: use rmdir")
		}
		id = e.Memory.ID
		derr = db.DeleteMemory(detach(ctx), n.sm.id, id, del, n.sm.srv.actor)
	}
	if derr != nil {
		return n.sm.failed("unlink", p, derr)
	}
	n.sm.srv.contents.forget(id)
	n.sm.meta.forgetFile(id)
	n.sm.meta.entriesChanged(path.Dir(p))
	n.sm.own.noteSeq(seq)
	n.sm.idx.removed(p)
	n.sm.count.adjust(-1, 0)
	if f != nil {
		f.markUnlinked()
	}
	return 0
}

// failed maps an engine error and notes what the mount's caches missed: an
// archive, or a change made elsewhere that the watcher has not reported yet.
func (sm *storeMount) failed(op, path string, err error) syscall.Errno {
	switch versions.ErrorCode(err) {
	case versions.CodeReadOnly:
		sm.row.markArchived()
	case versions.CodeNotFound, versions.CodePathConflict, versions.CodeNotDir, versions.CodeIsDir, versions.CodeNotEmpty:
		sm.idx.drop()
	case versions.CodeOverQuota:
		sm.row.overQuota()
	case versions.CodeUnavailable:
		sm.srv.servingCached(err)
	}
	return sm.errnoOf(op, path, err)
}

// Symlink, Link and Mknod are refused with EPERM: a store holds only
// regular files and directories. go-fuse would answer ENOTSUP.
func (n *dirNode) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, n.sm.refuse("symlink", n.childPathOr(name), syscall.EPERM, "symbolic links cannot be stored; only files and directories exist")
}

func (n *dirNode) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, n.sm.refuse("link", n.childPathOr(name), syscall.EPERM, "hard links cannot be stored; copy the file instead")
}

func (n *dirNode) Mknod(ctx context.Context, name string, mode uint32, dev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, n.sm.refuse("mknod", n.childPathOr(name), syscall.EPERM, "only regular files and directories can be stored")
}

// writableChild is the store path of name in n for an operation that
// changes the store, or why it cannot be done: ENOENT when n is gone, EROFS
// when the store cannot change.
func (n *dirNode) writableChild(op, name string) (string, syscall.Errno) {
	dir, ok := n.path()
	if !ok {
		return "", syscall.ENOENT
	}
	p := childPath(dir, name)
	return p, n.sm.writable(op, p)
}

func (n *dirNode) childPathOr(name string) string {
	dir, _ := n.path()
	return childPath(dir, name)
}

func (n *dirNode) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	n.sm.statfs(ctx, out)
	return 0
}

// statfs reports the store's limits as the file system's size:
// Files is the memory limit, Ffree how many more memories fit.
func (sm *storeMount) statfs(ctx context.Context, out *fuse.StatfsOut) {
	maxMemories, maxBytes := sm.row.limits()
	live, err := sm.liveCount(ctx)
	if err != nil {
		live = 0
	}
	live += sm.count.pendingFiles() // created here and not published yet
	free := maxMemories - live
	if free < 0 {
		free = 0
	}
	const bsize = 4096
	out.Bsize, out.Frsize, out.NameLen = bsize, bsize, versions.MaxSegmentBytes
	out.Files, out.Ffree = uint64(maxMemories), uint64(free)
	out.Blocks = uint64(maxMemories) * uint64(maxBytes) / bsize
	out.Bfree = uint64(free) * uint64(maxBytes) / bsize
	out.Bavail = out.Bfree
}

// dotEntries are "." and "..", which readdir(3) users expect to see.
func dotEntries(in *fs.Inode) []fuse.DirEntry {
	parent := in
	if _, p := in.Parent(); p != nil {
		parent = p
	}
	return []fuse.DirEntry{
		{Name: ".", Mode: syscall.S_IFDIR, Ino: in.StableAttr().Ino},
		{Name: "..", Mode: syscall.S_IFDIR, Ino: parent.StableAttr().Ino},
	}
}

// siblingHeads are the heads of the memories the kernel knows in the
// directory, by name.
func (n *dirNode) siblingHeads() map[string]string {
	out := map[string]string{}
	for name, ch := range n.Children() {
		if f, ok := ch.Operations().(*fileNode); ok {
			f.mu.Lock()
			if f.memID != "" && f.head != "" && !f.localLocked() {
				out[name] = f.head
			}
			f.mu.Unlock()
		}
	}
	return out
}
