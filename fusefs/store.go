package fusefs

import (
	"context"
	"path"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"

	"github.com/memfs/memfs/guard"
	"github.com/memfs/memfs/internal/mirror"
	"github.com/memfs/memfs/versions"
)

// storeMount is one attached store: its directory in the mount root, its
// mirror (every file's state, internal/mirror) and what carries the
// mirror's plans out: the engine, the timers, the kernel's notifications.
type storeMount struct {
	srv  *Server
	id   string
	slug string
	seq  versions.FeedPos // the change feed's position this mount has applied (watcher only)
	// read is when the watcher last read the store's changes, as
	// Server.sinceStart gives it (atomic: tests read it while the watcher
	// runs).
	read atomic.Int64
	top  *dirNode
	m    *mirror.Mirror
	eng  mirror.Engine
	// history is the store's directory in the history tree, nil when the
	// mount shows none (history.go); set before the mount serves.
	history *historyDir

	// timers are the plans' timers; each one's end is applied like a
	// request, holding its file's lock.
	timers *mirror.Timers
}

func newStoreMount(s *Server, a versions.Attachment, st *versions.Store, seq versions.FeedPos) *storeMount {
	sm := &storeMount{srv: s, id: a.StoreID, seq: seq, slug: a.Slug}
	if sm.slug == "" {
		sm.slug = strings.TrimPrefix(a.MountPath, "/mnt/memory/")
	}
	sm.top = &dirNode{sm: sm}
	sm.m = mirror.New(mirror.Options{Temp: mirror.Names(s.opts.TempPatterns), Scratch: mirror.Names(s.opts.ScratchPatterns),
		Attach: a, Grace: s.opts.Grace, Settle: Settle, Strict: s.opts.Strict, Shared: s.shared, Start: s.started})
	sm.m.SetStore(st)
	sm.eng = mirror.Engine{DB: s.db, Store: a.StoreID, Actor: s.actor, Relet: s.lease.Renew, Origin: sm.m.Origin()}
	sm.timers = mirror.NewTimers(func(e mirror.Event) {
		op, id, where := "publish", mirror.ID(0), at("")
		switch e := e.(type) {
		case mirror.GraceEnded:
			id = e.File
		case mirror.Settled:
			op, id = "save", e.File
		case mirror.HoldEnded:
			op, where = "delete", at(e.Path)
		}
		sm.run(context.Background(), op, where, e, id)
	})
	return sm
}

// writable is 0 when path may be changed through this mount, else the
// refusal (mirror.Mirror.Writable).
func (sm *storeMount) writable(op, path string) syscall.Errno {
	if e, why := sm.m.Writable(path, op == "mkdir"); e != 0 {
		return sm.refuse(op, path, e, why)
	}
	return 0
}

// refuseGone is the ENOENT of any request in a store deleted elsewhere.
func (sm *storeMount) refuseGone(op, path string) syscall.Errno {
	return sm.refuse(op, path, syscall.ENOENT, mirror.GoneReason)
}

// run applies e and carries its plan out (mirror.Mirror.Run): engine
// requests, timers, kernel notifications and the log. It returns the plan
// of the kernel's answer and its errno, logged as op on path.
func (sm *storeMount) run(ctx context.Context, op string, where func() string, e mirror.Event, ids ...mirror.ID) (mirror.Plan, syscall.Errno) {
	s := sm.srv
	eng := sm.eng
	eng.Owner = s.lease.Owner()
	var errno syscall.Errno
	p := sm.m.Run(detach(ctx), eng, e, func(p mirror.Plan) {
		sm.carry(p, where)
		switch {
		case errno != 0:
		case p.Errno != 0 && p.Reason == "":
			s.opts.Observer.Refused(p.Errno) // a miss, or logged once per burst
			errno = p.Errno
		case p.Errno != 0 && p.Path != "":
			errno = sm.refuse(op, p.Path, p.Errno, p.Reason)
		case p.Errno != 0:
			errno = sm.refuse(op, where(), p.Errno, p.Reason)
		case p.Err != nil:
			errno = sm.failed(op, orPlanPath(where(), p), p.Err)
		}
	}, ids...)
	return p, errno
}

// at names a request's path for run, which needs it only for an error.
func at(p string) func() string { return func() string { return p } }

// orPlanPath is a request's path, or for one with none (a timer's end, the
// unmount) the path of the engine request its plan made.
func orPlanPath(where string, p mirror.Plan) string {
	if where == "" {
		return p.Path
	}
	return where
}

// carry does what a plan says besides its engine request.
func (sm *storeMount) carry(p mirror.Plan, where func() string) {
	s := sm.srv
	if p.Saved {
		s.opts.Observer.Saved()
	}
	if p.Finding != nil {
		s.db.NoteGuardRefusal(versions.GuardEvent{StoreID: sm.id, Path: where(), Finding: *p.Finding, Refused: true})
	}
	if p.Log != "" {
		s.log.Warn(p.Log, "store", sm.slug, "path", guard.NameShown(orPlanPath(where(), p)), "err", p.Err)
	}
	if p.Ask != nil {
		s.log.Debug("asking the engine", "store", sm.slug, "kind", p.Ask.Kind.String(), "path", p.Ask.Path, "cause", p.Ask.Cause)
	}
	for _, t := range p.Timers {
		sm.timers.Set(t)
	}
	for _, n := range p.Notify {
		sm.notice(n)
	}
}

// flush publishes the temporary files and commits the held deletions
// now, and waits for the timers already running: the mount is going away.
func (sm *storeMount) flush() {
	// Each failure leaves one file to recovery; the rest go on.
	for {
		if _, errno := sm.run(context.Background(), "publish", at(""), mirror.Unmounting{}); errno == 0 {
			break
		}
	}
	sm.timers.Stop()
}

// notice tells the kernel, from outside the request, that what it holds
// at a path or of a file's content is no longer so; or gives it a file's
// pages.
func (sm *storeMount) notice(n mirror.Notice) {
	s := sm.srv
	if n.Pages {
		s.notes.async(func() { sm.storePages(n.File, n.Path) })
		return
	}
	if n.File != 0 {
		s.notes.async(func() {
			if in := sm.inodeAt(n.Path); in != nil {
				in.NotifyContent(0, 0)
			}
		})
		return
	}
	s.notes.async(func() {
		dir, name := path.Dir(n.Path), path.Base(n.Path)
		if in := sm.inodeAt(dir); in != nil {
			in.NotifyEntry(name)
		}
	})
}

// inodeAt is the node the kernel knows at store path p, nil when none.
func (sm *storeMount) inodeAt(p string) *fs.Inode {
	if p == "" {
		return nil
	}
	in := &sm.top.Inode
	for _, seg := range pathSegments(p) {
		if in = in.GetChild(seg); in == nil {
			return nil
		}
	}
	return in
}

// storePages gives the kernel a file's head as its pages (FUSE_NOTIFY_STORE)
// if it still is its content and no handle is open, holding the file's
// lock meanwhile: with no handle open no read or write can hold the pages
// while it waits for that lock (doc.go).
func (sm *storeMount) storePages(id mirror.ID, p string) {
	unlock := sm.m.Lock(id)
	defer unlock()
	pl := sm.m.Apply(mirror.StorePages{File: id})
	if pl.Data == nil {
		return
	}
	if in := sm.inodeAt(p); in != nil {
		if f, ok := in.Operations().(*fileNode); ok && f.id == id {
			in.WriteCache(0, pl.Data)
		}
	}
}

// offline reports whether the database is known to be unreachable, for
// the refusal at write().
func (sm *storeMount) offline(ctx context.Context) bool {
	return sm.srv.offline.Load() && !sm.srv.backOnline(ctx, sm.id)
}

// failed maps an engine error and notes what the mount's caches missed: an
// archive, or a change made elsewhere that the watcher has not reported yet.
func (sm *storeMount) failed(op, path string, err error) syscall.Errno {
	sm.m.EngineRefused(err)
	if isUnavailable(err) {
		sm.srv.servingCached(err)
	}
	return sm.errnoOf(op, path, err)
}

// childPath joins a directory path and a name.
func childPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// detach keeps a request's values but not its cancellation for engine
// calls. The kernel interrupts a request whenever the calling thread gets a
// signal (Go programs get SIGURG for preemption all the time), and a save
// cancelled while committing would report failure for a version that was
// written.
func detach(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }
