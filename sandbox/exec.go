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

	// A keyring of its own: not the caller's session keyring (keyctl is
	// refused anyway, but a program it runs might have been given one).
	// Where a container's seccomp profile refuses keyctl, the command,
	// under the same filter, cannot reach any keyring either.
	if _, _, e := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); e != 0 && e != unix.EPERM && e != unix.ENOSYS {
		sendReport(out, failure(errorf(KindSetup, "give the command a session keyring of its own: %v", e)))
		return 1
	}
	if err := limitProcesses(spec.Limits.Pids); err != nil {
		sendReport(out, failure(errorf(KindSetup, "limit the command's processes: %v", err)))
		return 1
	}

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
	if err := installSeccomp(); err != nil {
		sendReport(out, failure(errorf(KindSetup, "install the command's seccomp filter: %v", err)))
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

// hide overmounts each hidden directory with an empty read-only tmpfs, in
// this namespace only.
func hide(spec *Spec) error {
	for _, dir := range spec.Hide {
		err := unix.Mount("memfs-hidden", dir, "tmpfs", unix.MS_RDONLY|inert, "size=4k,nr_inodes=2,mode=0555")
		if errors.Is(err, unix.ENOENT) {
			continue // not in this view at all
		}
		if err != nil {
			return errorf(KindSetup, "hide %s from the command: %v", dir, err)
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
