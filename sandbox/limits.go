package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Limits bound what Cmd and everything it starts may use. Zero means no
// limit.
type Limits struct {
	// Pids is how many processes and threads may run at once: the cgroup
	// pids controller where there is one, and RLIMIT_NPROC of Cmd's user
	// besides (root on the host, without a user namespace, is exempt
	// from it).
	Pids int `json:"pids"`
	// Memory is in bytes; CPUs in cores. Both need a cgroup controller:
	// Run fails when asked for one it cannot apply.
	Memory int64   `json:"memory"`
	CPUs   float64 `json:"cpus"`
	// CPUWeight is the command's share of the CPU when it competes with
	// other processes (cgroup v2's cpu.weight, 1 to 10000; a process
	// outside the command's cgroup weighs 100): a command with a lower
	// weight cannot starve the mount daemons on the host, its own
	// included. 0 leaves the weight alone. Without a cpu controller it is
	// not applied, and a warning says so.
	CPUWeight int `json:"cpu_weight"`
	// Tmp bounds, in bytes, what the command writes to its private /tmp
	// (and its home there): a tmpfs, host memory outside any --memory
	// limit. 0 means DefaultTmp.
	Tmp int64 `json:"tmp"`
}

// DefaultTmp is the size of the command's /tmp unless the operator sets one.
const DefaultTmp = 64 << 20

// DefaultPids is memfs run's process limit unless the operator sets one.
const DefaultPids = 1024

// DefaultCPUWeight is memfs run's CPU weight for the command unless the
// operator sets one: a tenth of a daemon's (100), so that an agent
// spinning every core still leaves its mount daemon, and every other
// session's, the CPU they ask for.
const DefaultCPUWeight = 10

// cgroup is one run's cgroup: one directory on cgroup v2, one per
// controller on v1. Each is a child of this process's own cgroup there.
type cgroup struct {
	dirs []string
}

// cgroupLimits makes a cgroup for l and returns it, or an error when a
// limit other than Pids cannot be applied (Pids then falls back to
// RLIMIT_NPROC alone, logged).
func makeCgroup(l Limits, name string) (*cgroup, error) {
	if l.Pids == 0 && l.Memory == 0 && l.CPUs == 0 && l.CPUWeight == 0 {
		return &cgroup{}, nil
	}
	cg, err := tryCgroup(l, name)
	if err == nil {
		return cg, nil
	}
	if l.Memory != 0 || l.CPUs != 0 {
		return nil, errorf(KindSetup, "cannot apply --memory or --cpus: %v; give the limits to the container or service memfs runs in instead", err)
	}
	if l.CPUWeight != 0 {
		slog.Warn("sandbox: cannot lower the command's CPU weight (no cgroup cpu controller): a busy command competes with the mount daemons as an equal", "reason", err.Error())
		l.CPUWeight = 0
		return makeCgroup(l, name)
	}
	slog.Warn("sandbox: no cgroup pids controller to limit the command's processes; RLIMIT_NPROC of its user limits them instead", "reason", err.Error())
	return &cgroup{}, nil
}

func tryCgroup(l Limits, name string) (*cgroup, error) {
	own, err := ownCgroups()
	if err != nil {
		return nil, err
	}
	cg := &cgroup{}
	fail := func(err error) (*cgroup, error) {
		cg.remove()
		return nil, err
	}
	type setting struct{ file, value string }
	want := map[string][]setting{}
	if l.Pids > 0 {
		want["pids"] = []setting{{"pids.max", strconv.Itoa(l.Pids)}}
	}
	if l.Memory > 0 {
		want["memory"] = []setting{{"memory.max", strconv.FormatInt(l.Memory, 10)}}
	}
	if l.CPUs > 0 {
		want["cpu"] = []setting{{"cpu.max", fmt.Sprintf("%d 100000", int64(l.CPUs*100000))}}
	}
	if l.CPUWeight > 0 {
		want["cpu"] = append(want["cpu"], setting{"cpu.weight", strconv.Itoa(l.CPUWeight)})
	}
	if root, ok := own[""]; ok && isCgroup2("/sys/fs/cgroup"+root) {
		dir := filepath.Join("/sys/fs/cgroup", root)
		var ctrl []string
		for c := range want {
			ctrl = append(ctrl, "+"+c)
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(strings.Join(ctrl, " ")), 0); err != nil {
			return nil, fmt.Errorf("enable %s in %s: %w", strings.Join(ctrl, " "), dir, err)
		}
		child := filepath.Join(dir, name)
		if err := os.Mkdir(child, 0o755); err != nil {
			return nil, err
		}
		cg.dirs = append(cg.dirs, child)
		for _, s := range want {
			for _, kv := range s {
				if err := os.WriteFile(filepath.Join(child, kv.file), []byte(kv.value), 0); err != nil {
					return fail(fmt.Errorf("set %s: %w", kv.file, err))
				}
			}
		}
		return cg, nil
	}
	// cgroup v1: one hierarchy per controller, with v1's file names.
	v1 := map[string]string{"pids.max": "pids.max", "memory.max": "memory.limit_in_bytes"}
	for c, settings := range want {
		path, ok := own[c]
		if !ok {
			return fail(fmt.Errorf("no %s controller", c))
		}
		child := filepath.Join("/sys/fs/cgroup", c, path, name)
		if err := os.Mkdir(child, 0o755); err != nil {
			return fail(fmt.Errorf("make the cgroup %s: %w", child, err))
		}
		cg.dirs = append(cg.dirs, child)
		for _, kv := range settings {
			files := map[string]string{v1[kv.file]: kv.value}
			switch kv.file {
			case "cpu.max":
				q, _, _ := strings.Cut(kv.value, " ")
				files = map[string]string{"cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": q}
			case "cpu.weight":
				files = map[string]string{"cpu.shares": strconv.Itoa(v1Shares(l.CPUWeight))}
			}
			for f, v := range files {
				if err := os.WriteFile(filepath.Join(child, f), []byte(v), 0); err != nil {
					return fail(fmt.Errorf("set %s: %w", filepath.Join(child, f), err))
				}
			}
		}
	}
	return cg, nil
}

// v1Shares is cgroup v1's cpu.shares for a v2 cpu.weight: 100 is 1024,
// the share of a process outside any child cgroup.
func v1Shares(weight int) int { return max(2, weight*1024/100) }

// ownCgroups maps each controller (v2: "") to this process's cgroup in it.
func ownCgroups() (map[string]string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for c := range strings.SplitSeq(parts[1], ",") {
			m[c] = parts[2]
		}
	}
	return m, sc.Err()
}

func isCgroup2(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC
}

// procs opens the cgroup's cgroup.procs files, while they are writable
// (the command's view of /sys is read-only), and returns add, which moves
// a process there, and done, which closes them.
func (cg *cgroup) procs() (add func(pid int) error, done func(), err error) {
	var files []*os.File
	done = func() {
		for _, f := range files {
			f.Close()
		}
	}
	for _, d := range cg.dirs {
		// Through a detached copy of the mount: an open file keeps a mount
		// from being made read-only, and the command's view must be.
		tree, err := unix.OpenTree(-1, d, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		if err != nil {
			done()
			return nil, nil, errorf(KindSetup, "open the command's cgroup %s: %v", d, err)
		}
		fd, err := unix.Openat(tree, "cgroup.procs", unix.O_WRONLY|unix.O_CLOEXEC, 0)
		unix.Close(tree)
		if err != nil {
			done()
			return nil, nil, errorf(KindSetup, "open the command's cgroup %s: %v", d, err)
		}
		files = append(files, os.NewFile(uintptr(fd), filepath.Join(d, "cgroup.procs")))
	}
	add = func(pid int) error {
		for _, f := range files {
			if _, err := f.Write([]byte(strconv.Itoa(pid))); err != nil {
				return errorf(KindSetup, "put the command in its cgroup %s: %v", f.Name(), err)
			}
		}
		return nil
	}
	return add, done, nil
}

// remove removes the cgroup once the processes in it are gone.
func (cg *cgroup) remove() { cg.removeWithin(2 * time.Second) }

// removeWithin removes the cgroup, waiting at most wait for its last
// processes to die.
func (cg *cgroup) removeWithin(wait time.Duration) {
	for _, d := range cg.dirs {
		var err error
		for deadline := time.Now().Add(wait); ; time.Sleep(20 * time.Millisecond) {
			if err = unix.Rmdir(d); err == nil || errors.Is(err, unix.ENOENT) || time.Now().After(deadline) {
				break
			}
		}
		if err != nil && !errors.Is(err, unix.ENOENT) {
			slog.Warn("sandbox: remove the command's cgroup", "cgroup", d, "err", err)
		}
	}
}

// limitProcesses sets RLIMIT_NPROC on this process, which Cmd inherits.
func limitProcesses(n int) error {
	if n <= 0 {
		return nil
	}
	lim := unix.Rlimit{Cur: uint64(n), Max: uint64(n)}
	return unix.Setrlimit(unix.RLIMIT_NPROC, &lim)
}
