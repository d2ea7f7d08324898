package fusefs

import (
	"context"
	"syscall"
	"time"

	"github.com/memfs/memfs/versions"
)

// The mount's lease (versions/leases.go). Its pending files are its own
// while it renews the lease: a goroutine of its own renews it on the
// database handle's connection kept for renewals, so neither the requests
// the mount serves nor a queue of saves delays it. A lease found lapsed
// (the daemon was stopped, or cut off from the database, for longer than
// versions.LeaseTTL) is not renewed: the mount takes a new lease at a new
// epoch and says so in its log. The files it held before are recovered by
// others from then on; it publishes and drops none of them, and their
// nodes show what the store has at their path (lostLocked).

// owner names this mount's pending files: its instance, never its path
// (mounts in other namespaces or on other hosts may share that), at the
// epoch of its lease now.
func (s *Server) owner() versions.PendingOwner {
	return versions.PendingOwner{Mount: s.lease.ID, Epoch: s.epoch.Load()}
}

// renewLease renews the mount's lease until the mount stops. A renewal the
// database did not take is tried again at the next tick.
func (s *Server) renewLease(ctx context.Context) {
	l := s.lease
	l.Epoch = s.epoch.Load()
	t := time.NewTicker(versions.LeaseRenew)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		lapsed, err := s.db.RenewMount(ctx, &l)
		switch {
		case err != nil && ctx.Err() == nil:
			if !failing {
				s.log.Warn("renewing the mount's lease failed; retrying (after "+versions.LeaseTTL.String()+" without a renewal others take this mount for dead and publish its temporary files)", "err", err)
			}
			failing = true
		case lapsed:
			s.epoch.Store(l.Epoch)
			s.log.Warn("the mount's lease had lapsed: others publish the temporary files it held and may have ended its session; it publishes and drops none of them, and holds a new lease now",
				"lease", l.ID, "epoch", l.Epoch)
			failing = false
		case err == nil:
			failing = false
		}
	}
}

// lostLocked is told that the node's pending row is no longer this
// mount's (versions.IsPendingLost): its lease lapsed, and recovery publishes
// the row at its path. The node forgets the row; it stands for the memory
// at at when there is one already, and otherwise leaves the mount until
// recovery's publication arrives through the feed.
func (n *fileNode) lostLocked(ctx context.Context, at string, err error) {
	sm, s := n.sm, n.sm.srv
	s.log.Warn("a temporary file saved before the mount's lease lapsed is no longer this mount's: it is published by others at its path, and this mount neither publishes nor drops it",
		"path", at, "pending", n.pendID, "err", err)
	sm.pub.unschedule(n)
	n.pendID, n.pendSaved = 0, ""
	m, gerr := s.db.GetMemory(detach(ctx), sm.id, at)
	if gerr != nil || m == nil {
		n.unlinkedLocked()
		s.notifyEntryOf(n)
		return
	}
	if n.unpublished {
		n.unpublished = false
		sm.count.adjust(0, -1)
	}
	sm.count.stale()
	n.memID, n.head, n.size = m.ID, m.VersionID, int64(m.ContentSize)
	if n.buf != nil {
		n.buf.base = m.VersionID
		n.buf.stale = !n.buf.dirty
		if n.opens == 0 {
			n.buf = nil
			n.settleLocked()
		}
	}
	n.pagesSync = false
	n.keepMetaLocked()
	n.ForgetPersistent()
}

// notifyEntryOf makes the kernel look the node's name up again.
func (s *Server) notifyEntryOf(n *fileNode) {
	if name, parent := n.Parent(); parent != nil {
		s.notifyEntry(parent, name)
	}
}

// lostErrno is what a request that needed the lost row gets: the file was
// taken over by recovery, and saving again works on what the store has.
func (sm *storeMount) lostErrno(op, at string) syscall.Errno {
	return sm.refuse(op, at, syscall.EIO, "the mount's lease lapsed (the daemon was stopped or cut off from the database) and this temporary file is published by others at its path: nothing of this request was done; save the file again")
}
