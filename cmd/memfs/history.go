package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/versions"
)

func restoreCommand() *cli.Command {
	return &cli.Command{
		Name:      "restore",
		Usage:     "write an old version's content as a new version (recreating a deleted memory) and print the memory's id",
		ArgsUsage: "STORE VERSION | STORE --as-of WHEN",
		Description: "VERSION is a memver_ id, its end as memfs log shows it, or PATH~N: N versions before the\nlast saved at PATH (the last that held content when it was deleted is PATH~1).\n" +
			"With --as-of, the whole store goes back to how it was at WHEN: the plan is printed first, then one version\n" +
			"is written per changed memory after a safety checkpoint. " + whenUsage,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "path", Usage: "restore into a new memory at `PATH`, leaving the live one as it is (default: the memory's path now; for a deleted memory, the path the version records)"},
			viewFlag("the object printed with --format json: basic (no content) or full"),
		}, restoreAsOfFlags()...),
		Action: restore,
	}
}

func logCommand() *cli.Command {
	return &cli.Command{
		Name:  "log",
		Usage: "show a store's history for people, newest first: a path's (also of deleted memories), one memory's or a directory's",
		Description: "PATH is a path (every version saved at it, deleted and recreated memories included), a mem_ id\n" +
			"(one memory's versions, wherever saved), or a directory ending in / (everything saved below it). On a terminal the log goes through $PAGER.",
		ArgsUsage: "STORE [PATH | DIR/ | MEMORY_ID]",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "n", Aliases: []string{"max-count"}, Usage: "show at most `N` versions"},
			&cli.StringFlag{Name: "since", Usage: "only versions saved since `WHEN` (an age such as 2h or 3d, a date, or an RFC 3339 time)"},
			&cli.StringFlag{Name: "until", Usage: "only versions saved until `WHEN`"},
			&cli.StringFlag{Name: "actor", Usage: "only versions written by `WHO`: a session id (or its end, as shown), a user name"},
			&cli.BoolFlag{Name: "p", Aliases: []string{"patch"}, Usage: "show each version's change as a diff"},
			&cli.BoolFlag{Name: "stat", Usage: "show how many lines each version added and removed"},
			&cli.BoolFlag{Name: "oneline", Usage: "one line a version: its id, operation, path, actor and time"},
			&cli.StringFlag{Name: "S", Usage: "only versions that changed how often `TEXT` occurs (added or removed it), as git log -S; memfs search finds what memories hold now"},
			&cli.BoolFlag{Name: "follow", Usage: "with a PATH: the history of the memory last saved there, across its renames and restores"},
			&cli.BoolFlag{Name: "watch", Usage: "print the store's versions as they are saved, until interrupted (from its change feed; STORE alone)"},
			colorFlag(),
		},
		Action: logHistory,
	}
}

func diffCommand() *cli.Command {
	return &cli.Command{
		Name:  "diff",
		Usage: "show what changed: a memory's last change, a span (--since), or between two versions",
		Description: "VERSION is a memver_ id, its end as memfs log shows it, a PATH (its memory's last version) or\n" +
			"PATH~N (N versions before that). With one VERSION, the change it made; with two, from the first to\n" +
			"the second; with a PATH and --since, everything that changed since then.",
		ArgsUsage: "STORE (VERSION [VERSION] | PATH)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "since", Usage: "with a PATH: from the version it had at `WHEN` (an age such as 2h, a date, an RFC 3339 time) to its last"},
			colorFlag(),
		},
		Action: diff,
	}
}

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "print a store, its memories and all its versions as JSON Lines",
		ArgsUsage: "STORE",
		Action:    export,
	}
}

func restore(c *cli.Context) error {
	if c.IsSet("as-of") {
		return restoreAsOf(c)
	}
	if c.Bool("dry-run") {
		return usageFor(c, "--dry-run goes with --as-of")
	}
	if err := wantArgs(c, 2, "STORE", "VERSION"); err != nil {
		return err
	}
	view, err := parseView(c)
	if err != nil {
		return err
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		v, err := resolveVersion(ctx, db, s.ID, c.Args().Get(1))
		if err != nil {
			return err
		}
		if v.Content == nil {
			// The same exit code as diff and every other command that
			// needs content a version no longer has.
			return invalidf("version %s has no content to restore: %s; restore another version (see memfs log)", v.ID, noContentReason(v))
		}
		// The memory as it is before: its head, and its path should the
		// restore make a new memory beside it.
		live, liveErr := db.GetMemory(ctx, s.ID, v.MemoryID)
		m, err := db.Restore(ctx, s.ID, v.ID, c.String("path"), cliActor())
		if err != nil {
			return err
		}
		switch {
		case m.ID != v.MemoryID && liveErr == nil:
			confirm(c, "restored %s into a new memory %s at %s; %s is unchanged", v.ID, m.ID, m.Path, live.Path)
		case m.ID != v.MemoryID:
			confirm(c, "restored %s into a new memory %s at %s (the memory it came from was deleted)", v.ID, m.ID, m.Path)
		case liveErr == nil && m.VersionID == live.VersionID:
			confirm(c, "%s at %s holds the content of %s already: nothing changed", m.ID, m.Path, v.ID)
		case v.Path != nil && m.Path != *v.Path:
			confirm(c, "restored %s into %s at its path now, %s (it was at %s then)", v.ID, m.ID, m.Path, *v.Path)
		}
		return emit(c, basic(m, view), func(w io.Writer) { fmt.Fprintln(w, m.ID) })
	})
}

// allVersions lists every version matching o, newest first.
func allVersions(ctx context.Context, db *versions.DB, storeID string, o versions.VersionListOptions) ([]versions.Version, error) {
	o.Limit = versions.MaxPageSize
	var all []versions.Version
	for {
		page, err := db.ListVersions(ctx, storeID, o)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Data...)
		if page.NextPage == nil || *page.NextPage == "" {
			return all, nil
		}
		o.Page = *page.NextPage
	}
}

// diffResult is diff's object with --format json.
type diffResult struct {
	Type          string `json:"type"`
	FromVersionID string `json:"from_version_id"`
	ToVersionID   string `json:"to_version_id"`
	Diff          string `json:"diff"`
}

// diffContent is what a version held for a diff: nothing before a memory
// existed or after its deletion; a redacted version cannot be compared.
func diffContent(v *versions.Version) (string, error) {
	switch {
	case v == nil, v.Operation == versions.OpDeleted:
		return "", nil
	case v.RedactedAt != nil || v.Content == nil:
		return "", &versions.Error{Code: versions.CodeInvalid, Message: fmt.Sprintf(
			"version %s has no content to compare: %s; diff other versions (see memfs log)", v.ID, noContentReason(v))}
	}
	return *v.Content, nil
}

// diffLines splits content into lines that keep their "\n"; a last line
// without one carries diff's "\ No newline at end of file" marker, so that
// adding or removing the final newline shows as a change.
func diffLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if last := len(lines) - 1; lines[last] == "" {
		lines = lines[:last]
	} else {
		lines[last] += "\n\\ No newline at end of file\n"
	}
	return lines
}

func diffLabel(v *versions.Version) string {
	if v == nil {
		return "/dev/null (before the memory existed)"
	}
	return fmt.Sprintf("%s %s (%s %s)", orDash(v.Path), v.ID, v.Operation, when(v.CreatedAt))
}

func export(c *cli.Context) error {
	if err := wantArgs(c, 1, "STORE"); err != nil {
		return err
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetEscapeHTML(false)
		return db.Export(ctx, s.ID, func(v any) error { return enc.Encode(v) })
	})
}
