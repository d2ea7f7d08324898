package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/versions"
)

// A store as of any moment, from the command line: checkpoints, restore
// --as-of, undo --session and store fork. The engine does the work
// (versions/asof.go, checkpoints.go, rewind.go, undo.go, fork.go); these
// commands parse, print the plan, ask, and print what was done.

const whenUsage = "WHEN is a session id (the store as that session began), a checkpoint's name, an age (2h, 3d, \"2 hours ago\": that long before now),\n" +
	"a date (2026-12-01: 00:00 UTC, as in the mount's .history/STORE@2026-12-01) or an RFC 3339 time (2026-12-01T10:00:00Z)."

func checkpointCommand() *cli.Command {
	return &cli.Command{
		Name:  "checkpoint",
		Usage: "name the present moment of a store's history, to browse (.history/STORE@NAME/), restore or fork it later",
		Subcommands: []*cli.Command{
			{
				Name:      "create",
				Usage:     "take a checkpoint of the store as it is now and print its name",
				ArgsUsage: "STORE",
				Description: "A name begins with a letter and holds letters, digits, '.', '_' and '-' (it may not read as a\n" +
					"date, a time or a session id). Without --name, one is made from the time.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "name", Usage: "the checkpoint's `NAME`"},
					&cli.StringFlag{Name: "note", Usage: "a `NOTE` saying why"},
				},
				Action: checkpointCreate,
			},
			{Name: "list", Usage: "list a store's checkpoints, oldest first", ArgsUsage: "STORE", Action: checkpointList},
			{Name: "delete", Usage: "delete a checkpoint (the versions stay until pruned)", ArgsUsage: "STORE NAME", Action: checkpointDelete},
		},
	}
}

func checkpointCreate(c *cli.Context) error {
	if err := wantArgs(c, 1, "STORE"); err != nil {
		return err
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		cp, err := db.CreateCheckpoint(ctx, s.ID, versions.CheckpointOptions{Name: c.String("name"), Note: c.String("note")}, cliActor())
		if err != nil {
			return err
		}
		return emit(c, cp, func(w io.Writer) { fmt.Fprintln(w, cp.Name) })
	})
}

func checkpointList(c *cli.Context) error {
	if err := wantArgs(c, 1, "STORE"); err != nil {
		return err
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		list, err := db.ListCheckpoints(ctx, s.ID)
		if err != nil {
			return err
		}
		return emit(c, versions.Page[versions.Checkpoint]{Data: list}, func(w io.Writer) {
			t := table(w)
			row(t, "NAME", "KIND", "TAKEN", "BY", "AT VERSION", "NOTE")
			for _, cp := range list {
				v := cp.VersionID
				if v == "" {
					v = "(empty store)"
				}
				row(t, cp.Name, string(cp.Kind), when(cp.CreatedAt), actor(cp.CreatedBy), v, oneLine(cp.Note, 60))
			}
			t.Flush()
		})
	})
}

func checkpointDelete(c *cli.Context) error {
	if err := wantArgs(c, 2, "STORE", "NAME"); err != nil {
		return err
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		cp, err := db.DeleteCheckpoint(ctx, s.ID, c.Args().Get(1))
		if err != nil {
			return err
		}
		return emit(c, cp, func(io.Writer) { confirm(c, "deleted checkpoint %s of store %s", cp.Name, s.ID) })
	})
}

// restoreAsOfFlags are restore's flags for a whole store.
func restoreAsOfFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "as-of", Usage: "bring the whole store back to how it was at `WHEN` (then give only STORE)"},
		&cli.BoolFlag{Name: "dry-run", Usage: "with --as-of: print the plan, change nothing"},
		yesFlag(),
	}
}

// restoreAsOf is memfs restore STORE --as-of WHEN.
func restoreAsOf(c *cli.Context) error {
	if err := wantArgs(c, 1, "STORE"); err != nil {
		return err
	}
	if c.String("path") != "" {
		return usageFor(c, "--path restores one version; --as-of restores the whole store: give one of them")
	}
	if !c.Bool("dry-run") {
		if err := needsYes(c); err != nil {
			return err
		}
	}
	when := asOfWhen(c.String("as-of"), time.Now())
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		what := fmt.Sprintf("restore store %s as of %s", s.ID, when)
		apply := func() (*versions.Plan, error) { return db.RestoreAsOf(ctx, s.ID, when, false, cliActor()) }
		if !mustAsk(c) {
			return rewind(c, nil, what, apply, false)
		}
		plan, err := db.RestoreAsOf(ctx, s.ID, when, true, cliActor())
		if err != nil {
			return err
		}
		what = fmt.Sprintf("restore store %s as of %s", s.ID, describeAsOf(plan.AsOf))
		return rewind(c, plan, what, apply, false)
	})
}

// describeAsOf says how a WHEN was read.
func describeAsOf(a *versions.AsOf) string {
	if a == nil {
		return "now"
	}
	t := a.Time.UTC().Format(time.RFC3339)
	switch a.Reading {
	case "session":
		return fmt.Sprintf("%s (when that session began, %s)", a.When, t)
	case "checkpoint":
		return fmt.Sprintf("checkpoint %s (%s)", a.When, t)
	}
	return t
}

// rewind prints a plan, and unless --dry-run asks, applies it and prints
// what was done. strict: anything skipped exits 4.
func rewind(c *cli.Context, plan *versions.Plan, what string, apply func() (*versions.Plan, error), strict bool) error {
	dry := c.Bool("dry-run")
	if plan == nil {
		// Nobody is asked (--yes): the plan is made once, by the run
		// that applies it, and printed as applied.
		done, err := apply()
		if err != nil {
			return err
		}
		if !asJSON(c) {
			printPlan(c.App.Writer, done)
		}
		plan = &versions.Plan{}
		return rewindDone(c, plan, done, what, strict)
	}
	if !asJSON(c) {
		printPlan(c.App.Writer, plan)
	}
	if plan.Writes() == 0 {
		if asJSON(c) {
			if err := emit(c, plan, nil); err != nil {
				return err
			}
		}
		confirm(c, "%s: nothing to do", what)
		return skippedExit(plan, strict)
	}
	if dry {
		if asJSON(c) {
			if err := emit(c, plan, nil); err != nil {
				return err
			}
		}
		confirm(c, "%s: would write %s (dry run: nothing changed)", what, counted(plan.Writes(), "version", "versions"))
		return skippedExit(plan, strict)
	}
	if err := confirmed(c, "%s, writing %s?", what, counted(plan.Writes(), "version", "versions")); err != nil {
		return err
	}
	done, err := apply()
	if err != nil {
		return err
	}
	return rewindDone(c, plan, done, what, strict)
}

// rewindDone prints what an applied plan did (the skips the plan printed
// before did not show) and picks the exit code.
func rewindDone(c *cli.Context, plan, done *versions.Plan, what string, strict bool) error {
	if asJSON(c) {
		if err := emit(c, done, nil); err != nil {
			return err
		}
	} else if len(plan.Changes) > 0 {
		for _, ch := range done.Changes {
			if ch.Action == versions.ActSkip && !skippedIn(plan, ch.MemoryID) {
				printPlan(c.App.Writer, &versions.Plan{Changes: []versions.PlannedChange{ch}})
			}
		}
	}
	if done.Safety != nil {
		confirm(c, "%s: wrote %s after safety checkpoint %s (to go back: memfs restore %s --as-of %s)",
			what, counted(done.Writes(), "version", "versions"), done.Safety.Name, done.StoreID, done.Safety.Name)
	} else {
		confirm(c, "%s: nothing to do", what)
	}
	return skippedExit(done, strict)
}

func skippedIn(p *versions.Plan, memoryID string) bool {
	for _, ch := range p.Changes {
		if ch.MemoryID == memoryID && ch.Action == versions.ActSkip {
			return true
		}
	}
	return false
}

func skippedExit(p *versions.Plan, strict bool) error {
	if strict && p.Count(versions.ActSkip) > 0 {
		return cli.Exit("", exitConflict)
	}
	return nil
}

// printPlan writes one line per change: action, path, and what it comes
// from or why it is skipped.
func printPlan(w io.Writer, p *versions.Plan) {
	t := table(w)
	for _, ch := range p.Changes {
		var note []string
		if ch.FromPath != "" {
			note = append(note, "from "+ch.FromPath)
		}
		if ch.VersionID != "" && ch.Action != versions.ActSkip {
			note = append(note, "content of "+ch.VersionID)
		}
		if ch.Reason != "" {
			note = append(note, ch.Reason)
		}
		row(t, string(ch.Action), ch.Path, strings.Join(note, "; "))
	}
	t.Flush()
}

func undoCommand() *cli.Command {
	return &cli.Command{
		Name:      "undo",
		Usage:     "revert every change a session made to a store (or to each of its stores)",
		ArgsUsage: "[STORE] --session ID",
		Description: "Each memory the session wrote goes back to its version before the session's first change to it\n" +
			"(renamed back if the session moved it); memories it created are deleted. A memory someone else\n" +
			"changed after the session is a conflict: listed and skipped unless --force. A session still running\n" +
			"is refused unless --force. Exits 4 when anything was skipped; an undo that finds nothing left to do exits 0.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "session", Usage: "the session `ID` to undo (required)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the plan, change nothing"},
			&cli.BoolFlag{Name: "force", Usage: "revert memories changed after the session too, and undo a running session"},
			yesFlag(),
		},
		Action: undo,
	}
}

func undo(c *cli.Context) error {
	if err := wantArgs(c, 0, "STORE"); err != nil {
		return err
	}
	sessionID := c.String("session")
	if sessionID == "" {
		return usageFor(c, "needs --session ID")
	}
	if !c.Bool("dry-run") {
		if err := needsYes(c); err != nil {
			return err
		}
	}
	o := versions.UndoOptions{DryRun: true, Force: c.Bool("force")}
	return withDB(c, func(ctx context.Context, db *versions.DB) error {
		sess, err := resolveSession(ctx, db, sessionID)
		if err != nil {
			return err
		}
		sessionID = sess.ID
		var stores []string
		if ref := c.Args().First(); ref != "" {
			s, err := resolveStore(ctx, db, ref)
			if err != nil {
				return err
			}
			stores = []string{s.ID}
		} else {
			for _, a := range sess.Resources {
				stores = append(stores, a.StoreID)
			}
		}
		// finished are the stores this run went through (what it did in
		// each is printed above); an error in a later one must not read as
		// if nothing had been done.
		var finished []string
		stopped := func(id string, err error) error {
			if len(finished) == 0 || c.Bool("dry-run") {
				return err
			}
			return fmt.Errorf("undo of session %s went through %s (above: what it did in each); stopped at store %s, which is unchanged, as are the stores after it: %w",
				sessionID, strings.Join(finished, ", "), id, err)
		}
		var firstErr error
		wrote := 0
		for _, id := range stores {
			what := fmt.Sprintf("undo session %s in store %s", sessionID, id)
			apply := func() (*versions.Plan, error) {
				real := o
				real.DryRun = false
				return db.UndoSession(ctx, id, sessionID, real, cliActor())
			}
			var plan *versions.Plan
			var err error
			if mustAsk(c) {
				plan, err = db.UndoSession(ctx, id, sessionID, o, cliActor())
			} else {
				plan, err = apply() // planned by the run that applies it
			}
			if len(stores) > 1 && (versions.SessionWroteNothing(err) || versions.ErrorCode(err) == versions.CodeNotFound && strings.Contains(err.Error(), id)) {
				continue // a store the session did not write, or deleted since
			}
			if err != nil {
				return stopped(id, err)
			}
			wrote++
			if mustAsk(c) {
				err = rewind(c, plan, what, apply, true)
			} else {
				if !asJSON(c) {
					printPlan(c.App.Writer, plan)
				}
				err = rewindDone(c, &versions.Plan{}, plan, what, true)
			}
			if err != nil && exitCode(err) != exitConflict {
				return stopped(id, err)
			}
			finished = append(finished, id)
			if err != nil && firstErr == nil {
				firstErr = err
			}
		}
		if wrote == 0 {
			return &versions.Error{Code: versions.CodeNotFound, Message: fmt.Sprintf("session %s wrote nothing in any of its stores: there is nothing to undo", sessionID)}
		}
		return firstErr
	})
}

// storeForkCommand is memfs store fork.
func storeForkCommand() *cli.Command {
	return &cli.Command{
		Name:        "fork",
		Usage:       "make a new store from this one's content (as of a moment), print its id",
		ArgsUsage:   "STORE --name NEW",
		Description: whenUsage + "\nWith --with-history the versions up to WHEN are copied too (new ids, original actors and times).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "name", Usage: "the new store's `NAME` (required)"},
			&cli.StringFlag{Name: "as-of", Usage: "fork the store as it was at `WHEN` (default: now)"},
			&cli.BoolFlag{Name: "with-history", Usage: "copy the versions up to WHEN as well"},
			&cli.BoolFlag{Name: "allow-duplicate", Usage: "allow a name another store already has"},
		},
		Action: storeFork,
	}
}

func storeFork(c *cli.Context) error {
	if err := wantArgs(c, 1, "STORE"); err != nil {
		return err
	}
	if !c.IsSet("name") {
		return usageFor(c, "needs --name NEW")
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		f, err := db.ForkStore(ctx, s.ID, versions.ForkOptions{Name: c.String("name"), When: asOfWhen(c.String("as-of"), time.Now()),
			WithHistory: c.Bool("with-history"), AllowDuplicate: c.Bool("allow-duplicate")}, cliActor())
		if err != nil {
			return err
		}
		for _, sk := range f.Skipped {
			confirm(c, "left out %s: %s", sk.Path, sk.Reason)
		}
		return emit(c, f.Store, func(w io.Writer) {
			fmt.Fprintln(w, f.Store.ID)
			confirm(c, "forked store %s as of %s into %s (%q): %s, %s", s.ID, describeAsOf(f.AsOf), f.Store.ID, f.Store.Name, counted(f.Memories, "memory", "memories"), counted(f.Versions, "version", "versions"))
		})
	})
}

// checkpointFlag turns off the checkpoint mount and run take when a
// session begins.
func checkpointFlag() cli.Flag {
	return &cli.BoolFlag{Name: "checkpoint", Value: true, Usage: "take a checkpoint of each store, named by the session's id, when the session begins (browse it at .history/STORE@SESSION/); --checkpoint=false does not"}
}

// printPruneKept tells what a prune keeps for checkpoints and which
// session checkpoints it removes.
func printPruneKept(c *cli.Context, kept []versions.KeptVersion, expiring []versions.Checkpoint) {
	for _, k := range kept {
		p := "-"
		if k.Version.Path != nil {
			p = *k.Version.Path
		}
		confirm(c, "kept %s (%s): checkpoint %s needs it", k.Version.ID, p, strings.Join(k.Checkpoints, ", "))
	}
	for _, cp := range expiring {
		confirm(c, "removing session checkpoint %s (taken %s): past the retention window", cp.Name, when(cp.CreatedAt))
	}
}

// mustAsk: the command prints its plan and asks before it writes (a dry
// run, or a person at a terminal without --yes).
func mustAsk(c *cli.Context) bool {
	return c.Bool("dry-run") || !c.Bool("yes") && isTerminal(stdin)
}
