package sandbox

import (
	"errors"
	"slices"
	"strings"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// isFUSE reports whether a mount is a FUSE file system of any kind.
func isFUSE(m *mountinfo.Info) bool {
	return m.FSType == "fuse" || m.FSType == "fuseblk" ||
		strings.HasPrefix(m.FSType, "fuse.") || strings.HasPrefix(m.FSType, "fuseblk.")
}

// ownFUSE is the device of the daemon's mount on the mount root: the only
// FUSE connection the command is meant to reach.
func ownFUSE(spec *Spec) (uint64, error) {
	dev, err := deviceOf(spec.MountRoot)
	if err != nil {
		return 0, errorf(KindSetup, "look at the mount root %s: %v", spec.MountRoot, err)
	}
	return dev, nil
}

// deviceOf is the device of the file system path is on, from what the
// kernel has cached: a FUSE daemon that never answers cannot stall it.
func deviceOf(path string) (uint64, error) {
	var stx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_STATX_DONT_SYNC|unix.AT_NO_AUTOMOUNT, 0, &stx); err != nil {
		return 0, err
	}
	return unix.Mkdev(stx.Dev_major, stx.Dev_minor), nil
}

// foreignFUSE reports whether m is a FUSE mount the command must not keep:
// another memfs session's mount always, any other FUSE mount unless it is
// the root file system (a rootless container's fuse-overlayfs) or holds the
// mount root, the working directory or a --rw grant, which the operator
// chose to run the command in.
func foreignFUSE(spec *Spec, own uint64, m *mountinfo.Info) bool {
	if !isFUSE(m) || unix.Mkdev(uint32(m.Major), uint32(m.Minor)) == own {
		return false
	}
	if m.FSType == "fuse.memfs" {
		return true
	}
	if m.Mountpoint == "/" {
		return false
	}
	return !slices.ContainsFunc(append([]string{spec.MountRoot, spec.Dir}, spec.RW...), func(d string) bool {
		return d != "" && within(d, m.Mountpoint)
	})
}

// detachForeignFUSE detaches, in the command's namespace only, every FUSE
// mount but the daemon's own: the host's mount namespace is copied whole,
// and another session's `memfs mount` (or any user's sshfs) would otherwise
// be readable to the command. Only a mount whose path still leads to it is
// detached, so that a path covered by another mount never loses the wrong
// one; verifyNoForeignFUSE then checks that none is reachable.
func detachForeignFUSE(spec *Spec) error {
	own, err := ownFUSE(spec)
	if err != nil {
		return err
	}
	mounts, err := mountinfo.GetMounts(nil)
	if err != nil {
		return errorf(KindSetup, "read the mount table: %v", err)
	}
	// Deepest first: a mount below another goes before the one above it.
	slices.SortFunc(mounts, func(a, b *mountinfo.Info) int { return len(b.Mountpoint) - len(a.Mountpoint) })
	for _, m := range mounts {
		if !foreignFUSE(spec, own, m) {
			continue
		}
		dev := unix.Mkdev(uint32(m.Major), uint32(m.Minor))
		for range 16 { // the same connection may be mounted there more than once
			// A dead connection answers ENOTCONN: detach it as well.
			at, err := deviceOf(m.Mountpoint)
			if err == nil && at != dev || err != nil && !errors.Is(err, unix.ENOTCONN) {
				break
			}
			if err := unix.Unmount(m.Mountpoint, unix.MNT_DETACH); err != nil {
				return errorf(KindSetup, "detach another FUSE mount, %s, from the command's view: %v", m.Mountpoint, err)
			}
		}
	}
	return nil
}

// verifyNoForeignFUSE checks, once every mount is made, that no FUSE mount
// but the daemon's is reachable by its path in the command's view.
func verifyNoForeignFUSE(spec *Spec) error {
	own, err := ownFUSE(spec)
	if err != nil {
		return err
	}
	mounts, err := mountinfo.GetMounts(nil)
	if err != nil {
		return errorf(KindSetup, "read the mount table: %v", err)
	}
	for _, m := range mounts {
		if !foreignFUSE(spec, own, m) {
			continue
		}
		at, err := deviceOf(m.Mountpoint)
		if err == nil && at == unix.Mkdev(uint32(m.Major), uint32(m.Minor)) || errors.Is(err, unix.ENOTCONN) {
			return errorf(KindSetup, "another FUSE mount, %s (%s), is still reachable in the command's view; not starting it", m.Mountpoint, m.FSType)
		}
	}
	return nil
}
