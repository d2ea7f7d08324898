package httpapi

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// connErrorLog is net/http's error log (TLS handshakes that fail, bad
// request lines it answers itself), which anyone who can connect can make
// write: it passes connErrorBurst lines per connErrorEvery and counts the
// rest, logged as one line when the next one comes.
type connErrorLog struct {
	log *slog.Logger

	mu        sync.Mutex
	windowEnd time.Time
	passed    int
	dropped   int
}

const (
	connErrorEvery = 5 * time.Second
	connErrorBurst = 10
)

func (l *connErrorLog) Write(b []byte) (int, error) {
	now := time.Now()
	l.mu.Lock()
	var dropped int
	if !now.Before(l.windowEnd) {
		dropped, l.dropped = l.dropped, 0
		l.windowEnd, l.passed = now.Add(connErrorEvery), 0
	}
	pass := l.passed < connErrorBurst
	if pass {
		l.passed++
	} else {
		l.dropped++
	}
	l.mu.Unlock()
	if dropped > 0 {
		l.log.Warn(fmt.Sprintf("%d more connection errors were not logged", dropped), "within", connErrorEvery.String())
	}
	if pass {
		l.log.Warn(strings.TrimSpace(string(b)))
	}
	return len(b), nil
}
