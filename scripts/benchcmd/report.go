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

	"golang.org/x/sys/unix"
)

// floors are the targets for memfs (default durability) as a
// fraction of the loopback's ops/s.
var floors = map[string]float64{
	"create": 0.6, "stat": 1.0, "list": 1.0, "read": 0.9,
	"overwrite": 0.6, "atomic-save": 0.6, "rename": 0.6, "delete": 0.6,
}

// Absolute targets of the issue.
const (
	visibilityP99TargetMS = 100
	rssTargetMiB          = 100
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
	Floor        float64  `json:"floor_vs_loopback"`
	Met          *bool    `json:"met"`
}

type report struct {
	Machine    machine           `json:"machine"`
	Config     map[string]any    `json:"config"`
	Phases     []phaseResult     `json:"phases"`
	Visibility *visibilityResult `json:"visibility,omitempty"`
	Log        *logResult        `json:"log,omitempty"`
	RSS        *rssResult        `json:"rss,omitempty"`
	Errors     []string          `json:"errors,omitempty"`

	targets []string
	opsPer  map[string]map[string][]float64 // target → phase → ops/s of each round
	ops     map[string]int
}

func newReport(cfg *config, work string) *report {
	return &report{
		Machine: machineInfo(work),
		Config: map[string]any{
			"quick": cfg.quick, "rounds": cfg.rounds, "files": cfg.files, "dirs": cfg.dirs,
			"file_bytes": fileSize, "list_passes": listPasses, "targets": cfg.targets,
			"cache_timeout": cacheTimeout.String(),
		},
		targets: cfg.targets,
		opsPer:  map[string]map[string][]float64{},
		ops:     map[string]int{},
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

// finish turns the rounds into medians and ratios.
func (r *report) finish() {
	r.Phases = nil
	if len(r.opsPer) == 0 {
		return
	}
	for _, p := range phaseNames {
		med := map[string]float64{}
		pr := phaseResult{Phase: p, Ops: r.ops[p], OpsPerSec: map[string]*float64{}, Floor: floors[p]}
		for _, t := range r.targets {
			med[t] = median(r.opsPer[t][p])
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
			head = append(head, "memfs-pg/loopback", "memfs-pg/memfs")
		}
		head = append(head, "floor", "met", "")
		fmt.Fprintln(tw, strings.Join(head, "\t"))
		for _, p := range r.Phases {
			row := []string{p.Phase}
			for _, t := range r.targets {
				row = append(row, fmtNum(p.OpsPerSec[t], "%.0f"))
			}
			row = append(row, fmtNum(p.MemfsVsLoopback, "%.2f"), fmtNum(p.MemfsVsNoPT, "%.2f"), fmtNum(p.MemfsVsTmpfs, "%.3f"),
				fmtNum(p.FullVsLoopback, "%.2f"))
			if pg {
				row = append(row, fmtNum(p.PgVsLoopback, "%.2f"), fmtNum(p.PgVsSQLite, "%.2f"))
			}
			row = append(row, fmt.Sprintf("≥%.1f", p.Floor), yesNo(p.Met), "")
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	if v := r.Visibility; v != nil {
		fmt.Fprintf(w, "save-to-visible in a second mount (another process, %s): p50 %.2f ms, p99 %.2f ms, max %.2f ms over %d samples (%d timed out); target p99 ≤ %d ms: %s\n",
			v.Daemon, v.P50MS, v.P99MS, v.MaxMS, v.Samples, v.Timeouts, visibilityP99TargetMS, yesNo(&v.Met))
	}
	if l := r.Log; l != nil {
		fmt.Fprintf(w, "memfs log on a store with %d versions: %.3f s median of %d (%d lines); a `memfs store get` on the same database: %.3f s; store built through the API at %.0f versions/s\n",
			l.Versions, l.LogSeconds, l.Runs, l.Lines, l.StartupSeconds, l.BuildVersionsPerSec)
	}
	if s := r.RSS; s != nil {
		fmt.Fprintf(w, "daemon peak RSS with %d stores × %d memories, after reading every file: memfs (%s) %.1f MiB; go-fuse loopback over the same files %.1f MiB; target ≤ %d MiB: %s\n",
			s.Stores, s.MemoriesPerStore, s.Daemon, s.MemfsPeakMiB, s.LoopbackPeakMiB, rssTargetMiB, yesNo(&s.Met))
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "not measured: %s\n", e)
	}
	return nil
}

func machineInfo(work string) machine {
	m := machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), WorkDir: work, CPUModel: "unknown", Kernel: "unknown"}
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
