package mirror

import (
	"container/list"
	"sync"
)

// contentBudget bounds the bytes of content kept between opens, per mount.
const contentBudget = 8 << 20

// contents keeps the content of each memory's last known version, so that
// opening a file whose head the mount knows needs no query; past the budget
// it forgets the least recently used. Versions are immutable: what it
// returns can be an old version, never a wrong one, and the caller asks for
// the version it believes is the head.
type Contents struct {
	mu    sync.Mutex
	bytes int
	byMem map[string]*list.Element // of *version
	lru   list.List                // most recently used first
}

type version struct {
	memID, id, data string
}

func NewContents() *Contents { return &Contents{byMem: map[string]*list.Element{}} }

func (c *Contents) Get(memID, versionID string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byMem[memID]
	if !ok || e.Value.(*version).id != versionID {
		return "", false
	}
	c.lru.MoveToFront(e)
	return e.Value.(*version).data, true
}

// put keeps data as memID's version versionID. A memory larger than an
// eighth of the budget is not kept: it would push out many small ones.
func (c *Contents) Put(memID, versionID, data string) {
	if len(data) > contentBudget/8 {
		c.Forget(memID)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byMem[memID]; ok {
		v := e.Value.(*version)
		c.bytes += len(data) - len(v.data)
		v.id, v.data = versionID, data
		c.lru.MoveToFront(e)
	} else {
		c.bytes += len(data)
		c.byMem[memID] = c.lru.PushFront(&version{memID, versionID, data})
	}
	for c.bytes > contentBudget {
		c.removeLocked(c.lru.Back())
	}
}

func (c *Contents) Forget(memID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byMem[memID]; ok {
		c.removeLocked(e)
	}
}

func (c *Contents) removeLocked(e *list.Element) {
	v := c.lru.Remove(e).(*version)
	c.bytes -= len(v.data)
	delete(c.byMem, v.memID)
}
