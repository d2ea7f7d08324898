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
// it prints one result per backend, with saves/s taken from the name of
// the memfs binary it is given, appends that name to the file runs, and
// exits with code.
func fakeScale(t *testing.T, code int, runs string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "scalecmd")
	script := fmt.Sprintf(`#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = --memfs-bin ] && rate=$(basename "$2"); shift; done
echo $rate >> %q
echo '[{"backend":"postgres","saves_per_sec":'$rate',"visible_p99_ms":30,"errors":%d,"error_samples":["EIO"]},{"backend":"sqlite","saves_per_sec":'$((rate*2))'}]'
exit %d
`, runs, code, code)
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func testConfig(t *testing.T, pairs int, runs string) *config {
	return &config{bin: "300", compareBin: fakeScale(t, 0, runs), compareMemfs: "100", pairs: pairs, sqlite: true,
		daemons: 8, stores: 4, writes: 64, probers: 2, duration: time.Second}
}

func TestCompareRunsBothBuildsAlternated(t *testing.T) {
	runs := filepath.Join(t.TempDir(), "runs")
	cfg := testConfig(t, 3, runs)
	rep := compare(cfg, fakeScale(t, 0, runs))
	if rep.Error != "" || rep.Failed || rep.Pairs != 3 {
		t.Fatalf("error %q, failed %v, %d pairs", rep.Error, rep.Failed, rep.Pairs)
	}
	if len(rep.Backends) != 2 || rep.Backends[0].Backend != "postgres" || rep.Backends[1].Backend != "sqlite" {
		t.Fatalf("backends: %+v", rep.Backends)
	}
	for _, b := range rep.Backends {
		if len(b.Pairs) != 3 || b.Median != 3 || b.Min != 3 || b.Max != 3 {
			t.Errorf("%s: %d pairs, median %v (%v–%v), want 3 pairs at 3×", b.Backend, len(b.Pairs), b.Median, b.Min, b.Max)
		}
	}
	order, err := os.ReadFile(runs)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Fields(string(order)), []string{"100", "300", "300", "100", "100", "300"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("builds ran in the order %v, want %v (old first, then new first, alternating)", got, want)
	}
	var out strings.Builder
	printCompare(&out, cfg, rep)
	if !strings.Contains(out.String(), "postgres  saves/s new/old: median 3.00 (3.00–3.00)") {
		t.Errorf("report:\n%s", out.String())
	}
}

func TestCompareKeepsRunsWithErrors(t *testing.T) {
	runs := filepath.Join(t.TempDir(), "runs")
	cfg := testConfig(t, 2, runs)
	// Exit 1 is a run that had errors: reported, with its samples, and
	// the comparison failed.
	rep := compare(cfg, fakeScale(t, 1, runs))
	if !rep.Failed || rep.Error != "" || rep.Pairs != 2 {
		t.Errorf("runs with errors: failed %v, error %q, %d pairs", rep.Failed, rep.Error, rep.Pairs)
	}
	var out strings.Builder
	printCompare(&out, cfg, rep)
	if !strings.Contains(out.String(), "pair 2, new build's error: EIO") {
		t.Errorf("report without the error samples:\n%s", out.String())
	}
	// Any other exit is a run that could not be made: the comparison
	// stops, with the pairs done before it.
	cfg.pairs = 3
	rep = compare(cfg, fakeScale(t, 2, runs))
	if !rep.Failed || !strings.Contains(rep.Error, "pair 1, the new build") || rep.Pairs != 0 {
		t.Errorf("a run that could not be made: failed %v, error %q, %d pairs", rep.Failed, rep.Error, rep.Pairs)
	}
}
