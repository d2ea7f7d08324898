package fusefs

import (
	"context"
	"path"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// The read-only trees of a mount: its root (root.go), the history tree
// (history.go) and a store as of a time in it (history_asof.go). Their nodes embed
// readOnlyDir or readOnlyFile in place of fs.Inode, so that every change
// is refused here, once: with EROFS, as a read-only file system refuses a
// change before it looks at the name or the attribute, and logged by
// Server.refuse with the place and the reason the node gives
// (readOnlyPlace).

// readOnlyPlace is a node of a read-only tree: the server, the node's path
// as the mount shows it, and the reason a change there is refused.
type readOnlyPlace interface {
	readOnlyPlace() (s *Server, shown, why string)
}

// The reasons a read-only tree gives.
const (
	whyRootReadOnly    = "the mount root is read-only: work inside a store's directory"
	whyHistoryReadOnly = "the history is read-only: to restore a version, copy it over the live file (cp .history/STORE/PATH/ENTRY STORE/PATH)"
)

// readOnlyNode is what read-only directories and files share: the
// refusal, and the attribute changes they refuse.
type readOnlyNode struct{ fs.Inode }

// refuse refuses op on the node, or on its entry name when name is set.
// The node embedding this one says where it is: go-fuse hands back the
// embedding node as the inode's operations.
func (n *readOnlyNode) refuse(op, name string) syscall.Errno {
	p, ok := n.Operations().(readOnlyPlace)
	if !ok {
		// A node that does not say where it is (the assertions below
		// list those that do) is still read-only.
		return syscall.EROFS
	}
	s, shown, why := p.readOnlyPlace()
	if name != "" {
		shown = path.Join(shown, name)
	}
	return s.refuse(op, shown, syscall.EROFS, why)
}

func (n *readOnlyNode) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return n.refuse("setattr", "")
}

func (n *readOnlyNode) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	return n.refuse("setxattr", "")
}

func (n *readOnlyNode) Removexattr(ctx context.Context, attr string) syscall.Errno {
	return n.refuse("removexattr", "")
}

// readOnlyDir is a directory of a read-only tree: no name in it can be
// made, removed or renamed, and it has no xattrs (go-fuse answers so).
type readOnlyDir struct{ readOnlyNode }

func (d *readOnlyDir) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, d.refuse("create", name)
}

func (d *readOnlyDir) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, d.refuse("mkdir", name)
}

func (d *readOnlyDir) Mknod(ctx context.Context, name string, mode uint32, dev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, d.refuse("mknod", name)
}

func (d *readOnlyDir) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, d.refuse("symlink", name)
}

func (d *readOnlyDir) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, d.refuse("link", name)
}

func (d *readOnlyDir) Unlink(ctx context.Context, name string) syscall.Errno {
	return d.refuse("unlink", name)
}

func (d *readOnlyDir) Rmdir(ctx context.Context, name string) syscall.Errno {
	return d.refuse("rmdir", name)
}

func (d *readOnlyDir) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	return d.refuse("rename", name)
}

// readOnlyFile is a file of a read-only tree: it opens for reading only,
// and its content cannot change.
type readOnlyFile struct{ readOnlyNode }

// refuseWriting refuses an open for writing or truncating, or returns 0.
func (f *readOnlyFile) refuseWriting(flags uint32) syscall.Errno {
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY || flags&syscall.O_TRUNC != 0 {
		return f.refuse("open for writing", "")
	}
	return 0
}

func (f *readOnlyFile) Write(ctx context.Context, fh fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	return 0, f.refuse("write", "")
}

// Allocate is what go-fuse calls for fallocate(2) (NodeAllocater). The
// kernel already refuses it on a descriptor open only for reading, which
// is the only kind these files give.
func (f *readOnlyFile) Allocate(ctx context.Context, fh fs.FileHandle, off uint64, size uint64, mode uint32) syscall.Errno {
	return f.refuse("fallocate", "")
}
