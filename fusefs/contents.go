package fusefs

import "sync"

// contentBudget bounds the bytes of content kept between opens, per mount.
const contentBudget = 8 << 20

// contents keeps the content of each memory's last known version, so that
// opening a file whose head the mount knows needs no query. Versions are
// immutable: what it returns can be an old version, never a wrong one, and
// the caller asks for the version it believes is the head.
type contents struct {
	mu    sync.Mutex
	bytes int
	byMem map[string]version
}

type version struct {
	id   string
	data string
}

func newContents() *contents { return &contents{byMem: map[string]version{}} }

func (c *contents) get(memID, versionID string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.byMem[memID]
	if !ok || v.id != versionID {
		return "", false
	}
	return v.data, true
}

// put keeps data as memID's version versionID, evicting others (in no
// particular order) to stay within the budget.
func (c *contents) put(memID, versionID, data string) {
	if len(data) > contentBudget/8 {
		c.forget(memID)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bytes += len(data) - len(c.byMem[memID].data)
	c.byMem[memID] = version{versionID, data}
	for id, v := range c.byMem {
		if c.bytes <= contentBudget {
			break
		}
		if id != memID {
			c.bytes -= len(v.data)
			delete(c.byMem, id)
		}
	}
}

func (c *contents) forget(memID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bytes -= len(c.byMem[memID].data)
	delete(c.byMem, memID)
}
