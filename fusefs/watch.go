package fusefs

import (
	"context"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/memfs/memfs/versions"
)

// watch polls the change feed and tells the kernel, and the mount's own
// caches, to forget what they hold about paths changed by others — another
// mount, another process, the CLI — so they see a committed save within one
// poll (F10). Most polls find the feed's head where it was, which costs one
// indexed read for the whole mount. A mount whose database saw no change
// for idleAfter polls idleFactor times less often: an idle daemon woke 40
// times a second for 2% of a core.
func (s *Server) watch(ctx context.Context) {
	t := time.NewTimer(s.opts.PollInterval)
	defer t.Stop()
	var last int64
	lastChange := time.Now()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		_, high, err := s.db.Changes(ctx, "", math.MaxInt64)
		if err == nil && high != last {
			lastChange = time.Now()
			for _, sm := range s.stores {
				if err = sm.poll(ctx); err != nil {
					break
				}
			}
		}
		next := s.opts.PollInterval
		if time.Since(lastChange) > idleAfter {
			next *= idleFactor
		}
		t.Reset(next)
		if err != nil {
			if ctx.Err() == nil && !failing {
				s.log.Error("reading the change feed failed", "err", err)
			}
			failing = true
			continue
		}
		failing = false
		last = high
	}
}

const (
	idleAfter  = 5 * time.Second
	idleFactor = 4
)

// poll applies the store's changes since the last poll. Archiving and
// other changes to the store itself are changes at "/": they make it read
// the store row again, which is how an archive reaches the mount (F3).
func (sm *storeMount) poll(ctx context.Context) error {
	s := sm.srv
	changes, high, err := s.db.Changes(ctx, sm.id, sm.seq)
	if err != nil {
		return err
	}
	sm.seq = max(sm.seq, high)
	if len(changes) == 0 {
		return nil
	}
	if slices.ContainsFunc(changes, func(c versions.Change) bool { return c.Path == "/" }) {
		if st, err := s.db.GetStore(ctx, sm.id); err == nil {
			sm.setStore(st)
		}
	}
	sm.expireOwn(2 * time.Second)
	sm.apply(ctx, changes)
	return nil
}

// apply invalidates the kernel's view of every path changed by others.
func (sm *storeMount) apply(ctx context.Context, changes []versions.Change) {
	origin := sm.srv.db.Origin()
	done := map[string]bool{}
	for _, c := range changes {
		if c.Origin == origin && sm.takeOwn(c.Path) || done[c.Path] {
			continue
		}
		done[c.Path] = true
		sm.mu.Lock()
		sm.liveOK = false
		sm.mu.Unlock()
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
			sm.bumpDirGen(path)
		}
		parent.NotifyEntry(seg)
	}
}
