package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeScale writes a script that answers as scalecmd --format json does:
// it prints one result per backend, with saves/s taken from the memfs
// binary it is given (its name), and exits with code.
func fakeScale(t *testing.T, code int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "scalecmd")
	script := fmt.Sprintf(`#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = --memfs-bin ] && rate=$(basename "$2"); shift; done
echo '[{"backend":"postgres","saves_per_sec":'$rate',"visible_p99_ms":30,"errors":%d},{"backend":"sqlite","saves_per_sec":'$((rate*2))'}]'
exit %d
`, code, code)
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCompareRunsBothBuildsAlternated(t *testing.T) {
	cfg := &config{bin: "300", compareBin: fakeScale(t, 0), compareMemfs: "100", pairs: 3, sqlite: true,
		daemons: 8, stores: 4, writes: 64, probers: 2, duration: time.Second}
	rep, err := compare(cfg, fakeScale(t, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Backends) != 2 || rep.Backends[0].Backend != "postgres" || rep.Backends[1].Backend != "sqlite" {
		t.Fatalf("backends: %+v", rep.Backends)
	}
	for _, b := range rep.Backends {
		if len(b.Pairs) != 3 || b.Median != 3 || b.Min != 3 || b.Max != 3 {
			t.Errorf("%s: %d pairs, median %v (%v–%v), want 3 pairs at 3×", b.Backend, len(b.Pairs), b.Median, b.Min, b.Max)
		}
	}
	if rep.failed() {
		t.Error("runs without errors reported as failed")
	}
	var out strings.Builder
	printCompare(&out, cfg, rep)
	if !strings.Contains(out.String(), "postgres  saves/s new/old: median 3.00 (3.00–3.00)") {
		t.Errorf("report:\n%s", out.String())
	}
}

func TestCompareKeepsRunsWithErrors(t *testing.T) {
	// Exit 1 is a run that had errors: reported, and the comparison fails.
	cfg := &config{bin: "300", compareBin: fakeScale(t, 0), compareMemfs: "100", pairs: 1, duration: time.Second}
	rep, err := compare(cfg, fakeScale(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.failed() {
		t.Error("a run with errors not reported as failed")
	}
	// Any other exit is a run that could not be made.
	if _, err := compare(cfg, fakeScale(t, 2)); err == nil || !strings.Contains(err.Error(), "pair 1, the new build") {
		t.Errorf("a run that could not be made: err %v", err)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 2, 3}, 2.5}} {
		if got := median(c.xs); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
}
