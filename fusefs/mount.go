// Package fusefs serves a session's memory stores as a FUSE file system:
// one directory per attached store under a read-only root, every save a
// version written through versions.DB.
package fusefs

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/internal/fusemount"
	"github.com/memfs/memfs/internal/lease"
	"github.com/memfs/memfs/internal/mirror"
	"github.com/memfs/memfs/internal/ratelog"
	"github.com/memfs/memfs/versions"
)

// Options configure a mount. The zero value is usable.
type Options struct {
	// Strict makes a save fail with ESTALE when another writer saved the
	// memory since this mount read it; otherwise the save goes
	// through and its version is marked as a conflict.
	Strict bool
	// UID and GID own every file and directory; zero means the daemon's.
	UID, GID uint32
	// Logger receives refusals and errors; nil means slog.Default().
	Logger *slog.Logger
	// PollInterval is how often the change feed is read; default
	// 25ms.
	PollInterval time.Duration
	// Debug logs every FUSE request (very verbose).
	Debug bool
	// Observer, when set, is told of saves, refusals and how far behind
	// the change feed the mount applies others' changes (for metrics).
	Observer Observer
	// Grace is how long a file with a temporary name stays pending (saved,
	// but not yet a memory) before it is published, and how long a file
	// renamed to a scratch name is held before its deletion is committed
	// (pending.go); default DefaultGrace.
	Grace time.Duration
	// TempPatterns name the temporary files of atomic savers, which stay
	// pending until renamed (path.Match on the name); nil means
	// mirror.DefaultTempPatterns, an empty list none: every new file is then final
	// at close().
	TempPatterns []string
	// ScratchPatterns name files that are never stored (path.Match on the
	// name); nil means mirror.DefaultScratchPatterns, an empty list none.
	ScratchPatterns []string
	// HideHistory leaves the read-only .history tree out of the mount
	// root (history.go).
	HideHistory bool
	// MaxUnsavedBytes bounds the unsaved data the mount holds: open write
	// buffers, files deleted while open and scratch files. A write or
	// truncate that would pass it fails with ENOSPC. Zero means
	// DefaultMaxUnsavedBytes.
	MaxUnsavedBytes int64
	// MaxScratchFiles bounds the scratch files the mount holds (a create
	// or rename past it fails with ENOSPC); 0 means DefaultMaxScratchFiles.
	MaxScratchFiles int
}

// Observer counts what a mount does; its methods must not block.
type Observer interface {
	Saved()
	Refused(errno syscall.Errno)
	// FeedLag is how long after its commit another writer's change was
	// applied to the mount.
	FeedLag(d time.Duration)
}

type noObserver struct{}

func (noObserver) Saved()                {}
func (noObserver) Refused(syscall.Errno) {}
func (noObserver) FeedLag(time.Duration) {}

// cacheTimeout is how long the kernel trusts names, attributes and the
// absence of a name. It only bounds a notification that was lost: the
// kernel learns of this mount's own changes through the requests that make
// them, and of every change made elsewhere through the notifications the
// watcher sends (watch.go). A lookup still in flight when such a change is
// noticed cannot cache an answer that outlives it: the kernel applies an
// entry notification only once it holds the directory, after the lookup's
// answer. Until an attribute notification arrives the kernel may believe an
// old file size, and it cuts cached reads there: Open serves such a file
// with direct I/O (file.go), which reads what the daemon has.
const cacheTimeout = time.Hour

// Server is a mounted session.
type Server struct {
	db      *versions.DB
	sess    *versions.Session
	actor   versions.Actor
	opts    Options
	log     *slog.Logger
	mnt     string
	started time.Time
	stores  []*storeMount
	fuse    *fuse.Server
	stop    context.CancelFunc
	watches sync.WaitGroup
	// notes runs the notifications requests leave to the kernel (notify.go).
	notes notifier
	// shared is what the stores' mirrors share (mirror.Shared).
	shared *mirror.Shared
	once   sync.Once
	err    error

	// refusals rate-limits the log of refusals (internal/ratelog).
	refusals ratelog.Log

	// lease is the mount instance's lease, renewed by its own goroutine;
	// its id and epoch own the mount's pending files (internal/lease).
	lease *lease.Keeper
	// offline: a request was answered from the caches because the
	// database could not be reached, and the feed was not read since.
	offline atomic.Bool
	// dev is the device of this server's mount, as the mount table lists
	// it: which FUSE mount on mnt is ours, once another daemon may have
	// mounted there after ours left the namespace.
	dev string
}

// Mount mounts sess's stores on mountpoint and returns once the kernel is
// sending requests. A stale mount left on mountpoint by a killed daemon is
// detached first. The caller keeps db open until Unmount returns.
func Mount(mountpoint string, db *versions.DB, sess *versions.Session, o Options) (*Server, error) {
	if err := sess.CheckOpen(); err != nil {
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Observer == nil {
		o.Observer = noObserver{}
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 25 * time.Millisecond
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.MaxUnsavedBytes <= 0 {
		o.MaxUnsavedBytes = DefaultMaxUnsavedBytes
	}
	if o.MaxScratchFiles <= 0 {
		o.MaxScratchFiles = DefaultMaxScratchFiles
	}
	if o.ScratchPatterns == nil {
		o.ScratchPatterns = mirror.DefaultScratchPatterns
	}
	if o.TempPatterns == nil {
		o.TempPatterns = mirror.DefaultTempPatterns
	}
	if o.UID == 0 && o.GID == 0 {
		o.UID, o.GID = uint32(os.Getuid()), uint32(os.Getgid())
	}
	mnt, err := filepath.Abs(mountpoint)
	if err != nil {
		return nil, fmt.Errorf("mount point %s: %w", mountpoint, err)
	}
	s := &Server{db: db, sess: sess, actor: versions.SessionActor(sess.ID), opts: o,
		log: o.Logger.With("mount", mnt, "session", sess.ID), mnt: mnt, started: time.Now(),
		shared: mirror.NewShared(o.MaxUnsavedBytes, int64(o.MaxScratchFiles))}
	if err := fusemount.Recover(mnt, s.log); err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	s.lease = &lease.Keeper{DB: db, Log: s.log, Lease: versions.MountLease{ID: versions.NewMountID(), SessionID: sess.ID, Host: host, Mountpoint: mnt}}
	ctx := context.Background()
	if err := db.StartMount(ctx, s.lease.Lease); err != nil {
		return nil, fmt.Errorf("mount %s: taking the mount's lease: %w", mnt, err)
	}
	mounted := false
	defer func() {
		if !mounted {
			db.EndMount(ctx, s.lease.Lease.ID)
		}
	}()
	if fi, err := os.Stat(mnt); err != nil {
		return nil, fmt.Errorf("mount point %s: %w (create it with mkdir -p)", mnt, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("mount point %s is not a directory", mnt)
	}
	for _, a := range sess.Resources {
		// The feed's position is taken before the store row is read, so an
		// archive committed in between is in the row or in the feed.
		seq, err := db.FeedHead(ctx, a.StoreID)
		if err != nil {
			return nil, fmt.Errorf("store %s of session %s: %w", a.StoreID, sess.ID, err)
		}
		st, err := db.GetStore(ctx, a.StoreID)
		if err != nil {
			return nil, fmt.Errorf("store %s of session %s: %w", a.StoreID, sess.ID, err)
		}
		sm := newStoreMount(s, a, st, seq)
		s.stores = append(s.stores, sm)
	}
	fo, err := fusemount.Options(o.UID, o.GID, mirror.RootIno, cacheTimeout, s.log, o.Debug, func(r any) {
		s.log.Error("internal error: a request panicked; it failed with EIO and the mount goes on", "panic", r, "stack", string(debug.Stack()))
	})
	if err != nil {
		return nil, err
	}
	root := &rootNode{srv: s}
	srv, err := fs.Mount(mnt, root, fo)
	if err != nil {
		return nil, fmt.Errorf("mount %s: %w", mnt, err)
	}
	s.fuse = srv
	s.dev = fusemount.Dev(mnt)
	wctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	s.watches.Add(2)
	go func() {
		defer s.watches.Done()
		s.watch(wctx)
	}()
	go func() {
		defer s.watches.Done()
		s.lease.Run(wctx)
	}()
	mounted = true
	s.log.Info("mounted", "stores", len(s.stores), "strict", o.Strict)
	return s, nil
}

// Mountpoint is the absolute path the session is mounted on.
func (s *Server) Mountpoint() string { return s.mnt }

// Unmount stops watching the stores and unmounts. When files are still
// open the mount is detached lazily (it disappears from the namespace now
// and the kernel drops it when the last file closes); what they hold and was
// not saved by close or fsync is not saved (a half-written file must not
// become a version).
func (s *Server) Unmount() error {
	s.once.Do(func() {
		s.stop()
		s.watches.Wait()
		for _, sm := range s.stores {
			sm.flush()
		}
		if err := s.db.EndMount(context.Background(), s.lease.Lease.ID); err != nil {
			s.log.Warn("giving up the mount's lease failed; it lapses by itself", "err", err)
		}
		// While the kernel still talks to us: a notification waits for
		// requests on the inodes it names to be answered.
		s.notes.stop()
		if err := fusemount.Unmount(s.fuse, s.mnt, s.dev, s.log); err != nil {
			if !fusemount.Here(s.mnt, s.dev) {
				s.log.Info("already unmounted from outside, or another daemon's mount is there now")
				return
			}
			s.log.Warn("unmount busy, detaching lazily", "err", err)
			if err := unix.Unmount(s.mnt, unix.MNT_DETACH); err != nil {
				s.err = fmt.Errorf("unmount %s: %w (try: umount -l %s)", s.mnt, err, s.mnt)
				return
			}
		}
		s.log.Info("unmounted")
	})
	return s.err
}

// Wait returns when the file system has been unmounted, by Unmount or from
// outside (umount).
func (s *Server) Wait() { s.fuse.Wait() }
