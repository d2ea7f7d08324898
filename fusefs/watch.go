package fusefs

import (
	"context"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"

	"github.com/memfs/memfs/internal/mirror"
	"github.com/memfs/memfs/versions"
)

// watch follows the change feed (mirror.Follow) and tells the kernel, and
// the mount's own caches, to forget what they hold about paths changed by
// others — another mount, another process, the CLI, another host — so
// they see a committed save within one wake-up. A store's own saves need
// not wake it, unless its history tree was looked at: that hears of every
// change (poll).
func (s *Server) watch(ctx context.Context) {
	ids := make([]string, len(s.stores))
	for i, sm := range s.stores {
		ids[i] = sm.id
	}
	follow := func() []versions.Followed {
		out := make([]versions.Followed, len(s.stores))
		for i, sm := range s.stores {
			out[i].Store = sm.id
			if sm.history == nil || !sm.history.looked.Load() {
				out[i].Own = sm.m.Origin()
			}
		}
		return out
	}
	mirror.Follow(ctx, s.db, s.opts.PollInterval, follow, func(ctx context.Context, moved []bool) error {
		// Only a wait that named the stores that moved left out the
		// mount's own saves; FeedsMoved counts them.
		named := moved != nil
		if !named {
			var err error
			if moved, err = s.moved(ctx, ids); err != nil {
				return err
			}
		}
		for i, sm := range s.stores {
			if due := moved[i] || named && sm.unreadFor() >= ownUnreadFor; !due {
				continue
			}
			if err := sm.poll(ctx); err != nil {
				return err
			}
		}
		return nil
	}, func(err error, first bool) {
		if first {
			s.log.Error("reading the change feed failed; retrying", "err", err)
		}
		if isUnavailable(err) {
			s.servingCached(err) // writes are refused at once meanwhile
		}
	}, func(recovered bool) {
		if recovered {
			s.log.Info("reading the change feed works again")
		}
		s.reachable()
	})
}

// ownUnreadFor bounds how long a store's own saves go unread. The wait
// sleeps through them until a change made elsewhere comes to the store;
// with several stores mounted, others' changes end the wait and that one
// may never come: each store is read at least this often, so that what
// piles up stays a small read.
const ownUnreadFor = 5 * time.Second

// unreadFor is how long ago the watcher last read the store's changes.
func (sm *storeMount) unreadFor() time.Duration {
	return sm.srv.sinceStart() - time.Duration(sm.read.Load())
}

// sinceStart is how long the mount has run, on the monotonic clock (which
// started keeps): the watchers' times move with no step of the wall clock.
func (s *Server) sinceStart() time.Duration { return time.Since(s.started) }

// moved tells which of the mounted stores (ids) moved since their last
// poll, when the wake-up did not say (SQLite; see versions.DB.WaitFeed):
// with several stores mounted, one statement finds those to read the
// changes of (versions.DB.FeedsMoved); one store is read at once.
func (s *Server) moved(ctx context.Context, ids []string) ([]bool, error) {
	if len(s.stores) == 1 {
		return []bool{true}, nil
	}
	after := make([]versions.FeedPos, len(s.stores))
	for i, sm := range s.stores {
		after[i] = sm.seq
	}
	return s.db.FeedsMoved(ctx, ids, after)
}

// poll applies the store's changes since the last poll. Archiving,
// deleting and importing the store are changes at "/": they make it read
// the store row again, which is how an archive reaches the mount, and
// they may change any of its files (see storeChanged). The position moves
// only once the changes are applied: an error leaves them to the next poll.
func (sm *storeMount) poll(ctx context.Context) error {
	s := sm.srv
	start := s.sinceStart()
	changes, pos, err := s.db.ChangesHeard(ctx, sm.id, sm.seq)
	if err != nil {
		return err
	}
	sm.read.Store(int64(start))
	if len(changes) == 0 {
		sm.seq = pos
		return nil
	}
	sm.m.Landed(changes)
	whole := slices.ContainsFunc(changes, func(c versions.Change) bool { return c.Path == "/" })
	if whole {
		if err := sm.eng.Reread(ctx, sm.m); err != nil {
			return err
		}
	}
	if sm.history != nil {
		// The history tree hears of every change, this mount's own too:
		// the kernel learned of those only in the store's directory.
		paths := make([]string, 0, len(changes))
		for _, c := range changes {
			paths = append(paths, c.Paths()...)
		}
		sm.history.changed(paths, whole)
	}
	if err := sm.apply(ctx, changes, whole); err != nil {
		return err
	}
	sm.seq = pos
	return nil
}

// apply gives each change to the mirror, which tells this mount's own
// from others' and updates what it holds, and invalidates the kernel's view
// of every path changed by others, or of the whole store. An error is the
// engine's, when it could not tell what is at a path: the batch is applied
// again from the start (what it applied twice is only invalidated twice).
func (sm *storeMount) apply(ctx context.Context, changes []versions.Change, whole bool) error {
	done := map[string]bool{}
	// The change that is the last at its path in the batch says what is
	// there now: a save elsewhere of a file the kernel knows is applied from
	// it, without asking the engine again.
	last := map[string]int{}
	for i, c := range changes {
		for _, p := range c.Paths() {
			last[p] = i
		}
	}
	for i, c := range changes {
		pl := sm.m.Apply(mirror.Foreign{Change: c})
		if pl.Own {
			continue
		}
		if !c.At.IsZero() {
			sm.srv.opts.Observer.FeedLag(time.Since(c.At))
		}
		for _, n := range pl.Notify {
			p := n.Path
			if n.File != 0 || done[p] {
				continue // a file's content: invalidate below tells the kernel
			}
			done[p] = true
			if whole {
				continue
			}
			var now *versions.Memory
			if c.MemoryID != "" && p == c.Path && last[p] == i && c.Op != versions.ChangeDeleted {
				now = c.Memory()
			}
			if err := sm.invalidate(ctx, p, n.Along, now); err != nil {
				return err
			}
		}
	}
	if whole && len(done) > 0 {
		sm.storeChanged()
	}
	return nil
}

// knownNode is an inode the kernel knows in the store, under its parent.
type knownNode struct {
	parent *fs.Inode // nil for the store's top directory
	name   string
	in     *fs.Inode
	path   string
}

// knownTree is every inode the kernel knows in the store, each before
// the nodes below it. go-fuse's tree lock is taken and released for each
// directory: nothing of ours is held.
func (sm *storeMount) knownTree() []knownNode {
	out := []knownNode{{in: &sm.top.Inode, path: "/"}}
	for i := 0; i < len(out); i++ {
		k := out[i]
		if _, ok := k.in.Operations().(*dirNode); !ok {
			continue
		}
		for name, ch := range k.in.Children() {
			out = append(out, knownNode{parent: k.in, name: name, in: ch, path: childPath(k.path, name)})
		}
	}
	return out
}

// storeChanged makes the kernel forget everything it holds of the store:
// the store was deleted (its files must fail, not be served for the hour
// the kernel keeps them) or imported again (names it holds as absent may
// exist now). Pages and attributes of each known file, each known
// directory's listing, every known name and the store's own name in the
// mount root are dropped, holding nothing.
func (sm *storeMount) storeChanged() {
	sm.m.Apply(mirror.StoreChanged{})
	known := sm.knownTree()
	for _, k := range known {
		if _, ok := k.in.Operations().(*dirNode); ok {
			sm.m.Apply(mirror.DirsChanged{Dirs: []string{k.path}})
		}
		k.in.NotifyContent(0, 0)
	}
	for i := len(known) - 1; i > 0; i-- {
		known[i].parent.NotifyEntry(known[i].name)
	}
	if slug, root := sm.top.Parent(); root != nil {
		errno := root.NotifyEntry(slug)
		sm.srv.log.Debug("the store changed as a whole: dropped what the kernel held of it", "store", sm.id, "gone", sm.m.Gone(), "nodes", len(known), "errno", errno)
	}
}

func pathSegments(p string) []string {
	if p == "/" || p == "" {
		return nil
	}
	return strings.Split(strings.TrimPrefix(p, "/"), "/")
}

// invalidate walks the kernel-known tree down to path: the first name the
// kernel has no node for gets its (possibly negative) dentry dropped; a
// known file gets its attributes and pages dropped, a known directory its
// listing, and one that is gone its dentry, with the directories above it
// that were only implied by what it held. A directory whose entries
// changed gets a new mtime and its cached listing (FOPEN_CACHE_DIR) and
// attributes dropped: a listing the kernel was still caching from before the
// change then fails the kernel's mtime check at the next opendir. Only
// the engine saying NotFound makes something vanished: on any other error
// nothing is dropped and the error is returned, to try again.
func (sm *storeMount) invalidate(ctx context.Context, path string, shown []mirror.Shown, now *versions.Memory) error {
	segs := pathSegments(path)
	// The kernel-known directories from the top down to the changed name.
	dirs := []*fs.Inode{&sm.top.Inode}
	dir := "/"
	for i, seg := range segs {
		parent := dirs[len(dirs)-1]
		p := childPath(dir, seg)
		child := parent.GetChild(seg)
		if child == nil {
			errno := parent.NotifyEntry(seg)
			sm.srv.log.Debug("changed elsewhere: dropped a name", "path", path, "name", seg, "errno", errno)
			var at *versions.Memory
			if i == len(segs)-1 {
				at = now
			}
			if sm.eng.ListingChanged(detach(ctx), p, shown[i], at) {
				sm.entriesChangedElsewhere(parent, dir)
			}
			return nil
		}
		if i < len(segs)-1 {
			dirs = append(dirs, child)
			dir = p
			continue
		}
		if f, ok := child.Operations().(*fileNode); ok && now != nil && f.memoryID() == now.ID {
			// The same memory, saved elsewhere (the mirror learnt it).
			child.NotifyContent(0, 0)
			return nil
		}
		e, err := sm.srv.db.Stat(detach(ctx), sm.id, path)
		vanished := 0
		if err != nil {
			e = nil
			if versions.ErrorCode(err) != versions.CodeNotFound {
				return err
			}
			if vanished, err = sm.eng.Vanished(detach(ctx), dir, len(dirs)-1); err != nil {
				return err
			}
		}
		switch op := child.Operations().(type) {
		case *fileNode:
			if e != nil && e.Memory != nil && e.Memory.ID == op.memoryID() {
				sm.m.Apply(mirror.Lookup{Path: path, Mem: e.Memory})
				child.NotifyContent(0, 0)
				return nil
			}
			child.NotifyContent(0, 0)
			if e == nil {
				parent.NotifyDelete(seg, child)
			} else {
				parent.NotifyEntry(seg)
			}
		case *dirNode:
			if e != nil && e.Dir {
				// Its entries have changes of their own; what it
				// lists may have changed with a directory moved here.
				child.NotifyContent(0, 0)
				return nil
			}
			sm.m.Apply(mirror.DirGone{Path: path})
			parent.NotifyEntry(seg)
		}
		sm.entriesChangedElsewhere(parent, dir)
		// Replaced (vanished is 0): the directories above still hold it.
		sm.dropVanished(dirs, dir, vanished)
	}
	return nil
}

// dropVanished drops the n deepest of the kernel-known directories dirs,
// down to dir, that Engine.Vanished found gone.
func (sm *storeMount) dropVanished(dirs []*fs.Inode, dir string, n int) {
	for i := len(dirs) - 1; i > len(dirs)-1-n; i-- {
		up := path.Dir(dir)
		sm.m.Apply(mirror.DirGone{Path: dir})
		dirs[i-1].NotifyEntry(path.Base(dir))
		sm.entriesChangedElsewhere(dirs[i-1], up)
		dir = up
	}
}

// entriesChangedElsewhere records that the entries of the kernel-known
// directory dir changed elsewhere.
func (sm *storeMount) entriesChangedElsewhere(in *fs.Inode, dir string) {
	sm.m.Apply(mirror.DirsChanged{Dirs: []string{dir}})
	in.NotifyContent(0, 0)
}
