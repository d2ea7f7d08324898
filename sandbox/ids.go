package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
// the lock as well, as long as it lives). With base -1 it takes the
// first free slot; otherwise the range starting at base, which must not be
// in use by another run. A run holds its range's lock file locked while it
// lasts; the kernel drops the lock when the run dies.
func AllocateIDs(base int64) (*IDMap, func(), error) {
	if err := os.MkdirAll(IDLockDir, 0o700); err != nil {
		return nil, nil, errorf(KindSetup, "make %s for the sessions' id ranges: %v", IDLockDir, err)
	}
	try := func(b uint32) (*os.File, error) {
		f, err := os.OpenFile(filepath.Join(IDLockDir, strconv.FormatUint(uint64(b), 10)), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
		if err != nil {
			return nil, err
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	}
	if base >= 0 {
		if base == 0 || base+IDRangeSize > 1<<32-1 {
			return nil, nil, errorf(KindInvalid, "--uid-base %d: give a host uid above 0 with %d free ids after it", base, IDRangeSize)
		}
		f, err := try(uint32(base))
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, nil, errorf(KindBusy, "the host id range at %d is in use by another memfs run: give another --uid-base, or none", base)
		}
		if err != nil {
			return nil, nil, errorf(KindSetup, "lock the host id range at %d: %v", base, err)
		}
		return &IDMap{Host: uint32(base), Size: IDRangeSize, lock: f}, func() { f.Close() }, nil
	}
	for slot := range uint32(idSlots) {
		b := firstIDBase + slot*IDRangeSize
		f, err := try(b)
		if errors.Is(err, unix.EWOULDBLOCK) {
			continue
		}
		if err != nil {
			return nil, nil, errorf(KindSetup, "lock a host id range in %s: %v", IDLockDir, err)
		}
		return &IDMap{Host: b, Size: IDRangeSize, lock: f}, func() { f.Close() }, nil
	}
	return nil, nil, errorf(KindBusy, "all %d host id ranges are in use by memfs runs: wait for one to end", idSlots)
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
