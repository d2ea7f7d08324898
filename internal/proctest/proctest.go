// Package proctest helps tests that signal the processes they start.
package proctest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// WaitStopped returns once every thread of process pid is stopped: kill(2)
// returns before a SIGSTOP takes effect, and a daemon still answering, or
// one of its threads still in a system call, would look alive.
func WaitStopped(t testing.TB, pid int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if allStopped(t, pid) {
			return
		}
	}
	t.Fatalf("process %d did not stop", pid)
}

func allStopped(t testing.TB, pid int) bool {
	t.Helper()
	stats, err := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "stat"))
	if err != nil || len(stats) == 0 {
		t.Fatalf("the threads of process %d: %v", pid, err)
	}
	for _, p := range stats {
		stat, err := os.ReadFile(p)
		if err != nil {
			return false // a thread that ended meanwhile: look again
		}
		// The state follows the parenthesised command name.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 || i+2 >= len(stat) || stat[i+2] != 'T' {
			return false
		}
	}
	return true
}
