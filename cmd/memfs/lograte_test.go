package main

import (
	"fmt"
	"log/slog"
	"regexp"
	"testing"
	"time"
)

// Lines that never repeat (go-fuse's --debug lines) are forgotten once
// their window ends, instead of each keeping an entry for good. A kind
// that dropped lines is kept until its count is written.
func TestLogLimitForgetsQuietKinds(t *testing.T) {
	var out syncBuffer
	h := newRateHandler(slog.NewTextHandler(&out, nil)).(*rateHandler)
	now := time.Unix(1_800_000_000, 0)
	var flushes []func()
	h.st.now = func() time.Time { return now }
	h.st.after = func(d time.Duration, f func()) {
		if d != logEvery {
			t.Errorf("a flush due in %v, want the window's end, %v", d, logEvery)
		}
		flushes = append(flushes, f)
	}
	log := slog.New(h)
	for i := range 5 * logSweep {
		log.Info(fmt.Sprintf("rx %d: GETATTR", i))
	}
	for range logBurst + 2 {
		log.Info("refused", "op", "write")
	}
	now = now.Add(logEvery + time.Second)
	const later = 4 * logSweep
	for i := range later {
		log.Info(fmt.Sprintf("rx again %d: GETATTR", i))
	}
	h.st.mu.Lock()
	n := len(h.st.kinds)
	h.st.mu.Unlock()
	// The first window's lines are gone; the second's, and the
	// refusals waiting for their count, are kept.
	if n != later+1 {
		t.Fatalf("%d kinds kept after %d lines that never repeat, %d of them in the window still open", n, 5*logSweep+later, later)
	}
	if len(flushes) != 1 {
		t.Fatalf("%d flushes due, want the refusals' one", len(flushes))
	}
	flushes[0]()
	if got := out.String(); !regexp.MustCompile(`refused \(more lines like this one were not logged\)" dropped=2 `).MatchString(got) {
		t.Fatalf("the refusals' count was not written:\n%.500s", got[max(0, len(got)-500):])
	}
	h.st.mu.Lock()
	defer h.st.mu.Unlock()
	if len(h.st.kinds) != later {
		t.Fatalf("%d kinds kept after the refusals' count was written, want %d", len(h.st.kinds), later)
	}
}
