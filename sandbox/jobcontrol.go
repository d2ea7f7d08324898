package sandbox

import (
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// Job control (^Z, fg, bg) when Cmd runs in the foreground of a terminal.
// Cmd's process group alone gets the terminal's ^Z, so its stop is passed
// up: init sees it, each stage tells its parent, and the supervisor stops
// itself, which the shell sees. The shell continues the supervisor, giving
// it the terminal for fg and not for bg; each stage, continued, continues
// the one below it and hands it the terminal if it holds it. Cmd so gets
// the terminal back for fg only.

// relayJobControl passes st's stops to up and, on SIGCONT, continues st's
// process group, until st exits. It returns whether this process held the
// terminal's foreground when last continued (at first: spec.Foreground).
func relayJobControl(spec *Spec, st *stage, up func()) *atomic.Bool {
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
			case <-st.stopped:
				select {
				case <-st.exited: // it stopped, then ended
					return
				default:
					up()
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

// watchStops reports on st.stopped each time the child pid stops, until it
// is gone.
func watchStops(pid int, st *stage) {
	for {
		var info unix.Siginfo
		if err := unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED, nil); err != nil {
			if err == unix.EINTR {
				continue
			}
			return
		}
		select {
		case st.stopped <- struct{}{}:
		default:
		}
	}
}
