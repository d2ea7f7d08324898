package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
)

// bench runs every part the config asks for and returns the report. Every
// mount it makes is unmounted before it returns, whatever happens.
func bench(ctx context.Context, cfg *config) (rep *report, err error) {
	work, err := os.MkdirTemp(cfg.workDir, "memfs-bench-")
	if err != nil {
		return nil, fmt.Errorf("make a work directory in %s: %w (pick another with --workdir)", cfg.workDir, err)
	}
	rep = newReport(cfg, work)
	var cleanups []func() error
	defer func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			if cerr := cleanups[i](); cerr != nil {
				slog.Error("cleanup failed", "err", cerr)
				err = errors.Join(err, cerr)
			}
		}
		if rerr := os.RemoveAll(work); rerr != nil {
			slog.Warn("cannot remove the work directory", "dir", work, "err", rerr)
		}
	}()
	tmpfs, unmountTmpfs, err := mountTmpfs(filepath.Join(work, "tmpfs"))
	if err != nil {
		return nil, err
	}
	cleanups = append(cleanups, unmountTmpfs)

	var targets []*target
	for _, name := range cfg.targets {
		t, err := openTarget(ctx, cfg, name, tmpfs, work)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", name, err)
		}
		cleanups = append(cleanups, t.stop)
		targets = append(targets, t)
	}
	if cfg.parts["phases"] {
		if err := runPhases(ctx, cfg, targets, rep); err != nil {
			return nil, err
		}
	}
	if cfg.parts["writers"] {
		slog.Info("measuring", "part", "writers")
		if err := measureWriters(ctx, cfg, targets, rep); err != nil {
			slog.Error("part failed", "part", "writers", "err", err)
			rep.Errors = append(rep.Errors, fmt.Sprintf("writers: %v", err))
		}
	}
	for _, part := range []struct {
		name string
		run  func(context.Context, *config, string, *report) error
	}{
		{"visibility", measureVisibility},
		{"log", measureLog},
		{"rss", measureRSS},
	} {
		if !cfg.parts[part.name] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("interrupted: %w", err)
		}
		slog.Info("measuring", "part", part.name)
		if err := part.run(ctx, cfg, work, rep); err != nil {
			// One part failing should not hide the others' figures.
			slog.Error("part failed", "part", part.name, "err", err)
			rep.Errors = append(rep.Errors, fmt.Sprintf("%s: %v", part.name, err))
		}
	}
	return rep, nil
}

func openTarget(ctx context.Context, cfg *config, name, tmpfs, work string) (*target, error) {
	switch name {
	case "memfs-pg":
		return memfsPostgresTarget(ctx, cfg.pg, work)
	case "tmpfs":
		return tmpfsTarget(tmpfs)
	case "loopback":
		return loopbackTarget(tmpfs, work, name, true)
	case "loopback-nopt":
		return loopbackTarget(tmpfs, work, name, false)
	case "memfs":
		return memfsTarget(ctx, work, "memfs", false)
	case "memfs-full":
		return memfsTarget(ctx, work, "memfs-full", true)
	}
	return nil, fmt.Errorf("unknown target %q", name)
}

// runPhases runs the workload on every target, round after round, rotating
// the order of targets each round so no target always runs first or last.
func runPhases(ctx context.Context, cfg *config, targets []*target, rep *report) error {
	if cfg.cpuProfile != "" {
		f, err := os.Create(cfg.cpuProfile)
		if err != nil {
			return fmt.Errorf("create the CPU profile %s: %w", cfg.cpuProfile, err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("start the CPU profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	for r := range cfg.rounds {
		for k := range targets {
			t := targets[(r+k)%len(targets)]
			dir := filepath.Join(t.dir, fmt.Sprintf("round%d", r))
			secs, ops, err := runWorkloadChild(ctx, dir, cfg.files, cfg.dirs)
			if err != nil {
				return fmt.Errorf("round %d on %s: %w", r+1, t.name, err)
			}
			slog.Info("round done", "round", r+1, "target", t.name, "create_s", fmt.Sprintf("%.3f", secs["create"]))
			rep.addRound(t.name, secs, ops)
			if t.bareCommits != nil {
				// Not fatal: the phases' figures stand without it.
				b, err := t.bareCommits(ctx)
				if err != nil {
					slog.Error("bare commits", "round", r+1, "err", err)
					rep.Errors = append(rep.Errors, fmt.Sprintf("bare commits, round %d: %v", r+1, err))
					continue
				}
				rep.bareCommitsPer = append(rep.bareCommitsPer, b.perSec)
				rep.BareCommitsFsync = b.fsync
			}
		}
	}
	return nil
}

type workloadResult struct {
	Seconds map[string]float64 `json:"seconds"`
	Ops     map[string]int     `json:"ops"`
}

// runWorkloadChild runs the workload in a child process, so that the client
// side of every syscall is another process than the FUSE servers, as it is
// for an agent.
func runWorkloadChild(ctx context.Context, dir string, files, dirs int) (map[string]float64, map[string]int, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("find the bench binary to re-run: %w", err)
	}
	cmd := exec.CommandContext(ctx, self, "workload", "--dir", dir, "--files", strconv.Itoa(files), "--dirs", strconv.Itoa(dirs))
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, nil, fmt.Errorf("workload process: %w", err)
	}
	var res workloadResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return nil, nil, fmt.Errorf("workload process printed %q, not its result: %w", out.String(), err)
	}
	return res.Seconds, res.Ops, nil
}

// workloadMain is the "workload" helper mode.
func workloadMain(args []string, stdout io.Writer) error {
	fl := flag.NewFlagSet("workload", flag.ContinueOnError)
	dir := fl.String("dir", "", "directory to run in (made if missing)")
	files := fl.Int("files", 2000, "files")
	dirs := fl.Int("dirs", 20, "directories")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("--dir is required")
	}
	secs, ops, err := newWorkload(*dir, *files, *dirs).run()
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(workloadResult{Seconds: secs, Ops: ops})
}
