package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/versions"
)

func importCommand() *cli.Command {
	return &cli.Command{
		Name:  "import",
		Usage: "recreate the stores memfs export wrote (read from FILE, or standard input), ids and history kept, in any database",
		Description: "Reads the JSON Lines of memfs export — one store, or several exports one after the other — and\n" +
			"writes each store with its memories, directories and every version (ids, times, actors, redactions\n" +
			"and conflict marks kept) in one transaction: if any id is already in the database, or the input does\n" +
			"not check out, nothing is imported. Exporting an imported store gives the same bytes, on SQLite as on\n" +
			"PostgreSQL:\n\n" +
			"   memfs --db old.db export Notes | memfs --db postgres://host/memfs import",
		ArgsUsage: "[FILE]",
		Action:    importStores,
	}
}

func importStores(c *cli.Context) (failed error) {
	if err := wantArgs(c, 0, "FILE"); err != nil {
		return err
	}
	var in io.Reader = c.App.Reader
	if in == nil {
		in = os.Stdin
	}
	if name := c.Args().First(); name != "" && name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return invalidf("import: %v: give a file memfs export wrote, or pipe it on standard input", err)
		}
		defer f.Close()
		in = f
	}
	// A failed import leaves no database where there was none; one that
	// committed stays, whatever fails after (its report).
	committed := false
	if path, err := dbPath(c); err == nil && !versions.IsPostgres(path) {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			defer func() {
				if failed != nil && !committed {
					for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
						os.Remove(path + suffix)
					}
				}
			}()
		}
	}
	return withDB(c, func(ctx context.Context, db *versions.DB) error {
		done, err := db.Import(ctx, in)
		if err != nil {
			return err
		}
		committed = true
		page := versions.Page[versions.Store]{Data: make([]versions.Store, len(done))}
		for i, im := range done {
			page.Data[i] = *im.Store
			fmt.Fprintf(c.App.ErrWriter, "imported memory store %s (%q): %s, %s, %s\n",
				im.Store.ID, im.Store.Name, counted(im.Memories, "memory", "memories"), counted(im.Directories, "directory", "directories"), counted(im.Versions, "version", "versions"))
			if err := reportImported(ctx, c, db, im.Store.ID); err != nil {
				return err
			}
		}
		return emit(c, page, func(w io.Writer) {
			for _, im := range done {
				fmt.Fprintln(w, im.Store.ID)
			}
		})
	})
}
