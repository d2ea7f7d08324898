package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The README's quick start, run as written: its first shell block under
// "## Quick start", with HOME a fresh directory and memfs on PATH.
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
		t.Fatalf("the quick start failed: %v\n%s", err, out)
	}
	for _, want := range []string{"memstore_", "/todo.md", "-buy milk", "+buy oat milk", "mem_", "\nbuy milk\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the quick start's output lacks %q:\n%s", want, out)
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
