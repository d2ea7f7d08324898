package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A log file stays under its bound: what would pass it moves to FILE.1,
// and the file says so.
func TestCappedLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.log")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const max = 2048
	l := &cappedLog{f: f, path: path, max: max, reopen: path}
	for i := range 1000 {
		fmt.Fprintf(l, "time=now level=WARN msg=refused line=%04d padding=%s\n", i, strings.Repeat("x", 40))
	}
	cur, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(cur) > max {
		t.Errorf("the log is %d bytes, over its bound of %d", len(cur), max)
	}
	if !strings.Contains(string(cur), "line=0999") || !strings.Contains(string(cur), "the log reached 2048 bytes and starts again; the earlier lines are in "+path+".1") {
		t.Errorf("the log lacks its last line or the rotation note:\n%s", cur)
	}
	old, err := os.ReadFile(path + ".1")
	if err != nil {
		t.Fatalf("no rotated log: %v", err)
	}
	if len(old) == 0 || len(old) > max || strings.Contains(string(old), "\x00") {
		t.Errorf("the rotated log is %d bytes (bound %d) or holds NULs", len(old), max)
	}
}
