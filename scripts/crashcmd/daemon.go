package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

const (
	readyTimeout = 30 * time.Second
	stopTimeout  = 15 * time.Second
)

// daemon is a running `memfs mount` process.
type daemon struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error // the exit, once done is closed
}

// startDaemon starts `memfs mount --store STORE --ready-fd 3 MNT` and
// returns once it says ready, with how long that took from the start of the
// process: on a mountpoint left stale by a killed daemon this includes the
// daemon's own recovery, which is what a restart costs an agent.
func (h *harness) startDaemon() (*daemon, time.Duration, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	d := &daemon{done: make(chan struct{})}
	d.cmd = exec.Command(h.bin, "--db", h.db, "mount", "--store", h.storeID, "--ready-fd", "3", h.mnt)
	d.cmd.Stdout, d.cmd.Stderr = h.daemonLog, h.daemonLog
	d.cmd.ExtraFiles = []*os.File{w}
	start := time.Now()
	if err := d.cmd.Start(); err != nil {
		w.Close()
		return nil, 0, fmt.Errorf("start %s mount: %w", h.bin, err)
	}
	w.Close()
	go func() {
		d.err = d.cmd.Wait()
		close(d.done)
	}()
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "ready") {
				ready <- true
				return
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		elapsed := time.Since(start)
		if ok {
			return d, elapsed, nil
		}
		<-d.done
		return nil, 0, fmt.Errorf("memfs mount closed its ready pipe without saying ready (%v): see %s", d.err, h.daemonLog.Name())
	case <-time.After(readyTimeout):
		d.kill()
		return nil, 0, fmt.Errorf("memfs mount was not ready after %v: see %s", readyTimeout, h.daemonLog.Name())
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (d *daemon) kill() {
	d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.done
}

// stop asks the daemon to unmount and exit, killing it if it does not.
func (d *daemon) stop() error {
	select {
	case <-d.done:
		return d.err
	default:
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
		return d.err
	case <-time.After(stopTimeout):
		d.kill()
		return fmt.Errorf("memfs mount did not exit within %v of SIGTERM and was killed", stopTimeout)
	}
}

// writerProc is one writer process of the storm.
type writerProc struct {
	cmd *exec.Cmd
	out strings.Builder
}

func (h *harness) startWriter(id, cycle int) (*writerProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	p := &writerProc{}
	p.cmd = exec.Command(self, "writer",
		"-dir", filepath.Join(h.mnt, h.slug, fmt.Sprintf("w%d", id)),
		"-ack", h.ackPath(id, cycle),
		"-id", fmt.Sprint(id), "-cycle", fmt.Sprint(cycle))
	p.cmd.Stdout = &p.out
	p.cmd.Stderr = os.Stderr
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start writer %d: %w", id, err)
	}
	return p, nil
}

// stopWriter ends a writer with SIGTERM and returns its counts of acknowledged
// and failed saves.
func stopWriter(p *writerProc) (acked, failed int, err error) {
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(stopTimeout):
		p.cmd.Process.Kill()
		<-done
		return 0, 0, errors.New("a writer did not stop within 15s of SIGTERM (stuck on the dead mount?) and was killed")
	}
	if err != nil {
		return 0, 0, fmt.Errorf("writer: %w", err)
	}
	var ackErrors int
	if _, err := fmt.Sscan(p.out.String(), &acked, &failed, &ackErrors); err != nil {
		return 0, 0, fmt.Errorf("writer printed %q, not its counts", p.out.String())
	}
	if ackErrors > 0 {
		return acked, failed, fmt.Errorf("writer could not write its acknowledgement log %d times", ackErrors)
	}
	return acked, failed, nil
}

// isMounted reports whether dir is a mount point in this mount namespace.
func isMounted(dir string) bool {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && f[4] == dir {
			return true
		}
	}
	return false
}
