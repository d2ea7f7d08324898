package fusefs

import (
	"context"
	"log/slog"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/memfs/memfs/guard"
	"github.com/memfs/memfs/internal/mirror"
	"github.com/memfs/memfs/internal/ratelog"
)

// fileNode is a file as the kernel sees it: its inode and its id in the
// store's mirror, which holds everything else (its state, buffer, mode and
// times, what the kernel's caches hold of it). Each request becomes an
// event of the mirror, and its plan is carried out (storeMount.run).
type fileNode struct {
	fs.Inode
	sm *storeMount
	id mirror.ID
}

// fileHandle is an open file description: its id in the mirror, which
// keeps what the open and its writes did.
type fileHandle struct{ id mirror.HandleID }

func (n *fileNode) path() (string, bool) { return n.sm.pathOf(&n.Inode) }

func (n *fileNode) pathShown() string {
	p, _ := n.path()
	return p
}

func (n *fileNode) memoryID() string {
	id, _, _, _ := n.sm.m.FileOf(n.id)
	return id
}

func handleOf(f fs.FileHandle) mirror.HandleID {
	if h, ok := f.(*fileHandle); ok {
		return h.id
	}
	return 0
}

// fileAttr fills the kernel's attributes of a file from the mirror's.
func (sm *storeMount) fileAttr(a *mirror.Attr, out *fuse.Attr) {
	out.Ino = a.Ino
	out.Mode = syscall.S_IFREG | a.Mode
	out.Size = uint64(a.Size)
	out.Nlink = a.Nlink
	out.Uid, out.Gid = sm.srv.opts.UID, sm.srv.opts.GID
	out.SetTimes(&a.Atime, &a.Mtime, &a.Ctime)
}

func (n *fileNode) attr(out *fuse.Attr) syscall.Errno {
	p := n.sm.m.Apply(mirror.Getattr{File: n.id})
	if p.Attr == nil {
		return syscall.ENOENT
	}
	n.sm.fileAttr(p.Attr, out)
	return 0
}

func (n *fileNode) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	return n.attr(&out.Attr)
}

func (n *fileNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	sm := n.sm
	write, trunc := flags&syscall.O_ACCMODE != syscall.O_RDONLY, flags&syscall.O_TRUNC != 0
	if write || trunc {
		if e := sm.writable("open", n.pathShown()); e != 0 {
			return nil, 0, e
		}
	} else if sm.m.Gone() {
		return nil, 0, sm.refuseGone("open", n.pathShown())
	}
	pl, e := sm.run(ctx, "open", n.pathShown, mirror.Open{File: n.id, Tid: int(callerTID(ctx)), Write: write, Append: flags&syscall.O_APPEND != 0, Trunc: trunc}, n.id)
	if e != 0 {
		return nil, 0, e
	}
	var ff uint32
	if pl.KeepCache {
		ff |= fuse.FOPEN_KEEP_CACHE
	}
	if pl.DirectIO {
		ff |= fuse.FOPEN_DIRECT_IO
	}
	if !write {
		ff |= fuse.FOPEN_NOFLUSH // its close has nothing to save: no FLUSH request
	}
	return &fileHandle{pl.Handle}, ff, 0
}

func (n *fileNode) Read(ctx context.Context, f fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	ev := mirror.Read{File: n.id, Off: off, Size: len(dest), Dest: dest}
	// A read of a loaded file asks nothing of the engine: its plan is the
	// data alone, carried out here without the engine loop.
	unlock := n.sm.m.Lock(n.id)
	pl := n.sm.m.Apply(ev)
	unlock()
	if pl.Ask == nil && pl.Errno == 0 && pl.Err == nil && len(pl.Notify) == 0 && len(pl.Timers) == 0 {
		return fuse.ReadResultData(pl.Data), 0
	}
	pl, e := n.sm.run(ctx, "read", n.pathShown, ev, n.id)
	if e != 0 {
		return nil, e
	}
	return fuse.ReadResultData(pl.Data), 0
}

// Write changes the shared buffer; what a save would refuse is refused
// here (internal/mirror's CheckWrite), and the content stays refused.
func (n *fileNode) Write(ctx context.Context, f fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	sm := n.sm
	_, e := sm.run(ctx, "write", n.pathShown, mirror.Write{Handle: handleOf(f), Off: off, Data: data, Tid: callerTID(ctx), Offline: sm.offline(ctx)}, n.id)
	if e != 0 {
		return 0, e
	}
	return uint32(len(data)), 0
}

// Flush saves what this handle wrote (a close(2) of one of its
// descriptors).
func (n *fileNode) Flush(ctx context.Context, f fs.FileHandle) syscall.Errno {
	_, e := n.sm.run(ctx, "close", n.pathShown, mirror.Flush{Handle: handleOf(f), Tid: callerTID(ctx)}, n.id)
	return e
}

func (n *fileNode) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	if f == nil {
		return 0
	}
	_, e := n.sm.run(ctx, "fsync", n.pathShown, mirror.Fsync{Handle: handleOf(f)}, n.id)
	return e
}

// Release drops the handle; with the last one a file created and never
// saved is saved now (touch), and content whose save failed is discarded.
func (n *fileNode) Release(ctx context.Context, f fs.FileHandle) syscall.Errno {
	sm := n.sm
	pl, _ := sm.run(ctx, "release", n.pathShown, mirror.Release{Handle: handleOf(f)}, n.id)
	if pl.Discarded {
		// As many as the refused saves before it, so rate-limited like them.
		sm.srv.refusals.Log(sm.srv.log, slog.LevelWarn, ratelog.Kind{Op: "release", Errno: 0, Store: sm.slug}, "unsaved content discarded: its save failed and the last handle closed", sm.where(), "path", guard.NameShown(n.pathShown()))
	}
	return 0
}

// Setattr: chmod and times are kept in the mount's memory (setuid and
// setgid dropped), chown is accepted and ignored: every file belongs to
// the mount's owner. A size change edits the buffer; without a file
// handle (truncate(2) on a path) it is saved at once.
func (n *fileNode) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	sm := n.sm
	p := n.pathShown()
	if e := sm.writable("setattr", p); e != 0 {
		return e
	}
	ev := mirror.Setattr{File: n.id, Handle: handleOf(f)}
	ev.Mode, ev.Atime, ev.Mtime = attrChanges(in)
	if size, ok := in.GetSize(); ok {
		s := int64(min(size, 1<<62))
		ev.Size = &s
	}
	op := "setattr"
	if ev.Size != nil {
		op = "truncate"
	}
	if _, e := sm.run(ctx, op, at(p), ev, n.id); e != 0 {
		return e
	}
	return n.attr(&out.Attr)
}

func (n *fileNode) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	n.sm.statfs(ctx, out)
	return 0
}

// callerTID is the thread that made the request, 0 when it cannot be told
// (the kernel itself): the mirror maps it to its process to tell a
// writer's close from a forked child's dropping its inherited copy.
func callerTID(ctx context.Context) uint32 {
	if c, ok := fuse.FromContext(ctx); ok {
		return c.Pid
	}
	return 0
}

// attrChanges are the mode and times a setattr request sets, nil where it
// sets none.
func attrChanges(in *fuse.SetAttrIn) (mode *uint32, atime, mtime *time.Time) {
	if m, ok := in.GetMode(); ok {
		mode = &m
	}
	if t, ok := in.GetATime(); ok {
		atime = &t
	}
	if t, ok := in.GetMTime(); ok {
		mtime = &t
	}
	return
}
