package mirror

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// LastOpened remembers, per thread group, the version of each memory it last
// opened: an atomic save (write a temporary file, rename it over the
// target) is based on the version its process read. A FUSE request names
// the calling thread; runtimes such as Node read and rename from different
// threads, so the key is the thread group. Reads the kernel serves from its
// page cache never reach the mount: "last opened" is what can be known.
// Bounded: the oldest thread groups and entries are forgotten first.
type LastOpened struct {
	mu      sync.Mutex
	maxTgid int
	maxEach int
	order   []int // thread groups, oldest first
	by      map[int]*openedBy
}

type openedBy struct {
	order []string
	ver   map[string]string
}

// NewLastOpened keeps up to maxTgid thread groups of up to maxEach memories.
func NewLastOpened(maxTgid, maxEach int) *LastOpened {
	return &LastOpened{maxTgid: maxTgid, maxEach: maxEach, by: map[int]*openedBy{}}
}

// Note records that tgid opened version ver of memory mem.
func (o *LastOpened) Note(tgid int, mem, ver string) {
	if tgid <= 0 || mem == "" || ver == "" {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	b := o.by[tgid]
	if b == nil {
		if len(o.order) >= o.maxTgid {
			delete(o.by, o.order[0])
			o.order = o.order[1:]
		}
		b = &openedBy{ver: map[string]string{}}
		o.by[tgid] = b
		o.order = append(o.order, tgid)
	}
	if _, ok := b.ver[mem]; !ok {
		if len(b.order) >= o.maxEach {
			delete(b.ver, b.order[0])
			b.order = b.order[1:]
		}
		b.order = append(b.order, mem)
	}
	b.ver[mem] = ver
}

// Version is the version of mem that tgid last opened.
func (o *LastOpened) Version(tgid int, mem string) (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	b := o.by[tgid]
	if b == nil {
		return "", false
	}
	v, ok := b.ver[mem]
	return v, ok
}

// Tgid is the thread group of thread pid, from /proc; pid itself when it
// cannot be read (the thread ended: its group is gone too).
func Tgid(pid uint32) int {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return int(pid)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
				return n
			}
		}
	}
	return int(pid)
}
