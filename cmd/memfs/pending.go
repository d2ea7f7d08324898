package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/versions"
)

// memfs pending: the files mounts saved and have not published yet
// (temporary names), and those of mounts whose lease lapsed, which
// recovery publishes by itself but an operator may settle now.
func pendingCommand() *cli.Command {
	return &cli.Command{
		Name:  "pending",
		Usage: "show and settle files saved through mounts and not published yet",
		Description: `A file with a temporary name (sed's, Python's tempfile, the SDK tools' .tmp-…) is saved
through a mount as a pending file: durable, but no memory until its mount publishes it
(after a short grace, or renamed over its target) or drops it (removed first). A pending
file belongs to its mount's lease. When a mount dies, any memfs command or daemon using the
database publishes its pending files once its lease lapses; one that cannot be published
(its store archived or over its history quota) is set aside as unpublishable and tried
again every minute. These commands show them and settle them by hand.`,
		Subcommands: []*cli.Command{
			{
				Name:      "list",
				Usage:     "list a store's pending files: id, state (live, lapsed, unpublishable), path, size, mount",
				ArgsUsage: "STORE",
				Action:    pendingList,
			},
			{
				Name:      "publish",
				Usage:     "publish pending files of mounts that are gone, each at its path (a memory's next version, or a new memory)",
				ArgsUsage: "STORE (ID... | --all)",
				Flags:     []cli.Flag{&cli.BoolFlag{Name: "all", Usage: "every pending file of the store whose mount's lease lapsed"}},
				Action:    func(c *cli.Context) error { return pendingSettle(c, true) },
			},
			{
				Name:      "drop",
				Usage:     "drop pending files of mounts that are gone: they leave nothing in the store",
				ArgsUsage: "STORE (ID... | --all)",
				Flags:     []cli.Flag{&cli.BoolFlag{Name: "all", Usage: "every pending file of the store whose mount's lease lapsed"}, yesFlag()},
				Action:    func(c *cli.Context) error { return pendingSettle(c, false) },
			},
		},
	}
}

// pendingPage is pending list's object with --format json.
type pendingPage struct {
	Data     []versions.PendingFile `json:"data"`
	NextPage *string                `json:"next_page"`
}

func pendingList(c *cli.Context) error {
	if err := wantArgs(c, 1, "STORE"); err != nil {
		return err
	}
	return withDB(c, func(ctx context.Context, db *versions.DB) error {
		st, err := resolveStore(ctx, db, c.Args().First())
		if err != nil {
			return err
		}
		files, err := db.PendingFiles(ctx, st.ID)
		if err != nil {
			return err
		}
		if files == nil {
			files = []versions.PendingFile{}
		}
		return emit(c, pendingPage{Data: files}, func(w io.Writer) {
			t := table(w)
			row(t, "ID", "STATE", "SAVED", "SIZE", "MOUNT", "PATH")
			for _, f := range files {
				row(t, strconv.FormatInt(f.ID, 10), string(f.State), when(f.SavedAt), fmt.Sprint(f.Size), f.Mount, f.Path)
				if f.Failure != "" {
					row(t, "", "", "", "", "", "  not published: "+f.Failure)
				}
			}
			t.Flush()
		})
	})
}

// settled is one file pending publish or drop settled, with --format json.
type settled struct {
	ID        int64  `json:"id"`
	Path      string `json:"path"`
	Action    string `json:"action"` // published, dropped
	MemoryID  string `json:"memory_id,omitempty"`
	VersionID string `json:"memory_version_id,omitempty"`
}

func pendingSettle(c *cli.Context, publish bool) error {
	if c.NArg() < 1 {
		return usageFor(c, "needs STORE")
	}
	all := c.Bool("all")
	ids := make([]int64, 0, c.NArg()-1)
	for _, a := range c.Args().Slice()[1:] {
		id, err := strconv.ParseInt(a, 10, 64)
		if err != nil || id <= 0 {
			return usageFor(c, "%q is not a pending file's id: give the numbers memfs pending list shows", a)
		}
		ids = append(ids, id)
	}
	if all == (len(ids) > 0) {
		return usageFor(c, "give the ids of the pending files to settle, or --all (not both)")
	}
	action := "dropped"
	if publish {
		action = "published"
	}
	return withDB(c, func(ctx context.Context, db *versions.DB) error {
		st, err := resolveStore(ctx, db, c.Args().First())
		if err != nil {
			return err
		}
		paths := map[int64]string{}
		files, err := db.PendingFiles(ctx, st.ID)
		if err != nil {
			return err
		}
		for _, f := range files {
			paths[f.ID] = f.Path
			if all && f.State != versions.PendingLive {
				ids = append(ids, f.ID)
			}
		}
		if !publish && len(ids) > 0 {
			// A pending file was never a version: dropped, it is gone.
			if err := confirmed(c, "drop %s of store %s (%s) for good? Their content was never saved as a version", counted(len(ids), "pending file", "pending files"), st.ID, st.Name); err != nil {
				return err
			}
		}
		out := []settled{}
		for _, id := range ids {
			m, err := db.SettlePending(ctx, st.ID, id, publish)
			if err != nil {
				if len(out) > 0 {
					done := make([]string, len(out))
					for i, s := range out {
						done[i] = printable(s.Path)
					}
					return fmt.Errorf("%s %s first (%s), then pending file %d: %w",
						action, counted(len(out), "pending file", "pending files"), strings.Join(done, ", "), id, err)
				}
				return err
			}
			s := settled{ID: id, Path: paths[id], Action: action}
			if m != nil {
				s.MemoryID, s.VersionID, s.Path = m.ID, m.VersionID, m.Path
			}
			out = append(out, s)
		}
		return emit(c, map[string]any{"data": out}, func(w io.Writer) {
			for _, s := range out {
				if s.MemoryID != "" {
					fmt.Fprintf(w, "%s %d %s (%s %s)\n", s.Action, s.ID, s.Path, s.MemoryID, s.VersionID)
				} else {
					fmt.Fprintf(w, "%s %d %s\n", s.Action, s.ID, s.Path)
				}
			}
			if len(out) == 0 {
				fmt.Fprintln(w, "no pending file of a lapsed mount")
			}
		})
	})
}
