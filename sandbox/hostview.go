package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// readOnlyHost makes every mount the command sees read-only, nosuid and
// nodev, as a container's root is, except the daemon's mounts at and below
// the mount root and the directories granted writable (Spec.RW), which stay
// writable but nosuid and nodev too. Root inside then writes no host file:
// not a usermode helper such as /usr/sbin/request-key, not /etc, not the
// database's parents; and no device node outside the command's /dev opens.
func readOnlyHost(spec *Spec) error {
	// A granted directory becomes a mount of its own, so that it can stay
	// writable while what holds it does not.
	for _, dir := range spec.RW {
		if err := unix.Mount(dir, dir, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return errorf(KindSetup, "grant %s to the command: %v; give an existing directory", dir, err)
		}
	}
	mounts, err := mountinfo.GetMounts(nil)
	if err != nil {
		return errorf(KindSetup, "read the mount table: %v", err)
	}
	writable := func(m *mountinfo.Info) bool {
		if within(m.Mountpoint, spec.MountRoot) {
			return true
		}
		return slices.ContainsFunc(spec.RW, func(d string) bool { return within(m.Mountpoint, d) })
	}
	const all = unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV
	// One call covers every mount, those no path reaches included; the
	// writable ones are then given back what they had.
	err = unix.MountSetattr(-1, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: all})
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) { // before Linux 5.12, or a container's filter
		return readOnlyHostByRemount(mounts, writable)
	}
	if err != nil {
		return errorf(KindSetup, "make the host's file systems read-only for the command: %v", err)
	}
	for _, m := range mounts {
		if !writable(m) || slices.Contains(strings.Split(m.Options, ","), "ro") {
			continue
		}
		err := unix.MountSetattr(-1, m.Mountpoint, unix.AT_SYMLINK_NOFOLLOW, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY})
		if err != nil && !errors.Is(err, unix.ENOENT) {
			return errorf(KindSetup, "keep %s writable for the command: %v", m.Mountpoint, err)
		}
	}
	return nil
}

// readOnlyHostByRemount does what readOnlyHost does on kernels before 5.12:
// a bind remount of each mount, keeping the flags it had.
func readOnlyHostByRemount(mounts []*mountinfo.Info, writable func(*mountinfo.Info) bool) error {
	for _, m := range mounts {
		flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_NOSUID | unix.MS_NODEV)
		opts := strings.Split(m.Options, ",")
		if !writable(m) || slices.Contains(opts, "ro") {
			flags |= unix.MS_RDONLY
		}
		for o, f := range map[string]uintptr{"noexec": unix.MS_NOEXEC, "noatime": unix.MS_NOATIME, "nodiratime": unix.MS_NODIRATIME, "relatime": unix.MS_RELATIME} {
			if slices.Contains(opts, o) {
				flags |= f
			}
		}
		if err := unix.Mount("", m.Mountpoint, "", flags, ""); err != nil && !errors.Is(err, unix.ENOENT) {
			return errorf(KindSetup, "make %s read-only for the command: %v", m.Mountpoint, err)
		}
	}
	return nil
}

// Where the command's private files are: /tmp is an empty tmpfs of its own
// (the host's /tmp, other sessions' files, are not there), holding the
// prompt on a read-only tmpfs and the command's home.
const (
	PromptFile = "/tmp/memfs/memory-prompt.md"
	Home       = "/tmp/home"
)

// mountPrivateTmp mounts the command's /tmp, its prompt file (mode 0400,
// owned by the command's user) and its home. What the command needs from
// the host's /tmp, the mount root, its working directory and the
// directories granted to it, is bound in at the same paths.
func mountPrivateTmp(spec *Spec) error {
	var keep []string
	for _, d := range append([]string{spec.MountRoot, spec.Dir}, spec.RW...) {
		if d != "/tmp" && within(d, "/tmp") {
			keep = append(keep, d)
		}
	}
	slices.Sort(keep)
	fds := map[string]int{}
	// The directories on the way keep their owners and modes: one the
	// command's user could not pass on the host, it cannot pass here.
	type dirAttr struct {
		path     string
		mode     uint32
		uid, gid int
	}
	var parents []dirAttr
	for i, d := range keep {
		if i > 0 && within(d, keep[i-1]) {
			continue // bound with what holds it
		}
		fd, err := unix.Open(d, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // a working directory that hiding took away
		}
		defer unix.Close(fd)
		fds[d] = fd
		for p := filepath.Dir(d); p != "/tmp"; p = filepath.Dir(p) {
			var st unix.Stat_t
			if err := unix.Lstat(p, &st); err != nil {
				return errorf(KindSetup, "look at %s: %v", p, err)
			}
			parents = append(parents, dirAttr{p, st.Mode & 0o1777, int(st.Uid), int(st.Gid)})
		}
	}
	slices.SortFunc(parents, func(a, b dirAttr) int { return strings.Compare(a.path, b.path) })
	uid, gid := spec.HostIDs()
	if err := emptyTmp(spec.Limits.Tmp); err != nil {
		return err
	}
	for _, p := range parents {
		err := os.Mkdir(p.path, 0o700)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err == nil {
			err = os.Chown(p.path, p.uid, p.gid)
		}
		if err == nil {
			err = unix.Chmod(p.path, p.mode)
		}
		if err != nil {
			return errorf(KindSetup, "make %s in the command's /tmp: %v", p.path, err)
		}
	}
	for d, fd := range fds {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return errorf(KindSetup, "make %s in the command's /tmp: %v", d, err)
		}
		if err := bindFD(fd, d); err != nil {
			return errorf(KindSetup, "bind %s into the command's /tmp: %v", d, err)
		}
	}
	promptDir := filepath.Dir(PromptFile)
	for _, d := range []string{promptDir, Home} {
		// The /tmp is empty but for what was bound in: a directory bound
		// at one of these paths is the host's, never to be emptied.
		if err := os.Mkdir(d, 0o755); err != nil {
			return errorf(KindSetup, "make %s for the command: %v", d, err)
		}
	}
	if err := os.Chown(Home, uid, gid); err != nil {
		return errorf(KindSetup, "give %s to the command's user: %v", Home, err)
	}
	if err := os.Chmod(Home, 0o700); err != nil {
		return errorf(KindSetup, "make %s private: %v", Home, err)
	}
	if err := unix.Mount("memfs-prompt", promptDir, "tmpfs", inert, "mode=0755,size=1m,nr_inodes=8"); err != nil {
		return errorf(KindSetup, "mount the prompt's directory: %v", err)
	}
	if err := os.WriteFile(PromptFile, []byte(spec.Prompt), 0o400); err != nil {
		return errorf(KindSetup, "write the prompt file: %v", err)
	}
	if err := os.Chown(PromptFile, uid, gid); err != nil {
		return errorf(KindSetup, "give the prompt file to the command's user: %v", err)
	}
	if err := unix.Mount("", promptDir, "", unix.MS_REMOUNT|unix.MS_RDONLY|inert, ""); err != nil {
		return errorf(KindSetup, "make the prompt's directory read-only: %v", err)
	}
	return nil
}

// emptyTmp mounts over /tmp an empty tmpfs of the command's own, which
// vanishes with the run: the host's /tmp holds other users' and other
// sessions' files, which the command has no business listing.
func emptyTmp(size int64) error {
	if size <= 0 {
		size = DefaultTmp
	}
	if err := unix.Mount("memfs-tmp", "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, fmt.Sprintf("mode=1777,size=%d", size)); err != nil {
		return errorf(KindSetup, "mount the command's /tmp: %v", err)
	}
	return nil
}

// HostIDs are the host's uid and gid of the command's user.
func (s *Spec) HostIDs() (uid, gid int) {
	if s.User != nil {
		uid, gid = int(s.User.UID), int(s.User.GID)
	}
	if s.IDs != nil {
		uid += int(s.IDs.Host)
		gid += int(s.IDs.Host)
	}
	return uid, gid
}

// verifyHidden checks, once every mount is made, that no hidden directory
// shows anything and that none of the files that must stay unreachable
// (the database, its journal) can be found.
func verifyHidden(spec *Spec) error {
	for _, dir := range spec.Hide {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue // under the command's /tmp, which has none of the host's
		}
		if err != nil || len(entries) > 0 {
			return errorf(KindSetup, "hiding %s from the command did not take effect (%d entries visible, %v); not starting it", dir, len(entries), err)
		}
	}
	for _, f := range spec.Unreachable {
		if _, err := os.Lstat(f); !errors.Is(err, os.ErrNotExist) {
			return errorf(KindSetup, "%s is still reachable in the command's view (%v); not starting it", f, err)
		}
	}
	return nil
}

// checkHiddenAliases refuses a run whose hidden directories (the
// database's) or unreachable files are also reachable at another path: a
// bind mount of one of them or of a parent, made by the operator
// elsewhere on the host, would show the database to the command, read-only
// but readable, since hiding covers the paths it is given. Each candidate
// path is confirmed by device and inode.
func checkHiddenAliases(s *Spec) error {
	if len(s.Hide) == 0 {
		return nil
	}
	mounts, err := mountinfo.GetMounts(nil)
	if err != nil {
		return errorf(KindSetup, "read the mount table: %v", err)
	}
	hidden := func(p string) bool {
		return slices.ContainsFunc(s.Hide, func(h string) bool { return within(p, h) })
	}
	for _, target := range append(append([]string(nil), s.Hide...), s.Unreachable...) {
		real, err := filepath.EvalSymlinks(target)
		if err != nil {
			continue // not there: nothing to reach
		}
		var want unix.Stat_t
		if err := unix.Stat(real, &want); err != nil {
			continue
		}
		p, ok := placeOf(mounts, real)
		if !ok {
			continue
		}
		for _, m := range mounts {
			if unix.Mkdev(uint32(m.Major), uint32(m.Minor)) != p.dev || !under(p.path, m.Root) {
				continue
			}
			alias := filepath.Join(m.Mountpoint, strings.TrimPrefix(p.path, m.Root))
			if m.Root == "/" {
				alias = filepath.Join(m.Mountpoint, p.path)
			}
			if hidden(alias) {
				continue
			}
			var st unix.Stat_t
			if unix.Stat(alias, &st) == nil && st.Dev == want.Dev && st.Ino == want.Ino {
				return errorf(KindInvalid, "the database's %s is also reachable at %s, through a bind mount of it or of a parent (%s): the command would see it there; unmount that, or keep the database in a directory no other mount shows", target, alias, m.Mountpoint)
			}
		}
	}
	return nil
}
