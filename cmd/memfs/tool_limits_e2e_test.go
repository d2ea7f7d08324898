package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestToolLongLineIsBounded: a 200 MB command line is refused with the
// tool's error, the process never holds it (its peak RSS stays far below
// the line's size), and the next line is answered as usual.
func TestToolLongLineIsBounded(t *testing.T) {
	env := newE2EEnv(t)
	store, _ := env.createStore(t, "Long Lines")
	ctx, cancel := context.WithTimeout(context.Background(), e2eCmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, memfsBin, "tool", store)
	cmd.Env = env.environ()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	const lineMB = 200
	// The small line goes once the long one is answered and the peak read:
	// the process is alive then, and its own high-water mark (VmHWM) is
	// its peak. The rusage of a waited process is no measure: it also
	// holds the peak of the test binary the child was forked from.
	next := make(chan struct{})
	go func() {
		defer stdin.Close()
		w := bufio.NewWriterSize(stdin, 1<<16)
		io.WriteString(w, `{"command":"create","path":"/memories/big.md","file_text":"`)
		chunk := strings.Repeat("a", 1<<20)
		for i := 0; i < lineMB; i++ {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
		io.WriteString(w, "\"}\n")
		w.Flush()
		<-next
		io.WriteString(w, `{"command":"create","path":"/memories/small.md","file_text":"ok"}`+"\n")
		w.Flush()
	}()
	var res []toolResult
	peakMB := -1
	dec := json.NewDecoder(stdout)
	for dec.More() {
		var r toolResult
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("decode memfs tool output: %v", err)
		}
		res = append(res, r)
		if len(res) == 1 {
			peakMB = vmHWMMiB(t, cmd.Process.Pid)
			close(next)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("memfs tool: %v", err)
	}
	if len(res) != 2 {
		t.Fatalf("memfs tool answered %d lines, want 2: %+v", len(res), res)
	}
	if !res[0].IsError || !strings.Contains(res[0].Content, "over the limit of") {
		t.Errorf("the %d MB line was answered %+v, want the line-limit error", lineMB, res[0])
	}
	if res[1].IsError {
		t.Errorf("the line after the long one was answered %+v, want success", res[1])
	}
	if peakMB > 100 {
		t.Errorf("memfs tool peaked at %d MiB of RSS reading a %d MB line: it holds the line", peakMB, lineMB)
	}
	t.Logf("peak RSS %d MiB for a %d MB line", peakMB, lineMB)
}

// vmHWMMiB is a live process's peak resident set size.
func vmHWMMiB(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kib, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatalf("read VmHWM of %d: %q", pid, l)
			}
			return kib / 1024
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// TestToolDotLookalikes: names that read as . or .. or hold a slash once
// compatibility characters are normalised are refused with the tool's
// error, and nothing is created.
func TestToolDotLookalikes(t *testing.T) {
	env := newE2EEnv(t)
	store, _ := env.createStore(t, "Dot Lookalikes")
	var lines []string
	for _, p := range []string{"\uff0e\uff0e/x.md", "\u2024\u2024/x.md", "\u2025/x.md", "\u2024/x.md", "a\uff0fb.md"} {
		lines = append(lines, `{"command":"create","path":"/memories/`+p+`","file_text":"x"}`)
	}
	lines = append(lines, `{"command":"view","path":"/memories"}`)
	res := env.tool(t, lines, store)
	for i, r := range res[:len(res)-1] {
		if !r.IsError || !strings.Contains(r.Content, "NFKC") {
			t.Errorf("line %d (%s) answered %+v, want refused as a dot segment or slash after NFKC", i, lines[i], r)
		}
	}
	if got := res[len(res)-1].Content; strings.Count(got, "\n") != 1 {
		t.Errorf("view after the refusals shows more than the root:\n%s", got)
	}
}

// The same look-alikes are refused through a mount (EINVAL) and the CLI
// (exit 5): the rule is the engine's path rule.
func TestDotLookalikesEverySurface(t *testing.T) {
	env := newE2EEnv(t)
	store, slug := env.createStore(t, "Lookalikes Everywhere")
	for _, p := range []string{"/\uff0e\uff0e/x.md", "/\u2024/x.md", "/a\uff0fb.md"} {
		if _, stderr, code := env.run(t, "memory", "create", store, "--path", p, "--content", "x"); code != 5 || !strings.Contains(stderr, "NFKC") {
			t.Errorf("memory create --path %q exited %d (%s), want 5 naming NFKC", p, code, stderr)
		}
	}
	mnt := mountDir(t)
	env.startMount(t, mnt, "--store", store)
	dir := filepath.Join(mnt, slug)
	for _, name := range []string{"\uff0e\uff0e", "\u2024\u2024", "\u2025"} {
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("mkdir %q through the mount: %v, want EINVAL", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".md"), nil, 0o644); err != nil {
			t.Errorf("a file named %q.md (not a dot segment) was refused: %v", name, err)
		}
	}
}
