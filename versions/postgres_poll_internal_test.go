package versions

import (
	"testing"
	"time"
)

// Storms back soon after a poll ended lengthen the quiet that ends the
// next, up to eight times feedPolling.quiet; a storm long after starts
// from feedPolling.quiet again.
func TestStormBackoff(t *testing.T) {
	q := feedPolling.quiet
	var b stormBackoff
	for i, want := range []time.Duration{q, 2 * q, 4 * q, 8 * q, 8 * q} {
		if got := b.next(); got != want {
			t.Fatalf("poll %d: quiet %v, want %v", i+1, got, want)
		}
		b.ended()
	}
	b.left = time.Now().Add(-5 * b.quiet)
	if got := b.next(); got != q {
		t.Fatalf("a storm five quiets after the last: quiet %v, want %v", got, q)
	}
}

// The meter asks for a poll at the feedPolling.enter-th notification
// within a window, not when they are spread over several.
func TestBusyMeter(t *testing.T) {
	var b busyMeter
	now := time.Now()
	for i := 1; i < feedPolling.enter; i++ {
		if b.heard(now) {
			t.Fatalf("notification %d of a window asked for a poll", i)
		}
	}
	if !b.heard(now) {
		t.Fatalf("notification %d of a window did not ask for a poll", feedPolling.enter)
	}
	b = busyMeter{}
	for i := range 3 * feedPolling.enter {
		if b.heard(now.Add(time.Duration(i) * feedPolling.window / time.Duration(feedPolling.enter/2))) {
			t.Fatalf("notification %d, spread at half the rate, asked for a poll", i+1)
		}
	}
}
