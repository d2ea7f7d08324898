// Command timetravelbenchcmd measures a store as of any moment
// (scripts/timetravel-bench) on a SQLite store of 2,000 memories and
// 100,000 versions: ls -lR of the store as of a checkpoint that every
// memory changed after against ls -lR of the live store (each on a fresh
// mount, taking turns), then restore --as-of over 2,000 changed memories,
// undo of a session with 500 changes and a fork without history, each
// through the memfs binary.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/memfs/memfs/versions"
)

var bin string

func main() {
	var runs int
	flag.StringVar(&bin, "memfs-bin", "", "the memfs binary")
	flag.IntVar(&runs, "runs", 5, "runs of each listing")
	flag.Parse()
	work, err := os.MkdirTemp("", "memfs-timetravel-bench-")
	check(err)
	defer os.RemoveAll(work)
	dbPath := filepath.Join(work, "memfs.db")
	start := time.Now()
	ids := populate(dbPath)
	fmt.Printf("fixture: 2000 memories, 100000 versions, checkpoint 'before' with every memory changed after it (%.0fs)\n", time.Since(start).Seconds())

	var live, asof []float64
	for i := range runs {
		// Taking turns, so that the machine's load falls on both alike.
		if i%2 == 0 {
			live = append(live, listing(work, dbPath, "bench"))
		}
		asof = append(asof, listing(work, dbPath, ".history/bench@before"))
		if i%2 == 1 {
			live = append(live, listing(work, dbPath, "bench"))
		}
	}
	l, a := median(live), median(asof)
	fmt.Printf("ls -lR live store:        median %.0f ms (runs %v)\n", l, rounded(live))
	fmt.Printf("ls -lR as of 'before':    median %.0f ms (runs %v)\n", a, rounded(asof))
	fmt.Printf("as-of / live:             %.2fx (target <= 2x: %s)\n", a/l, met(a <= 2*l))

	ms := timed("--db", dbPath, "restore", "bench", "--as-of", "before", "--yes")
	fmt.Printf("restore --as-of, 2000 changed memories: %.0f ms (target <= 2000 ms: %s)\n", ms, met(ms <= 2000))

	session := sessionWrites(dbPath, ids, 500)
	ms = timed("--db", dbPath, "undo", "bench", "--session", session, "--yes")
	fmt.Printf("undo of a session with 500 changes:     %.0f ms (target <= 1000 ms: %s)\n", ms, met(ms <= 1000))

	ms = timed("--db", dbPath, "store", "fork", "bench", "--name", "fork")
	fmt.Printf("store fork without history:             %.0f ms (target <= 1000 ms: %s)\n", ms, met(ms <= 1000))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "timetravelbenchcmd:", err)
		os.Exit(1)
	}
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// populate writes the store: 2,000 memories over 20 directories, 96,000
// more saves, the checkpoint, then one more save of each memory.
func populate(path string) []string {
	ctx := context.Background()
	db, err := versions.Open(path, versions.Options{})
	check(err)
	defer db.Close()
	by := versions.UserActor("bench")
	s, err := db.CreateStore(ctx, versions.StoreParams{Name: "bench", MaxHistoryBytes: -1})
	check(err)
	ids := make([]string, 2000)
	for i := range ids {
		m, err := db.CreateMemory(ctx, s.ID, fmt.Sprintf("/d%02d/f%04d.md", i%20, i), fmt.Sprintf("memory %d\n", i), by)
		check(err)
		ids[i] = m.ID
	}
	saves := func(from, to int) {
		// Several writers at once: the saves share commits.
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := from + w; n < to; n += 8 {
					c := fmt.Sprintf("memory %d, save %d\nsome notes that make it a realistic size\n", n%2000, n)
					_, err := db.UpdateMemory(ctx, s.ID, ids[n%2000], versions.MemoryUpdate{Content: &c}, by)
					check(err)
				}
			}()
		}
		wg.Wait()
	}
	saves(2000, 98000)
	_, err = db.CreateCheckpoint(ctx, s.ID, versions.CheckpointOptions{Name: "before"}, by)
	check(err)
	saves(98000, 100000)
	return ids
}

// sessionWrites makes a session that changes n memories and ends.
func sessionWrites(path string, ids []string, n int) string {
	ctx := context.Background()
	db, err := versions.Open(path, versions.Options{})
	check(err)
	defer db.Close()
	st, err := db.ResolveStore(ctx, "bench")
	check(err)
	sess, err := db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: st.ID}})
	check(err)
	for i := range n {
		c := fmt.Sprintf("the session's change %d\n", i)
		_, err := db.UpdateMemory(ctx, st.ID, ids[i*3], versions.MemoryUpdate{Content: &c}, versions.SessionActor(sess.ID))
		check(err)
	}
	_, err = db.EndSession(ctx, sess.ID)
	check(err)
	return sess.ID
}

// listing mounts the store afresh and times ls -lR of dir below the mount.
func listing(work, dbPath, dir string) float64 {
	mnt := filepath.Join(work, "mnt")
	check(os.MkdirAll(mnt, 0o755))
	rd, w, err := os.Pipe()
	check(err)
	cmd := exec.Command(bin, "--db", dbPath, "mount", "--store", "bench", "--checkpoint=false", "--ready-fd", "3", mnt)
	cmd.ExtraFiles = []*os.File{w}
	check(cmd.Start())
	w.Close()
	line, err := bufio.NewReader(rd).ReadString('\n')
	rd.Close()
	if err != nil || !strings.Contains(line, "ready") {
		cmd.Process.Kill()
		check(fmt.Errorf("memfs mount never said ready (%q, %v)", line, err))
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		syscall.Unmount(mnt, syscall.MNT_DETACH)
	}()
	start := time.Now()
	out, err := exec.Command("ls", "-lR", filepath.Join(mnt, dir)).Output()
	check(err)
	took := ms(time.Since(start))
	if n := strings.Count(string(out), ".md\n"); n != 2000 {
		check(fmt.Errorf("ls -lR %s listed %d files, want 2000", dir, n))
	}
	return took
}

// timed runs memfs with args and returns its wall time.
func timed(args ...string) float64 {
	start := time.Now()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		check(fmt.Errorf("memfs %s: %v\n%s", strings.Join(args, " "), err, out))
	}
	return ms(time.Since(start))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func rounded(xs []float64) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x + 0.5)
	}
	return out
}
