package mirror

import (
	"strings"
	"sync"

	"github.com/memfs/memfs/versions"
)

// flights are the engine requests of a mount between their start and
// their answer's Apply, with what each touches. A change made elsewhere
// that touches a request in flight is applied only once that request is
// answered (Landed): the answer is about the state before the change (a
// save's version, a load's content, a count), and applied after it, it
// would put that older state back. Changes that touch none of them, and
// the mount's own, which the origin tells, are applied at once, so a
// mount saving without pause does not hold back others' changes.
type flights struct {
	mu     sync.Mutex
	done   sync.Cond
	next   uint64
	flying map[uint64]Request
}

func (f *flights) begin(r Request) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.flying == nil {
		f.flying, f.done.L = map[uint64]Request{}, &f.mu
	}
	f.next++
	f.flying[f.next] = r
	return f.next
}

func (f *flights) end(id uint64) {
	f.mu.Lock()
	delete(f.flying, id)
	f.mu.Unlock()
	f.done.Broadcast()
}

// landed waits until no request begun so far that touches one of
// others' changes cs is in flight.
func (f *flights) landed(own string, cs []versions.Change) {
	f.mu.Lock()
	mark := f.next
	f.mu.Unlock()
	f.landedUpTo(mark, own, cs)
}

// landedUpTo waits until none of the requests begun up to mark that
// touches one of others' changes cs is in flight.
func (f *flights) landedUpTo(mark uint64, own string, cs []versions.Change) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.flying == nil {
		return
	}
	for f.blocked(mark, own, cs) {
		f.done.Wait()
	}
}

func (f *flights) blocked(mark uint64, own string, cs []versions.Change) bool {
	for id, r := range f.flying {
		if id > mark {
			continue
		}
		for _, c := range cs {
			if c.Origin != own && touches(r, c) {
				return true
			}
		}
	}
	return false
}

// touches reports whether c may change what r's answer says: c is at or
// above or below a path r names, or changes r's memory; the store's count
// is changed by every memory's change.
func touches(r Request, c versions.Change) bool {
	if r.Kind == AskCount {
		return c.MemoryID != ""
	}
	if r.MemID != "" && r.MemID == c.MemoryID {
		return true
	}
	for _, q := range c.Paths() {
		for _, p := range [...]string{r.Path, r.From} {
			if p != "" && related(p, q) {
				return true
			}
		}
	}
	return false
}

// related: a and b are the same path or one is below the other.
func related(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return a == b || a == "/" || strings.HasPrefix(b, a) && b[len(a)] == '/'
}

// Landed waits until every request of this mount begun so far that
// touches one of the changes cs made elsewhere is answered, holding no
// lock while it waits; cs are then applied after the answers that came
// before them.
func (m *Mirror) Landed(cs []versions.Change) { m.inflight.landed(m.origin.String(), cs) }
