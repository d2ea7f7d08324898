// Command scalecmd is scripts/scale: many `memfs mount` daemons on one
// database, as many hosts sharing stores would be, under a storm of saves.
// It reports saves per second in total, save-to-visible latency between
// daemons, the connections the daemons hold and every error, for each
// backend it is given.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for the server's own views

	"github.com/memfs/memfs/scripts/internal/stats"
	"github.com/memfs/memfs/slugify"
	"github.com/memfs/memfs/versions"
)

type config struct {
	bin                     string
	pg                      string
	sqlite                  bool
	daemons, stores, writes int
	duration                time.Duration
	probers                 int
	format                  string
	work                    string
	// The comparison (compare.go): the older build's scalecmd and memfs,
	// the pairs to run, and how to name each build.
	compareBin, compareMemfs string
	pairs                    int
	compare, commit          string
}

// result is one backend's run.
type result struct {
	Backend         string   `json:"backend"`
	Daemons         int      `json:"daemons"`
	StoresPerDaemon int      `json:"stores_per_daemon"`
	Stores          int      `json:"stores"`
	Writers         int      `json:"writers"`
	Seconds         float64  `json:"seconds"`
	Saves           int64    `json:"saves"`
	SavesPerSec     float64  `json:"saves_per_sec"`
	Errors          int64    `json:"errors"`
	ErrorSamples    []string `json:"error_samples,omitempty"`
	Probes          int      `json:"probes"`
	ProbeTimeouts   int      `json:"probe_timeouts"`
	VisibleP50MS    float64  `json:"visible_p50_ms"`
	VisibleP99MS    float64  `json:"visible_p99_ms"`
	VisibleMaxMS    float64  `json:"visible_max_ms"`
	// Connections: the most the daemons held at once (pg_stat_activity),
	// and the bound each daemon keeps to. Zero on SQLite.
	Connections          int `json:"connections_max,omitempty"`
	ConnectionsPerDaemon int `json:"connections_bound_per_daemon,omitempty"`
	Versions             int `json:"versions_stored"`
}

func main() {
	var cfg config
	flag.StringVar(&cfg.bin, "memfs-bin", "", "the memfs binary to run the daemons of")
	flag.StringVar(&cfg.pg, "pg", "", "a PostgreSQL server URL (a role that may create databases): run there, in a new database dropped at the end")
	flag.BoolVar(&cfg.sqlite, "sqlite", true, "also run on a SQLite file (-sqlite=false: PostgreSQL only)")
	flag.IntVar(&cfg.daemons, "daemons", 8, "memfs mount processes")
	flag.IntVar(&cfg.stores, "stores", 4, "stores each daemon mounts; each store is mounted by two daemons")
	flag.IntVar(&cfg.writes, "writers", 64, "concurrent writers, spread over the daemons and their stores")
	flag.DurationVar(&cfg.duration, "duration", 60*time.Second, "how long the writers save")
	flag.IntVar(&cfg.probers, "probers", 2, "concurrent save-to-visible probes between daemons")
	flag.StringVar(&cfg.format, "format", "text", "text or json")
	flag.StringVar(&cfg.compareBin, "compare-bin", "", "an older build's scalecmd: run it and this one alternated, each with its own memfs (--compare-memfs)")
	flag.StringVar(&cfg.compareMemfs, "compare-memfs", "", "the older build's memfs, for --compare-bin")
	flag.IntVar(&cfg.pairs, "pairs", 3, "with --compare-bin: pairs of runs, the first build of each alternating")
	flag.StringVar(&cfg.compare, "compare", "old", "with --compare-bin: the older build's name in the report (scripts/scale sets it from its --compare REV)")
	flag.StringVar(&cfg.commit, "commit", "new", "with --compare-bin: this build's name in the report")
	flag.Parse()
	if cfg.bin == "" || (cfg.pg == "" && !cfg.sqlite) || cfg.daemons < 2 || cfg.stores < 2 || cfg.writes < 1 ||
		(cfg.compareBin == "") != (cfg.compareMemfs == "") || cfg.pairs < 1 {
		fmt.Fprintln(os.Stderr, "usage: scalecmd --memfs-bin BIN [--pg URL] [--sqlite=false] [--daemons 8] [--stores 4] [--writers 64] [--duration 60s] [--compare-bin OLD-SCALECMD --compare-memfs OLD-MEMFS [--pairs 3]]; at least 2 daemons and 2 stores each")
		os.Exit(2)
	}
	if cfg.compareBin != "" {
		self, err := os.Executable()
		if err != nil {
			fatal(fmt.Errorf("find scalecmd to run again: %w", err))
		}
		rep := compare(&cfg, self)
		if cfg.format == "json" {
			printJSON(rep)
		} else {
			printCompare(os.Stdout, &cfg, rep)
		}
		switch {
		case rep.Error != "":
			os.Exit(2)
		case rep.Failed:
			os.Exit(1)
		}
		return
	}
	work, err := os.MkdirTemp("", "memfs-scale-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(work)
	cfg.work = work

	var results []result
	if cfg.pg != "" {
		r, err := runPostgres(&cfg)
		if err != nil {
			fatal(fmt.Errorf("PostgreSQL run: %w", err))
		}
		results = append(results, r)
	}
	if cfg.sqlite {
		r, err := run(&cfg, "sqlite", filepath.Join(work, "scale.db"), nil)
		if err != nil {
			fatal(fmt.Errorf("SQLite run: %w", err))
		}
		results = append(results, r)
	}
	if cfg.format == "json" {
		printJSON(results)
	} else {
		printText(os.Stdout, &cfg, results)
	}
	os.RemoveAll(work) // os.Exit skips the deferred removal
	for _, r := range results {
		if r.failed() {
			os.Exit(1)
		}
	}
}

// failed tells whether a run had an error or a probe that never saw its
// save.
func (r *result) failed() bool { return r.Errors > 0 || r.ProbeTimeouts > 0 }

func printJSON(v any) {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "scale: %v\n", err)
	os.Exit(2)
}

// runPostgres runs on a new database of the server, dropped afterwards.
func runPostgres(cfg *config) (result, error) {
	admin, err := sql.Open("pgx", cfg.pg)
	if err != nil {
		return result{}, err
	}
	defer admin.Close()
	b := make([]byte, 4)
	rand.Read(b)
	name := "memfs_scale_" + hex.EncodeToString(b)
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		return result{}, fmt.Errorf("create database %s: %w", name, err)
	}
	defer admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
	dsn, err := withDatabase(cfg.pg, name)
	if err != nil {
		return result{}, err
	}
	// The daemons' connections: those of the database but this one.
	conns := func() (int, error) {
		var n int
		err := admin.QueryRow("SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", name).Scan(&n)
		return n, err
	}
	return run(cfg, "postgres", dsn, conns)
}

func withDatabase(dsn, name string) (string, error) {
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return dsn + " dbname=" + name, nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("the server URL %s: %v", versions.RedactDSN(dsn), err)
	}
	u.Path = "/" + name
	if q := u.Query(); q.Has("dbname") {
		q.Set("dbname", name)
		u.RawQuery = q.Encode()
	}
	return u.String(), nil
}

// daemon is one `memfs mount` process and the directories of its stores.
type daemon struct {
	cmd  *exec.Cmd
	mnt  string
	dirs []string // slot → the store's directory in this mount
	log  *os.File
}

func run(cfg *config, backend, dsn string, conns func() (int, error)) (result, error) {
	ctx := context.Background()
	res := result{Backend: backend, Daemons: cfg.daemons, StoresPerDaemon: cfg.stores, Writers: cfg.writes}
	db, err := versions.Open(dsn, versions.Options{})
	if err != nil {
		return res, err
	}
	// A ring: daemon d mounts stores 2d … 2d+stores-1 (mod n), so that
	// every store is mounted by more than one daemon.
	n := max(cfg.daemons*cfg.stores/2, cfg.stores)
	res.Stores = n
	ids := make([]string, n)
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("scale-%02d", i)
		s, err := db.CreateStore(ctx, versions.StoreParams{Name: names[i]})
		if err != nil {
			db.Close()
			return res, err
		}
		ids[i] = s.ID
		// The probes overwrite files that exist: a new file becomes visible
		// to other mounts only after its grace period, which is not the
		// save-to-visible latency this run reports.
		for p := range cfg.probers {
			if _, err := db.CreateMemory(ctx, s.ID, fmt.Sprintf("/probe-%d.txt", p), "probe\n", versions.UserActor("scale")); err != nil {
				db.Close()
				return res, err
			}
		}
	}
	// Closed during the run: the connections counted are the daemons'.
	if err := db.Close(); err != nil {
		return res, err
	}
	holders := make([][]struct{ d, slot int }, n) // store → the daemons mounting it
	daemons := make([]*daemon, cfg.daemons)
	defer func() {
		for _, d := range daemons {
			if d != nil {
				d.stop()
			}
		}
	}()
	for d := range cfg.daemons {
		dm := &daemon{mnt: filepath.Join(cfg.work, fmt.Sprintf("%s-mnt-%d", backend, d))}
		args := []string{"--db", dsn, "mount"}
		for k := range cfg.stores {
			j := (2*d + k) % n
			args = append(args, "--store", ids[j])
			dm.dirs = append(dm.dirs, filepath.Join(dm.mnt, slugify.Make(names[j])))
			holders[j] = append(holders[j], struct{ d, slot int }{d, k})
		}
		if err := dm.start(cfg, append(args, "--ready-fd", "3", dm.mnt)); err != nil {
			return res, fmt.Errorf("daemon %d: %w", d, err)
		}
		daemons[d] = dm
	}

	var saves, errs atomic.Int64
	var mu sync.Mutex
	samples := map[string]bool{}
	deadline := time.Now().Add(cfg.duration)
	var wg sync.WaitGroup
	for w := range cfg.writes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := daemons[w%cfg.daemons]
			dir := d.dirs[(w/cfg.daemons)%cfg.stores]
			pad := strings.Repeat("x", 200)
			for i := 0; time.Now().Before(deadline); i++ {
				file := filepath.Join(dir, fmt.Sprintf("w%02d-f%d.txt", w, i%8))
				if err := os.WriteFile(file, []byte(fmt.Sprintf("writer %d save %d\n%s\n", w, i, pad)), 0o644); err != nil {
					errs.Add(1)
					mu.Lock()
					if len(samples) < 5 {
						samples[err.Error()] = true
					}
					mu.Unlock()
					time.Sleep(10 * time.Millisecond)
					continue
				}
				saves.Add(1)
			}
		}()
	}
	var lat []time.Duration
	timeouts := 0
	for p := range cfg.probers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				j := (p + i*cfg.probers) % n
				h := holders[j]
				a, b := h[i%len(h)], h[(i+1)%len(h)]
				name := fmt.Sprintf("probe-%d.txt", p)
				want := fmt.Sprintf("probe %d %08d\n", p, i)
				if err := os.WriteFile(filepath.Join(daemons[a.d].dirs[a.slot], name), []byte(want), 0o644); err != nil {
					errs.Add(1)
					continue
				}
				start := time.Now()
				seen := false
				for time.Since(start) < 5*time.Second {
					if got, err := os.ReadFile(filepath.Join(daemons[b.d].dirs[b.slot], name)); err == nil && string(got) == want {
						seen = true
						break
					}
					time.Sleep(500 * time.Microsecond)
				}
				mu.Lock()
				if seen {
					lat = append(lat, time.Since(start))
				} else {
					timeouts++
				}
				mu.Unlock()
				time.Sleep(50 * time.Millisecond)
			}
		}()
	}
	maxConns := 0
	var connErr error
	if conns != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				c, err := conns()
				if err != nil {
					connErr = err
					return
				}
				maxConns = max(maxConns, c)
				time.Sleep(time.Second)
			}
		}()
	}
	start := time.Now()
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	if connErr != nil {
		return res, fmt.Errorf("read pg_stat_activity: %w", connErr)
	}
	res.Saves, res.Errors = saves.Load(), errs.Load()
	res.SavesPerSec = float64(res.Saves) / res.Seconds
	for s := range samples {
		res.ErrorSamples = append(res.ErrorSamples, s)
	}
	sort.Strings(res.ErrorSamples)
	res.Probes, res.ProbeTimeouts = len(lat), timeouts
	ms := func(p float64) float64 { return float64(stats.Percentile(lat, p)) / float64(time.Millisecond) }
	res.VisibleP50MS, res.VisibleP99MS, res.VisibleMaxMS = ms(50), ms(99), ms(100)
	if conns != nil {
		res.Connections, res.ConnectionsPerDaemon = maxConns, versions.PostgresConnections
	}
	for _, d := range daemons {
		d.stop()
	}
	if db, err = versions.Open(dsn, versions.Options{}); err != nil {
		return res, err
	}
	defer db.Close()
	for _, id := range ids {
		page := ""
		for {
			p, err := db.ListVersions(ctx, id, versions.VersionListOptions{Limit: versions.MaxPageSize, Page: page})
			if err != nil {
				return res, err
			}
			res.Versions += len(p.Data)
			if p.NextPage == nil {
				break
			}
			page = *p.NextPage
		}
	}
	return res, nil
}

func (d *daemon) start(cfg *config, args []string) error {
	if err := os.MkdirAll(d.mnt, 0o755); err != nil {
		return err
	}
	log, err := os.Create(d.mnt + ".log")
	if err != nil {
		return err
	}
	d.log = log
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	d.cmd = exec.Command(cfg.bin, args...)
	d.cmd.Env = append(os.Environ(), "MEMFS_DB=")
	d.cmd.Stderr = log
	d.cmd.ExtraFiles = []*os.File{w}
	if err := d.cmd.Start(); err != nil {
		w.Close()
		return err
	}
	w.Close()
	ready := make(chan bool, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		ready <- strings.Contains(line, "ready")
	}()
	select {
	case ok := <-ready:
		if ok {
			return nil
		}
	case <-time.After(60 * time.Second):
	}
	d.stop()
	b, _ := os.ReadFile(log.Name())
	return fmt.Errorf("memfs mount did not get ready; its log:\n%s", b)
}

// stop ends the daemon and detaches whatever it left mounted.
func (d *daemon) stop() {
	if d.cmd != nil && d.cmd.Process != nil && d.cmd.ProcessState == nil {
		d.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { d.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			d.cmd.Process.Kill()
			<-done
		}
	}
	syscall.Unmount(d.mnt, syscall.MNT_DETACH)
	if d.log != nil {
		d.log.Close()
	}
}

func printText(w io.Writer, cfg *config, rs []result) {
	fmt.Fprintf(w, "scale: %d daemons × %d stores each (%d stores, each mounted by 2 daemons), %d writers, %v\n\n",
		cfg.daemons, cfg.stores, max(cfg.daemons*cfg.stores/2, cfg.stores), cfg.writes, cfg.duration)
	fmt.Fprintf(w, "%-9s %9s %9s %7s %8s %9s %9s %9s %13s %9s\n",
		"backend", "saves", "saves/s", "errors", "probes", "vis p50", "vis p99", "vis max", "connections", "versions")
	for _, r := range rs {
		conns := "—"
		if r.Connections > 0 {
			conns = fmt.Sprintf("%d (≤%d×%d)", r.Connections, r.Daemons, r.ConnectionsPerDaemon)
		}
		fmt.Fprintf(w, "%-9s %9d %9.0f %7d %8d %7.1fms %7.1fms %7.1fms %13s %9d\n",
			r.Backend, r.Saves, r.SavesPerSec, r.Errors+int64(r.ProbeTimeouts), r.Probes, r.VisibleP50MS, r.VisibleP99MS, r.VisibleMaxMS, conns, r.Versions)
		for _, s := range r.ErrorSamples {
			fmt.Fprintf(w, "  %s error: %s\n", r.Backend, s)
		}
		if r.ProbeTimeouts > 0 {
			fmt.Fprintf(w, "  %s: %d probes not visible within 5 s\n", r.Backend, r.ProbeTimeouts)
		}
	}
	fmt.Fprintln(w, "\nvis: a probe overwrites a file (created before the run) through one daemon and reads it through another daemon mounting the same store every 0.5 ms until the new bytes show, while the writers save; latency from the save's close().")
	fmt.Fprintln(w, "connections: the most pg_stat_activity showed on the run's database at once, sampled every second.")
	fmt.Fprintln(w, "versions: versions in the stores after the run (each acknowledged save is one, except that a new file's saves within its grace period become one; a save that failed may still have committed).")
}
