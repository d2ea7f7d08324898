package fusefs

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/memfs/memfs/versions"
)

// watch follows the change feed and tells the kernel, and the mount's own
// caches, to forget what they hold about paths changed by others — another
// mount, another process, the CLI, another host — so they see a committed
// save within one wake-up. The engine says when the feed may have
// moved (versions.DB.WaitFeed: a poll of SQLite every PollInterval, slower
// when idle; PostgreSQL's notifications); each store then reads on from
// its own position, so a missed wake-up or a reconnection loses nothing.
func (s *Server) watch(ctx context.Context) {
	var mark versions.FeedMark
	failing := false
	for {
		next, err := s.db.WaitFeed(ctx, mark, s.opts.PollInterval)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			for _, sm := range s.stores {
				if err = sm.poll(ctx); err != nil {
					break
				}
			}
		}
		if err != nil {
			if !failing {
				s.log.Error("reading the change feed failed; retrying", "err", err)
			}
			failing = true
			select {
			case <-ctx.Done():
				return
			case <-time.After(s.opts.PollInterval):
			}
			continue
		}
		if failing {
			s.log.Info("reading the change feed works again")
		}
		failing = false
		s.reachable()
		mark = next
	}
}

// poll applies the store's changes since the last poll. Archiving and
// other changes to the store itself are changes at "/": they make it read
// the store row again, which is how an archive reaches the mount.
func (sm *storeMount) poll(ctx context.Context) error {
	s := sm.srv
	changes, pos, err := s.db.Changes(ctx, sm.id, sm.seq)
	if err != nil {
		return err
	}
	sm.seq = pos
	if len(changes) == 0 {
		return nil
	}
	if slices.ContainsFunc(changes, func(c versions.Change) bool { return c.Path == "/" }) {
		if st, err := s.db.GetStore(ctx, sm.id); err == nil {
			sm.row.set(st)
		}
	}
	sm.own.expire(2 * time.Second)
	sm.apply(ctx, changes)
	return nil
}

// apply invalidates the kernel's view of every path changed by others.
func (sm *storeMount) apply(ctx context.Context, changes []versions.Change) {
	origin := sm.srv.db.Origin()
	done := map[string]bool{}
	for _, c := range changes {
		if c.Origin == origin && sm.own.take(c.Path) || done[c.Path] {
			continue
		}
		done[c.Path] = true
		if !c.At.IsZero() {
			sm.srv.opts.Observer.FeedLag(time.Since(c.At))
		}
		sm.count.stale()
		// The index first: the kernel asks again as soon as it is told.
		sm.idx.forget(c.Path)
		sm.invalidate(ctx, c.Path)
	}
}

// invalidate walks the kernel-known tree down to path: the first unknown
// name gets its (possibly negative) dentry dropped; a known file gets its
// attributes and pages dropped, a known directory that is gone its dentry.
func (sm *storeMount) invalidate(ctx context.Context, path string) {
	if path == "/" || path == "" {
		return
	}
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	parent := &sm.top.Inode
	for i, seg := range segs {
		child := parent.GetChild(seg)
		if child == nil {
			errno := parent.NotifyEntry(seg)
			sm.srv.log.Debug("changed elsewhere: dropped a name", "path", path, "name", seg, "errno", errno)
			return
		}
		if i < len(segs)-1 {
			parent = child
			continue
		}
		e, err := sm.srv.db.Stat(detach(ctx), sm.id, path)
		switch op := child.Operations().(type) {
		case *fileNode:
			if err == nil && e.Memory != nil && e.Memory.ID == op.memoryID() {
				op.refresh(e.Memory, true)
				child.NotifyContent(0, 0)
				return
			}
			child.NotifyContent(0, 0)
		case *dirNode:
			if err == nil && e.Dir {
				return
			}
			sm.ino.bumpDir(path)
		}
		parent.NotifyEntry(seg)
	}
}
