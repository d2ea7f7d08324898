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

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "list, read, redact and prune the versions of a store's memories",
		Subcommands: []*cli.Command{
			{
				Name:      "list",
				Usage:     "list versions, newest first",
				ArgsUsage: "STORE",
				Flags: append([]cli.Flag{
					&cli.StringFlag{Name: "memory", Usage: "only versions of memory `M` (a mem_ id), or saved at a path (as memfs log PATH, also of deleted memories)"},
					&cli.StringFlag{Name: "session", Usage: "only versions written by session `ID`"},
					&cli.StringFlag{Name: "operation", Usage: "only `OP` versions: created, modified or deleted"},
					viewFlag("basic (no content) or full (at most 20 per page)"),
				}, append(createdFlags("versions"), pageFlags(true)...)...),
				Action: versionList,
			},
			{
				Name:      "get",
				Usage:     "print a version's content as it is (with --format json: the whole version)",
				ArgsUsage: "STORE VERSION",
				Action:    versionGet,
			},
			{
				Name:      "redact",
				Usage:     "remove a version's content for good, keeping who changed what when (asks first on a terminal)",
				ArgsUsage: "STORE VERSION",
				Flags:     []cli.Flag{yesFlag()},
				Action:    versionRedact,
			},
			{
				Name:      "resolve",
				Usage:     "mark a conflicting version resolved, so that memfs lint no longer reports it",
				ArgsUsage: "STORE VERSION",
				Action:    versionResolve,
			},
			{
				Name:      "prune",
				Usage:     "delete old versions, keeping each memory's most recent ones, and list what was removed (asks first on a terminal)",
				ArgsUsage: "STORE",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "older-than", Value: "30d", DefaultText: "30d", Usage: "prune versions older than `AGE` (30d, 12h, 90m)"},
					&cli.IntFlag{Name: "keep-last", Value: 10, Usage: "always keep each memory's `N` most recent versions (at least 1)"},
					&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "list what would be pruned, and prune nothing"},
					yesFlag(),
				},
				Action: versionPrune,
			},
		},
	}
}

func parseOperation(c *cli.Context) (versions.Operation, error) {
	switch op := versions.Operation(c.String("operation")); op {
	case "", versions.OpCreated, versions.OpModified, versions.OpDeleted:
		return op, nil
	default:
		return "", usageFor(c, "--operation must be created, modified or deleted, not %q", op)
	}
}

func versionList(c *cli.Context) error {
	if err := wantArgs(c, 1, "STORE"); err != nil {
		return err
	}
	view, err := parseView(c)
	if err != nil {
		return err
	}
	op, err := parseOperation(c)
	if err != nil {
		return err
	}
	limit, err := pageLimit(c, view)
	if err != nil {
		return err
	}
	o := versions.VersionListOptions{
		Operation: op,
		View:      view,
		Limit:     limit,
		Page:      c.String("page"),
	}
	if o.CreatedGTE, o.CreatedLTE, err = createdSpan(c); err != nil {
		return err
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		if ref := c.String("session"); ref != "" {
			sess, err := resolveSession(ctx, db, ref)
			if err != nil {
				return err
			}
			o.SessionID = sess.ID
		}
		return listVersionsOf(c, ctx, db, s, o)
	})
}

func listVersionsOf(c *cli.Context, ctx context.Context, db *versions.DB, s *versions.Store, o versions.VersionListOptions) error {
	var page *versions.Page[versions.Version]
	var err error
	switch ref := c.String("memory"); {
	case ref != "" && !strings.HasPrefix(ref, "mem_"):
		// A path: its history, as memfs log PATH shows it.
		if o.Operation != "" || o.SessionID != "" {
			return usageFor(c, "--memory %s is a path: --operation and --session filter one memory's versions; give its mem_ id (see memfs log %s %s)", ref, s.ID, ref)
		}
		page, err = db.PathHistory(ctx, s.ID, ref, versions.PathHistoryOptions{CreatedGTE: o.CreatedGTE, CreatedLTE: o.CreatedLTE, View: o.View, Limit: o.Limit, Page: o.Page})
		if err == nil && len(page.Data) == 0 && o.Page == "" {
			err = noPathHistory(s.ID, ref)
		}
	default:
		o.MemoryID = ref
		page, err = db.ListVersions(ctx, s.ID, o)
	}
	if err != nil {
		return err
	}
	err = emit(c, page, func(w io.Writer) { printVersions(w, page.Data, time.Now()) })
	nextPageHint(c, page.NextPage)
	return err
}

// printVersions is the table of memfs log and version list.
func printVersions(w io.Writer, vs []versions.Version, now time.Time) {
	t := table(w)
	row(t, "TIME", "AGE", "OPERATION", "ACTOR", "PATH", "SIZE", "SHA256", "VERSION", "NOTE")
	for _, v := range vs {
		row(t, when(v.CreatedAt), ago(v.CreatedAt, now), string(v.Operation), actor(v.CreatedBy),
			orDash(v.Path), size(v.ContentSize), shortSHA(v.ContentSHA256), v.ID, notes(v))
	}
	t.Flush()
}

func versionGet(c *cli.Context) error {
	if err := wantArgs(c, 2, "STORE", "VERSION"); err != nil {
		return err
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		v, err := resolveVersion(ctx, db, s.ID, c.Args().Get(1))
		if err != nil {
			return err
		}
		if v.Content == nil && !asJSON(c) {
			// As diff and restore of such a version: the JSON object
			// says so with its null content.
			return invalidf("version %s has no content to print: %s", v.ID, noContentReason(v))
		}
		return emit(c, v, func(w io.Writer) { io.WriteString(w, *v.Content) })
	})
}

// noContentReason explains why a version carries no content.
func noContentReason(v *versions.Version) string {
	if v.RedactedAt != nil {
		return fmt.Sprintf("it was redacted at %s by %s", when(*v.RedactedAt), actor(v.RedactedBy))
	}
	if v.Operation == versions.OpDeleted {
		return "it records the deletion of its memory (the version before it holds the last content)"
	}
	return "the store returned none"
}

func versionRedact(c *cli.Context) error {
	if err := wantArgs(c, 2, "STORE", "VERSION"); err != nil {
		return err
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		v, err := resolveVersion(ctx, db, s.ID, c.Args().Get(1))
		if err != nil {
			return err
		}
		if err := confirmed(c, "redact version %s of %s (%s %s): its content is gone for good?", v.ID, orDash(v.Path), v.Operation, when(v.CreatedAt)); err != nil {
			return err
		}
		v, err = db.RedactVersion(ctx, s.ID, v.ID, cliActor())
		if err != nil {
			return err
		}
		return emit(c, v, func(io.Writer) { confirm(c, "redacted version %s: its content is gone", v.ID) })
	})
}

func versionResolve(c *cli.Context) error {
	if err := wantArgs(c, 2, "STORE", "VERSION"); err != nil {
		return err
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		v, err := resolveVersion(ctx, db, s.ID, c.Args().Get(1))
		if err != nil {
			return err
		}
		v, err = db.ResolveConflict(ctx, s.ID, v.ID, cliActor())
		if err != nil {
			return err
		}
		return emit(c, v, func(io.Writer) { confirm(c, "conflict %s of %s marked resolved", v.ID, orDash(v.Path)) })
	})
}

func versionPrune(c *cli.Context) error {
	if err := wantArgs(c, 1, "STORE"); err != nil {
		return err
	}
	olderThan, ok := parseAge(c.String("older-than"))
	if !ok {
		return usageFor(c, "--older-than %q is not an age: give one such as 30d, 12h or 90m", c.String("older-than"))
	}
	keep := c.Int("keep-last")
	if keep < 1 {
		return usageFor(c, "--keep-last must be at least 1")
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		// The ages count back from the plan's moment: a prune confirmed a
		// while after removes what was shown, never what aged out since.
		planned := time.Now()
		since := func() time.Duration { return olderThan + time.Since(planned) }
		plan, err := db.PrunePlan(ctx, s.ID, since(), keep)
		if err != nil {
			return err
		}
		if c.Bool("dry-run") {
			kept, _, err := db.PruneReport(ctx, s.ID, since(), keep)
			if err != nil {
				return err
			}
			printPruneKept(c, kept, nil)
			return emit(c, versions.Page[versions.Version]{Data: plan}, func(w io.Writer) {
				if len(plan) > 0 {
					printVersions(w, plan, time.Now())
				}
				confirm(c, "would prune %s older than %s from store %s, keeping each memory's %d most recent (dry run: nothing removed)", counted(len(plan), "version", "versions"), formatAge(olderThan), s.ID, keep)
			})
		}
		kept, expiring, err := db.PruneReport(ctx, s.ID, since(), keep)
		if err != nil {
			return err
		}
		printPruneKept(c, kept, expiring)
		if len(plan) > 0 || len(expiring) > 0 {
			what := counted(len(plan), "version", "versions")
			if len(expiring) > 0 {
				what += " and " + counted(len(expiring), "session checkpoint", "session checkpoints")
			}
			if err := confirmed(c, "prune %s of store %s (%s) for good?", what, s.ID, s.Name); err != nil {
				return err
			}
			// Saves made while it asked can push a version out of a
			// memory's most recent ones: a prune removes nothing its
			// question did not list.
			again, err := db.PrunePlan(ctx, s.ID, since(), keep)
			if err != nil {
				return err
			}
			listed := map[string]bool{}
			for _, v := range plan {
				listed[v.ID] = true
			}
			for _, v := range again {
				if !listed[v.ID] {
					return &versions.Error{Code: versions.CodeConflict, Message: fmt.Sprintf(
						"nothing pruned: the store changed while the prune asked, and it would now also remove %s (%s), which the question did not list; run the prune again", v.ID, orDash(v.Path))}
				}
			}
		}
		removed, err := db.PruneVersions(ctx, s.ID, since(), keep)
		if err != nil {
			return err
		}
		if removed == nil {
			removed = []versions.Version{}
		}
		return emit(c, versions.Page[versions.Version]{Data: removed}, func(w io.Writer) {
			if len(removed) > 0 {
				printVersions(w, removed, time.Now())
			}
			confirm(c, "pruned %s older than %s from store %s, keeping each memory's %d most recent", counted(len(removed), "version", "versions"), formatAge(olderThan), s.ID, keep)
		})
	})
}
