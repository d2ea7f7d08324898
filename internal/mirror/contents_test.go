package mirror

import (
	"fmt"
	"strings"
	"testing"
)

// Past its budget the content cache forgets the least recently used
// memories, and its byte count stays exact.
func TestContentsEvictsLeastRecentlyUsed(t *testing.T) {
	c := NewContents()
	const size = contentBudget / 16
	data := strings.Repeat("x", size)
	id := func(i int) string { return fmt.Sprintf("mem_%02d", i) }
	for i := range 16 { // exactly the budget
		c.Put(id(i), "v1", data)
	}
	if _, ok := c.Get(id(0), "v1"); !ok {
		t.Fatal("mem_00 evicted while the cache was within its budget")
	}
	c.Put(id(16), "v1", data) // over budget: mem_01 is now the oldest
	if _, ok := c.Get(id(1), "v1"); ok {
		t.Error("mem_01, the least recently used, was kept past the budget")
	}
	for _, i := range []int{0, 2, 16} {
		if _, ok := c.Get(id(i), "v1"); !ok {
			t.Errorf("%s evicted, though used more recently than mem_01", id(i))
		}
	}
	c.Put(id(0), "v2", "new")
	if _, ok := c.Get(id(0), "v1"); ok {
		t.Error("mem_00's replaced version is still returned")
	}
	if got, ok := c.Get(id(0), "v2"); !ok || got != "new" {
		t.Errorf("get(mem_00, v2) = %q, %v; want the new content", got, ok)
	}
	c.Put(id(3), "v2", strings.Repeat("y", contentBudget/8+1))
	if _, ok := c.Get(id(3), "v1"); ok {
		t.Error("a memory saved with content too large to keep still returns its old version")
	}
	for i := range 17 {
		c.Forget(id(i))
	}
	if c.bytes != 0 || c.lru.Len() != 0 || len(c.byMem) != 0 {
		t.Errorf("after forgetting every memory: %d bytes, %d entries, %d ids; want none", c.bytes, c.lru.Len(), len(c.byMem))
	}
}
