// Command historybenchcmd measures what the mount's .history tree costs
// (scripts/history-bench): ls of one path with many versions, and the mount
// time, listing time and RSS of a store with many versions, each with the
// tree and with --history=false.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/memfs/memfs/versions"
)

type config struct {
	bin                          string
	versions, pathVersions, runs int
	files                        int
	format                       string
}

// binPath is the memfs binary measured.
var binPath string

type result struct {
	History         bool    `json:"history"`
	MountMs         float64 `json:"mount_ms"`
	LsStoreMs       float64 `json:"ls_store_ms"`
	LsHistoryTopMs  float64 `json:"ls_history_top_ms,omitempty"`
	LsPathMs        float64 `json:"ls_path_versions_ms,omitempty"`
	LsLongPathMs    float64 `json:"ls_l_path_versions_ms,omitempty"`
	PathEntries     int     `json:"path_entries,omitempty"`
	RSSMountedMiB   float64 `json:"rss_mounted_mib"`
	RSSAfterLsMiB   float64 `json:"rss_after_listing_mib"`
	RSSAfterHistMiB float64 `json:"rss_after_history_mib,omitempty"`
}

func main() {
	var cfg config
	flag.StringVar(&cfg.bin, "memfs-bin", "", "the memfs binary")
	flag.IntVar(&cfg.versions, "versions", 100000, "versions of the big store")
	flag.IntVar(&cfg.files, "files", 1000, "files the big store's versions are spread over")
	flag.IntVar(&cfg.pathVersions, "path-versions", 2000, "versions of the one path listed")
	flag.IntVar(&cfg.runs, "runs", 6, "runs of each measurement (the median is reported)")
	flag.StringVar(&cfg.format, "format", "text", "text or json")
	flag.Parse()
	binPath = cfg.bin
	if cfg.bin == "" || cfg.files < 1 || cfg.versions < cfg.files {
		fmt.Fprintln(os.Stderr, "usage: historybenchcmd --memfs-bin BIN [--versions 100000] [--files 1000] [--path-versions 2000] [--runs 5]")
		os.Exit(2)
	}
	work, err := os.MkdirTemp("", "memfs-history-bench-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(work)
	dbPath := filepath.Join(work, "memfs.db")
	start := time.Now()
	if err := populate(dbPath, &cfg); err != nil {
		fatal(err)
	}
	fmt.Fprintf(os.Stderr, "populated %d + %d versions in %v\n", cfg.versions, cfg.pathVersions, time.Since(start).Round(time.Millisecond))
	// The two modes take turns, each first every other run, so that the
	// machine's other load and the page cache weigh on both alike.
	samples := map[bool][]result{}
	for run := 0; run < cfg.runs; run++ {
		for _, history := range []bool{run%2 == 0, run%2 != 0} {
			r, err := measure(filepath.Join(work, fmt.Sprint(run)), dbPath, history)
			if err != nil {
				fatal(err)
			}
			samples[history] = append(samples[history], r)
		}
	}
	results := []result{medianResult(samples[true]), medianResult(samples[false])}
	if cfg.format == "json" {
		json.NewEncoder(os.Stdout).Encode(results)
		return
	}
	fmt.Printf("store of %d versions over %d files, one path of %d versions; median of %d runs\n", cfg.versions, cfg.files, cfg.pathVersions, cfg.runs)
	for _, r := range results {
		mode := "--history=true "
		if !r.History {
			mode = "--history=false"
		}
		fmt.Printf("%s  mount %7.1f ms  ls -R store %7.1f ms  RSS mounted %5.1f MiB, after listing %5.1f MiB", mode, r.MountMs, r.LsStoreMs, r.RSSMountedMiB, r.RSSAfterLsMiB)
		if r.History {
			fmt.Printf("\n                 ls .history/big %6.1f ms  ls of %d versions %6.1f ms  ls -l %6.1f ms  RSS after %5.1f MiB",
				r.LsHistoryTopMs, r.PathEntries, r.LsPathMs, r.LsLongPathMs, r.RSSAfterHistMiB)
		}
		fmt.Println()
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "historybenchcmd:", err)
	os.Exit(1)
}

// populate writes the big store (cfg.versions versions over cfg.files
// files in 10 directories) and the hot store (one path saved
// cfg.pathVersions times).
func populate(path string, cfg *config) error {
	ctx := context.Background()
	db, err := versions.Open(path, versions.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	by := versions.UserActor("bench")
	big, err := db.CreateStore(ctx, versions.StoreParams{Name: "big", MaxMemories: cfg.files + 10})
	if err != nil {
		return err
	}
	ids := make([]string, cfg.files)
	for i := range ids {
		m, err := db.CreateMemory(ctx, big.ID, fmt.Sprintf("/d%d/f%d.md", i%10, i), "v0\n", by)
		if err != nil {
			return err
		}
		ids[i] = m.ID
	}
	for n := cfg.files; n < cfg.versions; n++ {
		c := fmt.Sprintf("v%d\n", n)
		if _, err := db.UpdateMemory(ctx, big.ID, ids[n%cfg.files], versions.MemoryUpdate{Content: &c}, by); err != nil {
			return err
		}
	}
	hot, err := db.CreateStore(ctx, versions.StoreParams{Name: "hot"})
	if err != nil {
		return err
	}
	m, err := db.CreateMemory(ctx, hot.ID, "/hot.md", "0\n", by)
	if err != nil {
		return err
	}
	for n := 1; n < cfg.pathVersions; n++ {
		c := fmt.Sprintf("%d\n", n)
		if _, err := db.UpdateMemory(ctx, hot.ID, m.ID, versions.MemoryUpdate{Content: &c}, by); err != nil {
			return err
		}
	}
	return nil
}

// measure mounts once and takes each figure once.
func measure(work, dbPath string, history bool) (result, error) {
	r := result{History: history}
	mnt := filepath.Join(work, fmt.Sprintf("mnt-%v", history))
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		return r, err
	}
	start := time.Now()
	d, err := startMount(binPath, dbPath, mnt, history)
	if err != nil {
		return r, err
	}
	defer stop(d, mnt)
	r.MountMs = ms(time.Since(start))
	r.RSSMountedMiB = rssMiB(d.Process.Pid)
	if r.LsStoreMs, _, err = timed("ls", "-R", filepath.Join(mnt, "big")); err != nil {
		return r, err
	}
	r.RSSAfterLsMiB = rssMiB(d.Process.Pid)
	if !history {
		return r, nil
	}
	if r.LsHistoryTopMs, _, err = timed("ls", filepath.Join(mnt, ".history", "big")); err != nil {
		return r, err
	}
	var out string
	if r.LsPathMs, out, err = timed("ls", filepath.Join(mnt, ".history", "hot", "hot.md")); err != nil {
		return r, err
	}
	r.PathEntries = strings.Count(out, "\n")
	if r.LsLongPathMs, _, err = timed("ls", "-l", filepath.Join(mnt, ".history", "hot", "hot.md")); err != nil {
		return r, err
	}
	r.RSSAfterHistMiB = rssMiB(d.Process.Pid)
	return r, nil
}

// medianResult is each figure's median over the runs of one mode.
func medianResult(rs []result) result {
	pick := func(f func(result) float64) float64 {
		xs := make([]float64, len(rs))
		for i, r := range rs {
			xs[i] = f(r)
		}
		return median(xs)
	}
	return result{History: rs[0].History, PathEntries: rs[0].PathEntries,
		MountMs:         pick(func(r result) float64 { return r.MountMs }),
		LsStoreMs:       pick(func(r result) float64 { return r.LsStoreMs }),
		LsHistoryTopMs:  pick(func(r result) float64 { return r.LsHistoryTopMs }),
		LsPathMs:        pick(func(r result) float64 { return r.LsPathMs }),
		LsLongPathMs:    pick(func(r result) float64 { return r.LsLongPathMs }),
		RSSMountedMiB:   pick(func(r result) float64 { return r.RSSMountedMiB }),
		RSSAfterLsMiB:   pick(func(r result) float64 { return r.RSSAfterLsMiB }),
		RSSAfterHistMiB: pick(func(r result) float64 { return r.RSSAfterHistMiB }),
	}
}

// startMount runs memfs mount of both stores and returns once it is ready.
func startMount(bin, dbPath, mnt string, history bool) (*exec.Cmd, error) {
	rd, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	cmd := exec.Command(bin, "--db", dbPath, "mount", "--store", "big", "--store", "hot", "--history="+strconv.FormatBool(history), "--ready-fd", "3", mnt)
	cmd.ExtraFiles = []*os.File{w}
	cmd.Stderr = nil
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, err
	}
	w.Close()
	line, err := bufio.NewReader(rd).ReadString('\n')
	if err != nil || !strings.Contains(line, "ready") {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("memfs mount never said ready (%q, %v)", line, err)
	}
	return cmd, nil
}

func stop(cmd *exec.Cmd, mnt string) {
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
	syscall.Unmount(mnt, syscall.MNT_DETACH)
}

// timed runs a command and returns its wall time in ms and its output.
func timed(name string, args ...string) (float64, string, error) {
	start := time.Now()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return 0, "", fmt.Errorf("%s %v: %w", name, args, err)
	}
	return ms(time.Since(start)), string(out), nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// rssMiB is the process's resident set (VmRSS).
func rssMiB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
