package sandbox

import (
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Job control (^Z, fg, bg) when Cmd's terminal is the caller's. Cmd's
// process group alone gets the terminal's ^Z, so its stop is passed up:
// init sees it, each stage tells its parent, and the supervisor stops its
// whole process group with the same signal, as the terminal would have had
// the group been in the foreground; the shell sees its job stopped. The
// shell continues the group, giving it the terminal for fg and not for bg;
// each stage, continued, continues the one below it and hands it the
// terminal if it holds it. Cmd so gets the terminal back for fg only. When
// no shell can continue the supervisor's group (an orphaned group: memfs
// leads its session, or its parent is in another session) the supervisor
// does what the kernel does for a command there: it drops a ^Z, and hangs
// up a command stopped for reading or writing the terminal.

// relayJobControl passes st's stops, with the signal that stopped Cmd, to
// up and, on SIGCONT, continues st's process group, until st exits. It
// returns whether this process held the terminal's foreground when last
// continued (at first: spec.Foreground).
func relayJobControl(spec *Spec, st *stage, up func(syscall.Signal)) *atomic.Bool {
	foreground := new(atomic.Bool)
	foreground.Store(spec.Foreground)
	if !spec.Terminal {
		return foreground
	}
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, syscall.SIGCONT)
	pgid := st.cmd.Process.Pid // every stage and Cmd lead a group of their own
	go func() {
		defer signal.Stop(cont)
		for {
			select {
			case sig := <-st.stopped:
				select {
				case <-st.exited: // it stopped, then ended
					return
				default:
					up(sig)
				}
			case <-cont:
				fg := inForeground()
				foreground.Store(fg)
				if fg {
					giveTerminal(pgid)
				}
				_ = unix.Kill(-pgid, unix.SIGCONT)
			case <-st.exited:
				return
			}
		}
	}()
	return foreground
}

// watchStops reports on st.stopped the signal that stopped the child pid,
// each time it stops, until it is gone.
func watchStops(pid int, st *stage) {
	for {
		var info unix.Siginfo
		if err := unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED, nil); err != nil {
			if err == unix.EINTR {
				continue
			}
			return
		}
		// si_status, the stopping signal, follows si_pid and si_uid in
		// the SIGCHLD part of the siginfo union, at byte 24 on 64-bit Linux.
		sig := syscall.Signal(*(*int32)(unsafe.Add(unsafe.Pointer(&info), 24)))
		select {
		case st.stopped <- sig:
		default:
		}
	}
}

// stopGroup stops this process's group with sig, Cmd's stopping signal, so
// that the shell sees its job stopped; in an orphaned group, where nothing
// would continue it, it does what the kernel does for a command there.
func stopGroup(sig syscall.Signal, below int) {
	if !orphanedGroup() {
		_ = unix.Kill(0, sig)
		return
	}
	if sig == unix.SIGTTIN || sig == unix.SIGTTOU {
		_ = unix.Kill(below, unix.SIGHUP) // passed on down to Cmd
	}
	_ = unix.Kill(-below, unix.SIGCONT)
}

// orphanedGroup reports whether no member of this process's group has a
// parent in another group of the same session: no shell's job control
// would continue the group once stopped.
func orphanedGroup() bool {
	pgrp := unix.Getpgrp()
	sid, err := unix.Getsid(0)
	if err != nil {
		return true
	}
	procs, _ := os.ReadDir("/proc")
	for _, e := range procs {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p := procStat(pid); p.pgrp == pgrp {
			if parent := procStat(p.ppid); parent.session == sid && parent.pgrp != pgrp {
				return false
			}
		}
	}
	return true
}
