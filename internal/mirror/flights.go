package mirror

import "sync"

// flights are the engine requests of a mount between their start and
// their answer's Apply. Changes read from the feed are applied only once
// every request that began before the read is answered (Landed): a change
// this mount committed is then known as its own (its answer noted the
// feed position) before the feed's copy of it is looked at. Requests that
// begin meanwhile do not wait for the feed, nor it for them, and the feed
// waits once per read, not once per change, so a mount saving without
// pause still applies other writers' changes at once.
type flights struct {
	mu     sync.Mutex
	done   sync.Cond
	next   uint64
	flying map[uint64]bool
}

func (f *flights) begin() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.flying == nil {
		f.flying, f.done.L = map[uint64]bool{}, &f.mu
	}
	f.next++
	f.flying[f.next] = true
	return f.next
}

func (f *flights) end(id uint64) {
	f.mu.Lock()
	delete(f.flying, id)
	f.mu.Unlock()
	f.done.Broadcast()
}

// landed waits until every request begun so far is answered.
func (f *flights) landed() {
	f.mu.Lock()
	defer f.mu.Unlock()
	mark := f.next
	for f.before(mark) {
		f.done.Wait()
	}
}

func (f *flights) before(mark uint64) bool {
	for id := range f.flying {
		if id <= mark {
			return true
		}
	}
	return false
}

// Landed waits until every engine request this mount began so far is
// answered: the feed's changes read before the call are then applied
// knowing which are this mount's own. It holds no lock while it waits.
func (m *Mirror) Landed() { m.inflight.landed() }
