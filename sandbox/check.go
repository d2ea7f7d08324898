package sandbox

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

const capSysAdmin = 21

// CheckPrivilege fails unless this process may create mount namespaces and
// mount: root, or CAP_SYS_ADMIN in its effective set.
func CheckPrivilege() error {
	eff, err := effectiveCaps()
	if err != nil {
		return errorf(KindPrivilege, "cannot read this process's capabilities: %v", err)
	}
	if eff&(1<<capSysAdmin) == 0 {
		return errorf(KindPrivilege, "running a sandbox needs root or CAP_SYS_ADMIN (to create a mount namespace and mount FUSE): run it as root, e.g. with sudo, or start the container with --cap-add SYS_ADMIN")
	}
	return nil
}

func effectiveCaps() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	return 0, errors.New("no CapEff line in /proc/self/status")
}

// CheckFUSE fails unless /dev/fuse can be opened.
func CheckFUSE() error {
	f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err == nil {
		return f.Close()
	}
	if errors.Is(err, os.ErrNotExist) {
		return errorf(KindNoFUSE, "there is no /dev/fuse: load the fuse kernel module (modprobe fuse), or in a container pass --device /dev/fuse")
	}
	return errorf(KindNoFUSE, "cannot open /dev/fuse (%v): run as root; in a container pass --device /dev/fuse, and --security-opt apparmor=unconfined if AppArmor denies it", err)
}

// CheckMountRoot fails if root is not a directory or something is already
// mounted on it (a stale FUSE mount included).
func CheckMountRoot(root string) error {
	fi, err := os.Stat(root)
	switch {
	case errors.Is(err, unix.ENOTCONN):
		return errorf(KindBusy, "the mount root %s holds a dead FUSE mount: unmount it with 'umount -l %s', or pick another --mount-root", root, root)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return errorf(KindInvalid, "cannot use the mount root %s: %v", root, err)
	case err == nil && !fi.IsDir():
		return errorf(KindInvalid, "the mount root %s is not a directory: pick another --mount-root", root)
	}
	resolved := root
	if r, err := filepath.EvalSymlinks(root); err == nil {
		resolved = r
	}
	mounts, err := mountinfo.GetMounts(mountinfo.SingleEntryFilter(resolved))
	if err != nil {
		return errorf(KindSetup, "cannot read the mount table: %v", err)
	}
	if len(mounts) > 0 {
		return errorf(KindBusy, "the mount root %s is busy: something is already mounted there (see /proc/mounts); unmount it or pick another --mount-root", root)
	}
	return nil
}

// MakeMountRoot creates root and any missing parent, and returns release,
// to be called once the sandbox is gone, which removes what it created.
//
// Removing a directory that is a mount point in another mount namespace
// silently detaches that mount (Linux ≥ 3.18), so every sandbox holds a
// shared flock on its mount root while it runs, and release removes the
// root only when it can take the lock exclusively: never under another
// sandbox still using it (which then leaves the empty directory behind).
func MakeMountRoot(root string) (release func(), err error) {
	return makeMountRoot(root, nil)
}

// makeMountRoot is MakeMountRoot; record, if set, is told which
// directories it is about to create, before it creates them.
func makeMountRoot(root string, record func(made []string) error) (release func(), err error) {
	root = filepath.Clean(root)
	for range 10 {
		var made []string
		for dir := root; ; dir = filepath.Dir(dir) {
			if _, err := os.Lstat(dir); err == nil || dir == "/" {
				break
			}
			made = append(made, dir)
		}
		if record != nil && len(made) > 0 {
			if err := record(made); err != nil {
				return nil, err
			}
		}
		if err := os.MkdirAll(root, 0o755); err != nil {
			return nil, errorf(KindInvalid, "cannot create the mount root %s: %v; create it or pick another --mount-root", root, err)
		}
		f, err := os.Open(root)
		if err != nil {
			return nil, errorf(KindInvalid, "cannot open the mount root %s: %v", root, err)
		}
		// Waits while another sandbox's release holds it exclusively.
		if err := unix.Flock(int(f.Fd()), unix.LOCK_SH); err != nil {
			f.Close()
			return nil, errorf(KindSetup, "lock the mount root %s: %v", root, err)
		}
		if sameFile(f, root) {
			return func() { releaseMountRoot(f, made) }, nil
		}
		f.Close() // removed by that release meanwhile: make it again
	}
	return nil, errorf(KindSetup, "the mount root %s keeps disappearing while it is being created; is something removing it?", root)
}

func releaseMountRoot(f *os.File, made []string) {
	defer f.Close()
	if len(made) == 0 || unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return
	}
	for _, dir := range made {
		_ = os.Remove(dir)
	}
}

// sameFile reports whether the open f is still what path names.
func sameFile(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}
