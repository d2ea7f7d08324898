package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/versions"
)

func colorFlag() cli.Flag {
	return &cli.StringFlag{Name: "color", Value: "auto", Usage: "colour the diff: auto (on a terminal), always or never"}
}

// useColor reads --color; auto colours only a terminal (and not with
// NO_COLOR set).
func useColor(c *cli.Context) (bool, error) {
	switch v := c.String("color"); v {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto", "":
		f, ok := c.App.Writer.(*os.File)
		return ok && isTerminal(f) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb", nil
	default:
		return false, usageFor(c, "--color must be auto, always or never, not %q", v)
	}
}

func diff(c *cli.Context) error {
	if err := wantArgs(c, 2, "STORE", "VERSION", "VERSION"); err != nil {
		return err
	}
	color, err := useColor(c)
	if err != nil {
		return err
	}
	var since time.Time
	if c.IsSet("since") {
		if c.Args().Len() != 2 || !strings.HasPrefix(c.Args().Get(1), "/") {
			return usageFor(c, "--since takes one PATH: memfs diff STORE PATH --since 2h")
		}
		if since, err = parseWhen("--since", c.String("since"), time.Now()); err != nil {
			return err
		}
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		to, err := resolveVersion(ctx, db, s.ID, c.Args().Get(c.Args().Len()-1))
		if err != nil {
			return err
		}
		var from *versions.Version
		pruned := false
		switch {
		case c.Args().Len() == 3:
			if from, err = resolveVersion(ctx, db, s.ID, c.Args().Get(1)); err != nil {
				return err
			}
		case !since.IsZero():
			if from, pruned, err = versionAt(ctx, db, s.ID, c.Args().Get(1), since); err != nil {
				return err
			}
		default:
			if from, pruned, err = previousVersion(ctx, db, s.ID, to); err != nil {
				return err
			}
		}
		if pruned {
			confirm(c, "earlier versions of %s were pruned: the diff starts from nothing", orDash(to.Path))
		}
		text, err := unifiedDiff(from, to, pruned)
		if err != nil {
			return err
		}
		res := diffResult{Type: "memory_version_diff", ToVersionID: to.ID, Diff: text}
		if from != nil {
			res.FromVersionID = from.ID
		}
		return emit(c, res, func(w io.Writer) { writeDiff(w, text, color) })
	})
}

// versionAt is the version the memory at path had at time t (nil if it did
// not exist then); pruned says the versions that would tell were pruned.
func versionAt(ctx context.Context, db *versions.DB, storeID, path string, t time.Time) (*versions.Version, bool, error) {
	lineage, err := pathHistory(ctx, db, storeID, path, versions.VersionListOptions{})
	if err != nil {
		return nil, false, err
	}
	for _, v := range lineage {
		if !v.CreatedAt.After(t) {
			if v.Operation == versions.OpDeleted {
				return nil, false, nil
			}
			full, err := db.GetVersion(ctx, storeID, v.ID)
			return full, false, err
		}
	}
	oldest := lineage[len(lineage)-1]
	return nil, oldest.Operation != versions.OpCreated, nil
}

// previousVersion is the version of v's memory just before v: nil when v
// began the memory, and pruned when v did not but nothing earlier is left.
func previousVersion(ctx context.Context, db *versions.DB, storeID string, v *versions.Version) (*versions.Version, bool, error) {
	prev, err := db.PreviousVersion(ctx, storeID, v.ID)
	if err != nil {
		return nil, false, err
	}
	return prev, prev == nil && v.Operation != versions.OpCreated, nil
}

// unifiedDiff is the change from one version to another, with git's rename
// lines when the path changed.
func unifiedDiff(from, to *versions.Version, pruned bool) (string, error) {
	a, err := diffContent(from)
	if err != nil {
		return "", err
	}
	b, err := diffContent(to)
	if err != nil {
		return "", err
	}
	fromLabel := diffLabel(from)
	if from == nil && pruned {
		fromLabel = "/dev/null (earlier versions were pruned)"
	}
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A:        diffLines(a),
		B:        diffLines(b),
		FromFile: fromLabel,
		ToFile:   diffLabel(to),
		Context:  3,
	})
	if err != nil {
		return "", fmt.Errorf("diff %s: %w", to.ID, err)
	}
	if from != nil && from.Path != nil && to.Path != nil && *from.Path != *to.Path {
		rename := fmt.Sprintf("rename from %s\nrename to %s\n", *from.Path, *to.Path)
		if text == "" {
			text = "--- " + fromLabel + "\n+++ " + diffLabel(to) + "\n"
		}
		text = rename + text
	}
	return text, nil
}

// ANSI colours as git uses them.
const (
	ansiBold  = "\x1b[1m"
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiCyan  = "\x1b[36m"
	ansiReset = "\x1b[0m"
)

func writeDiff(w io.Writer, text string, color bool) {
	if !color {
		io.WriteString(w, text)
		return
	}
	for _, line := range strings.SplitAfter(text, "\n") {
		body := strings.TrimSuffix(line, "\n")
		if body == "" {
			io.WriteString(w, line)
			continue
		}
		var c string
		switch {
		case strings.HasPrefix(body, "---"), strings.HasPrefix(body, "+++"), strings.HasPrefix(body, "rename "):
			c = ansiBold
		case strings.HasPrefix(body, "@@"):
			c = ansiCyan
		case body[0] == '-':
			c = ansiRed
		case body[0] == '+':
			c = ansiGreen
		}
		if c == "" {
			io.WriteString(w, line)
			continue
		}
		io.WriteString(w, c+body+ansiReset+line[len(body):])
	}
}
