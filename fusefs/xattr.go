package fusefs

import (
	"context"
	"strings"
	"syscall"
)

// The read-only extended attributes of a file.
const (
	xattrID      = "user.memfs.id"
	xattrVersion = "user.memfs.version"
	xattrSHA256  = "user.memfs.sha256"
	xattrWriter  = "user.memfs.writer"
	xattrPrefix  = "user.memfs."
)

var xattrList = []byte(xattrID + "\x00" + xattrVersion + "\x00" + xattrSHA256 + "\x00" + xattrWriter + "\x00")

// xattrReply copies v into dest with getxattr's size protocol: an empty
// dest asks for the size.
func xattrReply(v []byte, dest []byte) (uint32, syscall.Errno) {
	if len(dest) == 0 {
		return uint32(len(v)), 0
	}
	if len(dest) < len(v) {
		return uint32(len(v)), syscall.ERANGE
	}
	return uint32(copy(dest, v)), 0
}

// Getxattr reads the saved head: unsaved writes in an open buffer are not
// reflected until they are saved.
func (n *fileNode) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	if !strings.HasPrefix(attr, xattrPrefix) {
		return 0, syscall.ENODATA
	}
	id := n.memoryID()
	if id == "" {
		return 0, syscall.ENODATA // not saved yet, or deleted
	}
	p, _ := n.path()
	v, err := n.sm.eng.Xattr(detach(ctx), id, p, strings.TrimPrefix(attr, xattrPrefix))
	if err != nil {
		return 0, n.sm.errnoOf("getxattr", p, err)
	}
	if v == nil {
		return 0, syscall.ENODATA
	}
	return xattrReply([]byte(*v), dest)
}

func (n *fileNode) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	if n.memoryID() == "" {
		return 0, 0
	}
	return xattrReply(xattrList, dest)
}

func (n *fileNode) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	p, _ := n.path()
	return n.sm.setxattr(p, attr)
}

func (n *fileNode) Removexattr(ctx context.Context, attr string) syscall.Errno {
	p, _ := n.path()
	if strings.HasPrefix(attr, xattrPrefix) {
		return n.sm.refuse("removexattr", p, syscall.EPERM, attr+" is maintained by memfs and read-only")
	}
	return syscall.ENODATA
}

// A directory has no attributes: go-fuse answers getxattr, listxattr and
// removexattr so.
func (n *dirNode) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	p, _ := n.path()
	return n.sm.setxattr(p, attr)
}

// setxattr refuses every attribute: memfs's own are read-only (EPERM), no
// others can be stored (ENOTSUP).
func (sm *storeMount) setxattr(path, attr string) syscall.Errno {
	if e := sm.writable("setxattr", path); e != 0 {
		return e
	}
	if strings.HasPrefix(attr, xattrPrefix) {
		return sm.refuse("setxattr", path, syscall.EPERM, attr+" is maintained by memfs and read-only")
	}
	const why = "extended attributes cannot be stored; only user.memfs.* exist and they are read-only"
	if strings.HasPrefix(attr, "system.posix_acl_") {
		// sed -i, cp -p and editors copy ACLs and go on without them:
		// a warning on every edit would bury the refusals that matter.
		sm.srv.log.Debug("refused", "op", "setxattr", "path", path, "errno", "ENOTSUP", "attr", attr, "reason", why)
		return syscall.ENOTSUP
	}
	return sm.refuse("setxattr", path, syscall.ENOTSUP, why)
}
