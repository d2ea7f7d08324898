package fusefs

import (
	"context"
	"errors"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/memfs/memfs/internal/mirror"
	"github.com/memfs/memfs/versions"
)

// dirNode is a directory of a store: the store's top directory or a path
// prefix of its memories. It holds nothing but its inode: its path is
// where the kernel's tree has it, its number, mode and times are the
// mirror's, its entries the store's listing and the mirror's own files.
type dirNode struct {
	fs.Inode
	sm *storeMount
}

func (n *dirNode) path() (string, bool) { return n.sm.pathOf(&n.Inode) }

// pathOf is the store path of a node, from the kernel-visible tree; false
// when the node is no longer reachable (removed, or replaced by a rename).
func (sm *storeMount) pathOf(in *fs.Inode) (string, bool) {
	top := &sm.top.Inode
	p := ""
	for in != top {
		name, parent := in.Parent()
		if parent == nil {
			return "", false
		}
		p = "/" + name + p
		in = parent
	}
	if p == "" {
		return "/", true
	}
	return p, true
}

func (n *dirNode) fillAttr(ctx context.Context, a *fuse.Attr) {
	p, _ := n.path()
	n.sm.dirAttr(ctx, p, n.StableAttr().Ino, a)
}

// dirAttr fills a directory's attributes: its link count is 2 plus its
// subdirectories, as on any POSIX file system (find and du rely on it).
func (sm *storeMount) dirAttr(ctx context.Context, p string, ino uint64, a *fuse.Attr) {
	mode, atime, mtime, ctime := sm.m.DirAttr(p)
	a.Ino = ino
	a.Mode = syscall.S_IFDIR | mode
	a.Nlink = 2
	if n, ok := sm.m.Index().Subdirs(p); ok {
		a.Nlink += uint32(n)
	} else if entries, err := sm.listDir(ctx, p); err == nil {
		for _, e := range entries {
			if e.Dir {
				a.Nlink++
			}
		}
	}
	a.Size = 4096
	a.Uid, a.Gid = sm.srv.opts.UID, sm.srv.opts.GID
	a.SetTimes(&atime, &mtime, &ctime)
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
	ev := mirror.SetDirAttr{Path: p}
	ev.Mode, ev.Atime, ev.Mtime = attrChanges(in)
	n.sm.m.Apply(ev)
	n.fillAttr(ctx, &out.Attr)
	out.SetTimeout(cacheTimeout)
	return 0
}

func (n *dirNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	dir, ok := n.path()
	if !ok || n.sm.m.Gone() {
		return nil, syscall.ENOENT
	}
	return n.sm.lookup(ctx, &n.Inode, dir, name, out)
}

// lookup is what is at dir/name: the mount's own file, else the store's
// entry. The node is the one the kernel has, if it still stands for it.
func (sm *storeMount) lookup(ctx context.Context, parent *fs.Inode, dir, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	id, isDir, err := sm.resolve(ctx, dir, name)
	if err != nil {
		return nil, sm.errnoOf("lookup", childPath(dir, name), err)
	}
	out.SetAttrTimeout(cacheTimeout)
	if isDir {
		if known := parent.GetChild(name); known != nil {
			if d, ok := known.Operations().(*dirNode); ok {
				d.fillAttr(ctx, &out.Attr)
				return known, 0
			}
		}
		p := childPath(dir, name)
		ino := sm.m.DirIno(p)
		sm.dirAttr(ctx, p, ino, &out.Attr)
		return parent.NewInode(ctx, &dirNode{sm: sm}, fs.StableAttr{Mode: syscall.S_IFDIR, Ino: ino}), 0
	}
	if known := parent.GetChild(name); known != nil {
		if f, ok := known.Operations().(*fileNode); ok && f.id == id {
			f.attr(&out.Attr)
			return known, 0
		}
	}
	f := &fileNode{sm: sm, id: id}
	f.attr(&out.Attr)
	return parent.NewInode(ctx, f, fs.StableAttr{Mode: syscall.S_IFREG, Ino: out.Attr.Ino}), 0
}

// resolve makes sure the mirror knows what is at dir/name: the file's id,
// or isDir.
func (sm *storeMount) resolve(ctx context.Context, dir, name string) (id mirror.ID, isDir bool, err error) {
	p := childPath(dir, name)
	pl := sm.m.Apply(mirror.Lookup{Path: p})
	if pl.Errno != 0 {
		return 0, false, mirror.AbsentError(sm.id, p)
	}
	if pl.File != 0 {
		return pl.File, false, nil
	}
	e, err := sm.lookupEntry(ctx, dir, name)
	if err != nil {
		return 0, false, err
	}
	if e.Dir {
		return 0, true, nil
	}
	if e.Memory == nil {
		return 0, false, errors.New("the engine returned a file entry without its memory")
	}
	return sm.m.Apply(mirror.Lookup{Path: p, Mem: e.Memory}).File, false, nil
}

func (n *dirNode) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	dir, ok := n.path()
	if !ok {
		return fs.NewListDirStream(nil), 0
	}
	sm := n.sm
	if sm.m.Gone() {
		return nil, sm.refuseGone("readdir", dir)
	}
	local := sm.m.Local(dir)
	entries, err := sm.listDir(ctx, dir)
	if err != nil {
		return nil, sm.errnoOf("readdir", dir, err)
	}
	listed := sm.m.Listing(local, entries)
	list := append(make([]fuse.DirEntry, 0, len(listed)+2), dotEntries(&n.Inode)...)
	for _, l := range listed {
		mode := uint32(syscall.S_IFREG)
		if l.Dir {
			mode = syscall.S_IFDIR
		}
		list = append(list, fuse.DirEntry{Name: l.Name, Mode: mode, Ino: l.Ino})
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
	sm := n.sm
	p, e := n.writableChild("mkdir", name)
	if e != 0 {
		return nil, e
	}
	if _, e := sm.run(ctx, "mkdir", at(p), mirror.MakeDir{Path: p, Mode: mode}); e != 0 {
		return nil, e
	}
	ino := sm.m.DirIno(p)
	sm.dirAttr(ctx, p, ino, &out.Attr)
	out.SetAttrTimeout(cacheTimeout)
	return n.NewInode(ctx, &dirNode{sm: sm}, fs.StableAttr{Mode: syscall.S_IFDIR, Ino: ino}), 0
}

func (n *dirNode) Rmdir(ctx context.Context, name string) syscall.Errno {
	p, e := n.writableChild("rmdir", name)
	if e != 0 {
		return e
	}
	_, e = n.sm.run(ctx, "rmdir", at(p), mirror.RemoveDir{Path: p})
	return e
}

// Create makes a file that exists only in the mount until its first save
// (close, fsync): then it becomes a memory with one "created" version
// holding what was written, so `echo hi > f` makes exactly one version.
func (n *dirNode) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	sm := n.sm
	p, e := n.writableChild("create", name)
	if e != 0 {
		return nil, nil, 0, e
	}
	if err := versions.ValidatePath(p); err != nil {
		return nil, nil, 0, sm.errnoOf("create", p, err)
	}
	pl, e := sm.run(ctx, "create", at(p), mirror.Create{Path: p, Tid: int(callerTID(ctx)), Append: flags&syscall.O_APPEND != 0, Mode: mode})
	if e != 0 {
		return nil, nil, 0, e
	}
	sm.fileAttr(pl.Attr, &out.Attr)
	ch := n.NewInode(ctx, &fileNode{sm: sm, id: pl.File}, fs.StableAttr{Mode: syscall.S_IFREG, Ino: pl.Ino})
	return ch, &fileHandle{pl.Handle}, 0, 0
}

func (n *dirNode) Unlink(ctx context.Context, name string) syscall.Errno {
	sm := n.sm
	p, e := n.writableChild("unlink", name)
	if e != 0 {
		return e
	}
	dir, _ := n.path()
	id, isDir, err := sm.resolve(ctx, dir, name)
	if err != nil {
		return sm.errnoOf("unlink", p, err)
	}
	if isDir {
		return sm.refuse("unlink", p, syscall.EISDIR, "it is a directory: use rmdir")
	}
	_, e = sm.run(ctx, "unlink", at(p), mirror.Unlink{Path: p}, id)
	return e
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
	_ = sm.eng.Reread(detach(ctx), sm.m) // else what the mount knows
	maxMemories, free, maxBytes := sm.m.Capacity()
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

// lookupEntry answers what is at dir/name (mirror.Engine.Entry).
func (sm *storeMount) lookupEntry(ctx context.Context, dir, name string) (*versions.Entry, error) {
	e, cached, err := sm.eng.Entry(detach(ctx), sm.m.Index(), dir, name)
	if cached != nil {
		sm.srv.servingCached(cached)
	}
	return e, err
}

func (sm *storeMount) listDir(ctx context.Context, dir string) ([]versions.Entry, error) {
	return sm.eng.List(detach(ctx), sm.m.Index(), dir)
}
