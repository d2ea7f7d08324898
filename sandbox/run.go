package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// forwarded are the signals a stage passes on to the stage (or command)
// below it, so that signals sent to the supervisor reach Cmd.
var forwarded = []os.Signal{
	syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH,
}

// Run starts spec.Cmd in the sandbox, forwards the signals it receives to
// it and waits for it, its daemon and its mounts to be gone. It returns
// Cmd's exit status, 128+N when Cmd was killed by signal N. An *Error
// explains a failure before Cmd ran.
func Run(spec *Spec, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	if err := spec.Validate(); err != nil {
		return 0, err
	}
	if spec.Dir == "" {
		// By path, so that Cmd enters what hiding left there: a
		// descriptor of the working directory would see through it.
		dir, err := os.Getwd()
		if err != nil {
			return 0, errorf(KindSetup, "find the working directory for the command: %v; run from an existing directory or set one", err)
		}
		spec.Dir = dir
	}
	// What runs killed with SIGKILL left behind.
	sweepLeftovers(0)
	// Pdeathsig fires when the thread that started the child exits: keep
	// this goroutine on one thread while the child lives.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	defer signal.Stop(sigs)

	// Each stage and Cmd get a process group of their own, so a signal to
	// memfs's group (or a terminal's ^C, which goes to Cmd's group alone)
	// reaches Cmd once, not once per stage.
	attr := &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGTERM, Setpgid: true}
	spec.Terminal = stdin == os.Stdin && controllingTerminal()
	spec.Foreground = spec.Terminal && inForeground()
	saved, termErr := unix.IoctlGetTermios(0, unix.TCGETS)
	// The namespace stage holds the id range's lock too: it outlives a
	// supervisor killed with SIGKILL until the command's processes are
	// gone, and no other run may take the range before.
	var extra []*os.File
	if spec.IDs != nil && spec.IDs.lock != nil {
		extra = append(extra, spec.IDs.lock)
	}
	st, err := startStage(stageNamespace, spec, attr, nil, stdin, stdout, stderr, nil, extra...)
	if err != nil {
		if errors.Is(err, syscall.EPERM) {
			return 0, errorf(KindPrivilege, "cannot create a private mount namespace (%v): run as root or with CAP_SYS_ADMIN; in a container, also allow unshare (--security-opt seccomp=unconfined --security-opt apparmor=unconfined)", err)
		}
		return 0, errorf(KindSetup, "start the sandbox: %v", err)
	}
	// Cmd stopped (^Z): stop as it did, so that the shell's job control
	// sees memfs stopped and can continue it.
	foreground := relayJobControl(spec, st, func(sig syscall.Signal) { stopGroup(sig, st.cmd.Process.Pid) })
	defer func() {
		// Cmd's group keeps the foreground it had when it ended; take
		// it back, unless the shell continued us in the background.
		if foreground.Load() {
			giveTerminal(unix.Getpgrp())
		}
		// And the terminal's modes as they were: a command that turned
		// off echo or left raw mode must not leave the shell so.
		if spec.Terminal && termErr == nil {
			restoreTerminal(saved)
		}
	}()
	state, err := st.wait(sigs)
	rep, ok := <-st.report, <-st.reported
	if !ok {
		// Killed before it could remove what it made.
		sweepLeftovers(2 * time.Second)
	}
	if err != nil {
		return 0, errorf(KindSetup, "%v", err)
	}
	if ok {
		if err := rep.err(); err != nil {
			return 0, err
		}
		return rep.Exit, nil
	}
	ws, _ := state.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return 128 + int(ws.Signal()), errorf(KindSetup, "the sandbox's namespace stage was killed by %s before it reported; its mounts died with it", unix.SignalName(ws.Signal()))
	}
	return 0, errorf(KindSetup, "the sandbox's namespace stage ended (%v) without reporting; see the messages above", state)
}

// Validate checks a Spec before anything starts; Run calls it too.
func (s *Spec) Validate() error {
	switch {
	case len(s.Cmd) == 0 || s.Cmd[0] == "":
		return errorf(KindInvalid, "no command to run: give one after --")
	case len(s.Serve) == 0:
		return errorf(KindInvalid, "no serving daemon given for the mount root")
	case !filepath.IsAbs(s.MountRoot):
		return errorf(KindInvalid, "mount root %q is not an absolute path", s.MountRoot)
	case within(s.MountRoot, filepath.Dir(PromptFile)) || within(s.MountRoot, Home):
		return errorf(KindInvalid, "mount root %s lies in the command's private %s or %s: choose another", s.MountRoot, filepath.Dir(PromptFile), Home)
	case s.IDs != nil && s.User != nil && (s.User.UID >= s.IDs.Size || s.User.GID >= s.IDs.Size):
		return errorf(KindInvalid, "user %d:%d is outside the %d ids the command's user namespace maps: give a --user below %d", s.User.UID, s.User.GID, s.IDs.Size, s.IDs.Size)
	}
	for _, d := range s.RW {
		if !filepath.IsAbs(d) || filepath.Clean(d) != d || d == "/" {
			return errorf(KindInvalid, "--rw %q: give an absolute, clean directory other than /", d)
		}
		if d == "/tmp" || within(d, filepath.Dir(PromptFile)) || within(d, Home) || within(d, "/dev") || within(d, "/proc") || within(d, "/sys") {
			return errorf(KindInvalid, "--rw %s: the command's /tmp, /dev, /proc and /sys are its own; grant a directory elsewhere", d)
		}
		if within(d, s.MountRoot) || within(s.MountRoot, d) {
			return errorf(KindInvalid, "--rw %s and the mount root %s overlap: grant a directory outside it", d, s.MountRoot)
		}
		for _, h := range s.Hide {
			if within(d, h) || within(h, d) {
				return errorf(KindInvalid, "--rw %s and the database's directory %s overlap: the command could replace the database; grant another directory", d, h)
			}
		}
	}
	if err := checkRWDisjoint(s); err != nil {
		return err
	}
	if err := checkHiddenAliases(s); err != nil {
		return err
	}
	for _, h := range s.Hide {
		h = filepath.Clean(h)
		if !filepath.IsAbs(h) || h == "/" {
			return errorf(KindInvalid, "cannot hide %q: hidden directories must be absolute and not /; keep the database in a directory of its own", h)
		}
		if within(s.MountRoot, h) || within(h, s.MountRoot) {
			return errorf(KindInvalid, "the mount root %s and the hidden directory %s overlap; choose a mount root outside the database's directory", s.MountRoot, h)
		}
	}
	return nil
}

// inForeground reports whether standard input is a terminal whose
// foreground process group is this process's.
func inForeground() bool {
	pgrp, err := unix.IoctlGetInt(0, unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}

// controllingTerminal reports whether standard input is this process's
// controlling terminal.
func controllingTerminal() bool {
	sid, err := unix.IoctlGetInt(0, unix.TIOCGSID)
	own, gerr := unix.Getsid(0)
	return err == nil && gerr == nil && sid == own
}

// giveTerminal makes pgid the foreground process group of the terminal on
// standard input.
func giveTerminal(pgid int) {
	// A background process asking for the foreground gets SIGTTOU.
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	_ = unix.IoctlSetPointerInt(0, unix.TIOCSPGRP, pgid)
}

// restoreTerminal sets the modes of the terminal on standard input.
func restoreTerminal(t *unix.Termios) {
	// From the background the kernel would stop us with SIGTTOU.
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	_ = unix.IoctlSetTermios(0, unix.TCSETSW, t)
}

// within reports whether path is dir or lies below it.
func within(path, dir string) bool {
	path, dir = filepath.Clean(path), filepath.Clean(dir)
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// stage is a started re-execution of this binary.
type stage struct {
	cmd      *exec.Cmd
	report   chan report
	reported chan bool
	stopped  chan syscall.Signal // Cmd stopped, by this (a stage's event, or seen by init)
	exited   chan struct{}       // closed when wait returns
}

// startStage re-executes this binary as stage name with spec on fd 3 and a
// report pipe on fd 4. env nil means this process's environment. started,
// if set, is called with the stage's pid before it gets its spec, so
// before it does anything. extra are passed on from fd 5.
func startStage(name string, spec *Spec, attr *syscall.SysProcAttr, env []string, stdin io.Reader, stdout, stderr io.Writer, started func(pid int) error, extra ...*os.File) (*stage, error) {
	specR, specW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		specR.Close()
		specW.Close()
		return nil, err
	}
	cmd := exec.Command("/proc/self/exe", name)
	cmd.Args[0] = os.Args[0]
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.ExtraFiles = append([]*os.File{specR, repW}, extra...)
	cmd.SysProcAttr = attr
	// A command's orphans may hold copied stdio pipes open for ever.
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Start()
	specR.Close()
	repW.Close()
	if err != nil {
		specW.Close()
		repR.Close()
		return nil, err
	}
	if started != nil {
		if err := started(cmd.Process.Pid); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			specW.Close()
			repR.Close()
			return nil, err
		}
	}
	go func() {
		_ = json.NewEncoder(specW).Encode(spec)
		specW.Close()
	}()
	st := &stage{cmd: cmd, report: make(chan report, 1), reported: make(chan bool, 1),
		stopped: make(chan syscall.Signal, 1), exited: make(chan struct{})}
	go func() {
		defer repR.Close()
		rep, ok, err := readReport(repR, st.stopped)
		if err != nil {
			rep, ok = failure(err), true
		}
		st.report <- rep
		st.reported <- ok
	}()
	return st, nil
}

// wait forwards signals to the stage until it exits.
func (st *stage) wait(sigs <-chan os.Signal) (*os.ProcessState, error) {
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = st.cmd.Process.Signal(s)
			case <-st.exited:
				return
			}
		}
	}()
	err := st.cmd.Wait()
	close(st.exited)
	if st.cmd.ProcessState == nil {
		return nil, fmt.Errorf("wait for sandbox stage: %w", err)
	}
	return st.cmd.ProcessState, nil
}

// outcome waits for a stage below the supervisor, forwarding sigs, and
// returns how Cmd ended: what the stage reported, else its own exit status.
func (st *stage) outcome(sigs <-chan os.Signal) report {
	state, err := st.wait(sigs)
	rep, reported := <-st.report, <-st.reported
	if err != nil {
		return failure(errorf(KindSetup, "%v", err))
	}
	if reported {
		return rep
	}
	code, sig := exitStatus(state)
	return report{Exit: code, Signal: sig}
}

// exitStatus is the shell's convention: the exit code, or 128+N for a
// process killed by signal N.
func exitStatus(state *os.ProcessState) (code, sig int) {
	ws, ok := state.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		return 128 + int(ws.Signal()), int(ws.Signal())
	}
	return state.ExitCode(), 0
}
