package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/versions"
)

func restoreCommand() *cli.Command {
	return &cli.Command{
		Name:      "restore",
		Usage:     "write an old version's content as a new version (recreating a deleted memory) and print the memory's id",
		ArgsUsage: "STORE VERSION",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "path", Usage: "restore to `PATH` (default: the path the version records)"},
			viewFlag("the object printed with --format json: basic (no content) or full"),
		},
		Action: restore,
	}
}

func logCommand() *cli.Command {
	return &cli.Command{
		Name:      "log",
		Usage:     "show a store's history, or one memory's (also after its deletion), newest first",
		ArgsUsage: "STORE [PATH]",
		Action:    logHistory,
	}
}

func diffCommand() *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "show what changed between two versions, or (one VERSION) since the version before it",
		ArgsUsage: "STORE VERSION [VERSION]",
		Action:    diff,
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
	if err := wantArgs(c, 2, "STORE", "VERSION"); err != nil {
		return err
	}
	view, err := parseView(c)
	if err != nil {
		return err
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		m, err := db.Restore(ctx, s.ID, c.Args().Get(1), c.String("path"), cliActor())
		if err != nil {
			return err
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

func logHistory(c *cli.Context) error {
	if err := wantArgs(c, 1, "STORE", "PATH"); err != nil {
		return err
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		var o versions.VersionListOptions
		if ref := c.Args().Get(1); ref != "" {
			id, err := db.HistoryMemoryID(ctx, s.ID, ref)
			if err != nil {
				return err
			}
			o.MemoryID = id
		}
		all, err := allVersions(ctx, db, s.ID, o)
		if err != nil {
			return err
		}
		if len(all) == 0 && o.MemoryID != "" {
			return &versions.Error{Code: versions.CodeNotFound, Message: fmt.Sprintf(
				"no versions of memory %s in store %s (pruned, or never there); see memfs log %s", o.MemoryID, s.ID, s.ID)}
		}
		if all == nil {
			all = []versions.Version{}
		}
		return emit(c, versions.Page[versions.Version]{Data: all}, func(w io.Writer) {
			printVersions(w, all, time.Now())
		})
	})
}

// diffResult is diff's object with --format json.
type diffResult struct {
	Type          string `json:"type"`
	FromVersionID string `json:"from_version_id"`
	ToVersionID   string `json:"to_version_id"`
	Diff          string `json:"diff"`
}

func diff(c *cli.Context) error {
	if err := wantArgs(c, 2, "STORE", "VERSION", "VERSION"); err != nil {
		return err
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		to, err := db.GetVersion(ctx, s.ID, c.Args().Get(c.Args().Len()-1))
		if err != nil {
			return err
		}
		var from *versions.Version
		if c.Args().Len() == 3 {
			if from, err = db.GetVersion(ctx, s.ID, c.Args().Get(1)); err != nil {
				return err
			}
		} else if from, err = db.PreviousVersion(ctx, s.ID, to.ID); err != nil {
			return err
		}
		a, err := diffContent(from)
		if err != nil {
			return err
		}
		b, err := diffContent(to)
		if err != nil {
			return err
		}
		text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A:        diffLines(a),
			B:        diffLines(b),
			FromFile: diffLabel(from),
			ToFile:   diffLabel(to),
			Context:  3,
		})
		if err != nil {
			return fmt.Errorf("diff %s: %w", to.ID, err)
		}
		res := diffResult{Type: "memory_version_diff", ToVersionID: to.ID, Diff: text}
		if from != nil {
			res.FromVersionID = from.ID
		}
		return emit(c, res, func(w io.Writer) { io.WriteString(w, text) })
	})
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
