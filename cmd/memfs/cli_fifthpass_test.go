package main

// A fifth pass over the command line: what a prune removes is what it
// asked about.

import (
	"strings"
	"syscall"
	"testing"

	"github.com/memfs/memfs/versions"
)

// A prune whose only removals are session checkpoints past the window
// asks before it removes them, as it asks before removing versions.
func TestPruneAsksBeforeRemovingSessionCheckpoints(t *testing.T) {
	e := newE2EEnv(t)
	e.createStore(t, "Notes")
	e.cli(t, "memory", "create", "Notes", "--path", "/a.md", "--content", "one\n")
	d := e.startMount(t, mountDir(t), "--store", "Notes") // takes a session checkpoint
	d.stop(t, syscall.SIGTERM)
	sessionCheckpoints := func() int {
		var cps versions.Page[versions.Checkpoint]
		e.cliJSON(t, &cps, "checkpoint", "list", "Notes")
		n := 0
		for _, c := range cps.Data {
			if c.Kind == versions.CheckpointSession {
				n++
			}
		}
		return n
	}
	if n := sessionCheckpoints(); n != 1 {
		t.Fatalf("the session took %d checkpoints, want 1", n)
	}
	_, stderr, code := e.run(t, "version", "prune", "Notes", "--older-than", "0s", "--keep-last", "1")
	if code != exitUsage || !strings.Contains(stderr, "--yes") || !strings.Contains(stderr, "session checkpoint sesn_") {
		t.Errorf("prune of a session checkpoint alone, no --yes and no terminal: exit %d, %s", code, stderr)
	}
	if n := sessionCheckpoints(); n != 1 {
		t.Fatalf("a prune that was not confirmed removed the session checkpoint: %d left", n)
	}
	e.cli(t, "version", "prune", "Notes", "--older-than", "0s", "--keep-last", "1", "--yes")
	if n := sessionCheckpoints(); n != 0 {
		t.Errorf("a confirmed prune left %d session checkpoints past the window", n)
	}
}

// A command group run without its command is a mistake: exit 2, the
// group's help on stderr with the error, and nothing on stdout, which a
// script with --format json reads as JSON.
func TestGroupWithoutCommandWritesNothingToStdout(t *testing.T) {
	e := newE2EEnv(t)
	for _, args := range [][]string{{"--format", "json", "store"}, {"version"}} {
		out, stderr, code := e.run(t, args...)
		if code != exitUsage || out != "" || !strings.Contains(stderr, "needs a command") || !strings.Contains(stderr, "COMMANDS:") {
			t.Errorf("memfs %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, out, stderr)
		}
	}
}

// A restore says when it changed nothing, and when the memory it wrote
// to has moved since the version restored.
func TestRestoreSaysWhatItDid(t *testing.T) {
	e := newE2EEnv(t)
	e.createStore(t, "Notes")
	var first, second versions.Memory
	e.cliJSON(t, &first, "memory", "create", "Notes", "--path", "/a.md", "--content", "one\n")
	e.cliJSON(t, &second, "memory", "update", "Notes", "/a.md", "--content", "two\n")

	out, stderr, code := e.run(t, "restore", "Notes", second.VersionID)
	if code != 0 || strings.TrimSpace(out) != first.ID || !strings.Contains(stderr, "nothing changed") {
		t.Errorf("restore of the head's own version: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	e.cli(t, "memory", "update", "Notes", "/a.md", "--path", "/b.md")
	out, stderr, code = e.run(t, "restore", "Notes", first.VersionID)
	if code != 0 || strings.TrimSpace(out) != first.ID || !strings.Contains(stderr, "/b.md") || !strings.Contains(stderr, "/a.md then") {
		t.Errorf("restore of a version from before a rename: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if got := e.cli(t, "memory", "get", "Notes", "/b.md"); got != "one\n" {
		t.Errorf("after the restore /b.md holds %q", got)
	}
}
