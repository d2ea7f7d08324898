package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// cacheTimeout is the kernel entry/attribute cache lifetime of the
// loopback targets: it cannot know when its backing directory changes, so it
// keeps the short timeout a FUSE file system without notifications needs
// (memfs keeps them far longer and tells the kernel of every change).
const cacheTimeout = time.Second

// target is a filesystem the workload runs on.
type target struct {
	name string
	dir  string // the workload's rounds go in directories below this
	stop func() error
	// versionCount, for memfs targets, counts the store's versions, which
	// lets the writers part check that each save committed one.
	versionCount func(context.Context) (int, error)
	// bareCommits, for memfs-pg, times bare one-row commits on its server.
	bareCommits func(context.Context) (bareCommitRun, error)
}

// mountTmpfs mounts a private tmpfs on dir (root only) or, failing that,
// makes dir a directory under /dev/shm. The returned function undoes it.
func mountTmpfs(dir string) (string, func() error, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, fmt.Errorf("make %s: %w", dir, err)
	}
	err := unix.Mount("memfs-bench", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=2g,mode=0700")
	if err == nil {
		return dir, func() error { return unix.Unmount(dir, unix.MNT_DETACH) }, nil
	}
	slog.Warn("cannot mount a tmpfs, using /dev/shm instead", "dir", dir, "err", err)
	shm, err := os.MkdirTemp("/dev/shm", "memfs-bench-")
	if err != nil {
		return "", nil, fmt.Errorf("no tmpfs: mounting one failed and /dev/shm is unusable (%w); run as root or provide /dev/shm", err)
	}
	return shm, func() error { return os.RemoveAll(shm) }, nil
}

// fuseOptions are the mount options of the loopback: those fusefs.Mount
// gives memfs (no READDIRPLUS, kernel permission checks, background queue)
// but for the cache timeouts, so the ratio measures memfs's code and what
// it knows, not its other options.
func fuseOptions(name string) *fs.Options {
	t := cacheTimeout
	return &fs.Options{
		EntryTimeout:    &t,
		AttrTimeout:     &t,
		NegativeTimeout: &t,
		MountOptions: fuse.MountOptions{
			FsName:             name,
			Name:               name,
			DirectMount:        os.Geteuid() == 0,
			Options:            []string{"nosuid", "nodev", "default_permissions"},
			DisableReadDirPlus: true,
			MaxBackground:      64,
		},
	}
}

// mountLoopback serves a go-fuse loopback of backing on mountpoint in this
// process: the cost of FUSE itself over tmpfs. With passthrough false, file
// data goes through the server too (see nopassthrough.go).
func mountLoopback(backing, mountpoint string, passthrough bool) (*fuse.Server, error) {
	for _, d := range []string{backing, mountpoint} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("make %s: %w", d, err)
		}
	}
	newRoot := fs.NewLoopbackRoot
	if !passthrough {
		newRoot = newPlainLoopbackRoot
	}
	root, err := newRoot(backing)
	if err != nil {
		return nil, fmt.Errorf("loopback of %s: %w", backing, err)
	}
	srv, err := fs.Mount(mountpoint, root, fuseOptions("bench-loopback"))
	if err != nil {
		return nil, fmt.Errorf("mount the loopback on %s: %w (run as root, or install fusermount3)", mountpoint, err)
	}
	return srv, nil
}

func loopbackTarget(tmpfs, work, name string, passthrough bool) (*target, error) {
	mnt := filepath.Join(work, name)
	srv, err := mountLoopback(filepath.Join(tmpfs, name+"-backing"), mnt, passthrough)
	if err != nil {
		return nil, err
	}
	return &target{name: name, dir: mnt, stop: srv.Unmount}, nil
}

func tmpfsTarget(tmpfs string) (*target, error) {
	dir := filepath.Join(tmpfs, "plain")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("make %s: %w", dir, err)
	}
	return &target{name: "tmpfs", dir: dir, stop: func() error { return nil }}, nil
}
