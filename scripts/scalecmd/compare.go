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
)

// `scripts/scale --compare REV` builds REV's memfs and scalecmd (scripts/scale
// passes them as --compare-bin and --compare-memfs) and runs them alternated
// with this tree's, each pair the same run on the same server, the older
// build first: saves/s moves with the machine by more than a build changes
// it, so only runs side by side compare.

// comparePair is one backend's run by each build.
type comparePair struct {
	Old   result  `json:"old"`
	New   result  `json:"new"`
	Ratio float64 `json:"ratio"` // new saves/s over old
}

// compareBackend is every pair of one backend, and their median ratio.
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
	Duration string           `json:"duration"`
	Backends []compareBackend `json:"backends"`
}

// compare runs cfg.pairs pairs, the older build's scalecmd and then self
// (this one) in each, and reports them. A run with errors is reported, not
// fatal: its errors are part of what is compared.
func compare(cfg *config, self string) (*compareReport, error) {
	rep := &compareReport{NewRev: cfg.commit, OldRev: cfg.compare, Duration: cfg.duration.String()}
	byBackend := map[string]*compareBackend{}
	for p := range cfg.pairs {
		var sides [2][]result
		for i, side := range []struct{ scale, memfs string }{{cfg.compareBin, cfg.compareMemfs}, {self, cfg.bin}} {
			rs, err := compareOnce(cfg, side.scale, side.memfs)
			if err != nil {
				return nil, fmt.Errorf("pair %d, the %s build: %w", p+1, []string{"old", "new"}[i], err)
			}
			sides[i] = rs
		}
		for _, o := range sides[0] {
			for _, n := range sides[1] {
				if n.Backend != o.Backend || o.SavesPerSec <= 0 {
					continue
				}
				b := byBackend[o.Backend]
				if b == nil {
					b = &compareBackend{Backend: o.Backend}
					byBackend[o.Backend] = b
				}
				b.Pairs = append(b.Pairs, comparePair{Old: o, New: n, Ratio: n.SavesPerSec / o.SavesPerSec})
			}
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
			ratios = append(ratios, p.Ratio)
		}
		b.Median, b.Min, b.Max = median(ratios), slices.Min(ratios), slices.Max(ratios)
		rep.Backends = append(rep.Backends, *b)
	}
	if len(rep.Backends) == 0 {
		return nil, errors.New("no backend was measured by both builds")
	}
	return rep, nil
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

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func printCompare(w io.Writer, cfg *config, rep *compareReport) {
	fmt.Fprintf(w, "scale: new %s against old %s, %d pairs alternated (old first), %d daemons × %d stores each, %d writers, %v a run\n\n",
		rep.NewRev, rep.OldRev, cfg.pairs, cfg.daemons, cfg.stores, cfg.writes, cfg.duration.Round(time.Second))
	fmt.Fprintf(w, "%-9s %4s %11s %9s %7s %11s %9s %7s %7s\n",
		"backend", "pair", "old saves/s", "vis p99", "errors", "new saves/s", "vis p99", "errors", "new/old")
	for _, b := range rep.Backends {
		for i, p := range b.Pairs {
			fmt.Fprintf(w, "%-9s %4d %11.0f %7.1fms %7d %11.0f %7.1fms %7d %7.2f\n", b.Backend, i+1,
				p.Old.SavesPerSec, p.Old.VisibleP99MS, p.Old.Errors+int64(p.Old.ProbeTimeouts),
				p.New.SavesPerSec, p.New.VisibleP99MS, p.New.Errors+int64(p.New.ProbeTimeouts), p.Ratio)
		}
		fmt.Fprintf(w, "%-9s saves/s new/old: median %.2f (%.2f–%.2f)\n\n", b.Backend, b.Median, b.Min, b.Max)
	}
}

// failed tells whether a run of the comparison had an error or a probe
// that never saw its save.
func (rep *compareReport) failed() bool {
	for _, b := range rep.Backends {
		for _, p := range b.Pairs {
			for _, r := range []result{p.Old, p.New} {
				if r.Errors > 0 || r.ProbeTimeouts > 0 {
					return true
				}
			}
		}
	}
	return false
}
