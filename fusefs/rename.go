package fusefs

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"

	"github.com/memfs/memfs/internal/mirror"
	"github.com/memfs/memfs/versions"
)

const (
	renameNoReplace = 0x1 // RENAME_NOREPLACE
	renameExchange  = 0x2 // RENAME_EXCHANGE
	renameWhiteout  = 0x4 // RENAME_WHITEOUT
)

// Rename moves a file or directory inside one store, keeping memory ids;
// the mirror decides what the store sees of it (an atomic save, a held
// backup, a move).
func (n *dirNode) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	sm := n.sm
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
	if e := sm.writable("rename", to); e != 0 {
		return e // into or out of the session's write prefix: EROFS, not EXDEV, so mv does not copy and then fail
	}
	if err := versions.ValidatePath(to); err != nil {
		return sm.errnoOf("rename", to, err)
	}
	src, srcDir, err := sm.resolve(ctx, dir, name)
	if err != nil {
		return sm.errnoOf("rename", from, err)
	}
	if srcDir {
		_, e := sm.run(ctx, "rename", at(from+" -> "+to), mirror.RenameDir{From: from, To: to, NoReplace: flags&renameNoReplace != 0})
		return e
	}
	dst, _, err := sm.resolve(ctx, ndir, newName)
	if err != nil && versions.ErrorCode(err) != versions.CodeNotFound {
		return sm.errnoOf("rename", to, err)
	}
	if err == nil && flags&renameNoReplace != 0 {
		return sm.refuse("rename", to, syscall.EEXIST, "the target exists and the rename must not replace it")
	}
	_, e := sm.run(ctx, "rename", at(from+" -> "+to), mirror.Rename{From: from, To: to, Tid: int(callerTID(ctx))}, src, dst)
	return e
}
