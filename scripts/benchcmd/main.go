// Command benchcmd measures memfs against the limits of the machine it runs
// on: the same small-file workload on a plain tmpfs (the kernel's limit), a
// go-fuse loopback over tmpfs (the cost of FUSE itself) and memfs, reported
// as ratios measured in the same run. scripts/bench builds and runs it.
//
// It also re-executes itself in helper modes: "workload" (the workload
// against one directory, in a process other than the one serving the
// mounts), "serve" (a second daemon process), "visibility" (the
// save-to-visible probe between two mounts), "walk" (read every file of a
// mount), "writer" (one of the concurrent writers) and "heads" (read back
// what the writers left).
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/memfs/memfs/versions"
)

func main() {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	os.Exit(run(os.Args[1:], os.Stdout))
}

func run(args []string, stdout io.Writer) int {
	if len(args) > 0 {
		if h, ok := helpers[args[0]]; ok {
			if err := h(args[1:], stdout); err != nil {
				fmt.Fprintf(os.Stderr, "benchcmd %s: %v\n", args[0], err)
				return 1
			}
			return 0
		}
	}
	cfg, err := parseFlags(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 2
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	if cfg.compare != "" {
		// Each run of a pair has --timeout of its own.
		return runCompare(ctx, cfg, stdout)
	}
	ctx, cancelTimeout := context.WithTimeout(ctx, cfg.timeout)
	defer cancelTimeout()
	// A hang inside a FUSE request or the engine may not heed ctx: give the
	// cleanup a grace period, then exit rather than hang a CI job.
	watchdog := time.AfterFunc(cfg.timeout+30*time.Second, func() {
		slog.Error("bench is stuck past --timeout; exiting (mounts made inside scripts/bench's private namespace go with it)", "timeout", cfg.timeout)
		os.Exit(1)
	})
	defer watchdog.Stop()
	rep, err := bench(ctx, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 1
	}
	switch cfg.format {
	case "json":
		err = writeJSON(stdout, rep)
	case "markdown":
		err = writeMarkdown(stdout, rep)
	default:
		err = writeText(stdout, rep)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: print the report: %v\n", err)
		return 1
	}
	if cfg.svg != "" {
		var svg bytes.Buffer
		err := writeSVG(&svg, rep)
		if err == nil {
			err = os.WriteFile(cfg.svg, svg.Bytes(), 0o644)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: write the chart to %s: %v\n", cfg.svg, err)
			return 1
		}
	}
	if cfg.markdown != "" {
		var md bytes.Buffer
		err := writeMarkdown(&md, rep)
		if err == nil {
			err = os.WriteFile(cfg.markdown, md.Bytes(), 0o644)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: write the Markdown report to %s: %v\n", cfg.markdown, err)
			return 1
		}
	}
	return 0
}

// helpers are the modes the bench re-executes itself in.
var helpers = map[string]func(args []string, stdout io.Writer) error{
	"workload":   workloadMain,
	"serve":      serveMain,
	"visibility": visibilityMain,
	"walk":       walkMain,
	"writer":     writerMain,
	"heads":      headsMain,
}

type config struct {
	quick       bool
	format      string
	markdown    string
	svg         string
	rounds      int
	files       int
	dirs        int
	memfsBin    string
	logVersions int
	rssStores   int
	rssMemories int
	visSamples  int
	writers     int
	writersFor  time.Duration
	// commit and command label the report; scripts/bench sets them.
	commit     string
	command    string
	cpuProfile string
	timeout    time.Duration
	workDir    string
	targets    []string
	parts      map[string]bool
	// pg is a PostgreSQL server: the phases also run on memfs over a new
	// database there (the memfs-pg target).
	pg string
	// compare is the revision --compare measures against, compareBin its
	// bench built by scripts/bench, and pairs how many alternated pairs of
	// runs it makes.
	compare    string
	compareBin string
	pairs      int
}

var allParts = []string{"phases", "writers", "visibility", "log", "rss"}

func parseFlags(args []string) (*config, error) {
	fl := flag.NewFlagSet("bench", flag.ContinueOnError)
	c := &config{}
	fl.BoolVar(&c.quick, "quick", false, "a smoke test for CI: fewer files, rounds and versions, shorter writers (< 90 s)")
	fl.StringVar(&c.format, "format", "text", "output format: text, json, or markdown (the targets table and the details, to paste into docs)")
	fl.StringVar(&c.markdown, "markdown", "", "also write the report as Markdown to this `file`")
	fl.StringVar(&c.svg, "svg", "", "also draw the phases' ops/s of tmpfs, the loopback and memfs as an SVG chart in this `file` (the README's)")
	fl.IntVar(&c.rounds, "rounds", 0, "rounds of the workload per target (default 5, --quick 2)")
	fl.IntVar(&c.files, "files", 0, "files in the workload (default 2000, --quick 200)")
	fl.IntVar(&c.dirs, "dirs", 0, "directories the files are spread over (default 20, --quick 4)")
	fl.StringVar(&c.memfsBin, "memfs-bin", "", "the built memfs binary, for the `memfs log` measurement (skipped without it)")
	fl.IntVar(&c.logVersions, "log-versions", 0, "versions in the store `memfs log` reads (default 100000, --quick 5000)")
	fl.IntVar(&c.rssStores, "rss-stores", 8, "stores mounted by the daemon whose RSS is measured")
	fl.IntVar(&c.rssMemories, "rss-memories", 0, "memories per store for the RSS measurement (default 2000, --quick 200)")
	fl.IntVar(&c.visSamples, "vis-samples", 0, "save-to-visible samples (default 200, --quick 50)")
	fl.IntVar(&c.writers, "writers", 8, "concurrent writer processes in the writers part")
	fl.DurationVar(&c.writersFor, "writers-for", 0, "how long the writers save in each round (default 1.5s, --quick 1s)")
	fl.StringVar(&c.commit, "commit", "", "the commit measured, for the report (scripts/bench sets it)")
	fl.StringVar(&c.command, "command", "", "the command line to show in the report (scripts/bench sets it)")
	fl.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the serving process (memfs and loopback mounts) during the workload to this file")
	fl.DurationVar(&c.timeout, "timeout", 0, "give up after this long (default 10m, --quick 2m)")
	fl.StringVar(&c.workDir, "workdir", os.TempDir(), "where the temporary databases go: use the disk memfs would use")
	targets := fl.String("targets", "tmpfs,loopback,loopback-nopt,memfs,memfs-full", "comma-separated targets of the workload (the writers part runs on each but loopback-nopt)")
	fl.StringVar(&c.pg, "db", "", "a PostgreSQL server `URL` (postgres://…, a role that may create databases): the phases also run on memfs over a new database there (target memfs-pg), dropped at the end")
	fl.StringVar(&c.compare, "compare", "", "compare this build with the `REV`ision's: alternated pairs of runs of the phases and the writers on memfs (and memfs-pg with --db), printing new/old per phase as a median with its min–max (scripts/bench builds REV)")
	fl.StringVar(&c.compareBin, "compare-bin", "", "REV's bench binary, for --compare (scripts/bench builds it)")
	fl.IntVar(&c.pairs, "pairs", 5, "pairs of runs for --compare")
	only := fl.String("only", strings.Join(allParts, ","), "comma-separated parts to run: "+strings.Join(allParts, ", "))
	if err := fl.Parse(args); err != nil {
		return nil, err
	}
	if fl.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q: bench takes only flags (see --help)", fl.Arg(0))
	}
	if c.format != "text" && c.format != "json" && c.format != "markdown" {
		return nil, fmt.Errorf("--format must be text, json or markdown, not %q", c.format)
	}
	def := func(v *int, full, quick int) {
		if *v == 0 {
			*v = full
			if c.quick {
				*v = quick
			}
		}
	}
	if c.timeout == 0 {
		c.timeout = 10 * time.Minute
		if c.quick {
			c.timeout = 2 * time.Minute
		}
	}
	if c.compare != "" {
		// With --compare, the pairs are the samples: one round per run.
		def(&c.rounds, 1, 1)
	}
	def(&c.rounds, 5, 2)
	def(&c.files, 2000, 200)
	def(&c.dirs, 20, 4)
	def(&c.logVersions, 100000, 5000)
	def(&c.rssMemories, 2000, 200)
	def(&c.visSamples, 200, 50)
	if c.writersFor == 0 {
		c.writersFor = 1500 * time.Millisecond
		if c.quick {
			c.writersFor = time.Second
		}
	}
	if c.rounds < 1 || c.files < 1 || c.dirs < 1 || c.dirs > c.files {
		return nil, fmt.Errorf("need at least 1 round and 1 file, and 1 to --files directories")
	}
	if c.writers < 1 || c.writersFor <= 0 {
		return nil, fmt.Errorf("--writers and --writers-for must be positive, not %d and %s", c.writers, c.writersFor)
	}
	known := map[string]bool{"tmpfs": true, "loopback": true, "loopback-nopt": true, "memfs": true, "memfs-full": true, "memfs-pg": c.pg != ""}
	for _, t := range strings.Split(*targets, ",") {
		if !known[t] {
			return nil, fmt.Errorf("unknown target %q: use tmpfs, loopback, loopback-nopt, memfs, memfs-full, and memfs-pg with --db", t)
		}
		c.targets = append(c.targets, t)
	}
	if c.pg != "" {
		if !versions.IsPostgres(c.pg) {
			return nil, fmt.Errorf("--db %s is not a PostgreSQL URL (postgres://…): the SQLite targets need no --db", versions.RedactDSN(c.pg))
		}
		if !slices.Contains(c.targets, "memfs-pg") {
			c.targets = append(c.targets, "memfs-pg")
		}
	}
	if c.compare != "" {
		if c.compareBin == "" {
			return nil, fmt.Errorf("--compare %s needs REV's bench binary: run it through scripts/bench, which builds it", c.compare)
		}
		if c.pairs < 1 {
			return nil, fmt.Errorf("--pairs must be at least 1, not %d", c.pairs)
		}
		if c.format == "markdown" || c.markdown != "" || c.svg != "" {
			return nil, fmt.Errorf("--compare prints text or JSON: drop --format markdown, --markdown and --svg")
		}
		if fl.Lookup("targets").Value.String() == fl.Lookup("targets").DefValue {
			c.targets = []string{"memfs"}
			if c.pg != "" {
				c.targets = append(c.targets, "memfs-pg")
			}
		}
	}
	c.parts = map[string]bool{}
	for _, p := range strings.Split(*only, ",") {
		if !strings.Contains(","+strings.Join(allParts, ",")+",", ","+p+",") {
			return nil, fmt.Errorf("unknown part %q in --only: use %s", p, strings.Join(allParts, ", "))
		}
		c.parts[p] = true
	}
	return c, nil
}
