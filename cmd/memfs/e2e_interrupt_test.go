package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/fusefs"
)

// signalledWriter saves files while an interval timer interrupts it about
// every 100µs. Each signal that arrives while the process waits on the mount
// makes the kernel send FUSE_INTERRUPT; Python retries EINTR itself (PEP
// 475), so any error it sees is the mount's. Go programs get the same
// interrupts from the runtime's preemption signals, only less often.
const signalledWriter = `
import os, signal, sys
def main(n):
    os.mkdir("sig")
    for i in range(n):
        with open("sig/f%03d.txt" % i, "w") as f:
            f.write("signalled %d\n" % i + "y" * i)
    for i in range(n):
        with open("sig/f%03d.txt" % i) as f:
            got = f.read()
        if got != "signalled %d\n" % i + "y" * i:
            sys.exit("sig/f%03d.txt reads %r" % (i, got))
signal.signal(signal.SIGALRM, lambda *a: None)
signal.setitimer(signal.ITIMER_REAL, 0.0001, 0.0001)
try:
    main(int(sys.argv[1]))
finally:
    # Stopped before the interpreter exits, so that an error is printed
    # rather than cut short by an alarm without a handler.
    signal.setitimer(signal.ITIMER_REAL, 0)
`

// TestE2ESavesUnderSignals: an agent that receives signals while it saves
// (timers, SIGCHLD, a Go runtime's preemption) must see no error and lose no
// save: an interrupted request is a reason to finish the save, not to fail
// it with EIO.
func TestE2ESavesUnderSignals(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	env := newE2EEnv(t)
	storeID, slug := env.createStore(t, "Signals")
	mnt := mountDir(t)
	env.startMount(t, mnt, "--store", "Signals")
	const files = 200
	out, err := shErr(filepath.Join(mnt, slug), fmt.Sprintf("python3 -c '%s' %d", signalledWriter, files))
	if err != nil {
		t.Fatalf("python writer under signals: %v\n%s", err, out)
	}
	// New files are published after the mount's grace period.
	time.Sleep(2 * fusefs.DefaultGrace)
	live := env.memoryList(t, storeID)
	vs := env.versionList(t, storeID)
	if len(live) != files || len(vs) != files {
		t.Errorf("%d live memories and %d versions after %d saves of new files, want %d of each", len(live), len(vs), files, files)
	}
	for i := 0; i < files; i++ {
		p := fmt.Sprintf("/sig/f%03d.txt", i)
		if _, ok := live[p]; !ok {
			t.Errorf("memory %s missing after its close() succeeded", p)
		}
	}
	if strings.Contains(out, "Error") {
		t.Errorf("python writer printed an error:\n%s", out)
	}
}
