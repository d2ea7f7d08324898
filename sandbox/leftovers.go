package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A namespace stage removes what it made on the host (the mount root's
// missing directories, the run's cgroup) as it ends. Killed with SIGKILL it
// cannot, so it records them first, in a file it holds locked while it
// lives, and names its cgroup after its pid; whoever finds the lock free
// removes what is recorded: the supervisor once the stage is gone, else
// the next run's supervisor.

// RunDir holds one record per live namespace stage.
const RunDir = "/run/memfs/runs"

// record is a namespace stage's file in RunDir.
type record struct {
	f    *os.File
	path string
}

// recorded is what a record holds.
type recorded struct {
	Root string   `json:"root"` // the mount root
	Made []string `json:"made"` // directories created for it, deepest first
}

func newRecord() (*record, error) {
	if err := os.MkdirAll(RunDir, 0o700); err != nil {
		return nil, errorf(KindSetup, "make %s for the runs' records: %v", RunDir, err)
	}
	path := filepath.Join(RunDir, strconv.Itoa(os.Getpid())+".json")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, errorf(KindSetup, "make the run's record in %s: %v", RunDir, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, errorf(KindSetup, "lock the run's record %s: %v", path, err)
	}
	return &record{f: f, path: path}, nil
}

// madeDirs records the directories about to be created for the mount root
// (deepest first).
func (r *record) madeDirs(made []string) error {
	b, err := json.Marshal(recorded{Root: made[0], Made: made})
	if err == nil {
		_, err = r.f.WriteAt(b, 0)
	}
	if err == nil {
		err = r.f.Sync()
	}
	if err != nil {
		return errorf(KindSetup, "record the mount root's directories in %s: %v", r.path, err)
	}
	return nil
}

// done removes the record: what it names is removed by now.
func (r *record) done() {
	_ = os.Remove(r.path)
	r.f.Close()
}

// cgroupName is the name of the cgroup of the namespace stage pid.
func cgroupName(pid int) string { return fmt.Sprintf("memfs-run-%d", pid) }

// sweepLeftovers removes what namespace stages killed with SIGKILL left:
// the directories their records name, and the cgroups, beside this
// process's own, of stages that are gone. wait is how long a cgroup may
// take to empty (its last processes dying).
func sweepLeftovers(wait time.Duration) {
	entries, _ := os.ReadDir(RunDir)
	for _, e := range entries {
		pid, ok := strings.CutSuffix(e.Name(), ".json")
		if _, err := strconv.Atoi(pid); !ok || err != nil {
			continue
		}
		sweepRecord(filepath.Join(RunDir, e.Name()))
	}
	own, err := ownCgroups()
	if err != nil {
		return
	}
	var parents []string
	if root, ok := own[""]; ok && isCgroup2("/sys/fs/cgroup"+root) {
		parents = append(parents, filepath.Join("/sys/fs/cgroup", root))
	}
	for c, path := range own {
		if c != "" {
			parents = append(parents, filepath.Join("/sys/fs/cgroup", c, path))
		}
	}
	for _, dir := range parents {
		kids, _ := os.ReadDir(dir)
		for _, k := range kids {
			n, ok := strings.CutPrefix(k.Name(), "memfs-run-")
			pid, err := strconv.Atoi(n)
			if !ok || err != nil || !k.IsDir() || unix.Kill(pid, 0) != unix.ESRCH {
				continue // not a run's, or its stage lives
			}
			(&cgroup{dirs: []string{filepath.Join(dir, k.Name())}}).removeWithin(wait)
		}
	}
}

// sweepRecord removes what a record names if no stage holds it.
func sweepRecord(path string) {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return // its stage lives
	}
	var r recorded
	if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
		if err := json.Unmarshal(b, &r); err != nil {
			return
		}
	}
	if len(r.Made) > 0 && slices.IsSortedFunc(r.Made, func(a, b string) int { return len(b) - len(a) }) {
		if root, err := os.Open(r.Root); err == nil {
			// Never under another run still using that root.
			releaseMountRoot(root, r.Made)
		} else if !errors.Is(err, os.ErrNotExist) {
			return
		} else {
			for _, d := range r.Made[1:] {
				_ = os.Remove(d)
			}
		}
	}
	_ = os.Remove(path)
}
