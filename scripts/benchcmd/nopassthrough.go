package main

import (
	"context"
	"fmt"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// On kernels with FUSE passthrough (6.9+) and as root, go-fuse's loopback
// hands the kernel each open file's backing descriptor, so reads and writes
// never reach the daemon. memfs keeps content in SQLite and cannot do that;
// the "loopback-nopt" target is the loopback with passthrough hidden, the
// cost of FUSE when data goes through a userspace server too.

// plainLoopbackNode is a loopback node whose files offer no passthrough.
type plainLoopbackNode struct {
	fs.LoopbackNode
}

var (
	_ = (fs.NodeOpener)((*plainLoopbackNode)(nil))
	_ = (fs.NodeCreater)((*plainLoopbackNode)(nil))
)

func (n *plainLoopbackNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, fl, e := n.LoopbackNode.Open(ctx, flags)
	return hidePassthrough(fh), fl, e
}

func (n *plainLoopbackNode) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	ino, fh, fl, e := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	return ino, hidePassthrough(fh), fl, e
}

// loopbackFile is what the workload needs of a loopback file; embedding it
// forwards exactly these methods, and not PassthroughFd.
type loopbackFile interface {
	fs.FileReader
	fs.FileWriter
	fs.FileReleaser
	fs.FileFlusher
	fs.FileFsyncer
	fs.FileGetattrer
	fs.FileSetattrer
	fs.FileLseeker
}

type plainFile struct{ loopbackFile }

func hidePassthrough(fh fs.FileHandle) fs.FileHandle {
	if lf, ok := fh.(loopbackFile); ok {
		return &plainFile{lf}
	}
	return fh
}

// newPlainLoopbackRoot is fs.NewLoopbackRoot with plainLoopbackNodes.
func newPlainLoopbackRoot(path string) (fs.InodeEmbedder, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return nil, fmt.Errorf("loopback of %s: %w", path, err)
	}
	root := &fs.LoopbackRoot{
		Path: path,
		Dev:  st.Dev,
		NewNode: func(r *fs.LoopbackRoot, _ *fs.Inode, _ string, _ *syscall.Stat_t) fs.InodeEmbedder {
			return &plainLoopbackNode{fs.LoopbackNode{RootData: r}}
		},
	}
	root.RootNode = root.NewNode(root, nil, "", &st)
	return root.RootNode, nil
}
