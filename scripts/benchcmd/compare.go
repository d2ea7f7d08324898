package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/memfs/memfs/scripts/internal/stats"
	"github.com/memfs/memfs/versions"
)

// The regression gate: `scripts/bench --compare REV` builds REV's bench
// (scripts/bench passes it as --compare-bin) and runs it alternated with
// this build's, pair after pair, each run one round of the phases and the
// concurrent writers on the memfs targets. Each build measures itself with
// its own harness in its own process, so the figures of a pair differ only
// in the code they run; alternating the order within each pair keeps a
// drift of the machine's load from favouring either side. A pair gives one
// new/old ratio per phase; the report is their median and spread.

// compareParts are the parts each run of a pair measures.
const compareParts = "phases,writers"

// compareRun is what one build measured in one run, by target then phase.
type compareRun map[string]map[string]float64

// compareResult is one phase on one target over every pair.
type compareResult struct {
	Target string    `json:"target"`
	Phase  string    `json:"phase"`
	New    []float64 `json:"new_ops_per_sec"`
	Old    []float64 `json:"old_ops_per_sec"`
	// Ratios is new/old of each pair; Median, Min and Max summarise them.
	Ratios []float64 `json:"ratios"`
	Median *float64  `json:"median_ratio"`
	Min    *float64  `json:"min_ratio"`
	Max    *float64  `json:"max_ratio"`
}

type compareReport struct {
	Machine machine         `json:"machine"`
	NewRev  string          `json:"new"`
	OldRev  string          `json:"old"`
	Pairs   int             `json:"pairs"`
	Args    []string        `json:"run_args"`
	Results []compareResult `json:"results"`
	Errors  []string        `json:"errors,omitempty"`
}

// compareTargets are the memfs targets a comparison measures: those asked
// for with --targets, else memfs (and memfs-pg with --db).
func compareTargets(cfg *config) []string {
	var out []string
	for _, t := range cfg.targets {
		if strings.HasPrefix(t, "memfs") {
			out = append(out, t)
		}
	}
	return out
}

// compareArgs are the flags of one run, the same for both builds.
func compareArgs(cfg *config) []string {
	args := []string{
		"--format", "json", "--only", compareParts,
		"--targets", strings.Join(compareTargets(cfg), ","),
		"--rounds", strconv.Itoa(cfg.rounds), "--files", strconv.Itoa(cfg.files), "--dirs", strconv.Itoa(cfg.dirs),
		"--writers", strconv.Itoa(cfg.writers), "--writers-for", cfg.writersFor.String(),
		"--workdir", cfg.workDir, "--timeout", cfg.timeout.String(),
	}
	if cfg.pg != "" {
		args = append(args, "--db", cfg.pg)
	}
	return args
}

// compare runs the pairs and returns the report.
func compare(ctx context.Context, cfg *config) (*compareReport, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the bench binary to re-run: %w", err)
	}
	targets := compareTargets(cfg)
	if len(targets) == 0 {
		return nil, fmt.Errorf("--compare measures memfs targets only: give --targets memfs, memfs-full or (with --db) memfs-pg")
	}
	args := compareArgs(cfg)
	rep := &compareReport{Machine: machineInfo(cfg.workDir), NewRev: cfg.commit, OldRev: cfg.compare, Pairs: cfg.pairs, Args: args}
	rep.Machine.Command = cfg.command
	var news, olds []compareRun
	for p := range cfg.pairs {
		// Alternate which build goes first.
		order := []string{"new", "old"}
		if p%2 == 1 {
			order = []string{"old", "new"}
		}
		var got [2]compareRun
		for _, side := range order {
			bin := self
			if side == "old" {
				bin = cfg.compareBin
			}
			run, err := compareOnce(ctx, bin, args)
			if err != nil {
				return nil, fmt.Errorf("pair %d, %s build (%s): %w", p+1, side, bin, err)
			}
			if side == "new" {
				got[0] = run
			} else {
				got[1] = run
			}
			slog.Info("compare run done", "pair", p+1, "build", side, "create_ops_s", fmt.Sprintf("%.0f", run["memfs"]["create"]))
		}
		news, olds = append(news, got[0]), append(olds, got[1])
	}
	for _, t := range targets {
		for _, ph := range comparePhases() {
			res := compareResult{Target: t, Phase: ph}
			for i := range news {
				n, o := news[i][t][ph], olds[i][t][ph]
				if n <= 0 || o <= 0 {
					continue
				}
				res.New, res.Old = append(res.New, n), append(res.Old, o)
				res.Ratios = append(res.Ratios, n/o)
			}
			if len(res.Ratios) == 0 {
				rep.Errors = append(rep.Errors, fmt.Sprintf("%s %s: neither build measured it in every pair", t, ph))
				continue
			}
			res.Median = num(stats.Median(res.Ratios))
			res.Min, res.Max = num(slices.Min(res.Ratios)), num(slices.Max(res.Ratios))
			rep.Results = append(rep.Results, res)
		}
	}
	rep.Machine.LoadEnd = loadAvg()
	return rep, nil
}

// comparePhases are the workload's phases, then the writers' variants.
func comparePhases() []string {
	out := slices.Clone(phaseNames)
	for _, v := range writerVariants {
		out = append(out, "writers-"+v)
	}
	return out
}

// compareOnce runs one build's bench with args and reads back its ops/s.
func compareOnce(ctx context.Context, bin string, args []string) (compareRun, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, err
	}
	return parseCompareRun(out.Bytes())
}

// parseCompareRun reads the JSON report of one run. It reads only fields
// every build since the bench's JSON report has had.
func parseCompareRun(b []byte) (compareRun, error) {
	var r struct {
		Phases []struct {
			Phase string              `json:"phase"`
			Ops   map[string]*float64 `json:"median_ops_per_sec"`
		} `json:"phases"`
		Writers []struct {
			Variant string              `json:"variant"`
			Saves   map[string]*float64 `json:"median_saves_per_sec"`
			Errors  map[string]int      `json:"errors"`
		} `json:"writers"`
		Errors []string `json:"errors"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("the run printed %q, not its JSON report: %w", truncate(string(b), 200), err)
	}
	if len(r.Errors) > 0 {
		return nil, fmt.Errorf("the run reported errors: %s", strings.Join(r.Errors, "; "))
	}
	run := compareRun{}
	put := func(target, phase string, v *float64) {
		if v == nil {
			return
		}
		if run[target] == nil {
			run[target] = map[string]float64{}
		}
		run[target][phase] = *v
	}
	for _, p := range r.Phases {
		for t, v := range p.Ops {
			put(t, p.Phase, v)
		}
	}
	for _, w := range r.Writers {
		for t, v := range w.Saves {
			if w.Errors[t] > 0 {
				return nil, fmt.Errorf("%d writers' saves failed or were lost on %s (%s files)", w.Errors[t], t, w.Variant)
			}
			put(t, "writers-"+w.Variant, v)
		}
	}
	return run, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func writeCompareText(w io.Writer, r *compareReport) error {
	m := r.Machine
	fmt.Fprintf(w, "machine: %d CPUs, %s, Linux %s, %s; databases on %s (%s); load average %s at the start, %s at the end\n",
		m.CPUs, m.CPUModel, m.Kernel, m.GoVersion, m.WorkDir, m.WorkDirFS, m.LoadStart, m.LoadEnd)
	fmt.Fprintf(w, "new %s against old %s: %d pairs, alternated; each run: %s\n\n", r.NewRev, r.OldRev, r.Pairs, strings.Join(redactArgs(r.Args), " "))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tphase\tnew ops/s\told ops/s\tnew/old median\tmin–max\t")
	for _, res := range r.Results {
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.0f\t%s\t%s–%s\t\n", res.Target, res.Phase, stats.Median(res.New), stats.Median(res.Old),
			fmtNum(res.Median, "%.2f"), fmtNum(res.Min, "%.2f"), fmtNum(res.Max, "%.2f"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "error: %s\n", e)
	}
	return nil
}

func writeCompareJSON(w io.Writer, r *compareReport) error {
	r.Args = redactArgs(r.Args)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// redactArgs hides a --db URL's password.
func redactArgs(args []string) []string {
	out := slices.Clone(args)
	for i := range out {
		if i > 0 && out[i-1] == "--db" {
			out[i] = versions.RedactDSN(out[i])
		}
	}
	return out
}

// runCompare is main's path for --compare.
func runCompare(ctx context.Context, cfg *config, stdout io.Writer) int {
	start := time.Now()
	rep, err := compare(ctx, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: compare with %s: %v\n", cfg.compare, err)
		return 1
	}
	slog.Info("compare done", "pairs", cfg.pairs, "took", time.Since(start).Round(time.Second))
	if cfg.format == "json" {
		err = writeCompareJSON(stdout, rep)
	} else {
		err = writeCompareText(stdout, rep)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: print the comparison: %v\n", err)
		return 1
	}
	if len(rep.Errors) > 0 {
		return 1
	}
	return 0
}
