package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for the bench binary: the bench
// re-executes itself (os.Executable) in its helper modes.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		if _, ok := helpers[os.Args[1]]; ok {
			os.Exit(run(os.Args[1:], os.Stdout))
		}
	}
	os.Exit(m.Run())
}

// TestBenchEndToEnd runs every part of the bench on a tiny workload,
// through the real memfs binary, and checks each figure was measured.
func TestBenchEndToEnd(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	bin := filepath.Join(t.TempDir(), "memfs")
	build := exec.Command("go", "build", "-o", bin, "github.com/memfs/memfs/cmd/memfs")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build memfs: %v\n%s", err, out)
	}
	cfg, err := parseFlags([]string{"--files", "40", "--dirs", "4", "--rounds", "1", "--memfs-bin", bin,
		"--log-versions", "300", "--rss-stores", "2", "--rss-memories", "30", "--vis-samples", "10", "--writers", "3", "--writers-for", "200ms", "--workdir", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := bench(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) > 0 {
		t.Fatalf("parts failed: %v", rep.Errors)
	}
	rep.finish()
	for _, p := range rep.Phases {
		for _, tg := range cfg.targets {
			if v := p.OpsPerSec[tg]; v == nil || *v <= 0 {
				t.Errorf("phase %s on %s: no ops/s", p.Phase, tg)
			}
		}
	}
	if len(rep.Writers) != len(writerVariants) {
		t.Errorf("writers: %d variants measured, want %d", len(rep.Writers), len(writerVariants))
	}
	for _, w := range rep.Writers {
		for _, tg := range cfg.targets {
			if tg == "loopback-nopt" {
				continue
			}
			if v := w.SavesPerSec[tg]; v == nil || *v <= 0 || w.Errors[tg] != 0 {
				t.Errorf("writers (%s files) on %s: %s saves/s, %d errors (%s)", w.Variant, tg, fmtRate(v), w.Errors[tg], w.FirstError[tg])
			}
		}
	}
	if v := rep.Visibility; v == nil || v.Samples != 10 || v.Timeouts != 0 {
		t.Errorf("visibility = %+v, want 10 samples and no timeout", v)
	}
	if l := rep.Log; l == nil || l.Versions != 300 || l.Lines != 301 {
		t.Errorf("log = %+v, want 300 versions in 301 lines (with the header)", l)
	}
	if s := rep.RSS; s == nil || s.FilesRead != 60 || s.MemfsPeakMiB <= 0 || s.LoopbackPeakMiB <= 0 {
		t.Errorf("rss = %+v, want 60 files read and both peaks measured", s)
	}
}

// fmtRate prints a measured rate, or that there is none.
func fmtRate(v *float64) string {
	if v == nil {
		return "no"
	}
	return fmt.Sprintf("%.0f", *v)
}
