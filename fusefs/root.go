package fusefs

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// rootNode is the mount root: one directory per attached store, named by
// its slug, and the read-only history tree (.history, history.go), unless
// hidden; nothing can be created, renamed or removed in it.
type rootNode struct {
	fs.Inode
	srv *Server
}

func (r *rootNode) OnAdd(ctx context.Context) {
	for _, sm := range r.srv.stores {
		ch := r.NewPersistentInode(ctx, sm.top, fs.StableAttr{Mode: syscall.S_IFDIR, Ino: sm.ino.dir("/")})
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
		list = append(list, fuse.DirEntry{Name: sm.slug, Mode: syscall.S_IFDIR, Ino: sm.ino.dir("/")})
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

func (r *rootNode) readOnly(op, name string) syscall.Errno {
	return r.srv.refuse(op, "/"+name, syscall.EROFS, "the mount root is read-only: work inside a store's directory")
}

func (r *rootNode) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, r.readOnly("create", name)
}

func (r *rootNode) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, r.readOnly("mkdir", name)
}

func (r *rootNode) Mknod(ctx context.Context, name string, mode uint32, dev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, r.readOnly("mknod", name)
}

func (r *rootNode) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, r.readOnly("symlink", name)
}

func (r *rootNode) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, r.readOnly("link", name)
}

func (r *rootNode) Unlink(ctx context.Context, name string) syscall.Errno {
	return r.readOnly("unlink", name)
}

func (r *rootNode) Rmdir(ctx context.Context, name string) syscall.Errno {
	return r.readOnly("rmdir", name)
}

func (r *rootNode) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	return r.readOnly("rename", name)
}

func (r *rootNode) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return r.readOnly("setattr", "")
}

func (r *rootNode) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	return r.readOnly("setxattr", "")
}

func (r *rootNode) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	return 0, syscall.ENODATA
}

func (r *rootNode) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	return 0, 0
}

func (r *rootNode) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	out.Bsize, out.Frsize, out.NameLen = 4096, 4096, 255
	return 0
}
