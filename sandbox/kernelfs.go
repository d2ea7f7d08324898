package sandbox

import (
	"errors"
	"os"
	"strings"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// Root without capabilities may still write what the kernel guards by uid
// alone: /proc/sys/kernel/core_pattern would run a program of its choosing
// with every capability. As container runtimes do, the command's /proc gets
// these read-only, these hidden, and /sys is read-only throughout.
var (
	readOnlyProc = []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
	hiddenKernel = []string{
		"/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/sched_debug",
		"/proc/scsi", "/proc/timer_list", "/sys/firmware",
	}
)

const lockedFlags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC

// mountKernelFS mounts the command's /proc, of init's PID namespace, and
// makes what the kernel exposes there and in /sys read-only or hidden.
func mountKernelFS() error {
	if err := unix.Mount("proc", "/proc", "proc", lockedFlags, ""); err != nil {
		return errorf(KindSetup, "mount /proc for the command's PID namespace: %v", err)
	}
	for _, p := range readOnlyProc {
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return errorf(KindSetup, "make %s read-only for the command: %v", p, err)
		}
		if err := unix.Mount("", p, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|lockedFlags, ""); err != nil {
			return errorf(KindSetup, "make %s read-only for the command: %v", p, err)
		}
	}
	if err := readOnlyTree("/sys"); err != nil {
		return err
	}
	for _, p := range hiddenKernel {
		if err := hideKernelPath(p); err != nil {
			return err
		}
	}
	return nil
}

// readOnlyTree remounts root and every mount below it read-only.
func readOnlyTree(root string) error {
	mounts, err := mountinfo.GetMounts(mountinfo.PrefixFilter(root))
	if err != nil {
		return errorf(KindSetup, "read the mount table: %v", err)
	}
	for _, m := range mounts {
		flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
		for _, o := range strings.Split(m.Options, ",") {
			switch o {
			case "nosuid":
				flags |= unix.MS_NOSUID
			case "nodev":
				flags |= unix.MS_NODEV
			case "noexec":
				flags |= unix.MS_NOEXEC
			}
		}
		if err := unix.Mount("", m.Mountpoint, "", flags, ""); err != nil && !errors.Is(err, unix.ENOENT) {
			return errorf(KindSetup, "make %s read-only for the command: %v", m.Mountpoint, err)
		}
	}
	return nil
}

// hideKernelPath covers a directory with an empty read-only tmpfs and a
// file with /dev/null.
func hideKernelPath(p string) error {
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return errorf(KindSetup, "hide %s from the command: %v", p, err)
	case fi.IsDir():
		err = unix.Mount("memfs-hidden", p, "tmpfs", unix.MS_RDONLY|lockedFlags, "size=4k,nr_inodes=2,mode=0555")
	default:
		err = unix.Mount("/dev/null", p, "", unix.MS_BIND, "")
	}
	if err != nil {
		return errorf(KindSetup, "hide %s from the command: %v", p, err)
	}
	return nil
}
