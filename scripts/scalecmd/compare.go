package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"time"

	"github.com/memfs/memfs/scripts/internal/stats"
)

// `scripts/scale --compare REV` builds REV's memfs and scalecmd (scripts/scale
// passes them as --compare-bin and --compare-memfs) and runs them alternated
// with this tree's on the same server, the first build of each pair
// alternating: saves/s moves with the machine by more than a build changes
// it, so only runs side by side compare, and neither build may always run
// first.

// comparePair is one backend's run by each build.
type comparePair struct {
	Old result `json:"old_run"`
	New result `json:"new_run"`
	// Ratio is new saves/s over old; absent when the old run saved nothing.
	Ratio *float64 `json:"ratio,omitempty"`
}

// compareBackend is every pair of one backend, and the median of their
// ratios.
type compareBackend struct {
	Backend string        `json:"backend"`
	Pairs   []comparePair `json:"pairs"`
	Median  float64       `json:"median_ratio"`
	Min     float64       `json:"min_ratio"`
	Max     float64       `json:"max_ratio"`
}

type compareReport struct {
	NewRev   string           `json:"new"`
	OldRev   string           `json:"old"`
	Pairs    int              `json:"pairs"`
	Seconds  float64          `json:"seconds"`
	Backends []compareBackend `json:"backends"`
	// Error is why the comparison stopped before its last pair.
	Error string `json:"error,omitempty"`
	// Failed is true when a run had an error or a probe that never saw
	// its save.
	Failed bool `json:"failed"`
}

// compare runs cfg.pairs pairs of the older build's scalecmd and self
// (this one) and reports them. A run with errors is reported, not fatal:
// its errors are part of what is compared. A run that could not be made
// ends the comparison, with the pairs done so far.
func compare(cfg *config, self string) *compareReport {
	rep := &compareReport{NewRev: cfg.commit, OldRev: cfg.compare, Seconds: cfg.duration.Seconds()}
	byBackend := map[string]*compareBackend{}
	builds := [2]struct{ name, scale, memfs string }{{"old", cfg.compareBin, cfg.compareMemfs}, {"new", self, cfg.bin}}
pairs:
	for p := range cfg.pairs {
		var sides [2][]result
		for k := range builds {
			i := (p + k) % 2 // the old build first in even pairs, the new in odd
			rs, err := compareOnce(cfg, builds[i].scale, builds[i].memfs)
			if err != nil {
				rep.Error = fmt.Sprintf("pair %d, the %s build: %v", p+1, builds[i].name, err)
				rep.Failed = true
				break pairs
			}
			sides[i] = rs
		}
		rep.Pairs++
		for _, o := range sides[0] {
			i := slices.IndexFunc(sides[1], func(n result) bool { return n.Backend == o.Backend })
			if i < 0 {
				continue
			}
			n := sides[1][i]
			rep.Failed = rep.Failed || o.failed() || n.failed()
			b := byBackend[o.Backend]
			if b == nil {
				b = &compareBackend{Backend: o.Backend}
				byBackend[o.Backend] = b
			}
			pair := comparePair{Old: o, New: n}
			if o.SavesPerSec > 0 {
				r := n.SavesPerSec / o.SavesPerSec
				pair.Ratio = &r
			}
			b.Pairs = append(b.Pairs, pair)
		}
		fmt.Fprintf(os.Stderr, "scale: pair %d of %d done\n", p+1, cfg.pairs)
	}
	for _, backend := range []string{"postgres", "sqlite"} {
		b := byBackend[backend]
		if b == nil {
			continue
		}
		var ratios []float64
		for _, p := range b.Pairs {
			if p.Ratio != nil {
				ratios = append(ratios, *p.Ratio)
			}
		}
		if len(ratios) > 0 {
			b.Median, b.Min, b.Max = stats.Median(ratios), slices.Min(ratios), slices.Max(ratios)
		}
		rep.Backends = append(rep.Backends, *b)
	}
	return rep
}

// compareOnce runs scale (a scalecmd binary) with memfs on the backends
// cfg names and reads back its results.
func compareOnce(cfg *config, scale, memfs string) ([]result, error) {
	args := []string{"--memfs-bin", memfs, "--format", "json", "--duration", cfg.duration.String(),
		"--daemons", strconv.Itoa(cfg.daemons), "--stores", strconv.Itoa(cfg.stores), "--writers", strconv.Itoa(cfg.writes),
		"--probers", strconv.Itoa(cfg.probers), "--sqlite=" + strconv.FormatBool(cfg.sqlite)}
	if cfg.pg != "" {
		args = append(args, "--pg", cfg.pg)
	}
	cmd := exec.Command(scale, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		// Exit 1 is a run with errors, still reported; anything else is
		// a run that could not be made.
		return nil, err
	}
	var rs []result
	if err := json.Unmarshal(out.Bytes(), &rs); err != nil {
		return nil, fmt.Errorf("read %s's JSON report: %w", scale, err)
	}
	return rs, nil
}

func printCompare(w io.Writer, cfg *config, rep *compareReport) {
	fmt.Fprintf(w, "scale: new %s against old %s, %d pairs alternated, %d daemons × %d stores each, %d writers, %v a run\n\n",
		rep.NewRev, rep.OldRev, rep.Pairs, cfg.daemons, cfg.stores, cfg.writes, cfg.duration.Round(time.Second))
	fmt.Fprintf(w, "%-9s %4s %11s %9s %7s %11s %9s %7s %7s\n",
		"backend", "pair", "old saves/s", "vis p99", "errors", "new saves/s", "vis p99", "errors", "new/old")
	for _, b := range rep.Backends {
		for i, p := range b.Pairs {
			ratio := "—"
			if p.Ratio != nil {
				ratio = fmt.Sprintf("%.2f", *p.Ratio)
			}
			fmt.Fprintf(w, "%-9s %4d %11.0f %7.1fms %7d %11.0f %7.1fms %7d %7s\n", b.Backend, i+1,
				p.Old.SavesPerSec, p.Old.VisibleP99MS, p.Old.Errors+int64(p.Old.ProbeTimeouts),
				p.New.SavesPerSec, p.New.VisibleP99MS, p.New.Errors+int64(p.New.ProbeTimeouts), ratio)
			for _, s := range p.Old.ErrorSamples {
				fmt.Fprintf(w, "  pair %d, old build's error: %s\n", i+1, s)
			}
			for _, s := range p.New.ErrorSamples {
				fmt.Fprintf(w, "  pair %d, new build's error: %s\n", i+1, s)
			}
		}
		fmt.Fprintf(w, "%-9s saves/s new/old: median %.2f (%.2f–%.2f)\n\n", b.Backend, b.Median, b.Min, b.Max)
	}
	fmt.Fprintln(w, "errors: saves that failed, and probes not visible within 5 s.")
	if rep.Error != "" {
		fmt.Fprintf(w, "stopped: %s\n", rep.Error)
	}
}
