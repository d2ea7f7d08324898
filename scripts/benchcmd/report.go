package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/scripts/internal/stats"
)

// floors are the targets for memfs (default durability) as a fraction of
// the loopback's ops/s in each phase.
var floors = map[string]float64{
	"create": 0.6, "stat": 1.5, "list": 3, "read": 2,
	"overwrite": 0.6, "atomic-save": 0.6, "rename": 0.5, "delete": 0.5,
}

// writersFloor is the target for memfs's total saves/s with concurrent
// writers, as a fraction of the loopback's.
const writersFloor = 0.8

// Absolute targets.
const (
	visibilityP99TargetMS = 50
	rssTargetMiB          = 96
	// The RSS target is for a daemon serving this many stores of this many
	// memories each.
	rssTargetStores   = 8
	rssTargetMemories = 2000
)

type machine struct {
	CPUs      int    `json:"nproc"`
	Kernel    string `json:"kernel"`
	CPUModel  string `json:"cpu_model"`
	GoVersion string `json:"go_version"`
	WorkDir   string `json:"workdir"`
	WorkDirFS string `json:"workdir_fs"`
	// The 1-minute load average when the run started and ended: a figure
	// well above nproc means other work competed for the CPUs.
	LoadStart string `json:"loadavg_start"`
	LoadEnd   string `json:"loadavg_end"`
	// Start is when the run started (UTC, RFC 3339); Commit and Command
	// are what scripts/bench says it measured and how it was run.
	Start   string `json:"start"`
	Commit  string `json:"commit,omitempty"`
	Command string `json:"command,omitempty"`
}

type phaseResult struct {
	Phase     string              `json:"phase"`
	Ops       int                 `json:"ops_per_round"`
	OpsPerSec map[string]*float64 `json:"median_ops_per_sec"`
	// Ratios of medians, measured in the same run.
	MemfsVsLoopback *float64 `json:"memfs_vs_loopback"`
	MemfsVsTmpfs    *float64 `json:"memfs_vs_tmpfs"`
	MemfsVsNoPT     *float64 `json:"memfs_vs_loopback_nopt"`
	FullVsLoopback  *float64 `json:"memfs_full_vs_loopback"`
	// With --db: memfs on PostgreSQL against the loopback and against
	// memfs on SQLite.
	PgVsLoopback *float64 `json:"memfs_pg_vs_loopback,omitempty"`
	PgVsSQLite   *float64 `json:"memfs_pg_vs_memfs,omitempty"`
	// PgInBareCommits is one memfs-pg operation's time in bare one-row
	// commits on the same server (report.BareCommitsPerSec).
	PgInBareCommits *float64 `json:"memfs_pg_in_bare_commits,omitempty"`
	Floor           float64  `json:"floor_vs_loopback"`
	Met             *bool    `json:"met"`
}

type report struct {
	Machine    machine           `json:"machine"`
	Config     map[string]any    `json:"config"`
	Phases     []phaseResult     `json:"phases"`
	Writers    []writersResult   `json:"writers,omitempty"`
	Visibility *visibilityResult `json:"visibility,omitempty"`
	Log        *logResult        `json:"log,omitempty"`
	RSS        *rssResult        `json:"rss,omitempty"`
	Errors     []string          `json:"errors,omitempty"`
	// BareCommitsPerSec, with --db: one client's bare commits of a row of
	// a file's size on memfs-pg's server, median of the rounds, each
	// measured right after the round's phases on memfs-pg; BareCommitsFsync
	// is the server's fsync setting.
	BareCommitsPerSec *float64 `json:"median_bare_commits_per_sec,omitempty"`
	BareCommitsFsync  string   `json:"bare_commits_fsync,omitempty"`
	// Goals is every target with its figure, met or not: the summary.
	Goals []goal `json:"targets"`

	targets        []string
	opsPer         map[string]map[string][]float64 // target → phase → ops/s of each round
	ops            map[string]int
	writersPer     map[string]map[string][]*writersRound // variant → target → each round
	bareCommitsPer []float64
	writers        int
	writersFor     time.Duration
}

func newReport(cfg *config, work string) *report {
	m := machineInfo(work)
	m.Commit, m.Command = cfg.commit, cfg.command
	return &report{
		Machine: m,
		Config: map[string]any{
			"quick": cfg.quick, "rounds": cfg.rounds, "files": cfg.files, "dirs": cfg.dirs,
			"file_bytes": fileSize, "list_passes": listPasses, "targets": cfg.targets,
			"cache_timeout": cacheTimeout.String(), "writers": cfg.writers, "writers_seconds": cfg.writersFor.Seconds(),
		},
		targets:    cfg.targets,
		opsPer:     map[string]map[string][]float64{},
		ops:        map[string]int{},
		writersPer: map[string]map[string][]*writersRound{},
		writers:    cfg.writers,
		writersFor: cfg.writersFor,
	}
}

func (r *report) addRound(target string, secs map[string]float64, ops map[string]int) {
	if r.opsPer[target] == nil {
		r.opsPer[target] = map[string][]float64{}
	}
	for _, p := range phaseNames {
		if secs[p] > 0 {
			r.opsPer[target][p] = append(r.opsPer[target][p], float64(ops[p])/secs[p])
		}
		r.ops[p] = ops[p]
	}
}

// finish turns the rounds into medians and ratios, and those into the
// targets' summary.
func (r *report) finish() {
	r.finishPhases()
	r.finishWriters()
	r.Goals = r.goals()
}

func (r *report) finishPhases() {
	r.Phases = nil
	if len(r.opsPer) == 0 {
		return
	}
	r.BareCommitsPerSec = nil
	if len(r.bareCommitsPer) > 0 {
		r.BareCommitsPerSec = num(stats.Median(r.bareCommitsPer))
	}
	for _, p := range phaseNames {
		med := map[string]float64{}
		pr := phaseResult{Phase: p, Ops: r.ops[p], OpsPerSec: map[string]*float64{}, Floor: floors[p]}
		for _, t := range r.targets {
			med[t] = stats.Median(r.opsPer[t][p])
			pr.OpsPerSec[t] = num(med[t])
		}
		get := func(t string) float64 {
			if v, ok := med[t]; ok {
				return v
			}
			return math.NaN()
		}
		pr.MemfsVsLoopback = num(ratio(get("memfs"), get("loopback")))
		pr.MemfsVsTmpfs = num(ratio(get("memfs"), get("tmpfs")))
		pr.MemfsVsNoPT = num(ratio(get("memfs"), get("loopback-nopt")))
		pr.FullVsLoopback = num(ratio(get("memfs-full"), get("loopback")))
		pr.PgVsLoopback = num(ratio(get("memfs-pg"), get("loopback")))
		pr.PgVsSQLite = num(ratio(get("memfs-pg"), get("memfs")))
		if r.BareCommitsPerSec != nil {
			pr.PgInBareCommits = num(ratio(*r.BareCommitsPerSec, get("memfs-pg")))
		}
		if pr.MemfsVsLoopback != nil {
			met := *pr.MemfsVsLoopback >= pr.Floor
			pr.Met = &met
		}
		r.Phases = append(r.Phases, pr)
	}
}

// num is x, or nil for a figure that was not measured (JSON has no NaN).
func num(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func writeJSON(w io.Writer, r *report) error {
	r.finish()
	r.Machine.LoadEnd = loadAvg()
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func fmtNum(x *float64, format string) string {
	if x == nil {
		return "-"
	}
	return fmt.Sprintf(format, *x)
}

func yesNo(b *bool) string {
	switch {
	case b == nil:
		return "-"
	case *b:
		return "yes"
	}
	return "NO"
}

func writeText(w io.Writer, r *report) error {
	r.finish()
	r.Machine.LoadEnd = loadAvg()
	m := r.Machine
	fmt.Fprintf(w, "machine: %d CPUs, %s, Linux %s, %s; databases on %s (%s); load average %s at the start, %s at the end\n",
		m.CPUs, m.CPUModel, m.Kernel, m.GoVersion, m.WorkDir, m.WorkDirFS, m.LoadStart, m.LoadEnd)
	fmt.Fprintf(w, "workload: %v files of %d bytes in %v directories, %v rounds, median ops/s (list: %d passes over every directory)\n\n",
		r.Config["files"], fileSize, r.Config["dirs"], r.Config["rounds"], listPasses)
	if len(r.Phases) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		head := []string{"phase"}
		for _, t := range r.targets {
			head = append(head, t+" ops/s")
		}
		pg := slices.Contains(r.targets, "memfs-pg")
		head = append(head, "memfs/loopback", "memfs/loopback-nopt", "memfs/tmpfs", "memfs-full/loopback")
		if pg {
			head = append(head, "memfs-pg/loopback", "memfs-pg/memfs", "memfs-pg in bare commits")
		}
		head = append(head, "")
		fmt.Fprintln(tw, strings.Join(head, "\t"))
		for _, p := range r.Phases {
			row := []string{p.Phase}
			for _, t := range r.targets {
				row = append(row, fmtNum(p.OpsPerSec[t], "%.0f"))
			}
			row = append(row, fmtNum(p.MemfsVsLoopback, "%.2f"), fmtNum(p.MemfsVsNoPT, "%.2f"), fmtNum(p.MemfsVsTmpfs, "%.3f"),
				fmtNum(p.FullVsLoopback, "%.2f"))
			if pg {
				row = append(row, fmtNum(p.PgVsLoopback, "%.2f"), fmtNum(p.PgVsSQLite, "%.2f"), fmtNum(p.PgInBareCommits, "%.2f"))
			}
			row = append(row, "")
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if r.BareCommitsPerSec != nil {
			fmt.Fprintf(w, "memfs-pg in bare commits: an operation's time over that of one client's INSERT of a %d-byte row committed alone on the same server (%.0f/s, median of the rounds; the server's fsync: %s)\n",
				fileSize, *r.BareCommitsPerSec, r.BareCommitsFsync)
		}
		fmt.Fprintln(w)
	}
	if len(r.Writers) > 0 {
		if err := writeWritersText(w, r); err != nil {
			return err
		}
	}
	if v := r.Visibility; v != nil {
		fmt.Fprintf(w, "save-to-visible in a second mount (another process, %s): p50 %.2f ms, p99 %.2f ms, max %.2f ms over %d samples (%d timed out)\n",
			v.Daemon, v.P50MS, v.P99MS, v.MaxMS, v.Samples, v.Timeouts)
	}
	if l := r.Log; l != nil {
		fmt.Fprintf(w, "memfs log on a store with %d versions: %.3f s median of %d (%d lines); a `memfs store get` on the same database: %.3f s; store built through the API at %.0f versions/s\n",
			l.Versions, l.LogSeconds, l.Runs, l.Lines, l.StartupSeconds, l.BuildVersionsPerSec)
	}
	if s := r.RSS; s != nil {
		fmt.Fprintf(w, "daemon peak RSS with %d stores × %d memories, after reading every file: memfs (%s) %.1f MiB (then %.1f MiB anonymous, %.1f MiB of mapped files); go-fuse loopback over the same files %.1f MiB\n",
			s.Stores, s.MemoriesPerStore, s.Daemon, s.MemfsPeakMiB, s.MemfsAnonMiB, s.MemfsFileMiB, s.LoopbackPeakMiB)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "not measured: %s\n", e)
	}
	fmt.Fprintf(w, "\ntargets (memfs with the default durability; ratios of medians over %v rounds):\n", r.Config["rounds"])
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tmeasured\ttarget\tmet")
	for _, g := range r.Goals {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", g.Name, g.figure(), g.target(), g.met())
	}
	return tw.Flush()
}

// writeWritersText prints the concurrent writers' saves/s per target.
func writeWritersText(w io.Writer, r *report) error {
	fmt.Fprintf(w, "%d concurrent writer processes, %.1f s per round, one save = %s; median total saves/s over %v rounds\n\n",
		r.writers, r.writersFor.Seconds(), writersSaveShape, r.Config["rounds"])
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"files"}
	var names []string
	for _, t := range r.targets {
		if _, ok := r.Writers[0].SavesPerSec[t]; ok {
			names = append(names, t)
			head = append(head, t+" saves/s")
		}
	}
	head = append(head, "memfs/loopback", "memfs/tmpfs", "memfs-full/loopback", "errors", "")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	var errs []string
	for _, wr := range r.Writers {
		row := []string{writersLabel(wr)}
		total := 0
		for _, t := range names {
			row = append(row, fmtNum(wr.SavesPerSec[t], "%.0f"))
			total += wr.Errors[t]
			if e := wr.FirstError[t]; e != "" {
				errs = append(errs, fmt.Sprintf("%s on %s: %d failed or lost saves, the first: %s", writersLabel(wr), t, wr.Errors[t], e))
			}
			if m := wr.Merged[t]; m > 0 {
				errs = append(errs, fmt.Sprintf("%s on %s: %d of the saves overlapped another writer's save of the same file and share its version (not an error)", writersLabel(wr), t, m))
			}
		}
		row = append(row, fmtNum(wr.MemfsVsLoopback, "%.2f"), fmtNum(wr.MemfsVsTmpfs, "%.3f"), fmtNum(wr.FullVsLoopback, "%.2f"), fmt.Sprint(total), "")
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, e := range errs {
		fmt.Fprintln(w, e)
	}
	fmt.Fprintln(w)
	return nil
}

// writersLabel names a writers variant in tables.
func writersLabel(wr writersResult) string {
	if wr.Variant == "shared" {
		return fmt.Sprintf("%d shared", wr.Files)
	}
	return fmt.Sprintf("%d own each", wr.Files)
}

func machineInfo(work string) machine {
	m := machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), WorkDir: work, CPUModel: "unknown", Kernel: "unknown",
		Start: time.Now().UTC().Format(time.RFC3339)}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	m.WorkDirFS = fsType(work)
	m.LoadStart = loadAvg()
	return m
}

// loadAvg is the 1-minute load average, "" when unknown.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// fsType names the filesystem holding path, which decides what fsync costs.
func fsType(path string) string {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return "unknown"
	}
	switch st.Type {
	case unix.EXT4_SUPER_MAGIC:
		return "ext4"
	case unix.TMPFS_MAGIC:
		return "tmpfs"
	case unix.XFS_SUPER_MAGIC:
		return "xfs"
	case unix.BTRFS_SUPER_MAGIC:
		return "btrfs"
	case unix.OVERLAYFS_SUPER_MAGIC:
		return "overlayfs"
	}
	return fmt.Sprintf("0x%x", st.Type)
}
