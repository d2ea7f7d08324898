package mirror

import (
	"cmp"
	"slices"
	"strconv"
	"sync"
	"syscall"
)

// LastOpened remembers the version of each memory each thread last
// opened: an atomic save (write a temporary file, rename it over the
// target) is based on the version its process read. A FUSE request names
// the calling thread, and runtimes such as Node read and rename from
// different threads, so the rename looks in its thread group: the most
// recent open by any of its threads wins (/proc tells a thread's
// group). An open costs a map update, no /proc read. Reads the kernel
// serves from its page cache never reach the mount: "last opened" is
// what can be known. Bounded: the oldest threads and entries are
// forgotten first.
type LastOpened struct {
	mu      sync.Mutex
	maxTids int
	maxEach int
	order   []int // threads, oldest first
	by      map[int]*openedBy
	tick    uint64
}

type openedBy struct {
	order []string
	ver   map[string]openedAt
}

type openedAt struct {
	version string
	tick    uint64
}

// NewLastOpened keeps up to maxTids threads of up to maxEach memories.
func NewLastOpened(maxTids, maxEach int) *LastOpened {
	return &LastOpened{maxTids: maxTids, maxEach: maxEach, by: map[int]*openedBy{}}
}

// Note records that thread tid opened version ver of mem (a memory id or a path).
func (o *LastOpened) Note(tid int, mem, ver string) {
	if tid <= 0 || mem == "" || ver == "" {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	b := o.by[tid]
	if b == nil {
		if len(o.order) >= o.maxTids {
			delete(o.by, o.order[0])
			o.order = o.order[1:]
		}
		b = &openedBy{ver: map[string]openedAt{}}
		o.by[tid] = b
		o.order = append(o.order, tid)
	}
	if _, ok := b.ver[mem]; !ok {
		if len(b.order) >= o.maxEach {
			delete(b.ver, b.order[0])
			b.order = b.order[1:]
		}
		b.order = append(b.order, mem)
	}
	o.tick++
	b.ver[mem] = openedAt{ver, o.tick}
}

// Version is the version of mem that thread tid's thread group last
// opened. /proc is asked only when threads other than tid opened mem
// later than tid did, newest first, until one is of tid's group.
func (o *LastOpened) Version(tid int, mem string) (string, bool) {
	o.mu.Lock()
	var best openedAt
	var others []tidOpened
	for t, b := range o.by {
		if v, ok := b.ver[mem]; ok {
			if t == tid {
				best = v
			} else {
				others = append(others, tidOpened{t, v})
			}
		}
	}
	o.mu.Unlock()
	slices.SortFunc(others, func(a, b tidOpened) int { return cmp.Compare(b.at.tick, a.at.tick) })
	for _, x := range others {
		if x.at.tick < best.tick {
			break
		}
		if inGroup(uint32(tid), uint32(x.tid)) {
			best = x.at
			break
		}
	}
	return best.version, best.tick > 0
}

type tidOpened struct {
	tid int
	at  openedAt
}

// SameProcess reports whether threads a and b are of one thread group;
// known is false when that cannot be told: a thread is 0 or has ended.
func SameProcess(a, b uint32) (same, known bool) {
	if a == 0 || b == 0 {
		return false, false
	}
	if inGroup(a, b) {
		return true, true
	}
	var st syscall.Stat_t
	return false, syscall.Stat(procPath(a, 0), &st) == nil && syscall.Stat(procPath(b, 0), &st) == nil
}

// inGroup reports whether threads a and b are of one thread group, false
// also when either ended: /proc/a/task/b exists exactly when they are,
// and a stat of it costs one system call where reading a thread's status
// costs the kernel a page of text.
func inGroup(a, b uint32) bool {
	if a == b {
		return a != 0
	}
	var st syscall.Stat_t
	return syscall.Stat(procPath(a, b), &st) == nil
}

// procPath is /proc/a, or /proc/a/task/b when b is not 0.
func procPath(a, b uint32) string {
	p := strconv.AppendUint([]byte("/proc/"), uint64(a), 10)
	if b != 0 {
		p = strconv.AppendUint(append(p, "/task/"...), uint64(b), 10)
	}
	return string(p)
}
