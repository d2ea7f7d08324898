// Package fusemount finds, recovers and unmounts FUSE mounts by the mount
// table: a dead daemon's mount left on a path, a mount copied into another
// mount namespace, a restarted daemon's mount on the same path.
package fusemount

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// UnmountWait bounds how long Unmount waits for the kernel to close the
// connection after the mount is gone.
const UnmountWait = 3 * time.Second

// Unmount unmounts srv from mnt, and waits for the kernel to end the
// connection only so long: a copy of the mount in another mount namespace
// (one made by unshare while we were mounted) keeps it open after our umount
// succeeded. dev is the mount's device (Dev, when it was mounted).
func Unmount(srv *fuse.Server, mnt, dev string, log *slog.Logger) error {
	done := make(chan error, 1)
	go func() { done <- srv.Unmount() }()
	select {
	case err := <-done:
		return err
	case <-time.After(UnmountWait):
		if Here(mnt, dev) {
			return fmt.Errorf("unmount %s: no answer after %v", mnt, UnmountWait)
		}
		log.Warn("unmounted, but the kernel keeps the connection open (the mount is still referenced elsewhere, e.g. copied into another mount namespace); not waiting for it")
		return nil
	}
}

// Recover detaches a FUSE mount on mnt whose daemon died ("transport
// endpoint is not connected"), so a restarted daemon can mount again.
// A live mount is left alone: two daemons must not fight over one path.
func Recover(mnt string, log *slog.Logger) error {
	fuseMounted := IsMounted(mnt)
	if !fuseMounted {
		return nil
	}
	// statfs always reaches the daemon (stat may be answered from the
	// kernel's attribute cache for a second after the daemon died). A
	// daemon that is stopped, or killed but stuck in the kernel, never
	// answers: that mount is as dead as one that says ENOTCONN.
	answer := make(chan error, 1)
	go func() {
		var sfs unix.Statfs_t
		answer <- unix.Statfs(mnt, &sfs)
	}()
	var why string
	select {
	case err := <-answer:
		if !errors.Is(err, unix.ENOTCONN) && !errors.Is(err, unix.ECONNABORTED) {
			return fmt.Errorf("%s is already a live FUSE mount (another memfs mount?): stop that daemon or run umount %s first", mnt, mnt)
		}
		why = "its daemon is gone (transport endpoint is not connected)"
	case <-time.After(HungAfter):
		why = fmt.Sprintf("its daemon has not answered for %v (stopped, or stuck while dying)", HungAfter)
	}
	// A forced unmount aborts the old connection, which releases every
	// process still waiting for the old daemon (and lets a daemon stuck
	// while dying finish); it fails when the mount is busy, and the lazy
	// unmount then takes it out of the namespace.
	if ferr := unix.Unmount(mnt, unix.MNT_FORCE); ferr == nil && !IsMounted(mnt) {
		log.Warn("detached a stale mount left by a dead daemon", "mountpoint", mnt, "why", why)
		return nil
	}
	if uerr := unix.Unmount(mnt, unix.MNT_DETACH); uerr != nil {
		return fmt.Errorf("%s holds a stale mount (%s) and detaching it failed: %w (try: umount -l %s)", mnt, why, uerr, mnt)
	}
	log.Warn("detached a stale mount left by a dead daemon", "mountpoint", mnt, "why", why)
	return nil
}

// HungAfter is how long a FUSE daemon may take to answer statfs before its
// mount is taken over; a live memfs answers in microseconds.
const HungAfter = 2 * time.Second

// Dev is the device ("major:minor") of the topmost FUSE mount on
// dir, "" when there is none.
func Dev(dir string) string {
	mounts, err := mountinfo.GetMounts(func(m *mountinfo.Info) (skip, stop bool) {
		return m.Mountpoint != dir || !strings.HasPrefix(m.FSType, "fuse"), false
	})
	if err != nil || len(mounts) == 0 {
		return ""
	}
	m := mounts[len(mounts)-1]
	return fmt.Sprintf("%d:%d", m.Major, m.Minor)
}

// Here reports whether the FUSE mount on mnt is still the one of device
// dev: a lazy detach by path must never take a restarted daemon's.
func Here(mnt, dev string) bool {
	return dev != "" && Dev(mnt) == dev
}

// IsMounted reports whether a FUSE file system is mounted on dir, from
// the mount table alone: nothing asks the file system, which may be hung.
func IsMounted(dir string) bool {
	mounts, err := mountinfo.GetMounts(func(m *mountinfo.Info) (skip, stop bool) {
		return m.Mountpoint != dir || !strings.HasPrefix(m.FSType, "fuse"), false
	})
	return err == nil && len(mounts) > 0
}

// Options are how memfs mounts: the kernel trusts names, attributes and
// absences for timeout, enforces the mode bits reported (owned by uid and
// gid), keeps pages until told, and a request's panic is given to panicked
// and answered EIO. go-fuse logs to log, with every request when debug is
// set. Mounting as a non-root user needs fusermount3.
func Options(uid, gid uint32, rootIno uint64, timeout time.Duration, log *slog.Logger, debug bool, panicked func(any)) (*fs.Options, error) {
	direct := os.Geteuid() == 0
	if !direct {
		if _, err := exec.LookPath("fusermount3"); err != nil {
			if _, err2 := exec.LookPath("fusermount"); err2 != nil {
				return nil, errors.New("mounting as a non-root user needs fusermount3: install it with `apt-get install fuse3` (or run as root)")
			}
		}
	}
	return &fs.Options{
		EntryTimeout:    &timeout,
		AttrTimeout:     &timeout,
		NegativeTimeout: &timeout,
		// Mode bits as set, 0000 included: go-fuse would show 0644 instead,
		// and default_permissions would let anyone read a locked file.
		NullPermissions: true,
		RootStableAttr:  &fs.StableAttr{Ino: rootIno},
		UID:             uid,
		GID:             gid,
		MountOptions: fuse.MountOptions{
			FsName:      "memfs",
			Name:        "memfs",
			DirectMount: direct,
			// Without allow_other only the mounting user could enter it;
			// a sandboxed agent runs as another uid. default_permissions
			// makes the kernel enforce the mode bits we report.
			AllowOther: direct,
			Options:    []string{"nosuid", "nodev", "default_permissions"},
			// READDIRPLUS would make every readdir look up each entry.
			DisableReadDirPlus: true,
			// O_TRUNC arrives with OPEN, so a truncating open is that
			// handle's write and not a separate save. No writeback cache
			// (CAP_WRITEBACK_CACHE), though it would keep size and mtime
			// valid in the kernel across writes, so that the first stat
			// after a save needed no GETATTR: the kernel then trusts its
			// own size and mtime of a regular file over the daemon's for
			// good, and another writer's save would never show in them;
			// and write(2) would only fill the page cache, so a write's
			// refusal (EFBIG past a memory's size, ENOSPC past the unsaved
			// budget) would reach the writer at close() instead. The save
			// itself would stay whole (the kernel writes its dirty pages
			// back before it sends FLUSH).
			//
			// CAP_HANDLE_KILLPRIV_V2: the daemon clears setuid, setgid and
			// security.capability itself on a write, truncation or chown.
			// A memfs file has none of them (the mirror keeps only a
			// file's permission bits, and every setxattr is refused), so
			// there is nothing to clear. The kernel then asks for
			// security.capability (a GETXATTR round trip) before a
			// truncating open and a write only until a write finds none,
			// and again after it next refreshes the file's attributes (a
			// stat after a write, say), instead of before every one.
			ExtraCapabilities: fuse.CAP_ATOMIC_O_TRUNC | fuse.CAP_HANDLE_KILLPRIV_V2,
			// The page cache is dropped exactly when the content changed
			// (the mirror's PagesSync, the watcher), not whenever an
			// attribute refresh shows a new mtime: a file's first stat after
			// its own write would drop the pages storePages gave it.
			ExplicitDataCacheControl: true,
			Debug:                    debug,
			Logger:                   slog.NewLogLogger(log.Handler(), slog.LevelInfo),
			MaxBackground:            64,
			PanicHandler: func(r any) fuse.Status {
				panicked(r)
				return fuse.EIO
			},
		},
	}, nil
}
