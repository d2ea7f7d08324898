package main

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Every line the daemons log passes through one limit, so that nothing an
// agent can make happen (a refusal, a failed publication, a guard warning
// per credential) fills the log: of each kind of line — its level and
// message, and the store, operation, errno and rule it names — the first
// logBurst in a logEvery window are written, the rest are counted, and when
// the window ends one line says how many were dropped and shows the latest.
// The mount's own refusal limit (fusefs) sits below this one and stays
// within it.
const (
	logEvery = 5 * time.Second
	logBurst = 20
	// logSweep is the fewest kinds at which a new one first sweeps out
	// the quiet ones (rateState.sweep).
	logSweep = 1024
)

// logKeyAttrs are the attributes that tell kinds of a message apart.
var logKeyAttrs = map[string]bool{"store": true, "op": true, "errno": true, "rule": true}

// rateHandler is the limit, around the handler that writes.
type rateHandler struct {
	inner slog.Handler
	st    *rateState
	attrs []slog.Attr // from WithAttrs, for the key
}

type rateState struct {
	mu    sync.Mutex
	kinds map[string]*rateCount
	// sweepAt is how many kinds make a new one sweep first.
	sweepAt int
	// now and after are the clock and its timers (time.Now and
	// time.AfterFunc; a test's own).
	now   func() time.Time
	after func(time.Duration, func())
}

type rateCount struct {
	end     time.Time // the end of the window
	written int
	dropped int
	latest  slog.Record
	handler slog.Handler
}

func newRateHandler(inner slog.Handler) slog.Handler {
	return &rateHandler{inner: inner, st: &rateState{kinds: map[string]*rateCount{}, sweepAt: logSweep,
		now: time.Now, after: func(d time.Duration, f func()) { time.AfterFunc(d, f) }}}
}

func (h *rateHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h *rateHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &rateHandler{inner: h.inner.WithAttrs(as), st: h.st, attrs: append(append([]slog.Attr{}, h.attrs...), as...)}
}

func (h *rateHandler) WithGroup(name string) slog.Handler {
	return &rateHandler{inner: h.inner.WithGroup(name), st: h.st, attrs: h.attrs}
}

func (h *rateHandler) key(r slog.Record) string {
	k := r.Level.String() + "\x00" + r.Message
	add := func(a slog.Attr) bool {
		if logKeyAttrs[a.Key] {
			k += "\x00" + a.Key + "=" + a.Value.String()
		}
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	return k
}

func (h *rateHandler) Handle(ctx context.Context, r slog.Record) error {
	key := h.key(r)
	h.st.mu.Lock()
	now := h.st.now()
	c := h.st.kinds[key]
	if c == nil || c.quiet(now) {
		if c == nil && len(h.st.kinds) >= h.st.sweepAt {
			h.st.sweep(now)
		}
		c = &rateCount{end: now.Add(logEvery)}
		h.st.kinds[key] = c
	}
	if c.written < logBurst {
		c.written++
		h.st.mu.Unlock()
		return h.inner.Handle(ctx, r)
	}
	c.dropped++
	c.latest, c.handler = r.Clone(), h.inner
	if c.dropped == 1 {
		h.st.after(c.end.Sub(now), func() { h.st.flush(key, c) })
	}
	h.st.mu.Unlock()
	return nil
}

// quiet reports whether c's window ended with nothing dropped: its kind
// starts afresh, and nothing of it is waiting to be written.
func (c *rateCount) quiet(now time.Time) bool { return now.After(c.end) && c.dropped == 0 }

// sweep forgets the quiet kinds (one that dropped lines is forgotten by
// its flush). A line that never repeats (go-fuse's --debug lines name each
// request) would otherwise stay for good. It builds a new map, since a Go
// map never shrinks and walking one costs by the most it ever held. The
// next sweep waits for twice the kinds left, so that sweeping costs a
// constant per line.
func (st *rateState) sweep(now time.Time) {
	kept := make(map[string]*rateCount, len(st.kinds)/2)
	for k, c := range st.kinds {
		if !c.quiet(now) {
			kept[k] = c
		}
	}
	st.kinds, st.sweepAt = kept, max(logSweep, 2*len(kept))
}

// flush writes the count of a window's dropped lines, with the latest of
// them, and forgets the kind: its next line starts a new window.
func (st *rateState) flush(key string, c *rateCount) {
	st.mu.Lock()
	n, r, inner := c.dropped, c.latest, c.handler
	if st.kinds[key] == c {
		delete(st.kinds, key)
	}
	st.mu.Unlock()
	if n == 0 {
		return
	}
	out := slog.NewRecord(time.Now(), r.Level, r.Message+" (more lines like this one were not logged)", 0)
	out.AddAttrs(slog.Int("dropped", n), slog.String("within", logEvery.String()))
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(slog.Attr{Key: "latest." + a.Key, Value: a.Value})
		return true
	})
	_ = inner.Handle(context.Background(), out) // a log that cannot be written has nowhere to say so
}
