package fusefs

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// rootNode is the mount root: one directory per attached store, named by
// its slug, and the read-only history tree (.history, history.go), unless
// hidden; nothing can be created, renamed or removed in it (readOnlyDir).
type rootNode struct {
	readOnlyDir
	srv *Server
}

func (r *rootNode) OnAdd(ctx context.Context) {
	for _, sm := range r.srv.stores {
		ch := r.NewPersistentInode(ctx, sm.top, fs.StableAttr{Mode: syscall.S_IFDIR, Ino: sm.m.DirIno("/")})
		r.AddChild(sm.slug, ch, false)
	}
	if !r.srv.opts.HideHistory {
		h := r.srv.newHistoryRoot()
		r.AddChild(historyName, r.NewPersistentInode(ctx, h, fs.StableAttr{Mode: syscall.S_IFDIR, Ino: historyDirIno("", "/")}), false)
	}
}

// subdirs is how many directories the root holds.
func (r *rootNode) subdirs() int {
	if r.srv.opts.HideHistory {
		return len(r.srv.stores)
	}
	return len(r.srv.stores) + 1
}

func (r *rootNode) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	s := r.srv
	out.Ino = r.StableAttr().Ino
	out.Mode = syscall.S_IFDIR | 0o755
	out.Nlink = uint32(2 + r.subdirs())
	out.Size = 4096
	out.Uid, out.Gid = s.opts.UID, s.opts.GID
	out.SetTimes(&s.started, &s.started, &s.started)
	out.SetTimeout(cacheTimeout)
	return 0
}

func (r *rootNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	ch := r.GetChild(name)
	if ch == nil {
		return nil, syscall.ENOENT
	}
	switch op := ch.Operations().(type) {
	case *dirNode:
		op.fillAttr(ctx, &out.Attr)
	case *historyRoot:
		r.srv.historyDirAttr(ch.StableAttr().Ino, uint32(2+len(r.srv.stores)), &out.Attr)
	}
	out.SetAttrTimeout(cacheTimeout)
	return ch, 0
}

func (r *rootNode) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	list := make([]fuse.DirEntry, 0, len(r.srv.stores)+2)
	list = append(list, dotEntries(&r.Inode)...)
	for _, sm := range r.srv.stores {
		list = append(list, fuse.DirEntry{Name: sm.slug, Mode: syscall.S_IFDIR, Ino: sm.m.DirIno("/")})
	}
	if !r.srv.opts.HideHistory {
		list = append(list, fuse.DirEntry{Name: historyName, Mode: syscall.S_IFDIR, Ino: historyDirIno("", "/")})
	}
	return fs.NewListDirStream(list), 0
}

// OpendirHandle lets the kernel keep the listing: the stores of a mount
// never change.
func (r *rootNode) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	return &dirHandle{list: r.Readdir}, fuse.FOPEN_CACHE_DIR, 0
}

// readOnlyPlace: the root is shown as "/".
func (r *rootNode) readOnlyPlace() (*Server, string, string) { return r.srv, "/", whyRootReadOnly }

func (r *rootNode) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	out.Bsize, out.Frsize, out.NameLen = 4096, 4096, 255
	return 0
}
