// Command crashcmd is the engine of scripts/crash: it kills the memfs mount
// daemon with SIGKILL in the middle of a storm of saves, again and again,
// and checks after each crash that every save a writer saw succeed is a
// version with its exact content, that no version is torn and that the
// database passes PRAGMA integrity_check.
//
//	crashcmd -bin path/to/memfs [-k 50] [-writers 4] [-format text|json]
//
// Run as `crashcmd writer …` it is one writer process of the storm.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/slugify"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "writer" {
		os.Exit(writerMain(os.Args[2:]))
	}
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

type config struct {
	bin     string
	cycles  int
	writers int
	format  string
	dir     string
	keep    bool
	seed    uint64
	killMin time.Duration
	killMax time.Duration
}

// result is what a run found; its JSON is the --format json output.
type result struct {
	Cycles          int `json:"cycles"`
	Writers         int `json:"writers"`
	Acknowledged    int `json:"acknowledged_saves"`
	FailedSaves     int `json:"failed_saves"`
	VersionsChecked int `json:"versions_checked"`
	Lost            int `json:"lost"`
	// LostBeforeRemount counts acknowledged saves that were not versions
	// when read right after the kill, before any mount ran again: a save
	// is final at its close, whatever becomes of the daemon.
	LostBeforeRemount int `json:"lost_before_remount"`
	IntegrityFailures int `json:"integrity_failures"`
	RemountFailures   int `json:"remount_failures"`
	HungKills         int `json:"hung_kills"`
	// ClientsLeftBlocked counts writers of a killed mount still blocked
	// after the new mount took over.
	ClientsLeftBlocked int      `json:"clients_left_blocked"`
	MedianRemountMS    float64  `json:"median_remount_ms"`
	MaxRemountMS       float64  `json:"max_remount_ms"`
	Remounts           int      `json:"remounts"`
	Problems           []string `json:"problems,omitempty"`
}

func runMain(args []string, stdout, stderr io.Writer) int {
	var c config
	fs := flag.NewFlagSet("crash", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.bin, "bin", "", "the memfs binary to mount with (required)")
	fs.IntVar(&c.cycles, "k", 50, "number of crash cycles")
	fs.IntVar(&c.writers, "writers", 4, "writer processes per cycle")
	fs.StringVar(&c.format, "format", "text", "output format: text or json")
	fs.StringVar(&c.dir, "dir", "", "work directory (default: a new temporary one, removed when all checks pass)")
	fs.BoolVar(&c.keep, "keep", false, "keep the work directory even when all checks pass")
	fs.Uint64Var(&c.seed, "seed", uint64(time.Now().UnixNano()), "seed of the random kill moments")
	fs.DurationVar(&c.killMin, "kill-min", 100*time.Millisecond, "earliest kill after the storm starts")
	fs.DurationVar(&c.killMax, "kill-max", 1500*time.Millisecond, "latest kill after the storm starts")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch {
	case c.bin == "":
		fmt.Fprintln(stderr, "crash: -bin is required: the memfs binary to test (scripts/crash builds it)")
		return 2
	case c.cycles < 1 || c.writers < 1:
		fmt.Fprintln(stderr, "crash: -k and -writers must be at least 1")
		return 2
	case c.format != "text" && c.format != "json":
		fmt.Fprintf(stderr, "crash: --format must be text or json, not %q\n", c.format)
		return 2
	case c.killMin <= 0 || c.killMax < c.killMin:
		fmt.Fprintln(stderr, "crash: need 0 < -kill-min <= -kill-max")
		return 2
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()

	h, err := newHarness(ctx, c, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "crash: %v\n", err)
		return 2
	}
	res, err := h.run(ctx)
	h.cleanup()
	if err != nil {
		fmt.Fprintf(stderr, "crash: %v (work directory kept: %s)\n", err, h.work)
		return 2
	}
	report(res, c.format, stdout)
	if res.Lost > 0 || res.LostBeforeRemount > 0 || res.IntegrityFailures > 0 || res.RemountFailures > 0 || res.ClientsLeftBlocked > 0 {
		fmt.Fprintf(stderr, "crash: FAILED: %d lost saves, %d missing right after a kill, %d integrity failures, %d remount failures, %d clients left blocked (work directory kept: %s)\n",
			res.Lost, res.LostBeforeRemount, res.IntegrityFailures, res.RemountFailures, res.ClientsLeftBlocked, h.work)
		return 1
	}
	if c.keep || c.dir != "" {
		fmt.Fprintf(stderr, "crash: work directory: %s\n", h.work)
	} else {
		os.RemoveAll(h.work)
	}
	return 0
}

// harness holds one run's files: the database, the mountpoint, the
// acknowledgement logs outside the mount and the daemons' log.
type harness struct {
	config
	work, db, mnt, ackDir string
	storeID, slug         string
	daemonLog             *os.File
	daemon                *daemon
	conn                  string // FUSE connection number of the current mount
	rng                   *rand.Rand
	stderr                io.Writer
}

func newHarness(ctx context.Context, c config, stderr io.Writer) (*harness, error) {
	h := &harness{config: c, stderr: stderr, rng: rand.New(rand.NewPCG(c.seed, c.seed>>1|1))}
	var err error
	if c.dir == "" {
		h.work, err = os.MkdirTemp("", "memfs-crash-")
	} else {
		h.work, err = filepath.Abs(c.dir)
		if err == nil {
			err = os.MkdirAll(h.work, 0o755)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("work directory: %w", err)
	}
	h.db = filepath.Join(h.work, "memfs.db")
	h.mnt = filepath.Join(h.work, "mnt")
	h.ackDir = filepath.Join(h.work, "acks")
	for _, d := range []string{h.mnt, h.ackDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if h.daemonLog, err = os.OpenFile(filepath.Join(h.work, "daemon.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err != nil {
		return nil, err
	}
	name := "crash"
	out, err := exec.CommandContext(ctx, c.bin, "--db", h.db, "store", "create", "--name", name).Output()
	if err != nil {
		return nil, fmt.Errorf("memfs store create: %w", exitDetail(err))
	}
	h.storeID = strings.TrimSpace(string(out))
	h.slug = slugify.Make(name)
	return h, nil
}

func exitDetail(err error) error {
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
	}
	return err
}

func (h *harness) ackPath(writer, cycle int) string {
	return filepath.Join(h.ackDir, fmt.Sprintf("c%03d-w%d.log", cycle, writer))
}

// run does the cycles. Each one storms the mounted store, kills the daemon
// with SIGKILL, mounts again on the same mountpoint (the daemon must
// recover the stale mount by itself, with the writers of the dead mount
// possibly still around) and checks the database.
func (h *harness) run(ctx context.Context) (*result, error) {
	res := &result{Cycles: h.cycles, Writers: h.writers}
	d, _, err := h.startDaemon(readyTimeout)
	if err != nil {
		return nil, fmt.Errorf("first mount: %w", err)
	}
	h.daemon = d
	var remounts []time.Duration
	for cycle := 1; cycle <= h.cycles; cycle++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("interrupted in cycle %d", cycle)
		}
		cycleStart := time.Now()
		c, err := h.cycle(cycle)
		if err != nil {
			return nil, fmt.Errorf("cycle %d: %w", cycle, err)
		}
		res.FailedSaves += c.failed
		res.LostBeforeRemount += len(c.lostBefore)
		for _, l := range c.lostBefore {
			res.addProblem(fmt.Sprintf("cycle %d, read right after the kill: %s", cycle, l))
		}
		if c.remountOK {
			remounts = append(remounts, c.remount)
		} else {
			res.RemountFailures++
			res.addProblem(fmt.Sprintf("cycle %d: memfs mount did not recover the stale mount within %v while %d writer(s) of the killed mount were still blocked in it", cycle, remountTimeout, c.stuck))
		}
		if c.stuck > 0 {
			res.HungKills++
		}
		if c.leftBlocked > 0 {
			res.ClientsLeftBlocked += c.leftBlocked
			res.addProblem(fmt.Sprintf("cycle %d: %d writer(s) stayed blocked in the dead mount after memfs mounted again: the old FUSE connection was not aborted", cycle, c.leftBlocked))
		}
		acks, err := readAcks(h.ackDir, fmt.Sprintf("c%03d-*.log", cycle))
		if err != nil {
			return nil, err
		}
		res.Acknowledged += len(acks)
		// The clocks of this process and the engine are the same clock;
		// the margin only guards against rounding of stored times.
		v, err := checkVersions(ctx, h.db, h.storeID, cycleStart.Add(-time.Second), acks)
		if err != nil {
			return nil, fmt.Errorf("cycle %d: check: %w", cycle, err)
		}
		res.add(v, fmt.Sprintf("cycle %d", cycle))
		if h.format == "text" {
			fmt.Fprintf(h.stderr, "cycle %d/%d: %d acknowledged, %d missing right after the kill, %d versions checked, %d lost, %d failures, remount %v, writers stuck in the dead mount: %d\n",
				cycle, h.cycles, len(acks), len(c.lostBefore), v.Versions, len(v.Lost), len(v.Failures), c.remount.Round(time.Millisecond), c.stuck)
		}
	}
	if err := h.finalCheckAndUnmount(); err != nil {
		return nil, err
	}
	// One last pass over the whole history: a later crash must not have
	// lost what an earlier cycle had made durable.
	acks, err := readAcks(h.ackDir, "c*.log")
	if err != nil {
		return nil, err
	}
	v, err := checkVersions(ctx, h.db, h.storeID, time.Time{}, acks)
	if err != nil {
		return nil, fmt.Errorf("final check: %w", err)
	}
	res.VersionsChecked = v.Versions
	res.add(verdict{Lost: v.Lost, Failures: v.Failures}, "final")
	res.Remounts = len(remounts)
	res.MedianRemountMS, res.MaxRemountMS = medianMax(remounts)
	return res, nil
}

// cycleResult is what one crash cycle saw.
type cycleResult struct {
	failed      int           // saves that failed (after the kill)
	stuck       int           // writers still blocked in the dead mount after SIGTERM
	leftBlocked int           // writers still blocked after the remount took over
	remount     time.Duration // start of the new memfs mount to ready
	remountOK   bool
	// lostBefore: acknowledged saves that were no version when the store
	// was read after the kill, before the remount.
	lostBefore []string
}

// cycle runs the writers for a random while, kills the daemon with
// SIGKILL, asks the writers to stop and mounts again. A writer blocked in
// a request the dead daemon had already read cannot even be killed until
// the FUSE connection is aborted, so it stays around during the remount,
// as an agent's process would; it is killed afterwards.
func (h *harness) cycle(cycle int) (cycleResult, error) {
	var c cycleResult
	start := time.Now()
	var procs []*writerProc
	defer func() {
		for _, p := range procs {
			p.kill()
		}
	}()
	for w := 1; w <= h.writers; w++ {
		p, err := h.startWriter(w, cycle)
		if err != nil {
			return c, err
		}
		procs = append(procs, p)
	}
	span := h.killMax - h.killMin
	time.Sleep(h.killMin + time.Duration(h.rng.Int64N(int64(span)+1)))
	old := h.daemon
	h.daemon = nil
	old.signalKill()
	for _, p := range procs {
		p.terminate()
	}
	for _, p := range procs {
		failed, exited, err := p.wait(writerGrace)
		if err != nil {
			return c, err
		}
		c.failed += failed
		if !exited {
			c.stuck++
		}
	}
	// Read the store before anything mounts it again, as the CLI would
	// right after the kill.
	acks, err := readAcks(h.ackDir, fmt.Sprintf("c%03d-*.log", cycle))
	if err != nil {
		return c, err
	}
	v, err := checkVersions(context.Background(), h.db, h.storeID, start.Add(-time.Second), acks)
	if err != nil {
		return c, fmt.Errorf("check before the remount: %w", err)
	}
	c.lostBefore = v.Lost
	oldConn := h.conn
	d, took, err := h.startDaemon(remountTimeout)
	if err == nil {
		h.daemon, c.remount, c.remountOK = d, took, true
		// Once memfs has taken the mountpoint over, writers blocked in the
		// dead mount must be released too (their requests fail), or the
		// agent's processes hang for good.
		for _, p := range procs {
			if _, exited, _ := p.wait(0); !exited {
				if _, exited, _ = p.wait(writerGrace); !exited {
					c.leftBlocked++
				}
			}
		}
	}
	if !c.remountOK || c.leftBlocked > 0 {
		// memfs failed (counted by the caller). Abort the dead connection
		// as it should have, so that the blocked writers and the killed
		// daemon can exit and the run can go on.
		fmt.Fprintf(h.stderr, "crash: cycle %d: remount ok %v, %d writer(s) left blocked: aborting the dead FUSE connection %s\n", cycle, c.remountOK, c.leftBlocked, oldConn)
		for _, p := range procs {
			p.cmd.Process.Signal(syscall.SIGKILL)
		}
		if err := abortConnection(oldConn); err != nil {
			fmt.Fprintf(h.stderr, "crash: %v\n", err)
		}
		if !c.remountOK {
			unix.Unmount(h.mnt, unix.MNT_DETACH)
		}
	}
	for _, p := range procs {
		p.kill()
	}
	procs = nil
	if !old.waitExit(stopTimeout) {
		return c, fmt.Errorf("the killed memfs mount did not exit within %v, even after its writers were killed", stopTimeout)
	}
	if !c.remountOK {
		if d, _, err = h.startDaemon(readyTimeout); err != nil {
			return c, fmt.Errorf("mount after aborting the dead connection: %w", err)
		}
		h.daemon = d
	}
	return c, nil
}

// finalCheckAndUnmount proves the last remount serves a save and a read,
// then unmounts cleanly with SIGTERM.
func (h *harness) finalCheckAndUnmount() error {
	d := h.daemon
	probe := filepath.Join(h.mnt, h.slug, "final.txt")
	want := payload(saveID{Writer: 0, Cycle: h.cycles + 1, Seq: 1})
	if err := writeFile(probe, want); err != nil {
		return fmt.Errorf("after the last remount: save %s: %w", probe, err)
	}
	got, err := os.ReadFile(probe)
	if err != nil || string(got) != want {
		return fmt.Errorf("after the last remount: read back %s: %d bytes, err %v", probe, len(got), err)
	}
	h.daemon = nil
	if err := d.stop(); err != nil {
		return fmt.Errorf("SIGTERM to the last mount: %w", err)
	}
	if isMounted(h.mnt) {
		return fmt.Errorf("%s is still mounted after the daemon exited on SIGTERM", h.mnt)
	}
	return nil
}

func (r *result) add(v verdict, where string) {
	r.Lost += len(v.Lost)
	r.IntegrityFailures += len(v.Failures)
	for _, p := range append(v.Lost, v.Failures...) {
		r.addProblem(where + ": " + p)
	}
}

func (r *result) addProblem(p string) {
	const maxProblems = 20
	if len(r.Problems) < maxProblems {
		r.Problems = append(r.Problems, p)
	}
}

// cleanup leaves nothing running or mounted, whatever happened.
func (h *harness) cleanup() {
	if h.daemon != nil {
		h.daemon.stop()
		h.daemon = nil
	}
	if h.mnt != "" && isMounted(h.mnt) {
		fmt.Fprintf(h.stderr, "crash: %s was left mounted: detaching it\n", h.mnt)
		unix.Unmount(h.mnt, unix.MNT_DETACH)
	}
	if h.daemonLog != nil {
		h.daemonLog.Close()
	}
}

func medianMax(ds []time.Duration) (median, maxv float64) {
	if len(ds) == 0 {
		return 0, 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return ms(m), ms(s[len(s)-1])
}

func report(r *result, format string, w io.Writer) {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(r)
		return
	}
	fmt.Fprintf(w, "cycles:              %d (%d writer processes each)\n", r.Cycles, r.Writers)
	fmt.Fprintf(w, "acknowledged saves:  %d\n", r.Acknowledged)
	fmt.Fprintf(w, "failed saves:        %d (refused after the kill; not acknowledged)\n", r.FailedSaves)
	fmt.Fprintf(w, "versions checked:    %d\n", r.VersionsChecked)
	fmt.Fprintf(w, "lost:                %d\n", r.Lost)
	fmt.Fprintf(w, "missing after kill:  %d (acknowledged, not a version when read before the remount)\n", r.LostBeforeRemount)
	fmt.Fprintf(w, "integrity failures:  %d\n", r.IntegrityFailures)
	fmt.Fprintf(w, "remount failures:    %d\n", r.RemountFailures)
	fmt.Fprintf(w, "hung kills:          %d (cycles where a writer stayed blocked in the killed mount)\n", r.HungKills)
	fmt.Fprintf(w, "clients left blocked: %d (writers still blocked after the remount)\n", r.ClientsLeftBlocked)
	fmt.Fprintf(w, "median remount:      %.1f ms (max %.1f ms, %d remounts)\n", r.MedianRemountMS, r.MaxRemountMS, r.Remounts)
	for _, p := range r.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
}
