package versions

import (
	"crypto/rand"
	"encoding/binary"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// Id prefixes (the hosted API's identifiers).
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

// A version's id encodes its row number, so that the versions table needs
// no index on its ids: a ULID whose time is the version's creation (in
// milliseconds) and whose 80 other bits are seqTag then the row number.
// Versions written before (and versions imported from another database,
// whatever their form) keep the id they were given in the versions
// table's id column, which a partial index covers; a version with an
// encoded id stores none.
const seqTag = 0x5e90

// versionID is the id of the version at row seq created at nanos.
func versionID(seq, nanos int64) string {
	var u ulid.ULID
	if err := u.SetTime(uint64(nanos / 1e6)); err != nil {
		// A time before 1970 (nanoseconds in an int64 end long before
		// ulid.MaxTime): the time part is only ordering, clamp it, as
		// memfs_version_id does on PostgreSQL (migration 0023).
		u.SetTime(ulid.MaxTime())
	}
	binary.BigEndian.PutUint16(u[6:8], seqTag)
	binary.BigEndian.PutUint64(u[8:16], uint64(seq))
	return prefixVersion + u.String()
}

// versionSeq decodes an id versionID made: the row number and the creation
// millisecond it names, which the row must also have (an id of the same
// form from another database names another row or none).
func versionSeq(id string) (seq int64, ms int64, ok bool) {
	s, found := strings.CutPrefix(id, prefixVersion)
	if !found {
		return 0, 0, false
	}
	u, err := ulid.ParseStrict(s)
	if err != nil || binary.BigEndian.Uint16(u[6:8]) != seqTag {
		return 0, 0, false
	}
	seq = int64(binary.BigEndian.Uint64(u[8:16]))
	if seq <= 0 {
		return 0, 0, false
	}
	return seq, int64(u.Time()), true
}
