package fusefs

import (
	"context"
	"log/slog"
	"sync"
	"syscall"
	"time"
)

// refusalLogEvery is how often a kind of refusal that keeps happening is
// logged again, as a count; refusalLogBurst is how many of a kind are
// logged in full before that.
const (
	refusalLogEvery = 5 * time.Second
	refusalLogBurst = 10
)

// refusalLog keeps an agent from filling the daemon's log with refusals: a
// mount logs the first refusals of each kind (operation, errno, store) in
// full, refusalLogBurst of them, then, while that kind keeps coming, one
// line every refusalLogEvery with how many there were and the latest of
// them. A kind quiet for that long is logged in full again. The Observer
// (metrics) still counts every refusal. The zero value is ready; the kinds
// are bounded by the operations, errnos and stores of one mount.
type refusalLog struct {
	mu    sync.Mutex
	kinds map[refusalLine]*refusalCount
}

// refusalLine is a kind of refusal with the message it is logged under.
type refusalLine struct {
	refusalKind
	msg string
}

type refusalKind struct {
	op    string
	errno syscall.Errno
	store string
}

type refusalCount struct {
	windowEnd time.Time // the end of the window full and n are for
	full      int       // logged in full in this window
	n         int       // counted since the last line
	last      []any     // the latest counted refusal's attributes
	timer     *time.Timer
}

// log writes msg with attrs at level unless refusalLogBurst refusals of the
// same kind were logged in the current window; then it is counted, and the
// count logged when the window ends.
func (l *refusalLog) log(lg *slog.Logger, level slog.Level, k refusalKind, msg string, attrs ...any) {
	now := time.Now()
	l.mu.Lock()
	if l.kinds == nil {
		l.kinds = map[refusalLine]*refusalCount{}
	}
	key := refusalLine{k, msg}
	c := l.kinds[key]
	if c == nil {
		c = &refusalCount{}
		l.kinds[key] = c
	}
	if c.timer == nil && !now.Before(c.windowEnd) {
		c.windowEnd, c.full = now.Add(refusalLogEvery), 0
	}
	if c.n == 0 && c.full < refusalLogBurst {
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

func (l *refusalLog) flush(lg *slog.Logger, level slog.Level, key refusalLine) {
	l.mu.Lock()
	c := l.kinds[key]
	n, last := c.n, c.last
	// The window after a counted one is counted too: a steady flood
	// gives one line per window.
	c.n, c.last, c.timer = 0, nil, nil
	c.windowEnd, c.full = time.Now().Add(refusalLogEvery), refusalLogBurst
	l.mu.Unlock()
	lg.Log(context.Background(), level, key.msg+" again", "times", n, "within", refusalLogEvery.String(), slog.Group("latest", last...))
}
