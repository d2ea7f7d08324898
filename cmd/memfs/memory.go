package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/versions"
)

func contentFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "content", Usage: "the memory's `TEXT`"},
		&cli.StringFlag{Name: "file", Usage: "read the content from file `F` (- for stdin)"},
	}
}

func memoryCommand() *cli.Command {
	return &cli.Command{
		Name:  "memory",
		Usage: "create, read, list, change and delete the memories of a store",
		Subcommands: []*cli.Command{
			{
				Name:      "create",
				Usage:     "create a memory at a new path and print its id (never overwrites)",
				ArgsUsage: "STORE",
				Flags: append(append([]cli.Flag{
					&cli.StringFlag{Name: "path", Usage: "the memory's `PATH`, e.g. /notes/todo.md (required)"},
				}, contentFlags()...), viewFlag("the object printed with --format json: basic (no content) or full")),
				Action: memoryCreate,
			},
			{
				Name:      "get",
				Usage:     "print a memory's content as it is (MEMORY: a mem_ id or a path)",
				ArgsUsage: "STORE MEMORY",
				Action:    memoryGet,
			},
			{
				Name:      "list",
				Usage:     "list memories in path order",
				ArgsUsage: "STORE",
				Flags: append([]cli.Flag{
					&cli.StringFlag{Name: "path-prefix", Usage: "only memories under `PREFIX`, which ends with / (e.g. /notes/)"},
					&cli.IntFlag{Name: "depth", Usage: "0: everything below; 1: direct children, deeper ones as prefixes"},
					viewFlag("basic (no content) or full (at most 20 per page)"),
				}, pageFlags(true)...),
				Action: memoryList,
			},
			{
				Name:      "update",
				Usage:     "change a memory's content, path (a rename that keeps its id) or both",
				ArgsUsage: "STORE MEMORY",
				Flags: append(append(contentFlags(),
					&cli.StringFlag{Name: "path", Usage: "rename the memory to `PATH`"},
					&cli.StringFlag{Name: "if-sha256", Usage: "change nothing unless the current content has this `SHA256`"},
				), viewFlag("the object printed with --format json: basic (no content) or full")),
				Action: memoryUpdate,
			},
			{
				Name:      "delete",
				Usage:     "delete a memory (its versions stay, for memfs log and restore)",
				ArgsUsage: "STORE MEMORY",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "if-sha256", Usage: "delete nothing unless the current content has this `SHA256`"},
				},
				Action: memoryDelete,
			},
		},
	}
}

func memoryCreate(c *cli.Context) error {
	if err := wantArgs(c, 1, "STORE"); err != nil {
		return err
	}
	view, err := parseView(c)
	if err != nil {
		return err
	}
	content, ok, err := readContent(c)
	if err != nil {
		return err
	}
	if !c.IsSet("path") || !ok {
		return usageFor(c, "needs --path and one of --content or --file")
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		var m versions.Memory
		if _, err := db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: c.String("path"), Content: content, By: cliActor(), Exclusive: true, Memory: &m}); err != nil {
			return err
		}
		return emit(c, basic(&m, view), func(w io.Writer) { fmt.Fprintln(w, m.ID) })
	})
}

func memoryGet(c *cli.Context) error {
	if err := wantArgs(c, 2, "STORE", "MEMORY"); err != nil {
		return err
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		ref := c.Args().Get(1)
		m, err := db.GetMemory(ctx, s.ID, ref)
		if err != nil && versions.ErrorCode(err) == versions.CodeNotFound && backRef.MatchString(ref) {
			// PATH~N: that version's content, as git show REV:path.
			v, verr := resolveVersion(ctx, db, s.ID, ref)
			if verr != nil {
				return verr
			}
			if v.Content == nil {
				return invalidf("version %s (%s) has no content to show: %s; see memfs log %s %s", v.ID, ref, noContentReason(v), s.ID, orDash(v.Path))
			}
			return emit(c, v, func(w io.Writer) { io.WriteString(w, *v.Content) })
		}
		if err != nil && versions.ErrorCode(err) == versions.CodeNotFound {
			if rerr := memoryRef(ref); rerr != nil {
				return rerr
			}
		}
		if err != nil {
			return err
		}
		return emit(c, m, func(w io.Writer) {
			if m.Content != nil {
				io.WriteString(w, *m.Content)
			}
		})
	})
}

func memoryList(c *cli.Context) error {
	if err := wantArgs(c, 1, "STORE"); err != nil {
		return err
	}
	view, err := parseView(c)
	if err != nil {
		return err
	}
	limit, err := pageLimit(c, view)
	if err != nil {
		return err
	}
	o := versions.MemoryListOptions{
		PathPrefix: c.String("path-prefix"),
		Depth:      c.Int("depth"),
		View:       view,
		Limit:      limit,
		Page:       c.String("page"),
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		page, err := db.ListMemories(ctx, s.ID, o)
		if err != nil {
			return err
		}
		err = emit(c, page, func(w io.Writer) {
			t := table(w)
			row(t, "PATH", "SIZE", "SHA256", "UPDATED", "ID")
			for _, it := range page.Data {
				if it.Memory == nil {
					row(t, it.Prefix, "-", "-", "-", "(prefix)")
					continue
				}
				m := it.Memory
				row(t, m.Path, fmt.Sprint(m.ContentSize), shortSHA(&m.ContentSHA256), when(m.UpdatedAt), m.ID)
			}
			t.Flush()
		})
		nextPageHint(c, page.NextPage)
		return err
	})
}

func memoryUpdate(c *cli.Context) error {
	if err := wantArgs(c, 2, "STORE", "MEMORY"); err != nil {
		return err
	}
	view, err := parseView(c)
	if err != nil {
		return err
	}
	content, ok, err := readContent(c)
	if err != nil {
		return err
	}
	sha, err := ifSHA256(c)
	if err != nil {
		return err
	}
	u := versions.MemoryUpdate{IfSHA256: sha}
	if ok {
		u.Content = &content
	}
	if c.IsSet("path") {
		p := c.String("path")
		u.Path = &p
	}
	if u.Content == nil && u.Path == nil {
		return usageFor(c, "nothing to change; give --content, --file or --path")
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		// MEMORY may be a path: the engine updates and deletes by id.
		if err := memoryRef(c.Args().Get(1)); err != nil {
			return err
		}
		cur, err := db.GetMemory(ctx, s.ID, c.Args().Get(1))
		if err != nil {
			return err
		}
		var m *versions.Memory
		if u.Content != nil {
			// A save on the head just read: the engine reads none of it
			// again unless another writer moved it on meanwhile.
			m = new(versions.Memory)
			req := versions.SaveReq{StoreID: s.ID, MemoryID: cur.ID, Content: *u.Content, By: cliActor(), IfSHA256: u.IfSHA256, Memory: m}
			if u.Path != nil {
				req.Path = *u.Path
			}
			_, err = db.Save(ctx, req)
		} else {
			m, err = db.UpdateMemory(ctx, s.ID, cur.ID, u, cliActor())
		}
		if err != nil {
			return err
		}
		return emit(c, basic(m, view), func(io.Writer) {
			if m.VersionID == cur.VersionID {
				confirm(c, "memory %s (%s) unchanged: it already had that content and path", m.ID, m.Path)
				return
			}
			confirm(c, "updated memory %s (%s): version %s", m.ID, m.Path, m.VersionID)
		})
	})
}

func memoryDelete(c *cli.Context) error {
	if err := wantArgs(c, 2, "STORE", "MEMORY"); err != nil {
		return err
	}
	sha, err := ifSHA256(c)
	if err != nil {
		return err
	}
	d := versions.MemoryDelete{IfSHA256: sha}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		// MEMORY may be a path: the engine updates and deletes by id.
		if err := memoryRef(c.Args().Get(1)); err != nil {
			return err
		}
		cur, err := db.GetMemory(ctx, s.ID, c.Args().Get(1))
		if err != nil {
			return err
		}
		if err := db.DeleteMemory(ctx, s.ID, cur.ID, d, cliActor()); err != nil {
			return err
		}
		return emit(c, deleted{"memory_deleted", cur.ID}, func(io.Writer) {
			confirm(c, "deleted memory %s (%s); memfs restore brings it back from its versions", cur.ID, cur.Path)
		})
	})
}

// ifSHA256 reads --if-sha256: 64 hex digits, or the precondition could never
// hold and a mistyped value would look like someone else's change.
func ifSHA256(c *cli.Context) (string, error) {
	sha := strings.ToLower(strings.TrimSpace(c.String("if-sha256")))
	if !c.IsSet("if-sha256") {
		return "", nil
	}
	if len(sha) != 64 || strings.Trim(sha, "0123456789abcdef") != "" {
		return "", invalidf("--if-sha256 %q is not a sha256: give the 64 hex digits of content_sha256 (memfs --format json memory get STORE MEMORY)", c.String("if-sha256"))
	}
	return sha, nil
}
