package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/scripts/internal/stats"
)

// The concurrent-writers part: several writer processes saving at once into
// one target, each into files of its own ("own") or all into the same few
// files ("shared"). Every save has the shape of the overwrite phase:
// open(O_WRONLY|O_TRUNC), one write of fileSize bytes, close.

// writerVariants are the two layouts, in the order they run.
var writerVariants = []string{"own", "shared"}

// writerFiles is how many files each writer owns in the "own" variant, and
// how many files all writers share in the "shared" one.
const writerFiles = 50

// maxWriterErrors stops a writer whose saves keep failing: the first error
// says what is wrong, a million more would only spin.
const maxWriterErrors = 100

// writersSaveShape says what one save is, for the report.
const writersSaveShape = "open(O_WRONLY|O_TRUNC) + one 2,048-byte write + close, as in the overwrite phase"

// writersTargets are the targets the concurrent writers run on: every
// workload target but loopback-nopt, whose writes differ from the
// loopback's only in the data path, to keep the full run within its time
// budget.
func writersTargets(targets []*target) []*target {
	var out []*target
	for _, t := range targets {
		if t.name != "loopback-nopt" {
			out = append(out, t)
		}
	}
	return out
}

// writerReport is what one writer process prints when it is done.
type writerReport struct {
	Saves      int     `json:"saves"`
	Errors     int     `json:"errors"`
	FirstError string  `json:"first_error,omitempty"`
	Seconds    float64 `json:"seconds"`
	// Last is the first line of the last content this writer saved in each
	// file it wrote, by path relative to the round's directory.
	Last map[string]string `json:"last"`
}

// writersRound is one run of the writers on one target.
type writersRound struct {
	SavesPerSec float64
	Saves       int
	// Versions is how many versions the store committed meanwhile, and
	// Merged how many overlapping saves of a shared file were committed by
	// another writer's close (memfs targets only).
	Versions   int
	Merged     int
	Errors     int
	FirstError string
}

// measureWriters runs the writers on every target, round after round and
// variant after variant, rotating the order of the targets.
func measureWriters(ctx context.Context, cfg *config, targets []*target, rep *report) error {
	targets = writersTargets(targets)
	for r := range cfg.rounds {
		for _, variant := range writerVariants {
			for k := range targets {
				t := targets[(r+k)%len(targets)]
				dir := filepath.Join(t.dir, fmt.Sprintf("writers-%s-%d", variant, r))
				res, err := runWriters(ctx, dir, variant, cfg.writers, cfg.writersFor, t.versionCount)
				if err != nil {
					return fmt.Errorf("round %d of %d writers (%s files) on %s: %w", r+1, cfg.writers, variant, t.name, err)
				}
				slog.Info("writers done", "round", r+1, "variant", variant, "target", t.name,
					"saves_per_s", fmt.Sprintf("%.0f", res.SavesPerSec), "errors", res.Errors)
				rep.addWritersRound(variant, t.name, res)
			}
		}
	}
	return nil
}

// runWriters starts n writer processes on dir, lets them prepare their
// files, starts them all at once, and once they are done has another
// process read every file back to check that each holds a writer's last
// save. With versionCount (a memfs target), it also checks that the store
// committed one version per save.
func runWriters(ctx context.Context, dir, variant string, n int, d time.Duration, versionCount func(context.Context) (int, error)) (*writersRound, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the bench binary to re-run: %w", err)
	}
	// Closing goW is the starting signal: every writer waits for EOF on
	// its standard input, the read end of this one pipe.
	goR, goW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer goW.Close()
	type proc struct {
		cmd *exec.Cmd
		out *bufio.Reader
	}
	var procs []proc
	defer func() {
		for _, p := range procs {
			if p.cmd.ProcessState == nil {
				_ = p.cmd.Process.Kill()
				_ = p.cmd.Wait()
			}
		}
	}()
	for id := range n {
		cmd := exec.CommandContext(ctx, self, "writer", "--dir", dir, "--variant", variant,
			"--id", strconv.Itoa(id), "--writers", strconv.Itoa(n), "--for", d.String())
		cmd.Stdin = goR
		cmd.Stderr = os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			goR.Close()
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			goR.Close()
			return nil, fmt.Errorf("start writer %d: %w", id, err)
		}
		procs = append(procs, proc{cmd, bufio.NewReader(stdout)})
	}
	goR.Close()
	for id, p := range procs {
		line, err := p.out.ReadString('\n')
		if err != nil || strings.TrimSpace(line) != "ready" {
			return nil, fmt.Errorf("writer %d did not get ready (it said %q): %w", id, line, errors.Join(err, p.cmd.Wait()))
		}
	}
	var versions0 int
	if versionCount != nil {
		if versions0, err = versionCount(ctx); err != nil {
			return nil, err
		}
	}
	goW.Close()
	res := &writersRound{}
	last := map[string]map[string]bool{} // path → the last contents the writers saved there
	for id, p := range procs {
		out, rerr := io.ReadAll(p.out)
		if err := errors.Join(rerr, p.cmd.Wait()); err != nil {
			return nil, fmt.Errorf("writer %d: %w", id, err)
		}
		var wr writerReport
		if err := json.Unmarshal(out, &wr); err != nil {
			return nil, fmt.Errorf("writer %d printed %q, not its report: %w", id, out, err)
		}
		res.Saves += wr.Saves
		res.Errors += wr.Errors
		if res.FirstError == "" {
			res.FirstError = wr.FirstError
		}
		if wr.Seconds > 0 {
			res.SavesPerSec += float64(wr.Saves) / wr.Seconds
		}
		for path, head := range wr.Last {
			if last[path] == nil {
				last[path] = map[string]bool{}
			}
			last[path][head] = true
		}
	}
	if versionCount != nil {
		versions1, err := versionCount(ctx)
		if err != nil {
			return nil, err
		}
		// Every timed save is content no version had.
		// In memfs the handles of one file share its content, so when two
		// writers' saves of a shared file overlap, the first close commits
		// what the file then holds (the later write) and the second has
		// nothing left to commit: as on any file system, the earlier write
		// was replaced before it was closed. Such saves are merged, not
		// lost; a save of a file only one writer writes never is.
		res.Versions = versions1 - versions0
		diff := res.Versions - res.Saves
		if variant == "shared" && diff < 0 {
			res.Merged, diff = -diff, 0
		}
		if diff != 0 {
			res.Errors += max(diff, -diff, 1)
			if res.FirstError == "" {
				res.FirstError = fmt.Sprintf("the writers saved %d times but the store has %d new versions: not one version per save", res.Saves, res.Versions)
			}
		}
	}
	heads, err := readHeads(ctx, dir)
	if err != nil {
		return nil, err
	}
	// Lost saves count as errors, so that a target dropping saves cannot
	// look fast.
	lost, first := lostSaves(last, heads)
	res.Errors += lost
	if res.FirstError == "" {
		res.FirstError = first
	}
	return res, nil
}

// lostSaves counts the files that do not hold the last save of one of the
// writers that wrote them: last maps each path to those last saves' first
// lines, heads to the first line it holds. It also describes the first.
func lostSaves(last map[string]map[string]bool, heads map[string]string) (int, string) {
	n, first := 0, ""
	for _, path := range slices.Sorted(maps.Keys(last)) {
		want := last[path]
		got, ok := heads[path]
		if ok && want[got] {
			continue
		}
		n++
		if first == "" {
			var ws []string
			for _, w := range slices.Sorted(maps.Keys(want)) {
				ws = append(ws, strconv.Quote(w))
			}
			if !ok {
				got = "nothing (the file is gone)"
			} else {
				got = strconv.Quote(got)
			}
			first = fmt.Sprintf("%s holds %s after the writers stopped, not the last save of a writer that wrote it (%s): a save was lost", path, got, strings.Join(ws, " or "))
		}
	}
	return n, first
}

// writerMain is the "writer" helper mode: one writer process. It creates
// its files, says "ready" on stdout, waits for EOF on stdin, saves for the
// given duration and prints its writerReport.
func writerMain(args []string, stdout io.Writer) error {
	fl := flag.NewFlagSet("writer", flag.ContinueOnError)
	root := fl.String("dir", "", "the round's directory")
	variant := fl.String("variant", "own", "own: files of this writer's own; shared: the files every writer writes")
	id := fl.Int("id", 0, "this writer's number, from 0")
	writers := fl.Int("writers", 8, "how many writers run")
	d := fl.Duration("for", 2*time.Second, "how long to save")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *root == "" || *id < 0 || *id >= *writers || (*variant != "own" && *variant != "shared") {
		return fmt.Errorf("need --dir, --variant own or shared, and 0 <= --id < --writers")
	}
	sub := "shared"
	if *variant == "own" {
		sub = fmt.Sprintf("w%02d", *id)
	}
	if err := os.MkdirAll(filepath.Join(*root, sub), 0o755); err != nil {
		return err
	}
	rel := func(i int) string { return fmt.Sprintf("%s/f%03d.md", sub, i) }
	wr := writerReport{Last: map[string]string{}}
	buf := make([]byte, fileSize)
	save := func(i int, head string) error {
		p := rel(i)
		if err := writeFile(filepath.Join(*root, p), unix.O_TRUNC, writerContent(buf, head)); err != nil {
			return err
		}
		wr.Last[p] = head
		return nil
	}
	// Untimed: in the shared variant each writer creates its share of the
	// files, so that all exist before any writer starts. Each is written
	// under a temporary name and renamed into place, which publishes it at
	// once in memfs, so that no publication of a new file falls within the
	// timed saves.
	for i := range writerFiles {
		if *variant == "own" || i%*writers == *id {
			p := rel(i)
			tmp := filepath.Join(*root, sub, fmt.Sprintf(".f%03d.md.tmp", i))
			head := fmt.Sprintf("writer %d created", *id)
			if err := writeFile(tmp, unix.O_CREAT|unix.O_EXCL, writerContent(buf, head)); err != nil {
				return err
			}
			if err := unix.Rename(tmp, filepath.Join(*root, p)); err != nil {
				return fmt.Errorf("rename %s into place: %w", tmp, err)
			}
			wr.Last[p] = head
		}
	}
	if _, err := fmt.Fprintln(stdout, "ready"); err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		return fmt.Errorf("wait for the start: %w", err)
	}
	// Writers of shared files start at different files, so that they do
	// not all queue on the same one.
	next := 0
	if *variant == "shared" {
		next = *id * writerFiles / *writers
	}
	start := time.Now()
	for time.Since(start) < *d && wr.Errors < maxWriterErrors {
		i := next % writerFiles
		next++
		if err := save(i, fmt.Sprintf("writer %d save %d", *id, wr.Saves+wr.Errors)); err != nil {
			wr.Errors++
			if wr.FirstError == "" {
				wr.FirstError = err.Error()
			}
			continue
		}
		wr.Saves++
	}
	wr.Seconds = time.Since(start).Seconds()
	return json.NewEncoder(stdout).Encode(wr)
}

// writerFiller pads every writer's content to fileSize bytes of ASCII text.
var writerFiller = bytes.Repeat([]byte("memfs concurrent writers benchmark text\n"), fileSize/40+1)

// writerContent fills buf with head on the first line and filler after it.
func writerContent(buf []byte, head string) []byte {
	n := copy(buf, head)
	n += copy(buf[n:], "\n")
	copy(buf[n:], writerFiller)
	return buf
}

// readHeads reads every file below dir in another process and returns each
// one's first line, by path relative to dir.
func readHeads(ctx context.Context, dir string) (map[string]string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the bench binary to re-run: %w", err)
	}
	cmd := exec.CommandContext(ctx, self, "heads", dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("read back the writers' files in %s: %w", dir, err)
	}
	heads := map[string]string{}
	if err := json.Unmarshal(out, &heads); err != nil {
		return nil, fmt.Errorf("the read-back of %s printed %q: %w", dir, out, err)
	}
	return heads, nil
}

// headsMain is the "heads" helper mode: print the first line of every
// file below a directory as JSON.
func headsMain(args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: heads DIR")
	}
	dir := args[0]
	heads := map[string]string{}
	buf := make([]byte, 2*fileSize)
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		got, err := readFile(path, buf)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		head, _, _ := bytes.Cut(got, []byte("\n"))
		if len(got) != fileSize {
			// No save has this shape: the bench counts it as a lost save.
			heads[filepath.ToSlash(rel)] = fmt.Sprintf("%d bytes, not %d, starting %q", len(got), fileSize, head)
			return nil
		}
		heads[filepath.ToSlash(rel)] = string(head)
		return nil
	})
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(heads)
}

// writersResult is one variant's figures over the rounds.
type writersResult struct {
	Variant   string  `json:"variant"` // own or shared
	Writers   int     `json:"writers"`
	Files     int     `json:"files"` // per writer (own) or in all (shared)
	Seconds   float64 `json:"seconds_per_round"`
	SaveShape string  `json:"save"`
	// SavesPerSec is the median over the rounds of the writers' summed
	// saves/s.
	SavesPerSec map[string]*float64 `json:"median_saves_per_sec"`
	// Errors counts the failed saves, the lost ones (a file not holding a
	// writer's last save) and, on memfs, the saves without a version of
	// their own, over every round.
	Errors map[string]int `json:"errors"`
	// Merged counts, on memfs, the saves of a shared file whose content
	// another writer's overlapping save replaced before the close, so that
	// one version holds both (over every round).
	Merged          map[string]int    `json:"merged_saves,omitempty"`
	FirstError      map[string]string `json:"first_error,omitempty"`
	MemfsVsLoopback *float64          `json:"memfs_vs_loopback"`
	MemfsVsTmpfs    *float64          `json:"memfs_vs_tmpfs"`
	FullVsLoopback  *float64          `json:"memfs_full_vs_loopback"`
	PgVsLoopback    *float64          `json:"memfs_pg_vs_loopback,omitempty"`
}

func (r *report) addWritersRound(variant, target string, res *writersRound) {
	if r.writersPer[variant] == nil {
		r.writersPer[variant] = map[string][]*writersRound{}
	}
	r.writersPer[variant][target] = append(r.writersPer[variant][target], res)
}

func (r *report) finishWriters() {
	r.Writers = nil
	for _, v := range writerVariants {
		per := r.writersPer[v]
		if len(per) == 0 {
			continue
		}
		wr := writersResult{Variant: v, Writers: r.writers, Files: writerFiles, Seconds: r.writersFor.Seconds(), SaveShape: writersSaveShape,
			SavesPerSec: map[string]*float64{}, Errors: map[string]int{}, FirstError: map[string]string{}, Merged: map[string]int{}}
		med := map[string]float64{}
		for _, t := range r.targets {
			rounds, ok := per[t]
			if !ok {
				continue
			}
			var rates []float64
			for _, rd := range rounds {
				rates = append(rates, rd.SavesPerSec)
				wr.Errors[t] += rd.Errors
				wr.Merged[t] += rd.Merged
				if rd.FirstError != "" && wr.FirstError[t] == "" {
					wr.FirstError[t] = rd.FirstError
				}
			}
			med[t] = stats.Median(rates)
			wr.SavesPerSec[t] = num(med[t])
		}
		get := func(t string) float64 {
			if v, ok := med[t]; ok {
				return v
			}
			return math.NaN()
		}
		wr.MemfsVsLoopback = num(ratio(get("memfs"), get("loopback")))
		wr.MemfsVsTmpfs = num(ratio(get("memfs"), get("tmpfs")))
		wr.FullVsLoopback = num(ratio(get("memfs-full"), get("loopback")))
		wr.PgVsLoopback = num(ratio(get("memfs-pg"), get("loopback")))
		r.Writers = append(r.Writers, wr)
	}
}
