package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/memfs/memfs/scripts/internal/stats"
	"github.com/memfs/memfs/versions"
)

// versionsPerMemory is how many versions each memory of the log store gets:
// a created version and versionsPerMemory-1 modified ones.
const versionsPerMemory = 100

// logRuns is how many times `memfs log` is timed.
const logRuns = 3

type logResult struct {
	Versions            int     `json:"versions"`
	Runs                int     `json:"runs"`
	Lines               int     `json:"lines"`
	LogSeconds          float64 `json:"log_seconds_median"`
	StartupSeconds      float64 `json:"store_get_seconds_median"`
	BuildVersionsPerSec float64 `json:"build_versions_per_sec"`
}

// measureLog builds a store with cfg.logVersions versions through the
// versions API and times the memfs binary's `log` on it.
func measureLog(ctx context.Context, cfg *config, work string, rep *report) error {
	if cfg.memfsBin == "" {
		return fmt.Errorf("no memfs binary: pass --memfs-bin (scripts/bench builds one)")
	}
	dbPath := filepath.Join(work, "log.db")
	db, err := versions.Open(dbPath, versions.Options{})
	if err != nil {
		return fmt.Errorf("open %s: %w", dbPath, err)
	}
	st, err := db.CreateStore(ctx, versions.StoreParams{Name: "log bench"})
	if err != nil {
		db.Close()
		return err
	}
	start := time.Now()
	n, err := buildHistory(ctx, db, st.ID, cfg.logVersions)
	build := time.Since(start)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("build a store with %d versions: %w", cfg.logVersions, err)
	}
	res := &logResult{Versions: n, Runs: logRuns, BuildVersionsPerSec: float64(n) / build.Seconds()}
	var logSecs, getSecs []float64
	for range logRuns {
		secs, out, err := timeCommand(ctx, cfg.memfsBin, "--db", dbPath, "log", st.ID)
		if err != nil {
			return err
		}
		logSecs = append(logSecs, secs)
		res.Lines = bytes.Count(out, []byte("\n"))
		if secs, _, err = timeCommand(ctx, cfg.memfsBin, "--db", dbPath, "store", "get", st.ID); err != nil {
			return err
		}
		getSecs = append(getSecs, secs)
	}
	res.LogSeconds, res.StartupSeconds = stats.Median(logSecs), stats.Median(getSecs)
	rep.Log = res
	return nil
}

// buildHistory writes total versions: memories created, then updated until
// each has versionsPerMemory versions, by a few writers at once (the engine
// is safe for concurrent use, and that is how it is fastest).
func buildHistory(ctx context.Context, db *versions.DB, storeID string, total int) (int, error) {
	memories := (total + versionsPerMemory - 1) / versionsPerMemory
	const writers = 4
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		count int
		first error
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := w; m < memories; m += writers {
				path := fmt.Sprintf("/log/d%02d/m%05d.md", m%20, m)
				n, err := writeLineage(ctx, db, storeID, path, min(versionsPerMemory, total-m*versionsPerMemory))
				mu.Lock()
				count += n
				if err != nil && first == nil {
					first = err
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	return count, first
}

func writeLineage(ctx context.Context, db *versions.DB, storeID, path string, n int) (int, error) {
	by := versions.UserActor("bench")
	mem, err := db.CreateMemory(ctx, storeID, path, fmt.Sprintf("%s version 0\n", path), by)
	if err != nil {
		return 0, fmt.Errorf("create %s: %w", path, err)
	}
	for v := 1; v < n; v++ {
		content := fmt.Sprintf("%s version %d\n", path, v)
		if _, err := db.UpdateMemory(ctx, storeID, mem.ID, versions.MemoryUpdate{Content: &content}, by); err != nil {
			return v, fmt.Errorf("update %s: %w", path, err)
		}
	}
	return n, nil
}

// timeCommand runs a command and returns its wall time and stdout.
func timeCommand(ctx context.Context, name string, args ...string) (float64, []byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	secs := time.Since(start).Seconds()
	if err != nil {
		return 0, nil, fmt.Errorf("%s %v: %w: %s", name, args, err, bytes.TrimSpace(errOut.Bytes()))
	}
	if errOut.Len() > 0 {
		fmt.Fprintf(os.Stderr, "%s", errOut.Bytes())
	}
	return secs, out.Bytes(), nil
}
