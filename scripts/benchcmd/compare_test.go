package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestCompareReadsTheJSONReport round-trips a report through the JSON the
// runs of a comparison print and the parser that reads it back.
func TestCompareReadsTheJSONReport(t *testing.T) {
	cfg, err := parseFlags([]string{"--targets", "memfs", "--rounds", "1"})
	if err != nil {
		t.Fatal(err)
	}
	rep := newReport(cfg, t.TempDir())
	secs, ops := map[string]float64{}, map[string]int{}
	for i, p := range phaseNames {
		secs[p], ops[p] = float64(i+1), 1000
	}
	rep.addRound("memfs", secs, ops)
	rep.addWritersRound("own", "memfs", &writersRound{SavesPerSec: 1234, Saves: 10, Versions: 10})
	rep.addWritersRound("shared", "memfs", &writersRound{SavesPerSec: 567, Saves: 10, Versions: 10})
	var b bytes.Buffer
	if err := writeJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	run, err := parseCompareRun(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range phaseNames {
		if got, want := run["memfs"][p], 1000/float64(i+1); got != want {
			t.Errorf("%s: %v ops/s, want %v", p, got, want)
		}
	}
	if run["memfs"]["writers-own"] != 1234 || run["memfs"]["writers-shared"] != 567 {
		t.Errorf("writers: %v", run["memfs"])
	}

	rep.addWritersRound("own", "memfs", &writersRound{SavesPerSec: 1, Saves: 10, Versions: 10, Errors: 3, FirstError: "EIO"})
	b.Reset()
	if err := writeJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	if _, err := parseCompareRun(b.Bytes()); err == nil || !strings.Contains(err.Error(), "failed or were lost") {
		t.Errorf("a run whose writers lost saves: err %v, want it refused", err)
	}
	if _, err := parseCompareRun([]byte("not json")); err == nil {
		t.Error("a run printing no JSON was read as a result")
	}
}

func TestCompareFlags(t *testing.T) {
	if _, err := parseFlags([]string{"--compare", "abc"}); err == nil || !strings.Contains(err.Error(), "scripts/bench") {
		t.Errorf("--compare without the built REV: err %v, want one pointing at scripts/bench", err)
	}
	if _, err := parseFlags([]string{"--compare", "abc", "--compare-bin", "/x", "--pairs", "0"}); err == nil {
		t.Error("--pairs 0 accepted")
	}
	cfg, err := parseFlags([]string{"--compare", "abc", "--compare-bin", "/x", "--quick"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.pairs != 5 || cfg.rounds != 1 || !slices.Equal(cfg.targets, []string{"memfs"}) {
		t.Errorf("defaults: %d pairs, %d rounds, targets %v; want 5, 1, [memfs]", cfg.pairs, cfg.rounds, cfg.targets)
	}
	args := strings.Join(compareArgs(cfg), " ")
	for _, want := range []string{"--format json", "--targets memfs", "--rounds 1", "--files 200", "--only phases,writers"} {
		if !strings.Contains(args, want) {
			t.Errorf("run args %q lack %q", args, want)
		}
	}
}
