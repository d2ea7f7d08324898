package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// execStage runs in the namespaces init made: it gives up every privilege
// and becomes Cmd. It returns only when that fails, after reporting why.
func execStage(spec *Spec, out *os.File) int {
	// Capabilities, credentials and no_new_privs are per thread: change
	// them on the thread that calls execve.
	runtime.LockOSThread()
	parent := os.Getppid()

	// As the user Cmd runs as: a directory it could not enter is refused.
	if err := dropPrivileges(spec.User); err != nil {
		sendReport(out, failure(errorf(KindSetup, "drop privileges: %v", err)))
		return 1
	}
	if spec.Dir != "" {
		if err := os.Chdir(spec.Dir); err != nil {
			sendReport(out, failure(errorf(KindSetup, "enter the working directory in the sandbox: %v; run from a directory that is not hidden (not the database's) and that the command's user may enter", err)))
			return 1
		}
	}
	path, err := exec.LookPath(spec.Cmd[0])
	if err != nil {
		code := 126
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		sendReport(out, report{Kind: KindExec, Error: fmt.Sprintf("cannot run %s: %v", spec.Cmd[0], err), Code: code})
		return code
	}
	if err := refuseTerminalInjection(); err != nil {
		sendReport(out, failure(errorf(KindSetup, "install the seccomp filter against terminal injection: %v", err)))
		return 1
	}
	if err := closeOnExecAbove(2); err != nil {
		sendReport(out, failure(errorf(KindSetup, "close inherited file descriptors: %v", err)))
		return 1
	}
	// Changing credentials cleared the parent-death signal.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil || os.Getppid() != parent {
		return 1
	}
	err = syscall.Exec(path, spec.Cmd, spec.Env)
	sendReport(out, report{Kind: KindExec, Error: fmt.Sprintf("cannot run %s: %v", path, err), Code: 126})
	return 126
}

// hide overmounts each hidden directory with an empty tmpfs and makes it
// and the prompt directory read-only, in this namespace only.
func hide(spec *Spec) error {
	// This namespace is a copy of the namespace stage's, which the daemon
	// lives in: keep what is mounted here from propagating there.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return errorf(KindSetup, "make the command's mounts private: %v", err)
	}
	promptFD := -1
	if spec.PromptDir != "" {
		fd, err := unix.Open(spec.PromptDir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return errorf(KindSetup, "open the prompt directory %s: %v", spec.PromptDir, err)
		}
		defer unix.Close(fd)
		promptFD = fd
	}
	for _, dir := range spec.Hide {
		if err := unix.Mount("memfs-hidden", dir, "tmpfs", inert, "size=4k,nr_inodes=64,mode=0755"); err != nil {
			return errorf(KindSetup, "hide %s from the command: %v", dir, err)
		}
	}
	if promptFD >= 0 {
		// The prompt directory may lie under a hidden one: recreate its
		// path in the tmpfs and bind the original over it through the
		// descriptor opened before the hiding.
		if err := os.MkdirAll(spec.PromptDir, 0o755); err != nil {
			return errorf(KindSetup, "recreate the prompt directory %s: %v", spec.PromptDir, err)
		}
		if err := bindFD(promptFD, spec.PromptDir); err != nil {
			return errorf(KindSetup, "bind the prompt directory %s: %v", spec.PromptDir, err)
		}
		if err := unix.Mount("", spec.PromptDir, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|inert, ""); err != nil {
			return errorf(KindSetup, "make the prompt directory %s read-only: %v", spec.PromptDir, err)
		}
	}
	for _, dir := range spec.Hide {
		if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_RDONLY|inert, ""); err != nil {
			return errorf(KindSetup, "make the tmpfs hiding %s read-only: %v", dir, err)
		}
	}
	return nil
}

// closeOnExecAbove marks every open descriptor above n close-on-exec: Cmd
// gets standard input, output and error, not what the caller of memfs run
// happened to leave open.
func closeOnExecAbove(n int) error {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range fds {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > n {
			syscall.CloseOnExec(fd)
		}
	}
	return nil
}
