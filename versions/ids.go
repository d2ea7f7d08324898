package versions

import (
	"crypto/rand"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// Id prefixes (DESIGN.md, Concepts and identifiers).
const (
	prefixStore   = "memstore_"
	prefixMemory  = "mem_"
	prefixVersion = "memver_"
	prefixSession = "sesn_"
)

// idGen makes prefix+ULID ids: URL-safe, unique and sorted by creation time
// (strictly increasing within this handle, thanks to monotonic entropy).
type idGen struct {
	mu      sync.Mutex
	entropy *ulid.MonotonicEntropy
}

func (g *idGen) init() { g.entropy = ulid.Monotonic(rand.Reader, 0) }

func (g *idGen) make(prefix string, t time.Time) string {
	g.mu.Lock()
	id, err := ulid.New(ulid.Timestamp(t), g.entropy)
	g.mu.Unlock()
	if err != nil {
		// The monotonic sequence overflowed within one millisecond, or the
		// clock went back: fresh entropy still gives a unique id.
		id = ulid.Make()
	}
	return prefix + id.String()
}
