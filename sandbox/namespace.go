package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// namespaceStage runs in a new mount namespace as root: it serves the mount
// root, runs the exec stage and, once Cmd is gone, stops the daemon and
// removes every mount. It always exits 0; the report says how Cmd ended.
func namespaceStage(spec *Spec, out *os.File) int {
	runtime.LockOSThread() // for Pdeathsig of the children
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	sendReport(out, serveAndRun(spec, orphanedKills(sigs), out))
	return 0
}

// orphanedKills passes sigs on, except that the SIGTERM this stage gets
// when the supervisor dies (its parent-death signal) becomes SIGKILL: the
// command ends at once, and this stage lives on to stop the daemon and
// remove what the run made, so that nothing of a run killed with SIGKILL
// stays.
func orphanedKills(sigs <-chan os.Signal) <-chan os.Signal {
	parent := os.Getppid()
	out := make(chan os.Signal, 8)
	go func() {
		for s := range sigs {
			if s == syscall.SIGTERM && os.Getppid() != parent {
				s = syscall.SIGKILL
			}
			out <- s
		}
	}()
	return out
}

func serveAndRun(spec *Spec, sigs <-chan os.Signal, out *os.File) report {
	// Nothing mounted from here on may propagate back to the host.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return failure(errorf(KindSetup, "make the sandbox's mounts private: %v", err))
	}
	// Orphans of Cmd are reparented here, so they can be ended with it.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return failure(errorf(KindSetup, "become the sandbox's subreaper: %v", err))
	}
	// Made here, not by the supervisor: this stage outlives a supervisor
	// killed with SIGKILL and removes what it made.
	// What it makes on the host is recorded first: killed, this stage
	// leaves it to the supervisor or the next run (leftovers.go).
	rec, err := newRecord()
	if err != nil {
		return failure(err)
	}
	defer rec.done()
	releaseRoot, err := makeMountRoot(spec.MountRoot, rec.madeDirs)
	if err != nil {
		return failure(err)
	}
	defer releaseRoot()
	cg, err := makeCgroup(spec.Limits, cgroupName(os.Getpid()))
	if err != nil {
		return failure(err)
	}
	defer cg.remove()
	spec.Cgroup = cg.dirs
	d, err := startDaemon(spec)
	if err != nil {
		return failure(err)
	}
	defer d.stop(spec.MountRoot)
	timeout := spec.ReadyTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	select {
	case err := <-d.ready:
		if err != nil {
			return failure(err)
		}
	case s := <-sigs:
		n := int(s.(syscall.Signal))
		return report{Exit: 128 + n, Signal: n}
	case <-time.After(timeout):
		return failure(errorf(KindServe, "the mount daemon did not report ready within %v; see its messages above", timeout))
	}

	// An IPC namespace of the command's own: no System V segment, queue
	// or semaphore set and no POSIX message queue of the host's or of
	// another run's is reachable, and the command's vanish with it.
	attr := &syscall.SysProcAttr{
		Unshareflags: syscall.CLONE_NEWNS,
		Cloneflags:   syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC,
		Pdeathsig:    syscall.SIGKILL,
		Setpgid:      true,
	}
	st, err := startStage(stageInit, spec, attr, spec.Env, os.Stdin, os.Stdout, os.Stderr, nil)
	if err != nil {
		return failure(errorf(KindSetup, "start the command's namespaces: %v", err))
	}
	go d.warnIfGone()
	relayJobControl(spec, st, func(sig syscall.Signal) { sendReport(out, report{Stopped: int(sig)}) })
	rep := st.outcome(sigs)
	killOrphans(d.cmd.Process.Pid)
	return rep
}

// daemon is the serving process.
type daemon struct {
	cmd      *exec.Cmd
	ready    chan error
	exited   chan struct{}
	err      error         // how it exited, once exited is closed
	stopping chan struct{} // closed when stop begins
}

func startDaemon(spec *Spec) (*daemon, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, errorf(KindSetup, "make the daemon's ready pipe: %v", err)
	}
	cmd := exec.Command(spec.Serve[0], spec.Serve[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if spec.ServeLog != "" {
		log, err := OpenLog(spec.ServeLog)
		if err != nil {
			r.Close()
			w.Close()
			return nil, errorf(KindInvalid, "open the daemon's log file: %v; give a file memfs can write", err)
		}
		defer log.Close() // the daemon has its own copy once started
		cmd.Stdout, cmd.Stderr = log, log
	}
	cmd.ExtraFiles = []*os.File{w}
	// Its own process group keeps a terminal's ^C away from it: it must
	// outlive the command to serve it, and ends when told to.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		return nil, errorf(KindServe, "start the mount daemon %s: %v", spec.Serve[0], err)
	}
	d := &daemon{cmd: cmd, ready: make(chan error, 2), exited: make(chan struct{}), stopping: make(chan struct{})}
	go func() {
		defer r.Close()
		line, err := bufio.NewReader(r).ReadString('\n')
		if err == nil && line == "ready\n" {
			d.ready <- nil
		}
	}()
	go func() {
		d.err = cmd.Wait()
		close(d.exited)
		d.ready <- errorf(KindServe, "the mount daemon exited before it was ready (%v); see its messages above", d.err)
	}()
	return d, nil
}

func (d *daemon) warnIfGone() {
	<-d.exited
	select {
	case <-d.stopping:
		return
	default:
	}
	slog.Warn("sandbox: the mount daemon exited while the command ran; its mounts no longer answer", "err", d.err)
}

// stop ends the daemon — SIGTERM so it unmounts, SIGKILL if it will not —
// and detaches whatever is still mounted on root.
func (d *daemon) stop(root string) {
	close(d.stopping)
	select {
	case <-d.exited:
	default:
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.exited:
		case <-time.After(10 * time.Second):
			slog.Warn("sandbox: the mount daemon ignored SIGTERM for 10s; killing it", "pid", d.cmd.Process.Pid)
			_ = d.cmd.Process.Kill()
			<-d.exited
		}
	}
	for {
		err := unix.Unmount(root, unix.MNT_DETACH)
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
			return // nothing (more) mounted there
		}
		if err != nil {
			slog.Warn("sandbox: detach the mount root", "root", root, "err", err)
			return
		}
	}
}

// killOrphans kills and reaps the processes Cmd left behind, which were
// reparented to this subreaper, except the daemon.
func killOrphans(daemonPid int) {
	for range 100 {
		pids := children(os.Getpid(), daemonPid)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = unix.Kill(pid, unix.SIGKILL)
			var ws unix.WaitStatus
			_, _ = unix.Wait4(pid, &ws, 0, nil)
		}
	}
}

// children lists the pids whose parent is ppid, but not skip.
func children(ppid, skip int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == skip {
			continue
		}
		if procStat(pid).ppid == ppid {
			pids = append(pids, pid)
		}
	}
	return pids
}

// stat is what procStat reads of a process.
type stat struct {
	state               string
	ppid, pgrp, session int
}

// procStat reads /proc/PID/stat, whose second field (the command name) may
// hold spaces and parentheses; ppid is -1 when pid is gone.
func procStat(pid int) stat {
	s := stat{ppid: -1}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s
	}
	i := len(b) - 1
	for i >= 0 && b[i] != ')' {
		i--
	}
	if _, err := fmt.Sscanf(string(b[i+1:]), " %s %d %d %d", &s.state, &s.ppid, &s.pgrp, &s.session); err != nil {
		return stat{ppid: -1}
	}
	return s
}

// OpenLog opens the daemon's log file for appending: never through a
// symlink, created 0600, and only a regular file of this process's user.
func OpenLog(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0o600)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, fmt.Errorf("%s is a symlink", path)
		}
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() || st.Nlink != 1 {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file of this user's with one link", path)
	}
	if err := unix.SetNonblock(int(f.Fd()), false); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
