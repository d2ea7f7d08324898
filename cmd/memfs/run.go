package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/sandbox"
	"github.com/memfs/memfs/versions"
)

// The sandbox re-executes this binary for its namespace stages; they must
// not reach the command line parser.
func init() {
	if code, ok := sandbox.RunStage(os.Args); ok {
		os.Exit(code)
	}
}

func runCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "run an agent command in a sandbox where only the session's stores are mounted (X2–X4)",
		Description: "The command runs in a private mount namespace: the mount root is read-only and holds one\n" +
			"directory per attached store, the database's directory is hidden, and the command has no\n" +
			"capability (so it cannot mount, unmount or remount) and no_new_privs. $MEMFS_PROMPT_FILE names\n" +
			"a file holding the memory section for its system prompt. When it exits the session ends, every\n" +
			"mount is gone and its exit status is memfs's (128+N when killed by signal N).",
		ArgsUsage: "(--session ID | --store STORE[:read_only]...) -- CMD [ARG...]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "session", Usage: "run with the stores of session `ID` (it ends when CMD exits)"},
			&cli.StringSliceFlag{Name: "store", Usage: "attach `STORE[:read_only]` to a new session; repeat for more (at most 8)"},
			&cli.StringSliceFlag{Name: "instructions", Usage: "`STORE=TEXT`: instructions for the agent about a --store"},
			runMountRootFlag("mount the stores at `DIR` inside the sandbox"),
			&cli.StringFlag{Name: "user", Usage: "run CMD as `UID[:GID]` (numbers or names) instead of root"},
			&cli.StringFlag{Name: "log", Usage: "append the mount daemon's log to `FILE` instead of standard error, off the screen of an interactive agent"},
		},
		Action: runSandboxed,
	}
}

func runSandboxed(c *cli.Context) error {
	argv := c.Args().Slice()
	if len(argv) == 0 {
		return usageFor(c, "needs a command to run after --")
	}
	stores, sessionID := c.StringSlice("store"), c.String("session")
	switch {
	case sessionID == "" && len(stores) == 0:
		return usageFor(c, "needs --session ID or at least one --store")
	case sessionID != "" && len(stores) > 0:
		return usageFor(c, "give --session or --store, not both")
	case sessionID != "" && len(c.StringSlice("instructions")) > 0:
		return usageFor(c, "--instructions applies to --store: a session's instructions were fixed when it was created")
	}
	if err := versions.CheckAttachmentCount(len(stores)); sessionID == "" && err != nil {
		return err
	}
	root, err := runMountRoot(c)
	if err != nil {
		return err
	}
	who, err := runUser(c.String("user"))
	if err != nil {
		return usageFor(c, "%v", err)
	}
	dbPath, err := runDBPath(c)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the memfs binary to start the mount daemon: %w", err)
	}
	logFile, err := runLogFile(c.String("log"))
	if err != nil {
		return err
	}
	spec := &sandbox.Spec{MountRoot: root, Hide: []string{filepath.Dir(dbPath)}, Cmd: argv, User: who, ServeLog: logFile}
	spec.Dir, _ = os.Getwd()
	spec.Serve = []string{self, "--db", dbPath, "mount", "--ready-fd", "3"} // completed with the session below
	if err := spec.Validate(); err != nil {
		return runSandboxError(err)
	}
	// Refuse early, before a session exists, what would fail later anyway.
	for _, check := range []func() error{sandbox.CheckPrivilege, sandbox.CheckFUSE, func() error { return sandbox.CheckMountRoot(root) }} {
		if err := check(); err != nil {
			return runSandboxError(err)
		}
	}

	db, err := openDB(c)
	if err != nil {
		return err
	}
	sess, prompt, err := runSession(c, db, sessionID, stores, root)
	if cerr := db.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close database: %w", cerr)
	}
	if err != nil {
		return err
	}
	code, err := runInSandbox(c, spec, sess, prompt, who)
	if eerr := runEndSession(c, sess.ID); err == nil {
		err = eerr
	}
	if err != nil {
		return err
	}
	if code != 0 {
		// The command's own status; an empty message tells main not to
		// print anything.
		return cli.Exit("", code)
	}
	return nil
}

// runSession creates the session (--store) or loads it (--session) and
// renders its prompt.
func runSession(c *cli.Context, db *versions.DB, id string, stores []string, root string) (*versions.Session, string, error) {
	cx := ctx(c)
	var sess *versions.Session
	var err error
	if id != "" {
		if sess, err = db.GetSession(cx, id); err != nil {
			return nil, "", err
		}
		if err := sess.CheckOpen(); err != nil {
			return nil, "", err
		}
	} else {
		attach, err := runAttachments(cx, c, db, stores)
		if err != nil {
			return nil, "", err
		}
		if sess, err = db.CreateSession(cx, attach); err != nil {
			return nil, "", err
		}
	}
	prompt, err := sessionPromptText(cx, db, sess, root)
	if err != nil {
		// The session never ran: do not leave it open.
		_, _ = db.EndSession(cx, sess.ID)
		return nil, "", err
	}
	return sess, prompt, nil
}

// runAttachments resolves --store and --instructions.
func runAttachments(ctx context.Context, c *cli.Context, db *versions.DB, stores []string) ([]versions.AttachmentParams, error) {
	attach := make([]versions.AttachmentParams, 0, len(stores))
	index := map[string]int{}
	for _, spec := range stores {
		ref, access := parseStoreSpec(spec)
		s, err := resolveStore(ctx, db, ref)
		if err != nil {
			return nil, err
		}
		index[s.ID] = len(attach)
		attach = append(attach, versions.AttachmentParams{StoreID: s.ID, Access: access})
	}
	for _, p := range c.StringSlice("instructions") {
		ref, text, ok := strings.Cut(p, "=")
		if !ok || ref == "" {
			return nil, usageFor(c, "--instructions %q is not STORE=TEXT", p)
		}
		s, err := resolveStore(ctx, db, ref)
		if err != nil {
			return nil, err
		}
		i, ok := index[s.ID]
		if !ok {
			return nil, usageFor(c, "--instructions names %s, which no --store attaches", ref)
		}
		attach[i].Instructions = &text
	}
	return attach, nil
}

// runInSandbox writes the prompt file, prepares the mount root and runs the
// command; everything it made is gone when it returns.
func runInSandbox(c *cli.Context, spec *sandbox.Spec, sess *versions.Session, prompt string, who *sandbox.User) (int, error) {
	dir, err := os.MkdirTemp("", "memfs-run-")
	if err != nil {
		return 0, fmt.Errorf("make a directory for the prompt file: %w", err)
	}
	defer os.RemoveAll(dir)
	promptFile := filepath.Join(dir, "memory-prompt.md")
	if err := os.Chmod(dir, 0o755); err != nil {
		return 0, err
	}
	if err := os.WriteFile(promptFile, []byte(prompt), 0o644); err != nil {
		return 0, fmt.Errorf("write the prompt file: %w", err)
	}
	removeRoot, err := sandbox.MakeMountRoot(spec.MountRoot)
	if err != nil {
		return 0, runSandboxError(err)
	}
	defer removeRoot()

	spec.PromptDir = dir
	// The daemon ends the session too: it outlives a run killed by
	// SIGKILL long enough to unmount (its parent-death signal is SIGTERM).
	spec.Serve = append(spec.Serve, "--session", sess.ID, "--end-session")
	if who != nil {
		spec.Serve = append(spec.Serve, "--uid", strconv.Itoa(int(who.UID)), "--gid", strconv.Itoa(int(who.GID)))
	}
	spec.Serve = append(spec.Serve, spec.MountRoot)
	spec.Env = append(runEnviron(),
		"MEMFS_PROMPT_FILE="+promptFile,
		"MEMFS_SESSION_ID="+sess.ID,
		"MEMFS_MOUNT_ROOT="+spec.MountRoot)
	slog.Debug("memfs run", "session", sess.ID, "root", spec.MountRoot, "cmd", spec.Cmd)
	code, err := sandbox.Run(spec, os.Stdin, c.App.Writer, c.App.ErrWriter)
	if err != nil {
		return 0, runSandboxError(err)
	}
	return code, nil
}

// runEnviron is memfs's environment for the command, less what would point
// it at the hidden database.
func runEnviron() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MEMFS_") {
			env = append(env, kv)
		}
	}
	return env
}

// runEndSession ends the session on a fresh handle: the run may have taken
// long, and the database is the daemon's meanwhile.
func runEndSession(c *cli.Context, id string) error {
	return withDB(c, func(ctx context.Context, db *versions.DB) error {
		_, err := db.EndSession(ctx, id)
		if err != nil {
			return fmt.Errorf("end session %s: %w", id, err)
		}
		return nil
	})
}

func runDBPath(c *cli.Context) (string, error) {
	p := c.String("db")
	if p == "" {
		var err error
		if p, err = versions.DefaultPath(); err != nil {
			return "", err
		}
	}
	return filepath.Abs(p)
}

// runUser parses --user UID[:GID], numbers or names; without a GID the
// user's primary group, or the UID's number.
func runUser(s string) (*sandbox.User, error) {
	if s == "" {
		return nil, nil
	}
	uidPart, gidPart, hasGID := strings.Cut(s, ":")
	u := &sandbox.User{}
	uid, err := strconv.ParseUint(uidPart, 10, 32)
	var known *user.User
	if err != nil {
		if known, err = user.Lookup(uidPart); err != nil {
			return nil, fmt.Errorf("--user %q: no such user: give a numeric UID[:GID] or an existing user name", s)
		}
		uid, _ = strconv.ParseUint(known.Uid, 10, 32)
	} else {
		known, _ = user.LookupId(uidPart)
	}
	u.UID, u.GID = uint32(uid), uint32(uid)
	if known != nil {
		if g, err := strconv.ParseUint(known.Gid, 10, 32); err == nil {
			u.GID = uint32(g)
		}
	}
	if hasGID {
		gid, err := strconv.ParseUint(gidPart, 10, 32)
		if err != nil {
			g, lerr := user.LookupGroup(gidPart)
			if lerr != nil {
				return nil, fmt.Errorf("--user %q: no such group %q: give a numeric GID or an existing group name", s, gidPart)
			}
			gid, _ = strconv.ParseUint(g.Gid, 10, 32)
		}
		u.GID = uint32(gid)
	}
	return u, nil
}

// runSandboxError maps sandbox failures onto the contract's exit codes.
func runSandboxError(err error) error {
	var e *sandbox.Error
	if !errors.As(err, &e) {
		return err
	}
	switch e.Kind {
	case sandbox.KindBusy:
		return &versions.Error{Code: versions.CodeConflict, Message: e.Message}
	case sandbox.KindInvalid:
		return &versions.Error{Code: versions.CodeInvalid, Message: e.Message}
	case sandbox.KindExec:
		return cli.Exit(e.Message, e.ExitCode)
	}
	return err
}

// runLogFile checks that the --log file can be written, before anything
// starts, and returns its absolute path ("" for standard error).
func runLogFile(name string) (string, error) {
	if name == "" {
		return "", nil
	}
	path, err := filepath.Abs(name)
	if err == nil {
		var f *os.File
		if f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600); err == nil {
			err = f.Close()
		}
	}
	if err != nil {
		return "", &versions.Error{Code: versions.CodeInvalid, Message: fmt.Sprintf("cannot write the --log file %s: %v; give a file in a writable directory", name, err)}
	}
	return path, nil
}
