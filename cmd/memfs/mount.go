package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/fusefs"
	"github.com/memfs/memfs/versions"
)

func mountCommand() *cli.Command {
	return &cli.Command{
		Name:  "mount",
		Usage: "mount a session's stores as files, in the foreground (SIGINT/SIGTERM unmount)",
		Description: "MOUNTPOINT gets one directory per attached store, named by its slug; every file saved\n" +
			"there becomes a version attributed to the session. With --store a session is created for\n" +
			"the mount and ended when it exits. A stale mount left by a killed daemon is detached first.",
		ArgsUsage: "(--session ID | --store STORE[:read_only]...) MOUNTPOINT",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "session", Usage: "mount the stores of session `ID`"},
			&cli.StringSliceFlag{Name: "store", KeepSpace: true, Usage: "attach `STORE[:read_only]` to a new session for this mount; repeat for more"},
			&cli.StringSliceFlag{Name: "write-prefix", KeepSpace: true, Usage: "`STORE=/FOLDER/`: the session may write only in this folder of the store; the rest is read-only to it"},
			&cli.BoolFlag{Name: "strict", Usage: "fail a save with ESTALE when another writer saved the file since it was read (default: record it as a conflict)"},
			&cli.IntFlag{Name: "ready-fd", Value: -1, Usage: "write \"ready\\n\" to file descriptor `N` and close it once the mount serves requests"},
			&cli.StringFlag{Name: "durability", Value: "normal", Usage: "normal (survives a crash of any process) or full (survives a power loss; slower saves)"},
			&cli.IntFlag{Name: "uid", Value: -1, Usage: "owner `UID` of every file (default: the daemon's)"},
			&cli.IntFlag{Name: "gid", Value: -1, Usage: "group `GID` of every file (default: the daemon's)"},
			&cli.BoolFlag{Name: "debug", Usage: "log every FUSE request (very verbose)"},
			historyFlag(),
			checkpointFlag(),
			&cli.Int64Flag{Name: "max-unsaved-bytes", Value: fusefs.DefaultMaxUnsavedBytes, Usage: "hold at most `N` bytes of unsaved data (open buffers, files deleted while open, scratch files); a write past it fails with ENOSPC"},
			&cli.IntFlag{Name: "max-scratch-files", Value: fusefs.DefaultMaxScratchFiles, Usage: "hold at most `N` scratch files (editors' swap, lock and backup files, kept in the daemon's memory only); creating one more fails with ENOSPC"},
			&cli.StringFlag{Name: "metrics-addr", Usage: "serve Prometheus metrics (saves, refusals by errno, change-feed lag, lease lapses, recovery) at http://`ADDR`/metrics"},
			&cli.BoolFlag{Name: "end-session", Usage: "end the --session when the mount exits, as a mount with --store does (memfs run's daemon: a killed run still ends its session)"},
		},
		Action: mountAction,
	}
}

func mountAction(c *cli.Context) error {
	if err := wantArgs(c, 1, "MOUNTPOINT"); err != nil {
		return err
	}
	mnt := c.Args().First()
	sessionID, specs := c.String("session"), c.StringSlice("store")
	if (sessionID == "") == (len(specs) == 0) {
		return usageFor(c, "give either --session ID or one or more --store STORE[:read_only]")
	}
	if sessionID != "" && len(c.StringSlice("write-prefix")) > 0 {
		return usageFor(c, "--write-prefix applies to --store: a session's write prefixes were fixed when it was created")
	}
	if sessionID == "" && c.Bool("end-session") {
		return usageFor(c, "--end-session applies to --session: a mount with --store ends the session it creates anyway")
	}
	var opts versions.Options
	switch d := c.String("durability"); d {
	case "normal":
	case "full":
		opts.Durability = versions.DurabilityFull
	default:
		return usageFor(c, "--durability must be normal or full, not %q", d)
	}
	// Catch signals from the start: a supervisor may stop us right after
	// (or before) we say ready, and that must still unmount cleanly.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	// Its log may go to a terminal it runs in the background of (memfs
	// run): with `stty tostop` a write would stop it, and the mount with it.
	signal.Ignore(syscall.SIGTTOU)
	o := fusefs.Options{Strict: c.Bool("strict"), Debug: c.Bool("debug"), Logger: slog.Default(), MaxUnsavedBytes: c.Int64("max-unsaved-bytes"),
		HideHistory: !c.Bool("history")}
	if o.MaxUnsavedBytes <= 0 {
		return usageFor(c, "--max-unsaved-bytes must be a positive number of bytes, not %d", o.MaxUnsavedBytes)
	}
	if o.MaxScratchFiles = c.Int("max-scratch-files"); o.MaxScratchFiles <= 0 {
		return usageFor(c, "--max-scratch-files must be a positive number, not %d", o.MaxScratchFiles)
	}
	if uid, gid := c.Int("uid"), c.Int("gid"); uid >= 0 || gid >= 0 {
		if uid < 0 || gid < 0 {
			return usageFor(c, "give --uid and --gid together")
		}
		// 2^32-1 is (uid_t)-1, "no change" to the kernel; larger values
		// would wrap round, to root among others.
		const maxID = 1<<32 - 2
		if uid > maxID || gid > maxID {
			return usageFor(c, "--uid %d --gid %d: an id is at most %d", uid, gid, maxID)
		}
		o.UID, o.GID = uint32(uid), uint32(gid)
	}
	// Everything that can be wrong with the mountpoint or the machine is
	// said before a session is created (and left behind, ended).
	if err := checkMountpoint(mnt); err != nil {
		return err
	}
	if err := checkFuseAccess(); err != nil {
		return err
	}
	path, err := dbPath(c)
	if err != nil {
		return err
	}
	db, err := versions.Open(path, opts)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetGuardObserver(logGuard)
	slog.Info("opened the database", "backend", db.Backend(), "at", db.Where()) // never a password
	bg := context.Background()
	var sess *versions.Session
	if sessionID != "" {
		if sess, err = resolveSession(bg, db, sessionID); err != nil {
			return err
		}
	} else {
		if sess, err = sessionFor(bg, c, db, specs); err != nil {
			return err
		}
		slog.Info("created a session for this mount", "session", sess.ID)
	}
	if c.Bool("checkpoint") {
		// A mount that cannot take it still serves: the checkpoint is
		// for browsing and undoing later, not for the session's saves.
		if cps, err := db.CheckpointSession(bg, sess.ID); err != nil {
			slog.Warn("taking the session's checkpoint failed", "session", sess.ID, "err", err)
		} else if len(cps) > 0 {
			slog.Info("took the session's checkpoint", "session", sess.ID, "stores", len(cps))
		}
	}
	if sessionID == "" || c.Bool("end-session") {
		defer func() {
			if _, err := db.EndSession(bg, sess.ID); err != nil {
				slog.Error("ending the mount's session failed", "session", sess.ID, "err", err)
			}
		}()
	}
	if addr := c.String("metrics-addr"); addr != "" {
		m := newMountMetrics()
		m.countLeases(db)
		m.countWrites(db)
		stop, err := m.serve(addr)
		if err != nil {
			return err
		}
		defer stop()
		o.Observer = m
		db.SetGuardObserver(func(e versions.GuardEvent) {
			logGuard(e)
			m.Guarded(e)
		})
	}
	srv, err := fusefs.Mount(mnt, db, sess, o)
	if err != nil {
		return err
	}
	if fd := c.Int("ready-fd"); fd >= 0 {
		signalReady(fd)
	}
	gone := make(chan struct{})
	go func() {
		srv.Wait()
		close(gone)
	}()
	select {
	case sig := <-sigs:
		slog.Info("unmounting", "signal", sig.String())
		return srv.Unmount()
	case <-gone:
		slog.Info("unmounted from outside")
		return srv.Unmount()
	}
}

// sessionFor creates the session of a mount given --store specs.
func sessionFor(ctx context.Context, c *cli.Context, db *versions.DB, specs []string) (*versions.Session, error) {
	attach := make([]versions.AttachmentParams, 0, len(specs))
	index := map[string]int{}
	for _, spec := range specs {
		st, access, err := resolveStoreSpec(ctx, db, spec)
		if err != nil {
			return nil, err
		}
		index[st.ID] = len(attach)
		attach = append(attach, versions.AttachmentParams{StoreID: st.ID, Access: access})
	}
	if err := writePrefixes(ctx, c, db, attach, index); err != nil {
		return nil, err
	}
	return db.CreateSession(ctx, attach)
}

// signalReady tells a supervisor (memfs run) that the mount serves requests.
func signalReady(fd int) {
	f := os.NewFile(uintptr(fd), "ready-fd")
	if f == nil {
		slog.Warn("--ready-fd is not an open file descriptor", "fd", fd)
		return
	}
	if _, err := fmt.Fprintln(f, "ready"); err != nil {
		slog.Warn("writing ready to --ready-fd failed", "fd", fd, "err", err)
	}
	f.Close()
}

// historyFlag shows or hides the read-only .history tree in the mount root.
func historyFlag() cli.Flag {
	return &cli.BoolFlag{Name: "history", Value: true, Usage: "show every file's versions, read-only, under .history/STORE/PATH/ in the mount root (cp one back over the file to restore it); --history=false hides them"}
}
