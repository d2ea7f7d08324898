package main

import (
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"
)

// Lines that never repeat (go-fuse's --debug lines) are forgotten once
// their window ends, instead of each keeping an entry for good; a kind
// still in its window is kept, and still limited.
func TestLogLimitForgetsQuietKinds(t *testing.T) {
	h := newRateHandler(slog.NewTextHandler(io.Discard, nil)).(*rateHandler)
	now := time.Unix(1_800_000_000, 0)
	h.st.now = func() time.Time { return now }
	log := slog.New(h)
	for i := range 5 * logSweep {
		log.Info(fmt.Sprintf("rx %d: GETATTR", i))
	}
	for range logBurst + 1 {
		log.Info("refused", "op", "write")
	}
	now = now.Add(logEvery / 2)
	log.Info("refused", "op", "write")
	now = now.Add(logEvery)
	const later = 4 * logSweep
	for i := range later {
		log.Info(fmt.Sprintf("rx again %d: GETATTR", i))
	}
	h.st.mu.Lock()
	defer h.st.mu.Unlock()
	// Those of the first window are gone, those of the second kept.
	if n := len(h.st.kinds); n > later+1 {
		t.Fatalf("%d kinds kept after %d lines that never repeat, %d of them in the window still open", n, 5*logSweep+later, later)
	}
	var c *rateCount
	for k, v := range h.st.kinds {
		if k != "" && v.dropped > 0 {
			c = v
		}
	}
	if c == nil || c.dropped != 2 {
		t.Fatalf("the refusals' window: %+v, want its 2 dropped lines counted", c)
	}
}
