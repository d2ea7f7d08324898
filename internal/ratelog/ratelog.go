// Package ratelog keeps a flood of one kind of log line (a refusal an
// agent repeats) from filling a daemon's log.
package ratelog

import (
	"context"
	"log/slog"
	"sync"
	"syscall"
	"time"
)

// Every is how often a kind of refusal that keeps happening is
// logged again, as a count; Burst is how many of a kind are
// logged in full before that.
const (
	Every = 5 * time.Second
	Burst = 10
)

// Log keeps an agent from filling the daemon's log with refusals: a
// mount logs the first refusals of each kind (operation, errno, store) in
// full, Burst of them, then, while that kind keeps coming, one
// line every Every with how many there were and the latest of
// them. A kind quiet for that long is logged in full again. The Observer
// (metrics) still counts every refusal. The zero value is ready; the kinds
// are bounded by the operations, errnos and stores of one mount.
type Log struct {
	mu    sync.Mutex
	kinds map[line]*count
}

// line is a kind of refusal with the message it is logged under.
type line struct {
	Kind
	msg string
}

// Kind is a kind of refusal: its operation, errno and store.
type Kind struct {
	Op    string
	Errno syscall.Errno
	Store string
}

type count struct {
	windowEnd time.Time // the end of the window full and n are for
	full      int       // logged in full in this window
	n         int       // counted since the last line
	last      []any     // the latest counted refusal's attributes
	timer     *time.Timer
}

// log writes msg with attrs at level unless Burst refusals of the
// same kind were logged in the current window; then it is counted, and the
// count logged when the window ends.
func (l *Log) Log(lg *slog.Logger, level slog.Level, k Kind, msg string, attrs ...any) {
	now := time.Now()
	l.mu.Lock()
	if l.kinds == nil {
		l.kinds = map[line]*count{}
	}
	key := line{k, msg}
	c := l.kinds[key]
	if c == nil {
		c = &count{}
		l.kinds[key] = c
	}
	if c.timer == nil && !now.Before(c.windowEnd) {
		c.windowEnd, c.full = now.Add(Every), 0
	}
	if c.n == 0 && c.full < Burst {
		c.full++
		l.mu.Unlock()
		lg.Log(context.Background(), level, msg, attrs...)
		return
	}
	c.n++
	c.last = attrs
	if c.timer == nil {
		c.timer = time.AfterFunc(time.Until(c.windowEnd), func() { l.flush(lg, level, key) })
	}
	l.mu.Unlock()
}

func (l *Log) flush(lg *slog.Logger, level slog.Level, key line) {
	l.mu.Lock()
	c := l.kinds[key]
	n, last := c.n, c.last
	// The window after a counted one is counted too: a steady flood
	// gives one line per window.
	c.n, c.last, c.timer = 0, nil, nil
	c.windowEnd, c.full = time.Now().Add(Every), Burst
	l.mu.Unlock()
	lg.Log(context.Background(), level, key.msg+" again", "times", n, "within", Every.String(), slog.Group("latest", last...))
}
