// Package sandbox runs a command in a private mount namespace where a mount
// root holds only what a serving daemon mounts there, selected directories
// are hidden, and the command has no capability that could undo either.
//
// It works in three processes, each a re-execution of the running binary so
// that every namespace change happens in a fresh, single-threaded child:
//
//	supervisor (Run)         the caller's process: forwards signals, waits
//	└─ namespace stage       new mount namespace: starts the daemon, tears down
//	   ├─ serving daemon     Spec.Serve, mounts Spec.MountRoot
//	   └─ init stage         nested mount namespace, PID 1 of a new PID
//	      │                  namespace: hides, mounts /proc, forwards, reaps
//	      └─ exec stage      drops privileges, execs Cmd
//
// The binary must call RunStage first thing (from an init function or
// TestMain) so the re-executed stages never reach the program's own logic.
package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
)

// Spec describes one sandboxed run.
type Spec struct {
	// MountRoot is where Serve mounts; it must exist. Cmd sees it as the
	// daemon serves it and cannot mount, unmount or remount anything.
	MountRoot string `json:"mount_root"`
	// Serve is the daemon's argv. It receives the write end of a pipe as
	// file descriptor 3 and writes "ready\n" to it once MountRoot is
	// served; SIGTERM must make it unmount and exit.
	Serve []string `json:"serve"`
	// ServeLog, if set, is a file the daemon's output is appended to
	// instead of standard error (which Cmd may be drawing a screen on).
	ServeLog string `json:"serve_log,omitempty"`
	// Hide lists directories overmounted, in Cmd's namespace only, by an
	// empty read-only tmpfs (the database's directory: the daemon keeps
	// seeing it). Unreachable lists files that must then be gone from
	// Cmd's view (the database and its journal): Cmd does not start
	// otherwise.
	Hide        []string `json:"hide"`
	Unreachable []string `json:"unreachable,omitempty"`
	// RW lists host directories that stay writable for Cmd; every other
	// host file system is read-only, nosuid and nodev in its view.
	RW []string `json:"rw,omitempty"`
	// Prompt is the content of PromptFile, which only Cmd's namespace has.
	Prompt string `json:"prompt"`
	// IDs, if set, gives Cmd a user namespace mapping its ids onto an
	// unprivileged host range. The daemon must then own its files as the
	// mapped ids (see HostIDs).
	IDs *IDMap `json:"ids,omitempty"`
	// Limits bound Cmd's resources.
	Limits Limits `json:"limits"`
	// Cgroup is set by the namespace stage: the cgroup directories init
	// joins.
	Cgroup []string `json:"cgroup,omitempty"`
	// Cmd is the command and its arguments; Cmd[0] is looked up in the PATH
	// of Env.
	Cmd []string `json:"cmd"`
	Env []string `json:"env"`
	Dir string   `json:"dir"` // working directory of Cmd; "" = the caller's
	// User, if set, is who Cmd runs as.
	User *User `json:"user,omitempty"`
	// ReadyTimeout bounds the wait for the daemon; 0 means 30 seconds.
	ReadyTimeout time.Duration `json:"ready_timeout"`
	// Terminal is set by Run when its standard input is its controlling
	// terminal: Cmd's stops are then passed on to the shell's job control
	// (jobcontrol.go). Foreground is set when Run also holds the terminal's
	// foreground: Cmd then starts with it.
	Terminal   bool `json:"terminal"`
	Foreground bool `json:"foreground"`
}

// User is a numeric identity for Cmd. Groups are its supplementary groups;
// none when empty.
type User struct {
	UID    uint32   `json:"uid"`
	GID    uint32   `json:"gid"`
	Groups []uint32 `json:"groups"`
}

// Kind classifies why a sandbox could not run its command.
type Kind string

const (
	KindPrivilege Kind = "privilege" // no root / CAP_SYS_ADMIN
	KindNoFUSE    Kind = "no_fuse"   // /dev/fuse missing or unusable
	KindBusy      Kind = "busy"      // something is already mounted on the mount root
	KindInvalid   Kind = "invalid"   // a bad Spec
	KindServe     Kind = "serve"     // the daemon failed or never became ready
	KindSetup     Kind = "setup"     // a namespace or mount step failed
	KindExec      Kind = "exec"      // Cmd could not be executed
)

// Error is a failure before Cmd ran. Message says what to do about it.
type Error struct {
	Kind    Kind
	Message string
	// ExitCode is the conventional status for the failure: 127 when Cmd
	// was not found, 126 when it could not be executed, 1 otherwise.
	ExitCode int
}

func (e *Error) Error() string { return e.Message }

func errorf(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...), ExitCode: 1}
}

// IsKind reports whether err is an *Error of kind k.
func IsKind(err error, k Kind) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == k
}

// Names of the re-executed stages, as argv[1].
const (
	stageNamespace = "__memfs_sandbox_namespace"
	stageInit      = "__memfs_sandbox_init"
	stageExec      = "__memfs_sandbox_exec"
	stageProbe     = "__memfs_sandbox_probe" // CheckUserNamespace's: does nothing
)

// Every stage reads its Spec from fd 3 and reports on fd 4.
const (
	specFD   = 3
	reportFD = 4
)

// report is what a stage tells its parent: how Cmd ended, or why it never
// started. Before it, a stage may send events: Stopped, the signal that
// stopped Cmd, each time it stops (jobcontrol.go).
type report struct {
	Exit    int    `json:"exit"`
	Signal  int    `json:"signal,omitempty"`
	Kind    Kind   `json:"kind,omitempty"`
	Error   string `json:"error,omitempty"`
	Code    int    `json:"code,omitempty"`
	Stopped int    `json:"stopped,omitempty"`
}

func (r report) err() error {
	if r.Kind == "" {
		return nil
	}
	code := r.Code
	if code == 0 {
		code = 1
	}
	return &Error{Kind: r.Kind, Message: r.Error, ExitCode: code}
}

func failure(err error) report {
	var e *Error
	if errors.As(err, &e) {
		return report{Kind: e.Kind, Error: e.Message, Code: e.ExitCode}
	}
	return report{Kind: KindSetup, Error: err.Error(), Code: 1}
}

// RunStage runs the sandbox stage named by args[1], if any, and returns its
// exit status with ok true; the caller must then exit with that status.
// With ok false, args are not a stage's and the program goes on as usual.
func RunStage(args []string) (code int, ok bool) {
	if len(args) < 2 {
		return 0, false
	}
	var stage func(*Spec, *os.File) int
	switch args[1] {
	case stageProbe:
		return 0, true
	case stageNamespace:
		stage = namespaceStage
	case stageInit:
		stage = initStage
	case stageExec:
		stage = execStage
	default:
		return 0, false
	}
	// No process a stage starts inherits its report pipe, and Cmd's exec
	// closes it unwritten: the parent reads that as "Cmd runs".
	syscall.CloseOnExec(reportFD)
	syscall.CloseOnExec(reportFD + 1) // the id range's lock, if passed: this stage's alone
	out := os.NewFile(reportFD, "report")
	spec, err := readSpec(os.NewFile(specFD, "spec"))
	if err != nil {
		sendReport(out, failure(fmt.Errorf("sandbox stage %s: read its spec: %w", args[1], err)))
		return 1, true
	}
	return stage(spec, out), true
}

func readSpec(f *os.File) (*Spec, error) {
	defer f.Close()
	var s Spec
	if err := json.NewDecoder(f).Decode(&s); err != nil {
		return nil, err
	}
	return &s, nil
}

// reportMu keeps events and the report whole: a stage has one report pipe.
var reportMu sync.Mutex

func sendReport(f *os.File, r report) {
	reportMu.Lock()
	defer reportMu.Unlock()
	// Nothing is left to tell if the parent is gone.
	_ = json.NewEncoder(f).Encode(r)
}

// readReport reads what a stage reported, passing its events to stopped;
// ok false when it reported nothing (it exec'd or died).
func readReport(r io.Reader, stopped chan<- syscall.Signal) (rep report, ok bool, err error) {
	dec := json.NewDecoder(r)
	for {
		var next report
		switch err := dec.Decode(&next); {
		case err == io.EOF:
			return rep, ok, nil
		case err != nil:
			return report{}, false, fmt.Errorf("sandbox stage sent an unreadable report: %w", err)
		case next.Stopped != 0:
			select {
			case stopped <- syscall.Signal(next.Stopped):
			default: // one pending stop is enough
			}
		default:
			rep, ok = next, true
		}
	}
}
