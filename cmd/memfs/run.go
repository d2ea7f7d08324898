package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	osexec "os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/fusefs"
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
		Usage: "run an agent command in a sandbox where only the session's stores are mounted",
		Description: "The command runs in private mount, PID and user namespaces: the mount root is read-only and\n" +
			"holds one directory per attached store, the database's directory is hidden, every host file\n" +
			"system is read-only, nosuid and nodev but the stores and --rw directories, and root inside is an\n" +
			"unprivileged host uid of the run's own range. It has no capability, no_new_privs, a seccomp\n" +
			"allowlist from Docker's default profile, its own /dev, devpts, /tmp (over the host's), IPC namespace and session\n" +
			"keyring, and a clean environment. $MEMFS_PROMPT_FILE names a file holding the memory section for\n" +
			"its system prompt. When it exits the session ends, every mount is gone and its exit status is\n" +
			"memfs's (128+N when killed by signal N).",
		ArgsUsage: "(--session ID | --store STORE[:read_only]...) -- CMD [ARG...]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "session", Usage: "run with the stores of session `ID` (it ends when CMD exits)"},
			&cli.StringSliceFlag{Name: "store", KeepSpace: true, Usage: "attach `STORE[:read_only]` to a new session; repeat for more (at most 8)"},
			&cli.StringSliceFlag{Name: "instructions", KeepSpace: true, Usage: "`STORE=TEXT`: instructions for the agent about a --store"},
			&cli.StringSliceFlag{Name: "write-prefix", KeepSpace: true, Usage: "`STORE=/FOLDER/`: the session may write only in this folder of the store; the rest is read-only to it"},
			runMountRootFlag("mount the stores at `DIR` inside the sandbox"),
			&cli.StringFlag{Name: "user", Usage: "run CMD as `UID[:GID]` (numbers or names, below 65536) instead of root"},
			&cli.StringFlag{Name: "log", Usage: "append the mount daemon's log to `FILE` (created 0600, never through a symlink) instead of standard error, off the screen of an interactive agent"},
			&cli.StringSliceFlag{Name: "rw", Usage: "keep host directory `DIR` writable for CMD (every other host file system is read-only to it); repeat for more"},
			&cli.StringSliceFlag{Name: "env", Usage: "set `K=V` in CMD's environment; repeat for more"},
			&cli.StringSliceFlag{Name: "pass-env", Usage: "pass variable `K` of memfs's environment on to CMD; repeat for more"},
			&cli.Int64Flag{Name: "uid-base", Value: -1, Usage: "map CMD's root to host uid and gid `N` (and its ids 1-65535 to the ones after it); default: a free range from 1879048192 on, one per run; a range overlapping a live run's is refused"},
			&cli.BoolFlag{Name: "allow-host-ids", Usage: "accept a --uid-base below 65536 or whose range holds a host user or group: the command is then those host users (logged)"},
			&cli.BoolFlag{Name: "require-userns", Usage: "fail instead of running CMD without a user namespace where the kernel or container refuses one"},
			&cli.IntFlag{Name: "pids", Value: sandbox.DefaultPids, Usage: "at most `N` processes and threads for CMD (0: no limit)"},
			&cli.StringFlag{Name: "memory", Usage: "at most `SIZE` of memory for CMD, e.g. 2G or 512M (needs a cgroup memory controller)"},
			&cli.StringFlag{Name: "tmp-size", Value: "64M", Usage: "at most `SIZE` written to CMD's private /tmp and home there (host memory, outside --memory)"},
			historyFlag(),
			checkpointFlag(),
			&cli.Int64Flag{Name: "max-unsaved-bytes", Value: fusefs.DefaultMaxUnsavedBytes, Usage: "the mount daemon holds at most `N` bytes of CMD's unsaved data (open buffers, files deleted while open, scratch files); a write past it fails with ENOSPC"},
			&cli.Float64Flag{Name: "cpus", Usage: "at most `N` CPUs' time for CMD, e.g. 1.5 (needs a cgroup cpu controller)"},
			&cli.IntFlag{Name: "cpu-weight", Value: sandbox.DefaultCPUWeight, Usage: "CMD's share of the CPU against other processes, as cgroup v2's cpu.weight (`W` from 1 to 10000; the mount daemons weigh 100), so that a busy CMD cannot starve them; 0 leaves it alone"},
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
	case sessionID != "" && len(c.StringSlice("write-prefix")) > 0:
		return usageFor(c, "--write-prefix applies to --store: a session's write prefixes were fixed when it was created")
	}
	if err := versions.CheckAttachmentCount(len(stores)); sessionID == "" && err != nil {
		return err
	}

	root, err := runMountRoot(c)
	if err != nil {
		return err
	}
	if err := runCommandExists(argv[0], root); err != nil {
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
	limits, err := runLimits(c)
	if err != nil {
		return err
	}
	rw, err := runRWDirs(c.StringSlice("rw"))
	if err != nil {
		return err
	}
	env, err := runEnviron(c.StringSlice("env"), c.StringSlice("pass-env"))
	if err != nil {
		return usageFor(c, "%v", err)
	}
	spec := &sandbox.Spec{MountRoot: root, Cmd: argv, User: who, ServeLog: logFile, RW: rw, Limits: limits, Env: env}
	if !versions.IsPostgres(dbPath) {
		// A PostgreSQL database has no file to hide: its URL reaches
		// only the daemon, outside the command's PID namespace, and no
		// MEMFS_ or PG variable reaches the command.
		spec.Hide, spec.Unreachable = runHidden(dbPath)
		runWarnReadable(dbPath)
	}
	spec.Dir, _ = os.Getwd()
	if err := runDirVisible(spec.Dir, dbPath, spec.Hide); err != nil {
		return err
	}
	// The database reaches the daemon in its environment, not its argv:
	// every process of the host can read another's command line, a
	// PostgreSQL URL's password with it.
	if err := os.Setenv("MEMFS_DB", dbPath); err != nil {
		return err
	}
	if c.Int64("max-unsaved-bytes") <= 0 {
		return usageFor(c, "--max-unsaved-bytes must be a positive number of bytes, not %d", c.Int64("max-unsaved-bytes"))
	}
	spec.Serve = []string{self, "mount", "--ready-fd", "3", "--max-unsaved-bytes", strconv.FormatInt(c.Int64("max-unsaved-bytes"), 10),
		"--history=" + strconv.FormatBool(c.Bool("history")), "--checkpoint=" + strconv.FormatBool(c.Bool("checkpoint"))} // completed with the session below
	if err := spec.Validate(); err != nil {
		return runSandboxError(err)
	}
	// Refuse early, before a session exists, what would fail later anyway.
	for _, check := range []func() error{sandbox.CheckPrivilege, sandbox.CheckFUSE, func() error { return sandbox.CheckMountRoot(root) }} {
		if err := check(); err != nil {
			return runSandboxError(err)
		}
	}

	ids, releaseIDs, err := runIDs(c)
	if err != nil {
		return runSandboxError(err)
	}
	defer releaseIDs()
	spec.IDs = ids
	if err := spec.Validate(); err != nil {
		return runSandboxError(err)
	}

	db, err := openDB(c)
	if err != nil {
		return err
	}
	// The run holds a mount lease on its session from the moment it is
	// created: killed at any point, this process leaves a lease that
	// lapses, and whoever uses the database next ends the session (unless
	// the daemon, with a lease of its own, still serves it).
	host, _ := os.Hostname()
	lease := &versions.MountLease{ID: versions.NewMountID(), Host: host, Mountpoint: root}
	sess, prompt, err := runSession(c, db, sessionID, stores, root, lease)
	if err != nil {
		db.Close()
		return err
	}
	stopLease := runHoldLease(db, *lease)
	code, err := runInSandbox(c, spec, sess, prompt, who)
	if eerr := runEndSession(c, sess.ID); err == nil {
		err = eerr
	}
	stopLease()
	if cerr := db.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close database: %w", cerr)
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

// runSession creates the session (--store) or loads it (--session),
// taking lease for it, and renders its prompt.
func runSession(c *cli.Context, db *versions.DB, id string, stores []string, root string, lease *versions.MountLease) (*versions.Session, string, error) {
	cx := ctx(c)
	var sess *versions.Session
	var err error
	if id != "" {
		if sess, err = resolveSession(cx, db, id); err != nil {
			return nil, "", err
		}
		if err := sess.CheckOpen(); err != nil {
			return nil, "", err
		}
		lease.SessionID = sess.ID
		if err := db.StartMount(cx, *lease); err != nil {
			return nil, "", fmt.Errorf("take a lease on session %s: %w", sess.ID, err)
		}
	} else {
		attach, err := runAttachments(cx, c, db, stores)
		if err != nil {
			return nil, "", err
		}
		if sess, err = db.CreateSessionFrom(cx, versions.SessionParams{Resources: attach, Lease: lease}); err != nil {
			return nil, "", err
		}
	}
	prompt, err := sessionPromptText(cx, db, sess, root, c.Bool("history"))
	if err != nil {
		// The session never ran: do not leave it open.
		_, _ = db.EndSession(cx, sess.ID)
		_ = db.EndMount(cx, lease.ID)
		return nil, "", err
	}
	return sess, prompt, nil
}

// runHoldLease renews the run's lease on its session until stop, which
// gives it up.
func runHoldLease(db *versions.DB, lease versions.MountLease) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(versions.LeaseRenew)
		defer t.Stop()
		superseded := false
		for {
			// At once first: rendering the prompt took part of the lease's
			// time, and the daemon holds no lease of its own yet. A failed
			// renewal is tried at the next tick.
			switch _, err := db.RenewMount(ctx, &lease); {
			case err == nil || ctx.Err() != nil:
			case versions.ErrorCode(err) == versions.CodeConflict: // a newer memfs upgraded the database
				if !superseded {
					slog.Error("memfs run: the session's lease lapsed, and a newer memfs upgraded the database meanwhile: stop this run and start it again with the newer memfs", "err", err)
				}
				superseded = true
			default:
				slog.Debug("memfs run: renew the session's lease", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		cancel()
		<-done
		if err := db.EndMount(context.Background(), lease.ID); err != nil {
			slog.Warn("memfs run: give up the session's lease; it lapses by itself", "err", err)
		}
	}
}

// runAttachments resolves --store and --instructions.
func runAttachments(ctx context.Context, c *cli.Context, db *versions.DB, stores []string) ([]versions.AttachmentParams, error) {
	attach := make([]versions.AttachmentParams, 0, len(stores))
	index := map[string]int{}
	for _, spec := range stores {
		s, access, err := resolveStoreSpec(ctx, db, spec)
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
	return attach, writePrefixes(ctx, c, db, attach, index)
}

// runInSandbox runs the command; everything the sandbox made, the mount root
// included, is gone when it returns, or soon after memfs is killed.
func runInSandbox(c *cli.Context, spec *sandbox.Spec, sess *versions.Session, prompt string, who *sandbox.User) (int, error) {
	spec.Prompt = prompt
	// The daemon ends the session too: it outlives a run killed by
	// SIGKILL long enough to unmount (its parent-death signal is SIGTERM).
	spec.Serve = append(spec.Serve, "--session", sess.ID, "--end-session")
	// The files belong to the command's user as the host knows it: the
	// kernel checks the modes the daemon reports against host ids.
	if uid, gid := spec.HostIDs(); who != nil || spec.IDs != nil {
		spec.Serve = append(spec.Serve, "--uid", strconv.Itoa(uid), "--gid", strconv.Itoa(gid))
	}
	spec.Serve = append(spec.Serve, spec.MountRoot)
	spec.Env = append(spec.Env,
		"MEMFS_PROMPT_FILE="+sandbox.PromptFile,
		"MEMFS_SESSION_ID="+sess.ID,
		"MEMFS_MOUNT_ROOT="+spec.MountRoot)
	slog.Debug("memfs run", "session", sess.ID, "root", spec.MountRoot, "cmd", spec.Cmd)
	code, err := sandbox.Run(spec, os.Stdin, c.App.Writer, c.App.ErrWriter)
	if err != nil {
		return 0, runSandboxError(err)
	}
	return code, nil
}

// runEnviron is the command's environment: PATH, TERM and LANG from
// memfs's, a HOME it can write, then --pass-env and --env. Nothing else of
// memfs's reaches it: not MEMFS_DB nor any other secret.
func runEnviron(set, pass []string) ([]string, error) {
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + sandbox.Home}
	if p := os.Getenv("PATH"); p != "" {
		env[0] = "PATH=" + p
	}
	for _, k := range []string{"TERM", "LANG"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for _, k := range pass {
		if k == "" || strings.Contains(k, "=") {
			return nil, fmt.Errorf("--pass-env %q: give a variable's name", k)
		}
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for _, kv := range set {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return nil, fmt.Errorf("--env %q is not K=V", kv)
		}
		env = append(env, kv)
	}
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "MEMFS_") {
			return nil, fmt.Errorf("%s: memfs sets the MEMFS_ variables itself; the database stays out of the command's reach", k)
		}
	}
	return env, nil
}

// runHidden is what the command must not see of the database: the
// directory holding it, as named and with symlinks resolved (SQLite keeps
// its -wal and -shm beside the file itself), and those files.
func runHidden(dbPath string) (dirs, files []string) {
	paths := []string{dbPath}
	if real, err := filepath.EvalSymlinks(dbPath); err == nil && real != dbPath {
		paths = append(paths, real)
	} else if dir, err := filepath.EvalSymlinks(filepath.Dir(dbPath)); err == nil && dir != filepath.Dir(dbPath) {
		paths = append(paths, filepath.Join(dir, filepath.Base(dbPath)))
	}
	for _, p := range paths {
		if d := filepath.Dir(p); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
		files = append(files, p, p+"-wal", p+"-shm", p+"-journal")
	}
	return dirs, files
}

// runDirVisible refuses a working directory the command would see empty:
// one that holds the database, or lies in its directory, which the run
// hides (as it must: the command could read or replace every store).
func runDirVisible(dir, dbPath string, hidden []string) error {
	if dir == "" {
		return nil
	}
	dirs := []string{dir}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		dirs = append(dirs, real)
	}
	for _, d := range dirs {
		for _, h := range hidden {
			if rel, err := filepath.Rel(h, d); err == nil && (rel == "." || !strings.HasPrefix(rel, "..")) {
				return &versions.Error{Code: versions.CodeInvalid, Message: fmt.Sprintf(
					"the working directory %s is in the database's directory %s (the database is %s), which memfs run hides from the command: it would see the directory empty; "+
						"keep the database in a directory of its own (the default, $XDG_DATA_HOME/memfs/memfs.db, or e.g. MEMFS_DB=$HOME/.local/share/memfs/memfs.db), or run from another directory",
					dir, h, dbPath)}
			}
		}
	}
	return nil
}

// runWarnReadable warns when the database or its journal files may be
// read by other users of the host (the command cannot reach them, but
// anyone else on the host could read every store there), or when others
// may replace them: a directory every user can write without the sticky
// bit. A directory others can only read is no risk when the files are
// private (memfs makes them 0600): it shows their names, not what they
// hold.
func runWarnReadable(dbPath string) {
	for _, p := range []string{dbPath, dbPath + "-wal", dbPath + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm()&0o004 == 0 {
			continue
		}
		slog.Warn("memfs run: the database file is readable by every user of the host, who can read every store in it; chmod 600 it", "path", p, "mode", fmt.Sprintf("%04o", fi.Mode().Perm()))
	}
	dir := filepath.Dir(dbPath)
	if fi, err := os.Stat(dir); err == nil && fi.Mode().Perm()&0o002 != 0 && fi.Mode()&os.ModeSticky == 0 {
		slog.Warn("memfs run: the database's directory is writable by every user of the host, who can replace or remove the database; chmod 755 it", "path", dir, "mode", fmt.Sprintf("%04o", fi.Mode().Perm()))
	}
}

// runIDs takes the host id range the command's user namespace maps, or nil
// where no user namespace can be made and --require-userns is not given.
func runIDs(c *cli.Context) (*sandbox.IDMap, func(), error) {
	if c.IsSet("uid-base") && c.Int64("uid-base") < 0 {
		return nil, nil, usageError("--uid-base %d is negative: give a host uid of 65536 or more, or leave it out for a free range", c.Int64("uid-base"))
	}
	ids, release, err := sandbox.AllocateIDs(c.Int64("uid-base"), c.Bool("allow-host-ids"))
	if err != nil {
		return nil, nil, err
	}
	if err := sandbox.CheckUserNamespace(ids); err != nil {
		release()
		if c.Bool("require-userns") {
			return nil, nil, &sandbox.Error{Kind: sandbox.KindPrivilege, ExitCode: 1, Message: fmt.Sprintf(
				"cannot create a user namespace (%v): allow them (sysctl user.max_user_namespaces; in a container, a seccomp profile that permits unshare/clone of user namespaces), or drop --require-userns", err)}
		}
		slog.Warn("memfs run: no user namespace here, so root inside is root on the host for the files it can reach (all read-only except the stores and --rw directories); run with --require-userns to refuse this", "reason", err.Error())
		return nil, func() {}, nil
	}
	return ids, release, nil
}

// runRWDirs resolves the --rw directories.
func runRWDirs(dirs []string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err == nil {
			var fi os.FileInfo
			if fi, err = os.Stat(abs); err == nil && !fi.IsDir() {
				err = errors.New("not a directory")
			}
		}
		if err != nil {
			return nil, &versions.Error{Code: versions.CodeInvalid, Message: fmt.Sprintf("--rw %s: %v; give an existing directory", d, err)}
		}
		out = append(out, abs)
	}
	return out, nil
}

// runLimits reads --pids, --memory and --cpus.
func runLimits(c *cli.Context) (sandbox.Limits, error) {
	l := sandbox.Limits{Pids: c.Int("pids"), CPUs: c.Float64("cpus"), CPUWeight: c.Int("cpu-weight")}
	if l.Pids < 0 || l.CPUs < 0 {
		return l, usageFor(c, "--pids and --cpus must not be negative")
	}
	if l.CPUWeight < 0 || l.CPUWeight > 10000 {
		return l, usageFor(c, "--cpu-weight must be from 1 to 10000 (or 0 to leave it alone), not %d", l.CPUWeight)
	}
	if m := c.String("memory"); m != "" {
		n, err := parseSize(m)
		if err != nil {
			return l, usageFor(c, "--memory %q: %v", m, err)
		}
		l.Memory = n
	}
	n, err := parseSize(c.String("tmp-size"))
	if err != nil {
		return l, usageFor(c, "--tmp-size %q: %v", c.String("tmp-size"), err)
	}
	l.Tmp = n
	return l, nil
}

// parseSize reads a byte count with an optional K, M, G or T suffix
// (powers of 1024).
func parseSize(s string) (int64, error) {
	mult := int64(1)
	t := strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(s)), "B")
	for i, suffix := range []string{"K", "M", "G", "T"} {
		if strings.HasSuffix(t, suffix) {
			t, mult = strings.TrimSuffix(t, suffix), int64(1)<<(10*(i+1))
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/mult {
		return 0, errors.New("give a positive size such as 512M or 2G")
	}
	return n * mult, nil
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
	if versions.IsPostgres(p) {
		return p, nil
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
// starts, and returns its absolute path ("" for standard error). It is never
// opened through a symlink, is created 0600, and is refused in a directory
// others may write (one could plant a link or a file there for memfs, run as
// root, to append to).
func runLogFile(name string) (string, error) {
	if name == "" {
		return "", nil
	}
	bad := func(why string) error {
		return &versions.Error{Code: versions.CodeInvalid, Message: fmt.Sprintf("cannot use the --log file %q: %s", name, why)}
	}
	path, err := filepath.Abs(name)
	if err != nil {
		return "", bad(err.Error())
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return "", bad(fmt.Sprintf("%v; give a file in an existing directory", err))
	}
	path = filepath.Join(dir, filepath.Base(path))
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return "", bad(err.Error())
	}
	if st.Mode&0o002 != 0 || (st.Mode&0o020 != 0 && st.Gid != 0) {
		return "", bad(fmt.Sprintf("its directory %s may be written by others; give a file in a directory only its owner writes", dir))
	}
	if st.Uid != 0 && int(st.Uid) != os.Geteuid() {
		return "", bad(fmt.Sprintf("its directory %s belongs to another user; give a file in a directory of root's or yours", dir))
	}
	f, err := sandbox.OpenLog(path)
	if err != nil {
		return "", bad(fmt.Sprintf("%v; give a regular file in a writable directory, not a symlink", err))
	}
	f.Close()
	return path, nil
}

// logSafe escapes, in every logged value, what a shell or a terminal would
// act on: a log line holds paths the agent chose, and a log appended to a
// file that is later sourced, or shown on a terminal, must not run or draw
// anything. Letters of any script, digits, spaces and path punctuation
// stay; any other character becomes \xNN for each of its bytes. A value
// with a space is quoted by the handler, which escapes quotes, backslashes
// and control characters, so in it only $ and ` are: sentences stay
// readable ("a store's directory", not "store\x27s").
func logSafe(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.MessageKey {
		return a // memfs's own words, never a value an agent chose
	}
	var s string
	switch v := a.Value.Resolve(); v.Kind() {
	case slog.KindString:
		s = v.String()
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			s = x.Error()
		case fmt.Stringer:
			s = x.String()
		default:
			return a
		}
	default:
		return a
	}
	if strings.ContainsRune(s, ' ') {
		s = commandHint.ReplaceAllString(s, "'$1'")
		return slog.String(a.Key, strings.NewReplacer("$", `\x24`, "`", `\x60`).Replace(s))
	}
	return slog.String(a.Key, escapeLogValue(s))
}

// commandHint is a command memfs names in its own words ("run `memfs
// version prune`"), as a refusal's reason carries it: plain words, flags
// and ids, nothing a shell would expand. In a logged value it is shown in
// single quotes, which no shell acts on inside the handler's double
// quotes, so that it reads as the command line shows it rather than as
// \x60memfs version prune\x60. Every other backtick is still escaped.
var commandHint = regexp.MustCompile("`(memfs(?: [A-Za-z0-9_./=:-]+)*)`")

func escapeLogValue(s string) string {
	safe := func(r rune) bool {
		return r == ' ' || strings.ContainsRune("_./:@%+,=-#[]{}", r) ||
			r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r))
	}
	if strings.IndexFunc(s, func(r rune) bool { return !safe(r) }) < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if safe(r) {
			b.WriteString(s[i : i+n])
		} else {
			for _, c := range []byte(s[i : i+n]) {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		}
		i += n
	}
	return b.String()
}

// runCommandExists refuses a command that cannot be found before a session
// is made and stores are mounted for it: the sandbox sees the host's files,
// so what is not on this PATH (or at this path) is not there either. Exit
// 127, as a shell's "command not found".
func runCommandExists(name, root string) error {
	if strings.HasPrefix(name, strings.TrimSuffix(root, "/")+"/") {
		return nil // in the session's own mount, which does not exist yet
	}
	if _, err := osexec.LookPath(name); err != nil {
		return cli.Exit(fmt.Sprintf("run: %s: command not found (%v); give a command on PATH or its path; no session was made", name, err), 127)
	}
	return nil
}
