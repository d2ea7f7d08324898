// Package proctest helps tests that signal the processes they start.
package proctest

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"
)

// WaitStopped returns once process pid is stopped: kill(2) returns before
// a SIGSTOP takes effect, and a daemon still answering would look alive.
func WaitStopped(t testing.TB, pid int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		// The state follows the parenthesised command name.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'T' {
			return
		}
	}
	t.Fatalf("process %d did not stop", pid)
}
