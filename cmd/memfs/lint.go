package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/lint"
	"github.com/memfs/memfs/versions"
)

func lintCommand() *cli.Command {
	return &cli.Command{
		Name:      "lint",
		Usage:     "report duplicates, drifted copies, contradictions, open conflicts, oversized files, frontmatter problems and credentials",
		ArgsUsage: "STORE...",
		Description: "Reads the current memories of the stores together (a copy in another store counts) and prints\n" +
			"one finding per block: its kind, where, what to do, and the lines it is about. Kinds:\n" +
			"near_duplicate, diverged_copy, contradiction, open_conflict, near_size_limit, frontmatter,\n" +
			"credential. Exit status 8 when it finds anything, 0 when it finds nothing.\n" +
			"--session ID lints the stores attached to that session. See docs/lint.md.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "session", Usage: "lint the stores attached to session `ID` (with any STORE given)"},
		},
		Action: lintStores,
	}
}

// lintItem is a finding as the JSON output lists it.
type lintItem struct{ lint.Finding }

func (f lintItem) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type string `json:"type"`
		lint.Finding
	}{"lint_finding", f.Finding})
}

func lintStores(c *cli.Context) error {
	refs := c.Args().Slice()
	if len(refs) == 0 && c.String("session") == "" {
		return usageFor(c, "give one or more stores, or --session ID: memfs lint STORE... [--session ID]")
	}
	return withDB(c, func(ctx context.Context, db *versions.DB) error {
		var ids []string
		names := map[string]string{}
		add := func(id, name string) {
			if _, dup := names[id]; !dup {
				ids = append(ids, id)
			}
			names[id] = name
		}
		if sid := c.String("session"); sid != "" {
			sess, err := resolveSession(ctx, db, sid)
			if err != nil {
				return err
			}
			for _, a := range sess.Resources {
				add(a.StoreID, a.Name)
			}
		}
		for _, ref := range refs {
			s, err := resolveStore(ctx, db, ref)
			if err != nil {
				return err
			}
			add(s.ID, s.Name)
		}
		found, err := lint.Run(ctx, db, ids)
		if err != nil {
			return err
		}
		items := make([]lintItem, len(found))
		for i, f := range found {
			items[i] = lintItem{f}
		}
		err = emit(c, versions.Page[lintItem]{Data: items}, func(w io.Writer) {
			printFindings(w, found, names, len(ids) > 1)
		})
		if err != nil {
			return err
		}
		if len(found) == 0 {
			confirm(c, "no finding in %s", counted(len(ids), "store", "stores"))
			return nil
		}
		confirm(c, "%s", counted(len(found), "finding", "findings"))
		return cli.Exit("", exitFound)
	})
}

func printFindings(w io.Writer, found []lint.Finding, names map[string]string, showStore bool) {
	where := func(r lint.Ref) string {
		s := printable(r.Path)
		if showStore {
			s = names[r.StoreID] + ":" + s
		}
		if r.Line > 0 {
			s += fmt.Sprintf(":%d", r.Line)
		}
		return s
	}
	for _, f := range found {
		head := []string{f.Kind, where(f.Ref)}
		if f.Other != nil {
			head = append(head, where(*f.Other))
		}
		fmt.Fprintln(w, strings.Join(head, "  "))
		fmt.Fprintln(w, "  "+printable(f.Message))
		for _, l := range f.Lines {
			fmt.Fprintln(w, "    "+printable(l))
		}
	}
}
