package sandbox

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// Root without capabilities may still write what the kernel guards by uid
// alone: /proc/sys/kernel/core_pattern would run a program of its choosing
// with every capability. As container runtimes do, the command's /proc gets
// these read-only, these hidden, and every other mount of a kernel file
// system, /sys first, is read-only.
var (
	readOnlyProc = []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
	hiddenKernel = []string{
		"/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/sched_debug",
		"/proc/scsi", "/proc/timer_list", "/sys/firmware",
	}
)

// inert are the flags of every mount made for the command: nothing on it
// is setuid, a device or executable.
const inert = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC

// mountKernelFS mounts the command's /proc, of init's PID namespace, makes
// what the kernel exposes there and in its other file systems read-only or
// hidden, and gives the command its own /dev.
func mountKernelFS(*Spec) error {
	if err := unix.Mount("proc", "/proc", "proc", inert, ""); err != nil {
		return errorf(KindSetup, "mount /proc for the command's PID namespace: %v; in a container that masks parts of its /proc (rootless engines), allow it, e.g. --security-opt systempaths=unconfined", err)
	}
	for _, p := range readOnlyProc {
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return errorf(KindSetup, "make %s read-only for the command: %v", p, err)
		}
		if err := unix.Mount("", p, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|inert, ""); err != nil {
			return errorf(KindSetup, "make %s read-only for the command: %v", p, err)
		}
	}
	if err := readOnlyKernelMounts(); err != nil {
		return err
	}
	for _, p := range hiddenKernel {
		if err := hideKernelPath(p); err != nil {
			return err
		}
	}
	return mountDev()
}

// devices are the host's nodes the command's /dev holds. Root without
// capabilities may open any node root owns, a disk included, and read the
// hidden database off it: the command gets these and no others.
var devices = []string{"full", "null", "random", "tty", "urandom", "zero"}

// mountDev gives the command a /dev of its own, as container runtimes do:
// the harmless nodes, a devpts instance of its own (its new terminals; no
// other session's is there: the caller's terminal reaches it only as its
// standard streams and /dev/tty), a private /dev/shm and the usual links.
func mountDev() error {
	fds := map[string]int{}
	for _, name := range devices {
		fd, err := unix.Open("/dev/"+name, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return errorf(KindSetup, "open /dev/%s for the command's /dev: %v", name, err)
		}
		defer unix.Close(fd)
		fds[name] = fd
	}
	if err := unix.Mount("memfs-dev", "/dev", "tmpfs", inert, "mode=0755,size=64k,nr_inodes=64"); err != nil {
		return errorf(KindSetup, "mount the command's /dev: %v", err)
	}
	for _, name := range devices {
		target := "/dev/" + name
		err := os.WriteFile(target, nil, 0o644)
		if err == nil {
			err = bindFD(fds[name], target)
		}
		// The bind has the flags of the host's /dev, nodev by now: a
		// node of this list must open.
		if err == nil {
			err = unix.Mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_NOSUID|unix.MS_NOEXEC, "")
		}
		if err != nil {
			return errorf(KindSetup, "bind /dev/%s into the command's /dev: %v", name, err)
		}
	}
	if err := os.Mkdir("/dev/pts", 0o755); err != nil {
		return errorf(KindSetup, "make the command's /dev/pts: %v", err)
	}
	if err := unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return errorf(KindSetup, "mount a devpts of the command's own: %v", err)
	}
	if err := os.Mkdir("/dev/shm", 0o1777); err != nil {
		return errorf(KindSetup, "make the command's /dev/shm: %v", err)
	}
	if err := unix.Mount("memfs-shm", "/dev/shm", "tmpfs", inert, "mode=1777,size=64m"); err != nil {
		return errorf(KindSetup, "mount the command's /dev/shm: %v", err)
	}
	for link, target := range map[string]string{
		"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0",
		"stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2",
		"ptmx": "pts/ptmx",
	} {
		if err := os.Symlink(target, "/dev/"+link); err != nil {
			return errorf(KindSetup, "link /dev/%s in the command's /dev: %v", link, err)
		}
	}
	if err := unix.Mount("", "/dev", "", unix.MS_REMOUNT|unix.MS_RDONLY|inert, ""); err != nil {
		return errorf(KindSetup, "make the command's /dev read-only: %v", err)
	}
	return nil
}

// kernelFSTypes are the file systems through which the kernel itself is
// configured.
var kernelFSTypes = []string{
	"binfmt_misc", "bpf", "cgroup", "cgroup2", "configfs", "debugfs", "efivarfs",
	"fusectl", "proc", "pstore", "securityfs", "sysfs", "tracefs",
}

// readOnlyKernelMounts remounts read-only every mount of a kernel file
// system wherever it is (/sys and below, but also a chroot's /proc), except
// the command's /proc, whose dangerous parts mountKernelFS covered.
func readOnlyKernelMounts() error {
	mounts, err := mountinfo.GetMounts(mountinfo.FSTypeFilter(kernelFSTypes...))
	if err != nil {
		return errorf(KindSetup, "read the mount table: %v", err)
	}
	for _, m := range mounts {
		if m.FSType == "proc" && (m.Mountpoint == "/proc" || strings.HasPrefix(m.Mountpoint, "/proc/")) {
			continue
		}
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
		err = unix.Mount("memfs-hidden", p, "tmpfs", unix.MS_RDONLY|inert, "size=4k,nr_inodes=2,mode=0555")
	default:
		err = unix.Mount("/dev/null", p, "", unix.MS_BIND, "")
	}
	if err != nil {
		return errorf(KindSetup, "hide %s from the command: %v", p, err)
	}
	return nil
}

// bindFD binds what the descriptor fd, opened before a mount hid its path,
// refers to onto target.
func bindFD(fd int, target string) error {
	return unix.Mount(fmt.Sprintf("/proc/self/fd/%d", fd), target, "", unix.MS_BIND|unix.MS_REC, "")
}

// hostViewTypes are the file systems whose content depends on the
// namespace that mounted them: a procfs of the host's PID namespace shows
// every host process and its command line, an mqueue the host's message
// queues. The command has its own /proc and IPC namespace; a mount of these
// the host made anywhere else (a procfs at /mnt/p) would undo them.
var hostViewTypes = []string{"proc", "sysfs", "mqueue"}

// hostKernelView reports whether m is such a mount that the command must
// not keep: anything but the host's /proc, which the command's own covers
// (with what lies below it), and the host's /sys, which shows what a sysfs
// of the command's would (it shares the network namespace) and is
// read-only.
func hostKernelView(m *mountinfo.Info) bool {
	if !slices.Contains(hostViewTypes, m.FSType) {
		return false
	}
	return !within(m.Mountpoint, "/proc") && !(m.FSType == "sysfs" && m.Mountpoint == "/sys")
}

// detachHostKernelViews detaches, in the command's namespace only, every
// mount hostKernelView names, deepest first, and only while its path still
// leads to it (a mount covered by another keeps the one above).
func detachHostKernelViews(*Spec) error {
	mounts, err := mountinfo.GetMounts(mountinfo.FSTypeFilter(hostViewTypes...))
	if err != nil {
		return errorf(KindSetup, "read the mount table: %v", err)
	}
	slices.SortFunc(mounts, func(a, b *mountinfo.Info) int { return len(b.Mountpoint) - len(a.Mountpoint) })
	for _, m := range mounts {
		if !hostKernelView(m) {
			continue
		}
		dev := unix.Mkdev(uint32(m.Major), uint32(m.Minor))
		for range 16 { // mounted there more than once
			if at, err := deviceOf(m.Mountpoint); err != nil || at != dev {
				break
			}
			if err := unix.Unmount(m.Mountpoint, unix.MNT_DETACH); err != nil {
				return errorf(KindSetup, "detach the host's %s at %s from the command's view: %v", m.FSType, m.Mountpoint, err)
			}
		}
	}
	return nil
}

// verifyNoHostKernelViews checks, once every mount is made, that no procfs,
// sysfs or mqueue but the command's /proc and the read-only /sys is
// reachable by its path.
func verifyNoHostKernelViews(*Spec) error {
	own, err := deviceOf("/proc")
	if err != nil {
		return errorf(KindSetup, "look at the command's /proc: %v", err)
	}
	mounts, err := mountinfo.GetMounts(mountinfo.FSTypeFilter(hostViewTypes...))
	if err != nil {
		return errorf(KindSetup, "read the mount table: %v", err)
	}
	for _, m := range mounts {
		dev := unix.Mkdev(uint32(m.Major), uint32(m.Minor))
		if dev == own || m.FSType == "sysfs" && m.Mountpoint == "/sys" {
			continue
		}
		if at, err := deviceOf(m.Mountpoint); err == nil && at == dev {
			return errorf(KindSetup, "the host's %s at %s is still reachable in the command's view; not starting it", m.FSType, m.Mountpoint)
		}
	}
	return nil
}
