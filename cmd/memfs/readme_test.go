package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The README's quick start, run as written, twice (the README says it can
// be run again): its first shell block under "## Quick start", with HOME a
// fresh directory and memfs on PATH.
func TestREADMEQuickStart(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the quick start mounts as root")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := quickStart(string(readme))
	if !strings.Contains(block, "memfs mount") || !strings.Contains(block, "memfs restore") {
		t.Fatalf("no quick start block with a mount and a restore in README.md:\n%s", block)
	}
	home := t.TempDir()
	t.Cleanup(func() { unmountAll(t, filepath.Join(home, "memfs-tour", "mnt")) })
	for run := 1; run <= 2; run++ {
		runQuickStart(t, home, block, run)
	}
}

func runQuickStart(t *testing.T, home, block string, run int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Whatever way the block ends (a failing command stops it under -e),
	// the mount it started in the background is stopped with it.
	script := "trap 'kill $(jobs -p) 2>/dev/null || true; wait' EXIT\n" + block
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HOME="+home, "PATH="+filepath.Dir(memfsBin)+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run %d of the quick start failed: %v\n%s", run, err, out)
	}
	wants := []string{"/todo.md", "-buy milk", "+buy oat milk", "mem_", "\nbuy milk\n"}
	if run == 1 {
		wants = append(wants, "memstore_") // the store is made once
	}
	for _, want := range wants {
		if !strings.Contains(string(out), want) {
			t.Errorf("run %d of the quick start: its output lacks %q:\n%s", run, want, out)
		}
	}
}

// The README is a user's page: at most 250 lines, no development log
// (commit hashes, dates, targets met or missed), and every file it links to
// exists.
func TestREADMEShape(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	if n := strings.Count(text, "\n"); n > 250 {
		t.Errorf("README.md has %d lines; keep it under 250 and move details to docs/", n)
	}
	for _, re := range []string{`\b[0-9a-f]{7,40}\b`, `\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b`, `(?i)\b(round|target met|UTC)\b`, `\| (yes|no) \|`} {
		if m := regexp.MustCompile(re).FindString(text); m != "" {
			t.Errorf("README.md reads like a development log (%q matches %s): that belongs in docs/performance.md or a commit message", m, re)
		}
	}
	for _, m := range regexp.MustCompile(`\]\(([^)#:]+)\)`).FindAllStringSubmatch(text, -1) {
		if _, err := os.Stat(filepath.Join("..", "..", m[1])); err != nil {
			t.Errorf("README.md links to %s: %v", m[1], err)
		}
	}
}

// quickStart is the first ```sh block after the "## Quick start" heading.
func quickStart(readme string) string {
	_, rest, ok := strings.Cut(readme, "\n## Quick start\n")
	if !ok {
		return ""
	}
	_, rest, ok = strings.Cut(rest, "```sh\n")
	if !ok {
		return ""
	}
	block, _, _ := strings.Cut(rest, "```")
	return block
}
