package sandbox

import (
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// initStage is PID 1 of Cmd's own PID namespace and runs in the mount
// namespace Cmd will have. It hides what Cmd must not see, mounts a /proc
// that shows only the sandbox's processes, starts the exec stage, passes
// signals on to it and reaps the orphans the namespace hands it. Cmd, even
// as root, cannot see or signal the daemon or the stages outside, and when
// init exits the kernel kills whatever Cmd left in the namespace.
func initStage(spec *Spec, out *os.File) int {
	runtime.LockOSThread() // for Pdeathsig of the exec stage
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	// The kernel delivers to a namespace's init only the signals it
	// handles, and Go handles them all, dying of SIGABRT, SIGSEGV and
	// others sent with kill: take them, so that a command running as root
	// cannot end its own sandbox that way. (Ignoring them instead would
	// pass SIG_IGN on to the command.)
	swallowed := make(chan os.Signal, 8)
	signal.Notify(swallowed, unforwarded...)
	go func() {
		for range swallowed {
		}
	}()
	sendReport(out, initAndRun(spec, sigs, out))
	return 0
}

// unforwarded are the signals init takes and drops: every catchable one
// but the forwarded ones, SIGCHLD and SIGCONT (init's own work) and SIGURG
// (Go's preemption).
var unforwarded = []os.Signal{
	syscall.SIGABRT, syscall.SIGALRM, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGILL,
	syscall.SIGIO, syscall.SIGPIPE, syscall.SIGPROF, syscall.SIGPWR, syscall.SIGSEGV,
	syscall.SIGSTKFLT, syscall.SIGSYS, syscall.SIGTRAP, syscall.SIGTSTP, syscall.SIGTTIN,
	syscall.SIGVTALRM, syscall.SIGXCPU, syscall.SIGXFSZ,
}

func initAndRun(spec *Spec, sigs <-chan os.Signal, out *os.File) report {
	// Cmd's cgroup takes the exec stage, not this init: Go's runtime dies
	// when it cannot start a thread, and init must outlive a fork bomb.
	addToCgroup, closeCgroup, err := (&cgroup{dirs: spec.Cgroup}).procs()
	if err != nil {
		return failure(err)
	}
	defer closeCgroup()
	// No process of the host's may attach to this one (it is root there).
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return failure(errorf(KindSetup, "make the sandbox's init undumpable: %v", err))
	}
	// This namespace is a copy of the namespace stage's, which the daemon
	// lives in: keep what is mounted here from propagating there.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return failure(errorf(KindSetup, "make the command's mounts private: %v", err))
	}
	for _, step := range []func(*Spec) error{detachForeignFUSE, detachHostKernelViews, readOnlyHost, mountKernelFS, mountPrivateTmp, hide, verifyHidden, verifyNoForeignFUSE, verifyNoHostKernelViews} {
		if err := step(spec); err != nil {
			return failure(err)
		}
	}
	// Cmd gets a process group of its own, the terminal's foreground when
	// there is one, so that ^C reaches it once and this init not at all.
	// With IDs it gets a user namespace too, created by this process (root
	// on the host, so it may map any range), owning neither this mount
	// namespace nor the PID namespace: nothing Cmd's root is capable of
	// there reaches them.
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if spec.IDs != nil {
		attr.Cloneflags = syscall.CLONE_NEWUSER
		attr.UidMappings, attr.GidMappings = spec.IDs.mappings(), spec.IDs.mappings()
		attr.GidMappingsEnableSetgroups = true
		// Without it the child would keep the host's uid 0, unmapped.
		attr.Credential = &syscall.Credential{Uid: 0, Gid: 0}
	}
	if spec.Foreground {
		attr.Foreground, attr.Ctty = true, 0
	}
	st, err := startStage(stageExec, spec, attr, spec.Env, os.Stdin, os.Stdout, os.Stderr, addToCgroup)
	if err != nil {
		return failure(errorf(KindSetup, "start the command's stage: %v", err))
	}
	go reapOrphans(st.cmd.Process.Pid)
	if spec.Terminal {
		go watchStops(st.cmd.Process.Pid, st)
	}
	relayJobControl(spec, st, func(sig syscall.Signal) { sendReport(out, report{Stopped: int(sig)}) })
	return st.outcome(sigs)
}

// reapOrphans collects the exit status of every process reparented to this
// init once it exits, so none stays a zombie while Cmd runs; keep, the exec
// stage, is left to its own Wait.
func reapOrphans(keep int) {
	exited := make(chan os.Signal, 1)
	signal.Notify(exited, syscall.SIGCHLD)
	for range exited {
		for _, pid := range children(os.Getpid(), keep) {
			if procStat(pid).state == "Z" {
				var ws unix.WaitStatus
				_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
			}
		}
	}
}
