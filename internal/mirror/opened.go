package mirror

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// LastOpened remembers the version of each memory each thread last
// opened: an atomic save (write a temporary file, rename it over the
// target) is based on the version its process read. A FUSE request names
// the calling thread, and runtimes such as Node read and rename from
// different threads, so the rename looks in its thread group: the most
// recent open by any of its threads wins (/proc tells a thread's group). An open costs a map update, no /proc read. Reads
// the kernel serves from its page cache never reach the mount: "last
// opened" is what can be known. Bounded: the oldest threads and entries
// are forgotten first.
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
// opened. /proc is read only when threads other than tid opened mem: for
// each of them, whether it is in tid's group.
func (o *LastOpened) Version(tid int, mem string) (string, bool) {
	o.mu.Lock()
	var best openedAt
	others := map[int]openedAt{}
	for t, b := range o.by {
		if v, ok := b.ver[mem]; ok {
			if t == tid {
				best = v
			} else {
				others[t] = v
			}
		}
	}
	o.mu.Unlock()
	if len(others) > 0 && tid > 0 {
		group := Tgid(uint32(tid))
		for t, v := range others {
			if group != 0 && v.tick > best.tick && Tgid(uint32(t)) == group {
				best = v
			}
		}
	}
	return best.version, best.tick > 0
}

// Tgid is the thread group of thread pid, from /proc; 0 when it cannot
// be told (the thread ended).
func Tgid(pid uint32) int {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
				return n
			}
		}
	}
	return 0
}
