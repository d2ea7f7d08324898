package main

// A fourth pass over the command line: one WHEN grammar, a session named
// the same way everywhere, and ids that cannot wrap round.

import (
	"net"
	"strings"
	"testing"
	"time"
)

// --as-of takes the ages --since and --until take: a fork as of 1s ago
// holds what the store held then.
func TestAsOfTakesAnAge(t *testing.T) {
	e := newE2EEnv(t)
	e.createStore(t, "Notes")
	e.cli(t, "memory", "create", "Notes", "--path", "/a.md", "--content", "one\n")
	time.Sleep(1500 * time.Millisecond)
	e.cli(t, "memory", "update", "Notes", "/a.md", "--content", "two\n")
	e.cli(t, "store", "fork", "Notes", "--name", "Then", "--as-of", "1s")
	if got := e.cli(t, "memory", "get", "Then", "/a.md"); got != "one\n" {
		t.Errorf("a fork as of 1s ago holds %q, want the content saved before", got)
	}
	out, stderr, code := e.run(t, "restore", "Notes", "--as-of", "1 second ago", "--dry-run")
	if code != 0 || !strings.Contains(out, "modify") || !strings.Contains(out, "/a.md") {
		t.Errorf("restore --as-of '1 second ago' --dry-run: exit %d\n%s\n%s", code, out, stderr)
	}
	if got := e.cli(t, "memory", "get", "Notes", "/a.md"); got != "two\n" {
		t.Errorf("a dry run changed the store: %q", got)
	}
}

// undo and lint name a session by the end log shows, as every other
// command does.
func TestSessionEndNamesItEverywhere(t *testing.T) {
	e := newE2EEnv(t)
	e.createStore(t, "Notes")
	sess := strings.TrimSpace(e.cli(t, "session", "create", "--store", "Notes"))
	end := sess[len(sess)-shortIDLen:]
	e.cli(t, "session", "end", end)
	if _, stderr, code := e.run(t, "undo", "Notes", "--session", end, "--yes"); code != exitNotFound || !strings.Contains(stderr, "wrote nothing") {
		t.Errorf("undo --session %s (a session that wrote nothing): exit %d, %s", end, code, stderr)
	}
	if _, stderr, code := e.run(t, "lint", "--session", end); code != 0 {
		t.Errorf("lint --session %s: exit %d, %s", end, code, stderr)
	}
	if _, stderr, code := e.run(t, "lint", "--session", "ZZZZZZZZ"); code != exitNotFound || !strings.Contains(stderr, "no session") {
		t.Errorf("lint --session of no session: exit %d, %s", code, stderr)
	}
}

// An owner past the largest id is refused before anything is mounted,
// not wrapped round to root.
func TestMountRefusesAnIDPastTheLargest(t *testing.T) {
	e := newE2EEnv(t)
	e.createStore(t, "Notes")
	_, stderr, code := e.run(t, "mount", "--store", "Notes", "--uid", "4294967296", "--gid", "0", t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, "at most 4294967294") {
		t.Errorf("mount --uid 4294967296: exit %d, %s", code, stderr)
	}
}

// A metrics address another server holds is a conflict (exit 4), as it is
// for memfs serve, not an internal error.
func TestMountMetricsAddressTaken(t *testing.T) {
	e := newE2EEnv(t)
	e.createStore(t, "Notes")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, stderr, code := e.run(t, "mount", "--store", "Notes", "--metrics-addr", ln.Addr().String(), mountDir(t))
	if code != exitConflict || !strings.Contains(stderr, "another server is using that address") || !strings.Contains(stderr, "--metrics-addr") {
		t.Errorf("mount --metrics-addr on a taken address: exit %d, %s", code, stderr)
	}
}
