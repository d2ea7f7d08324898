package sandbox

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// IDMap maps the command's user and group ids 0 to Size-1 onto the host's
// Host to Host+Size-1, in a user namespace of its own: root inside is an
// unprivileged host uid that owns no host file.
type IDMap struct {
	Host uint32   `json:"host"`
	Size uint32   `json:"size"`
	lock *os.File // AllocateIDs's lock on the range, if it took one
}

// IDRangeSize is how many ids a session maps: every uid a --user may name.
const IDRangeSize = 65536

// Sessions' ranges follow one another from firstIDBase, one slot each, in
// the range systemd leaves to container managers, below 2^31 so that no
// tool reads them as negative.
const (
	firstIDBase = 0x70000000
	idSlots     = (0x80000000 - firstIDBase) / IDRangeSize
)

// IDLockDir holds one lock file per range in use.
const IDLockDir = "/run/memfs/ids"

// AllocateIDs takes a host id range for one run and returns it with
// release, to be called once the run is over (Run's namespace stage holds
// the lock as well, as long as it lives). With base -1 it takes the first
// free slot; otherwise the range starting at base, which must not overlap
// the range of a live run. A base below IDRangeSize, or a range holding the
// id of a user or group of the host's, maps host users onto the command's:
// refused unless allowHostIDs, and then logged. A run holds its range's
// lock file locked while it lasts; the kernel drops the lock when the run
// dies, and the file goes with the next allocation.
func AllocateIDs(base int64, allowHostIDs bool) (*IDMap, func(), error) {
	if err := os.MkdirAll(IDLockDir, 0o700); err != nil {
		return nil, nil, errorf(KindSetup, "make %s for the sessions' id ranges: %v", IDLockDir, err)
	}
	// One allocation at a time, so that two runs never take overlapping
	// ranges between one's look and its lock.
	all, err := os.OpenFile(filepath.Join(IDLockDir, ".lock"), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, nil, errorf(KindSetup, "lock %s: %v", IDLockDir, err)
	}
	defer all.Close()
	if err := unix.Flock(int(all.Fd()), unix.LOCK_EX); err != nil {
		return nil, nil, errorf(KindSetup, "lock %s: %v", IDLockDir, err)
	}
	live, err := liveRanges()
	if err != nil {
		return nil, nil, err
	}
	take := func(b uint32) (*IDMap, func(), error) {
		f, err := os.OpenFile(filepath.Join(IDLockDir, strconv.FormatUint(uint64(b), 10)), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
		if err == nil {
			err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
			if err != nil {
				f.Close()
			}
		}
		if err != nil {
			return nil, nil, errorf(KindSetup, "lock the host id range at %d in %s: %v", b, IDLockDir, err)
		}
		return &IDMap{Host: b, Size: IDRangeSize, lock: f}, func() { f.Close() }, nil
	}
	if base >= 0 {
		if base == 0 || base+IDRangeSize > 1<<32-1 {
			return nil, nil, errorf(KindInvalid, "--uid-base %d: give a host uid above 0 with %d free ids after it", base, IDRangeSize)
		}
		b := uint32(base)
		if other, ok := overlapping(live, b); ok {
			return nil, nil, errorf(KindBusy, "--uid-base %d: the host ids %d-%d overlap those of a live memfs run (%d-%d); give a base outside every run's range, or none", b, b, b+IDRangeSize-1, other, other+IDRangeSize-1)
		}
		users := hostIDsIn(b)
		if b < IDRangeSize || len(users) > 0 {
			why := fmt.Sprintf("below %d, where the host's own users are", IDRangeSize)
			if len(users) > 0 {
				why = "holding host users and groups (" + strings.Join(users, ", ") + ")"
			}
			if !allowHostIDs {
				return nil, nil, errorf(KindInvalid, "--uid-base %d maps the command's ids onto host ids %d-%d, %s: the command would be them for every file they own; give a base of %d or more that no host user has, or --allow-host-ids to mean it", b, b, b+IDRangeSize-1, why, IDRangeSize)
			}
			slog.Warn("memfs run: --allow-host-ids: the command's ids are host ids "+why+"; it can read and write what they own", "uid_base", b)
		}
		return take(b)
	}
	for slot := range uint32(idSlots) {
		b := firstIDBase + slot*IDRangeSize
		if _, busy := overlapping(live, b); busy || len(hostIDsIn(b)) > 0 {
			continue
		}
		return take(b)
	}
	return nil, nil, errorf(KindBusy, "all %d host id ranges are in use by memfs runs: wait for one to end", idSlots)
}

// liveRanges are the bases of the ranges live runs hold, from the lock
// files in IDLockDir; the files no run holds are removed. The caller holds
// IDLockDir's lock.
func liveRanges() ([]uint32, error) {
	entries, err := os.ReadDir(IDLockDir)
	if err != nil {
		return nil, errorf(KindSetup, "list the id ranges in use in %s: %v", IDLockDir, err)
	}
	var live []uint32
	for _, e := range entries {
		b, err := strconv.ParseUint(e.Name(), 10, 32)
		if err != nil {
			continue
		}
		path := filepath.Join(IDLockDir, e.Name())
		f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW, 0)
		if err != nil {
			continue
		}
		if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
			live = append(live, uint32(b))
		} else {
			_ = os.Remove(path) // its run is gone
		}
		f.Close()
	}
	return live, nil
}

// overlapping returns a live range that shares an id with the range at b.
func overlapping(live []uint32, b uint32) (uint32, bool) {
	for _, o := range live {
		if uint64(o) < uint64(b)+IDRangeSize && uint64(b) < uint64(o)+IDRangeSize {
			return o, true
		}
	}
	return 0, false
}

// hostIDsIn lists the users and groups of /etc/passwd and /etc/group whose
// ids lie in the range at b.
func hostIDsIn(b uint32) []string {
	var found []string
	for _, db := range []struct{ file, kind string }{{"/etc/passwd", "user"}, {"/etc/group", "group"}} {
		data, err := os.ReadFile(db.file)
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			f := strings.Split(line, ":")
			if len(f) < 3 {
				continue
			}
			id, err := strconv.ParseUint(f[2], 10, 32)
			if err == nil && id >= uint64(b) && id < uint64(b)+IDRangeSize {
				found = append(found, fmt.Sprintf("%s %s (%d)", db.kind, f[0], id))
			}
		}
	}
	if len(found) > 4 {
		found = append(found[:4], fmt.Sprintf("%d more", len(found)-4))
	}
	return found
}

// CheckUserNamespace reports why a user namespace mapping m cannot be made
// here (a container that refuses them, user.max_user_namespaces = 0), or
// nil when it can.
func CheckUserNamespace(m *IDMap) error {
	cmd := exec.Command("/proc/self/exe", stageProbe)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: m.mappings(),
		GidMappings: m.mappings(),
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v %s", err, out)
	}
	return nil
}

// mappings are m as the kernel takes them.
func (m *IDMap) mappings() []syscall.SysProcIDMap {
	return []syscall.SysProcIDMap{{ContainerID: 0, HostID: int(m.Host), Size: int(m.Size)}}
}
