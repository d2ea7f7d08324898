package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/versions"
)

func storeCommand() *cli.Command {
	return &cli.Command{
		Name:  "store",
		Usage: "create, list, inspect, change, archive and delete memory stores",
		Subcommands: []*cli.Command{
			{
				Name:      "create",
				Usage:     "create a memory store and print its id",
				ArgsUsage: " ",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "name", Usage: "display name, 1-255 characters (required)"},
					&cli.StringFlag{Name: "description", Usage: "what the store holds, up to 1,024 characters"},
					&cli.StringSliceFlag{Name: "metadata", KeepSpace: true, Usage: "a `KEY=VALUE` pair; repeat for more"},
					&cli.IntFlag{Name: "max-memories", Usage: "most memories the store may hold (default 2000)"},
					&cli.IntFlag{Name: "max-memory-bytes", Usage: "largest memory in bytes (default 102400)"},
					&cli.IntFlag{Name: "max-directories", Usage: "most directories the store keeps with no memory below them, made with mkdir or left by a move (default 2000)"},
					historyQuotaFlag,
					allowDuplicateFlag,
					guardFlag(),
				},
				Action: storeCreate,
			},
			{
				Name:      "list",
				Usage:     "list memory stores (archived ones only with --include-archived)",
				ArgsUsage: " ",
				Flags: append(append([]cli.Flag{&cli.BoolFlag{Name: "include-archived", Usage: "list archived stores too"}},
					createdFlags("stores")...), pageFlags(false)...),
				Action: storeList,
			},
			{
				Name:      "get",
				Usage:     "show a memory store",
				ArgsUsage: "STORE",
				Action:    storeGet,
			},
			{
				Name:      "update",
				Usage:     "change a store's name, description, metadata (KEY= removes a key), limits or guard",
				ArgsUsage: "STORE",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "name", Usage: "new display name"},
					allowDuplicateFlag,
					&cli.StringFlag{Name: "description", Usage: "new description"},
					&cli.StringSliceFlag{Name: "metadata", KeepSpace: true, Usage: "set `KEY=VALUE`, or remove KEY with KEY=; repeat for more"},
					&cli.IntFlag{Name: "max-memories", Usage: "most memories the store may hold; not below the memories it holds"},
					&cli.IntFlag{Name: "max-memory-bytes", Usage: "largest memory in bytes; not below its largest memory"},
					historyQuotaFlag,
					guardFlag(),
				},
				Action: storeUpdate,
			},
			{
				Name:      "archive",
				Usage:     "make a store read-only for good (it can no longer be attached to sessions; asks first on a terminal)",
				ArgsUsage: "STORE",
				Flags:     []cli.Flag{yesFlag()},
				Action:    storeArchive,
			},
			{
				Name:      "delete",
				Usage:     "delete a store with all its memories and versions (asks first on a terminal)",
				ArgsUsage: "STORE",
				Flags:     []cli.Flag{yesFlag()},
				Action:    storeDelete,
			},
			storeForkCommand(),
		},
	}
}

// parseMetadata reads --metadata KEY=VALUE pairs. With removals, "KEY="
// means remove KEY (a nil value).
func parseMetadata(c *cli.Context, removals bool) (map[string]*string, error) {
	pairs := c.StringSlice("metadata")
	if len(pairs) == 0 {
		return nil, nil
	}
	m := make(map[string]*string, len(pairs))
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, usageFor(c, "--metadata %q is not KEY=VALUE", p)
		}
		if removals && v == "" {
			m[k] = nil
			continue
		}
		m[k] = &v
	}
	return m, nil
}

func storeCreate(c *cli.Context) error {
	if err := wantArgs(c, 0); err != nil {
		return err
	}
	if !c.IsSet("name") {
		return usageFor(c, "needs --name")
	}
	md, err := parseMetadata(c, false)
	if err != nil {
		return err
	}
	p := versions.StoreParams{
		Name:           c.String("name"),
		Description:    c.String("description"),
		MaxMemories:    c.Int("max-memories"),
		MaxMemoryBytes: c.Int("max-memory-bytes"),
		MaxDirectories: c.Int("max-directories"),
	}
	if p.MaxMemories < 0 || p.MaxMemoryBytes < 0 || p.MaxDirectories < 0 {
		return usageFor(c, "--max-memories, --max-memory-bytes and --max-directories must be positive")
	}
	if c.IsSet("max-history-bytes") {
		q, err := historyQuota(c)
		if err != nil {
			return err
		}
		p.MaxHistoryBytes = q
	}
	g, err := guardPolicy(c)
	if err != nil {
		return err
	}
	if g != nil {
		p.Guard = *g
	}
	if md != nil {
		p.Metadata = make(map[string]string, len(md))
		for k, v := range md {
			p.Metadata[k] = *v
		}
	}
	return withDB(c, func(ctx context.Context, db *versions.DB) error {
		if err := nameFree(ctx, c, db, p.Name, ""); err != nil {
			return err
		}
		s, err := db.CreateStore(ctx, p)
		if err != nil {
			return err
		}
		return emit(c, s, func(w io.Writer) { fmt.Fprintln(w, s.ID) })
	})
}

func storeList(c *cli.Context) error {
	if err := wantArgs(c, 0); err != nil {
		return err
	}
	limit, err := pageLimit(c, versions.ViewBasic)
	if err != nil {
		return err
	}
	o := versions.StoreListOptions{IncludeArchived: c.Bool("include-archived"), Limit: limit, Page: c.String("page")}
	if o.CreatedGTE, o.CreatedLTE, err = createdSpan(c); err != nil {
		return err
	}
	return withDB(c, func(ctx context.Context, db *versions.DB) error {
		page, err := db.ListStores(ctx, o)
		if err != nil {
			return err
		}
		err = emit(c, page, func(w io.Writer) {
			t := table(w)
			row(t, "ID", "NAME", "CREATED", "ARCHIVED", "DESCRIPTION")
			for _, s := range page.Data {
				row(t, s.ID, s.Name, when(s.CreatedAt), whenPtr(s.ArchivedAt), oneLine(s.Description, 60))
			}
			t.Flush()
		})
		nextPageHint(c, page.NextPage)
		return err
	})
}

// withStore resolves the command's first argument to a store.
func withStore(c *cli.Context, fn func(ctx context.Context, db *versions.DB, s *versions.Store) error) error {
	return withDB(c, func(ctx context.Context, db *versions.DB) error {
		s, err := resolveStore(ctx, db, c.Args().First())
		if err != nil {
			return err
		}
		return fn(ctx, db, s)
	})
}

func storeGet(c *cli.Context) error {
	if err := wantArgs(c, 1, "STORE"); err != nil {
		return err
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		return emit(c, storeDetail{s}, func(w io.Writer) { printStore(w, s) })
	})
}

// storeDetail is what store get shows, for scripts: the API's store
// object with memfs fields the hosted API has not (its limits, what it
// holds and its guard), so that a quota can be watched. The API's fields
// are versions.Store's own marshalling, so that the CLI and the server
// show one object.
type storeDetail struct{ *versions.Store }

func (d storeDetail) MarshalJSON() ([]byte, error) {
	s := d.Store
	api, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var quota *int // null: no quota
	if s.MaxHistoryBytes > 0 {
		quota = &s.MaxHistoryBytes
	}
	extra, err := json.Marshal(struct {
		MaxMemories     int                  `json:"max_memories"`
		MaxMemoryBytes  int                  `json:"max_memory_bytes"`
		MaxDirectories  int                  `json:"max_directories"`
		MaxHistoryBytes *int                 `json:"max_history_bytes"`
		MemoryCount     int                  `json:"memory_count"`
		HistoryBytes    int                  `json:"history_bytes"`
		Guard           versions.GuardPolicy `json:"guard"`
	}{s.MaxMemories, s.MaxMemoryBytes, s.MaxDirectories, quota, s.MemoryCount, s.HistoryBytes, s.Guard})
	if err != nil {
		return nil, err
	}
	// Both are objects with fields: one object of the API's fields, then ours.
	return append(append(api[:len(api)-1], ','), extra[1:]...), nil
}

func printStore(w io.Writer, s *versions.Store) {
	t := table(w)
	row(t, "id:", s.ID)
	row(t, "name:", printable(s.Name))
	row(t, "description:", oneLine(s.Description, 0))
	keys := make([]string, 0, len(s.Metadata))
	for k := range s.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		row(t, "metadata:", printable(k+"="+s.Metadata[k])) // set by anyone with a key: no terminal escapes
	}
	row(t, "created:", when(s.CreatedAt))
	row(t, "updated:", when(s.UpdatedAt))
	row(t, "archived:", whenPtr(s.ArchivedAt))
	row(t, "memories:", fmt.Sprint(s.MemoryCount))
	if s.MaxMemories > 0 {
		row(t, "max memories:", fmt.Sprint(s.MaxMemories))
	}
	if s.MaxMemoryBytes > 0 {
		row(t, "max memory bytes:", fmt.Sprint(s.MaxMemoryBytes))
	}
	if s.MaxDirectories > 0 {
		row(t, "max directories:", fmt.Sprint(s.MaxDirectories))
	}
	if s.MaxHistoryBytes > 0 {
		row(t, "history bytes:", fmt.Sprintf("%d of %d", s.HistoryBytes, s.MaxHistoryBytes))
	} else {
		row(t, "history bytes:", fmt.Sprintf("%d (no quota)", s.HistoryBytes))
	}
	if s.Guard != "" {
		row(t, "guard:", string(s.Guard))
	}
	t.Flush()
}

func storeUpdate(c *cli.Context) error {
	if err := wantArgs(c, 1, "STORE"); err != nil {
		return err
	}
	var u versions.StoreUpdate
	if c.IsSet("name") {
		v := c.String("name")
		u.Name = &v
	}
	if c.IsSet("description") {
		v := c.String("description")
		u.Description = &v
	}
	md, err := parseMetadata(c, true)
	if err != nil {
		return err
	}
	u.Metadata = md
	if c.IsSet("max-history-bytes") {
		q, err := historyQuota(c)
		if err != nil {
			return err
		}
		u.MaxHistoryBytes = &q
	}
	if u.Guard, err = guardPolicy(c); err != nil {
		return err
	}
	for _, l := range []struct {
		flag string
		to   **int
	}{{"max-memories", &u.MaxMemories}, {"max-memory-bytes", &u.MaxMemoryBytes}} {
		if !c.IsSet(l.flag) {
			continue
		}
		v := c.Int(l.flag)
		if v < 1 {
			return usageFor(c, "--%s must be at least 1", l.flag)
		}
		*l.to = &v
	}
	if u.Name == nil && u.Description == nil && md == nil && u.MaxHistoryBytes == nil && u.Guard == nil && u.MaxMemories == nil && u.MaxMemoryBytes == nil {
		return usageFor(c, "nothing to change; give --name, --description, --metadata, --max-memories, --max-memory-bytes, --max-history-bytes or --guard")
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		if u.Name != nil {
			if err := nameFree(ctx, c, db, *u.Name, s.ID); err != nil {
				return err
			}
		}
		s, err := db.UpdateStore(ctx, s.ID, u)
		if err != nil {
			return err
		}
		return emit(c, storeDetail{s}, func(io.Writer) { confirm(c, "updated store %s (%s)", s.ID, s.Name) })
	})
}

func storeArchive(c *cli.Context) error {
	if err := wantArgs(c, 1, "STORE"); err != nil {
		return err
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		if err := confirmed(c, "archive store %s (%s) for good? Its %s become read-only, and it can no longer be attached to sessions", s.ID, s.Name, counted(s.MemoryCount, "memory", "memories")); err != nil {
			return err
		}
		s, err := db.ArchiveStore(ctx, s.ID)
		if err != nil {
			return err
		}
		return emit(c, s, func(io.Writer) { confirm(c, "archived store %s (%s): it is read-only now", s.ID, s.Name) })
	})
}

func storeDelete(c *cli.Context) error {
	if err := wantArgs(c, 1, "STORE"); err != nil {
		return err
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		if err := confirmed(c, "delete store %s (%s) with its %s and every version, for good?", s.ID, s.Name, counted(s.MemoryCount, "memory", "memories")); err != nil {
			return err
		}
		if err := db.DeleteStore(ctx, s.ID); err != nil {
			return err
		}
		return emit(c, deleted{"memory_store_deleted", s.ID}, func(io.Writer) {
			confirm(c, "deleted store %s (%s) with its memories and versions", s.ID, s.Name)
		})
	})
}

// deleted is the API's answer to a delete.
type deleted struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// oneLine shortens text to one line of at most max characters (0: no limit).
func oneLine(s string, max int) string {
	s = printable(strings.Join(strings.Fields(s), " "))
	if r := []rune(s); max > 0 && len(r) > max {
		return string(r[:max-1]) + "…"
	}
	if s == "" {
		return "-"
	}
	return s
}

var historyQuotaFlag = &cli.IntFlag{Name: "max-history-bytes",
	Usage: fmt.Sprintf("quota on the bytes the store's history costs: each version's content, its path and its record (renames and deletions included, current versions too), and the directories it keeps; past it saves, renames and mkdir fail until memfs version prune frees some (default %d, 0: no quota)", versions.DefaultMaxHistoryBytes)}

// historyQuota reads --max-history-bytes as the engine takes it: 0 on the
// command line means no quota.
func historyQuota(c *cli.Context) (int, error) {
	q := c.Int("max-history-bytes")
	switch {
	case q < 0:
		return 0, usageFor(c, "--max-history-bytes must be positive, or 0 for no quota")
	case q == 0:
		return -1, nil
	}
	return q, nil
}

var allowDuplicateFlag = &cli.BoolFlag{Name: "allow-duplicate",
	Usage: "give the store a name another store has (commands then need its memstore_ id)"}

// nameFree refuses a store name another store (archived ones too) already
// has: a name is how commands find a store, and two stores of one name can
// then be named only by id. The HTTP API, like the hosted one, allows it;
// on the command line --allow-duplicate does. self is the store being
// renamed.
func nameFree(ctx context.Context, c *cli.Context, db *versions.DB, name, self string) error {
	if c.Bool("allow-duplicate") {
		return nil
	}
	page, err := db.ListStores(ctx, versions.StoreListOptions{IncludeArchived: true, Limit: versions.MaxPageSize})
	var taken []string
	for err == nil {
		for _, s := range page.Data {
			if s.Name == name && s.ID != self {
				taken = append(taken, s.ID)
			}
		}
		if page.NextPage == nil {
			break
		}
		page, err = db.ListStores(ctx, versions.StoreListOptions{IncludeArchived: true, Limit: versions.MaxPageSize, Page: *page.NextPage})
	}
	if err != nil {
		return err
	}
	if len(taken) == 0 {
		return nil
	}
	return &versions.Error{Code: versions.CodeConflict, Object: versions.ObjectStore, Message: fmt.Sprintf(
		"a memory store is already named %q (%s): choose another name, or give --allow-duplicate (commands then name each of them by its memstore_ id)",
		name, strings.Join(taken, ", "))}
}
