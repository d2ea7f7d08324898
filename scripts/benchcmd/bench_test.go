package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMakeContent(t *testing.T) {
	seen := map[string]bool{}
	for g := range 3 {
		for i := range 300 {
			b := makeContent(g, i)
			if got, want := len(b), fileSize; got != want {
				t.Fatalf("makeContent(%d, %d): %d bytes, want %d", g, i, got, want)
			}
			if !utf8.Valid(b) {
				t.Fatalf("makeContent(%d, %d) is not valid UTF-8", g, i)
			}
			if seen[string(b)] {
				t.Fatalf("makeContent(%d, %d) repeats an earlier content", g, i)
			}
			seen[string(b)] = true
		}
	}
}

func TestRatio(t *testing.T) {
	if r := ratio(1, 0); r == r {
		t.Errorf("ratio over zero = %v, want NaN", r)
	}
}

// runWorkload runs the workload in this process on dir and checks every
// phase did its operations and left nothing behind.
func runWorkload(t *testing.T, dir string) {
	t.Helper()
	root := filepath.Join(dir, "w")
	secs, ops, err := newWorkload(root, 60, 6).run()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range phaseNames {
		if secs[p] <= 0 || ops[p] <= 0 {
			t.Errorf("phase %s: %v s for %d ops, want both positive", p, secs[p], ops[p])
		}
	}
	left, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("workload left %d entries in %s, want none", len(left), root)
	}
}

func TestWorkloadOnDisk(t *testing.T) { runWorkload(t, t.TempDir()) }

func TestWorkloadNoticesLostSave(t *testing.T) {
	w := newWorkload(filepath.Join(t.TempDir(), "w"), 10, 2)
	if err := os.Mkdir(w.root, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := w.create(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.overwrite(); err != nil {
		t.Fatal(err)
	}
	// A file system that kept the old content must fail the check.
	if err := os.WriteFile(w.name(3), w.content[0][3], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := w.check(1); err == nil {
		t.Fatal("check passed although file 3 holds the content of an earlier generation")
	}
}

func TestWorkloadOnLoopback(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	for _, passthrough := range []bool{true, false} {
		t.Run(fmt.Sprintf("passthrough=%v", passthrough), func(t *testing.T) {
			dir := t.TempDir()
			mnt := filepath.Join(dir, "mnt")
			srv, err := mountLoopback(filepath.Join(dir, "backing"), mnt, passthrough)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := srv.Unmount(); err != nil {
					t.Errorf("unmount %s: %v", mnt, err)
				}
			})
			runWorkload(t, mnt)
		})
	}
}

func TestParseFlags(t *testing.T) {
	c, err := parseFlags([]string{"--quick"})
	if err != nil {
		t.Fatal(err)
	}
	if c.files != 200 || c.rounds != 2 || c.logVersions != 5000 {
		t.Errorf("--quick: files %d rounds %d log versions %d, want 200, 2, 5000", c.files, c.rounds, c.logVersions)
	}
	for _, bad := range [][]string{{"--format", "xml"}, {"--targets", "ext4"}, {"--only", "everything"}, {"extra"}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("parseFlags(%q) accepted it", bad)
		}
	}
}

func TestWorkloadOnMemfs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	tg, err := memfsTarget(context.Background(), t.TempDir(), "memfs", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tg.stop(); err != nil {
			t.Errorf("stop memfs: %v", err)
		}
	})
	runWorkload(t, tg.dir)
}

func TestReportRatios(t *testing.T) {
	cfg, err := parseFlags([]string{"--targets", "loopback,memfs"})
	if err != nil {
		t.Fatal(err)
	}
	rep := newReport(cfg, t.TempDir())
	ops := map[string]int{}
	loop, mem := map[string]float64{}, map[string]float64{}
	for _, p := range phaseNames {
		ops[p] = 1000
		loop[p] = 1.0 // 1,000 ops/s
		mem[p] = 2.0  // 500 ops/s: 0.5 of the loopback
	}
	mem["stat"] = 0.5 // 2,000 ops/s: twice the loopback
	for range 3 {
		rep.addRound("loopback", loop, ops)
		rep.addRound("memfs", mem, ops)
	}
	rep.finish()
	got := map[string]phaseResult{}
	for _, p := range rep.Phases {
		got[p.Phase] = p
	}
	if r := got["create"].MemfsVsLoopback; r == nil || *r != 0.5 {
		t.Errorf("create memfs/loopback = %v, want 0.5", r)
	}
	if m := got["create"].Met; m == nil || *m {
		t.Errorf("create met = %v, want false below the 0.6 floor", m)
	}
	if m := got["stat"].Met; m == nil || !*m {
		t.Errorf("stat met = %v, want true at 2.0 against a 1.5 floor", m)
	}
	if got["create"].MemfsVsTmpfs != nil {
		t.Errorf("memfs/tmpfs = %v without a tmpfs target, want nil", *got["create"].MemfsVsTmpfs)
	}
	var text, js strings.Builder
	if err := writeText(&text, rep); err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "0.50") || !strings.Contains(js.String(), `"memfs_vs_loopback": 0.5`) {
		t.Errorf("the ratio 0.5 is missing from the report:\n%s\n%s", text.String(), js.String())
	}
}
