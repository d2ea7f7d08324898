package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// limiter bounds the requests that run at once. A request that finds every
// slot taken waits in a bounded queue for a short while; a full queue or a
// wait that runs out is refused with 503, and one key holding more than its
// share is refused with 429, so that overload is answered quickly instead
// of piling up goroutines behind the database's single writer.
type limiter struct {
	slots    chan struct{}
	maxQueue int
	wait     time.Duration
	perKey   int

	mu     sync.Mutex
	queued int
	byKey  map[string]int
}

func newLimiter(o Options) *limiter {
	return &limiter{slots: make(chan struct{}, o.MaxInFlight), maxQueue: o.MaxQueued, wait: o.QueueWait,
		perKey: o.MaxPerKey, byKey: map[string]int{}}
}

func (l *limiter) acquire(ctx context.Context, key string) (release func(), err error) {
	l.mu.Lock()
	if l.byKey[key] >= l.perKey {
		l.mu.Unlock()
		return nil, &apiError{http.StatusTooManyRequests, TypeRateLimit,
			"too many requests in flight for this API key (at most " + strconv.Itoa(l.perKey) + "): retry after a pause", 500 * time.Millisecond}
	}
	l.byKey[key]++
	l.mu.Unlock()
	done := func() {
		l.mu.Lock()
		if l.byKey[key]--; l.byKey[key] == 0 {
			delete(l.byKey, key)
		}
		l.mu.Unlock()
	}
	select {
	case l.slots <- struct{}{}:
		return func() { <-l.slots; done() }, nil
	default:
	}
	l.mu.Lock()
	if l.queued >= l.maxQueue {
		l.mu.Unlock()
		done()
		return nil, busy()
	}
	l.queued++
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.queued--
		l.mu.Unlock()
	}()
	t := time.NewTimer(l.wait)
	defer t.Stop()
	select {
	case l.slots <- struct{}{}:
		return func() { <-l.slots; done() }, nil
	case <-t.C:
		done()
		return nil, busy()
	case <-ctx.Done():
		done()
		return nil, errorf(http.StatusServiceUnavailable, TypeOverloaded, "the request was abandoned while it waited for a turn")
	}
}

func busy() error {
	return &apiError{http.StatusServiceUnavailable, TypeOverloaded,
		"the server is overloaded: every request slot is taken; retry after a pause", time.Second}
}
