package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/versions"
)

func searchCommand() *cli.Command {
	return &cli.Command{
		Name:      "search",
		Usage:     "find memories by their words, best first (with --history: every version that held them)",
		ArgsUsage: "STORE... QUERY",
		Description: "Searches the paths and contents of the stores' current memories and prints the best matches\n" +
			"first: path, score, the current version, and the lines that match with their numbers.\n\n" +
			"QUERY: words (all must match), \"a quoted phrase\", -word or -\"a phrase\" (must not match), and\n" +
			"prefix* (a word beginning so). Case and punctuation do not count; Chinese, Japanese and Korean\n" +
			"text matches without spaces. Quote the query for the shell: memfs search notes 'laptop -\"old model\"'.\n\n" +
			"--history searches every version that still holds its content (like git log -S): each match\n" +
			"with its version, when it was saved and by whom, newest first. Redacted versions never match.\n" +
			"See docs/search.md.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "history", Usage: "search every version, not only the current memories"},
			&cli.StringFlag{Name: "path-prefix", Usage: "only memories below `/P/` (starts and ends with /)"},
			&cli.IntFlag{Name: "limit", Value: 20, Usage: fmt.Sprintf("at most `N` results (1 to %d)", versions.MaxSearchLimit)},
			&cli.IntFlag{Name: "lines", Value: 5, Usage: "show at most `N` matching lines per result"},
		},
		Action: searchStores,
	}
}

func searchStores(c *cli.Context) error {
	args := c.Args().Slice()
	// "--" ends the flags, so that a query may start with "-"; it is no
	// store.
	for i, a := range args {
		if a == "--" {
			args = append(args[:i:i], args[i+1:]...)
			break
		}
	}
	if len(args) < 2 {
		return usageFor(c, "give one or more stores and a query: memfs search STORE... QUERY")
	}
	if c.Int("limit") < 1 || c.Int("limit") > versions.MaxSearchLimit {
		return usageFor(c, "--limit %d is out of range: give 1 to %d", c.Int("limit"), versions.MaxSearchLimit)
	}
	if c.Int("lines") < 1 {
		return usageFor(c, "--lines %d: give 1 or more", c.Int("lines"))
	}
	query := args[len(args)-1]
	return withDB(c, func(ctx context.Context, db *versions.DB) error {
		var ids []string
		names := map[string]string{}
		for _, ref := range args[:len(args)-1] {
			s, err := resolveStore(ctx, db, ref)
			if err != nil {
				return err
			}
			if _, dup := names[s.ID]; !dup {
				ids = append(ids, s.ID)
			}
			names[s.ID] = s.Name
		}
		res, err := db.Search(ctx, ids, query, versions.SearchOptions{
			PathPrefix: c.String("path-prefix"),
			Limit:      c.Int("limit"),
			History:    c.Bool("history"),
			MaxLines:   c.Int("lines"),
		})
		if err != nil {
			return err
		}
		err = emit(c, versions.Page[versions.SearchResult]{Data: res}, func(w io.Writer) {
			printResults(w, res, names, len(ids) > 1, c.Bool("history"))
		})
		if err == nil && len(res) == 0 && !asJSON(c) {
			confirm(c, "nothing matched %q", query)
		}
		return err
	})
}

// printResults writes one heading line per result and its matching lines
// below it, indented, as grep -n numbers them.
func printResults(w io.Writer, res []versions.SearchResult, names map[string]string, showStore, history bool) {
	for _, r := range res {
		var head []string
		if showStore {
			head = append(head, names[r.StoreID])
		}
		if history {
			head = append(head, r.VersionID, when(r.CreatedAt), actor(r.CreatedBy), string(r.Operation), printable(r.Path))
			if r.Head {
				head = append(head, "(current)")
			}
		} else {
			head = append(head, printable(r.Path), fmt.Sprintf("score %.2f", r.Score), r.VersionID)
		}
		fmt.Fprintln(w, strings.Join(head, "  "))
		for _, l := range r.Lines {
			fmt.Fprintf(w, "  %d: %s\n", l.Number, printable(l.Text))
		}
	}
}

// printable keeps a memory's control characters (an escape sequence that
// would drive the terminal) out of a listing: each shows as U+FFFD.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0) {
			return '\uFFFD'
		}
		return r
	}, s)
}
