package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

const (
	readyTimeout = 30 * time.Second
	stopTimeout  = 15 * time.Second
	// remountTimeout bounds a remount over a stale mount; recovering it
	// takes milliseconds when it works.
	remountTimeout = 10 * time.Second
	// writerGrace is how long writers get to stop after SIGTERM once
	// their mount is dead: every request of theirs should fail at once.
	writerGrace = 3 * time.Second
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
func (h *harness) startDaemon(timeout time.Duration) (*daemon, time.Duration, error) {
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
			h.conn = fuseConnection(h.mnt)
			return d, elapsed, nil
		}
		<-d.done
		return nil, 0, fmt.Errorf("memfs mount closed its ready pipe without saying ready (%v): see %s", d.err, h.daemonLog.Name())
	case <-time.After(timeout):
		d.kill()
		return nil, 0, fmt.Errorf("memfs mount was not ready after %v: see %s", timeout, h.daemonLog.Name())
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (d *daemon) kill() {
	d.signalKill()
	<-d.done
}

func (d *daemon) signalKill() { d.cmd.Process.Signal(syscall.SIGKILL) }

// waitExit reports whether the process exited within limit.
func (d *daemon) waitExit(limit time.Duration) bool {
	select {
	case <-d.done:
		return true
	case <-time.After(limit):
		return false
	}
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
	ack  string
	cmd  *exec.Cmd
	out  strings.Builder
	done chan struct{}
}

func (h *harness) startWriter(id, cycle int) (*writerProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	p := &writerProc{ack: h.ackPath(id, cycle), done: make(chan struct{})}
	p.cmd = exec.Command(self, "writer",
		"-dir", filepath.Join(h.mnt, h.slug, fmt.Sprintf("w%d", id)),
		"-ack", p.ack,
		"-id", fmt.Sprint(id), "-cycle", fmt.Sprint(cycle))
	p.cmd.Stdout = &p.out
	p.cmd.Stderr = os.Stderr
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start writer %d: %w", id, err)
	}
	go func() {
		p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// terminate asks the writer to stop after its current save.
func (p *writerProc) terminate() { p.cmd.Process.Signal(syscall.SIGTERM) }

// wait waits up to limit for the writer to exit and returns the number of
// failed saves it reported. A writer that could not keep its
// acknowledgement log is an error: the run could no longer tell what was
// acknowledged.
func (p *writerProc) wait(limit time.Duration) (failed int, exited bool, err error) {
	select {
	case <-p.done:
	default:
		select {
		case <-p.done:
		case <-time.After(limit):
			return 0, false, nil
		}
	}
	if p.cmd.ProcessState.ExitCode() == exitAckLog {
		return 0, true, fmt.Errorf("a writer could not write its acknowledgement log %s (see its message above)", p.ack)
	}
	var acked int
	fmt.Sscan(p.out.String(), &acked, &failed)
	return failed, true, nil
}

// kill ends the writer for good; the acknowledgement log holds what it
// saved, each line fsynced before the next save.
func (p *writerProc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(stopTimeout):
	}
}

// fuseConnection returns the FUSE connection number of the mount on dir
// (the minor device number in /proc/self/mountinfo), read without asking
// the file system anything.
func fuseConnection(dir string) string {
	mounts, err := mountinfo.GetMounts(func(m *mountinfo.Info) (skip, stop bool) {
		return m.Mountpoint != dir, false
	})
	if err != nil || len(mounts) == 0 {
		return ""
	}
	return strconv.Itoa(mounts[len(mounts)-1].Minor) // the last mount on dir is the visible one
}

// abortConnection aborts a FUSE connection through fusectl, as umount -f
// would: every request waiting on it fails, so processes blocked in a dead
// daemon's mount can exit even after that mount was detached.
func abortConnection(conn string) error {
	if conn == "" {
		return errors.New("no FUSE connection number recorded to abort")
	}
	const ctl = "/sys/fs/fuse/connections"
	abort := filepath.Join(ctl, conn, "abort")
	if _, err := os.Stat(abort); err != nil {
		if err := unix.Mount("fusectl", ctl, "fusectl", 0, ""); err != nil {
			return fmt.Errorf("mount fusectl on %s to abort connection %s: %w", ctl, conn, err)
		}
		defer unix.Unmount(ctl, 0)
	}
	if err := os.WriteFile(abort, []byte("1"), 0o200); err != nil {
		return fmt.Errorf("abort FUSE connection %s: %w", conn, err)
	}
	return nil
}

// isMounted reports whether dir is a mount point in this mount namespace,
// from the mount table alone (the file system may be dead or hung).
func isMounted(dir string) bool {
	mounts, err := mountinfo.GetMounts(mountinfo.SingleEntryFilter(dir))
	return err == nil && len(mounts) > 0
}
