package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The history tree through the built binary: a save from the CLI shows in
// a mount's .history within the visibility bound, cp from it restores as
// one new version, and --history=false hides it.
func TestHistoryTreeE2E(t *testing.T) {
	e := newE2EEnv(t)
	_, slug := e.createStore(t, "Notes")
	e.cli(t, "memory", "create", "Notes", "--path", "/todo.md", "--content", "one\n")
	mnt := mountDir(t)
	e.startMount(t, mnt, "--store", "Notes")
	hist := filepath.Join(mnt, ".history", slug, "todo.md")

	start := time.Now()
	e.cli(t, "memory", "update", "Notes", "/todo.md", "--content", "two\n")
	if took, ok := waitFor(func() bool {
		ents, err := os.ReadDir(hist)
		return err == nil && len(ents) == 2
	}, start, time.Second); !ok {
		t.Fatalf("a CLI save not in the history after %v", took)
	} else {
		t.Logf("a CLI save showed in the history after %v", took)
	}
	ents, err := os.ReadDir(hist)
	if err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(hist, ents[0].Name())
	if b, err := os.ReadFile(first); err != nil || string(b) != "one\n" {
		t.Fatalf("oldest entry %s reads %q, %v", ents[0].Name(), b, err)
	}
	before := len(e.versionList(t, "Notes"))
	sh(t, mnt, "cp "+first+" "+filepath.Join(slug, "todo.md"))
	after := e.versionList(t, "Notes")
	if len(after) != before+1 || after[0].Operation != "modified" {
		t.Errorf("cp from the history made %d versions (newest %s), want one modified", len(after)-before, after[0].Operation)
	}
	if got := e.cli(t, "memory", "get", "Notes", "/todo.md"); got != "one\n" {
		t.Errorf("after the restore /todo.md = %q", got)
	}
	// The log of the path lists what the tree does.
	if lines := strings.Split(strings.TrimSpace(e.cli(t, "log", "Notes", "/todo.md")), "\n"); len(lines) != 1+3 {
		t.Errorf("log /todo.md: %d lines, want a header and 3 versions", len(lines))
	}

	hidden := mountDir(t)
	e.startMount(t, hidden, "--store", "Notes", "--history=false")
	if _, err := os.Stat(filepath.Join(hidden, ".history")); !os.IsNotExist(err) {
		t.Errorf("--history=false: stat .history = %v", err)
	}
}

// memfs run: the tree is in the sandbox's mount root, the prompt says how
// to restore from it, and --history=false hides both.
func TestRunHistory(t *testing.T) {
	e := newRunEnv(t)
	e.stores(t)
	e.ok(t, "memory", "update", "Reference", "/style.md", "--content", "Use long sentences.\n")
	script := `
check() { name=$1; shift; if "$@" >/dev/null 2>&1; then echo "ok $name"; else echo "FAIL $name"; fi; }
fails() { name=$1; shift; if "$@" >/dev/null 2>&1; then echo "FAIL $name"; else echo "ok $name"; fi; }
check hist-list test "$(ls "$ROOT/.history/reference/style.md" | wc -l)" = 2
check hist-read sh -c 'cat "$ROOT"/.history/reference/style.md/*-created-* | grep -q short'
fails hist-write touch "$ROOT/.history/reference/x"
fails restore-ro sh -c 'cp "$ROOT"/.history/reference/style.md/*-created-* "$ROOT/reference/style.md"'
check prompt-history grep -qF "$ROOT/.history/" "$MEMFS_PROMPT_FILE"
check prompt-restore grep -qF "cp $ROOT/.history/agent-notes/notes.md/ENTRY $ROOT/agent-notes/notes.md" "$MEMFS_PROMPT_FILE"
`
	hidden := `
check() { name=$1; shift; if "$@" >/dev/null 2>&1; then echo "ok $name"; else echo "FAIL $name"; fi; }
check no-tree test ! -e "$ROOT/.history"
check no-prompt sh -c '! grep -q history "$MEMFS_PROMPT_FILE"'
`
	for _, tc := range []struct {
		flag, script string
		checks       []string
	}{
		{"--history=true", script, []string{"hist-list", "hist-read", "hist-write", "restore-ro", "prompt-history", "prompt-restore"}},
		{"--history=false", hidden, []string{"no-tree", "no-prompt"}},
	} {
		out, errs, code := e.memfs(t, "run", tc.flag, "--store", "Agent Notes", "--store", "Reference:read_only", "--mount-root", e.root,
			"--pass-env", "ROOT", "--", "sh", "-c", tc.script)
		if code != 0 {
			t.Fatalf("memfs run %s exited %d\n%s\n%s", tc.flag, code, out, errs)
		}
		got := runChecks(out)
		for _, name := range tc.checks {
			if !got[name] {
				t.Errorf("memfs run %s: check %s failed or missing\n%s", tc.flag, name, out)
			}
		}
	}
}
