package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/versions"
)

func sessionCommand() *cli.Command {
	return &cli.Command{
		Name:  "session",
		Usage: "create, inspect, list and end agent sessions and their attached stores",
		Subcommands: []*cli.Command{
			{
				Name:      "create",
				Usage:     "create a session with up to 8 attached stores and print its id",
				ArgsUsage: " ",
				Flags: []cli.Flag{
					&cli.StringSliceFlag{Name: "store", KeepSpace: true, Usage: "attach `STORE[:read_only]` (a memstore_ id or a name); repeat for more"},
					&cli.StringSliceFlag{Name: "instructions", KeepSpace: true, Usage: "`STORE=TEXT`: instructions for the agent about an attached store"},
					&cli.StringSliceFlag{Name: "write-prefix", KeepSpace: true, Usage: "`STORE=/FOLDER/`: the session may write only in this folder of the store; the rest is read-only to it"},
				},
				Action: sessionCreate,
			},
			{
				Name:      "get",
				Usage:     "show a session and its attached stores",
				ArgsUsage: "ID",
				Action:    sessionGet,
			},
			{
				Name:      "list",
				Usage:     "list sessions",
				ArgsUsage: " ",
				Flags:     pageFlags(false),
				Action:    sessionList,
			},
			{
				Name:      "end",
				Usage:     "mark a session ended",
				ArgsUsage: "ID",
				Action:    sessionEnd,
			},
			promptCommand(),
		},
	}
}

// resolveStoreSpec finds the store and access of "STORE[:read_only]" (or
// ":read_write"). The name is taken as it is, spaces included; a name that
// itself contains ":" is found whole, unless the part before an access
// mode names a store too (then add the mode again: "a:read_only:read_write").
func resolveStoreSpec(ctx context.Context, db *versions.DB, spec string) (*versions.Store, versions.Access, error) {
	if i := strings.LastIndexByte(spec, ':'); i >= 0 {
		switch access := versions.Access(spec[i+1:]); access {
		case versions.ReadOnly, versions.ReadWrite:
			s, err := resolveStore(ctx, db, spec[:i])
			if versions.ErrorCode(err) != versions.CodeNotFound {
				return s, access, err
			}
			if whole, werr := resolveStore(ctx, db, spec); werr == nil {
				return whole, versions.ReadWrite, nil
			}
			return nil, "", err
		}
	}
	s, err := resolveStore(ctx, db, spec)
	if versions.ErrorCode(err) == versions.CodeNotFound {
		if i := strings.LastIndexByte(spec, ':'); i >= 0 {
			if mode, ok := accessTypo(spec[i+1:]); ok {
				if _, serr := resolveStore(ctx, db, spec[:i]); serr == nil {
					return nil, "", usageError("--store %q: the access mode is spelled :%s", spec, mode)
				}
			}
		}
	}
	return s, versions.ReadWrite, err
}

// accessTypo reads a misspelt access mode (readonly, read-only, ro, RW, …)
// as the mode it was meant to be.
func accessTypo(s string) (versions.Access, bool) {
	switch strings.NewReplacer("-", "", "_", "", " ", "").Replace(strings.ToLower(s)) {
	case "readonly", "ro", "read", "r":
		return versions.ReadOnly, true
	case "readwrite", "rw", "write", "w":
		return versions.ReadWrite, true
	}
	return "", false
}

func sessionCreate(c *cli.Context) error {
	if err := wantArgs(c, 0); err != nil {
		return err
	}
	specs := c.StringSlice("store")
	if len(specs) == 0 {
		return usageFor(c, "needs at least one --store")
	}
	instr := map[string]string{}
	var instrOrder []string
	for _, p := range c.StringSlice("instructions") {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return usageFor(c, "--instructions %q is not STORE=TEXT", p)
		}
		instr[k] = v
		instrOrder = append(instrOrder, k)
	}
	return withDB(c, func(ctx context.Context, db *versions.DB) error {
		attach := make([]versions.AttachmentParams, 0, len(specs))
		index := map[string]int{} // store id → attachment
		for _, spec := range specs {
			s, access, err := resolveStoreSpec(ctx, db, spec)
			if err != nil {
				return err
			}
			index[s.ID] = len(attach)
			attach = append(attach, versions.AttachmentParams{StoreID: s.ID, Access: access})
		}
		for _, k := range instrOrder {
			s, err := resolveStore(ctx, db, k)
			if err != nil {
				return err
			}
			i, ok := index[s.ID]
			if !ok {
				return usageFor(c, "--instructions names %s, which no --store attaches", k)
			}
			text := instr[k]
			attach[i].Instructions = &text
		}
		if err := writePrefixes(ctx, c, db, attach, index); err != nil {
			return err
		}
		sess, err := db.CreateSession(ctx, attach)
		if err != nil {
			return err
		}
		return emit(c, sess, func(w io.Writer) { fmt.Fprintln(w, sess.ID) })
	})
}

func sessionGet(c *cli.Context) error {
	if err := wantArgs(c, 1, "ID"); err != nil {
		return err
	}
	return withDB(c, func(ctx context.Context, db *versions.DB) error {
		sess, err := resolveSession(ctx, db, c.Args().First())
		if err != nil {
			return err
		}
		return emit(c, sess, func(w io.Writer) { printSession(w, sess) })
	})
}

func printSession(w io.Writer, s *versions.Session) {
	t := table(w)
	row(t, "id:", s.ID)
	row(t, "created:", when(s.CreatedAt))
	row(t, "ended:", whenPtr(s.EndedAt))
	t.Flush()
	fmt.Fprintln(w)
	t = table(w)
	row(t, "MOUNT PATH", "ACCESS", "WRITE PREFIX", "NAME", "STORE", "INSTRUCTIONS")
	for _, a := range s.Resources {
		instr := "-"
		if a.Instructions != nil {
			instr = oneLine(*a.Instructions, 40)
		}
		prefix := "-"
		if a.WritePrefix != "" {
			prefix = a.WritePrefix
		}
		row(t, a.MountPath, string(a.Access), prefix, a.Name, a.StoreID, instr)
	}
	t.Flush()
}

func sessionList(c *cli.Context) error {
	if err := wantArgs(c, 0); err != nil {
		return err
	}
	limit, err := pageLimit(c, versions.ViewBasic)
	if err != nil {
		return err
	}
	return withDB(c, func(ctx context.Context, db *versions.DB) error {
		page, err := db.ListSessions(ctx, versions.SessionListOptions{IncludeArchived: true, Newest: true, Limit: limit, Page: c.String("page")})
		if err != nil {
			return err
		}
		err = emit(c, page, func(w io.Writer) {
			t := table(w)
			row(t, "ID", "CREATED", "ENDED", "STORES")
			for _, s := range page.Data {
				names := make([]string, len(s.Resources))
				for i, a := range s.Resources {
					names[i] = a.Name
					if a.Access == versions.ReadOnly {
						names[i] += " (read-only)"
					}
				}
				row(t, s.ID, when(s.CreatedAt), whenPtr(s.EndedAt), strings.Join(names, ", "))
			}
			t.Flush()
		})
		nextPageHint(c, page.NextPage)
		return err
	})
}

func sessionEnd(c *cli.Context) error {
	if err := wantArgs(c, 1, "ID"); err != nil {
		return err
	}
	return withDB(c, func(ctx context.Context, db *versions.DB) error {
		sess, err := resolveSession(ctx, db, c.Args().First())
		if err != nil {
			return err
		}
		if sess.EndedAt != nil {
			// As git branch -d of a deleted branch would not pretend.
			return emit(c, sess, func(io.Writer) {
				confirm(c, "session %s had already ended (%s): nothing to do", sess.ID, when(*sess.EndedAt))
			})
		}
		if sess, err = db.EndSession(ctx, sess.ID); err != nil {
			return err
		}
		return emit(c, sess, func(io.Writer) { confirm(c, "ended session %s", sess.ID) })
	})
}

// resolveSession finds the session a person names: its sesn_ id, or the
// end of one (at least 6 characters) as memfs log and session list show
// it. No such session is exit 3 wherever a session is named.
func resolveSession(ctx context.Context, db *versions.DB, ref string) (*versions.Session, error) {
	if strings.HasPrefix(ref, "sesn_") {
		return db.GetSession(ctx, ref)
	}
	notFound := &versions.Error{Code: versions.CodeNotFound, Object: versions.ObjectSession, Message: fmt.Sprintf(
		"no session %q: give a sesn_ id, or the last %d characters of one as memfs log and memfs session list show them", ref, shortIDLen)}
	if len(ref) < 6 || strings.ContainsAny(ref, "_/ ") {
		return nil, notFound
	}
	var found []versions.Session
	o := versions.SessionListOptions{IncludeArchived: true, Limit: versions.MaxPageSize}
	for {
		page, err := db.ListSessions(ctx, o)
		if err != nil {
			return nil, err
		}
		for _, s := range page.Data {
			if strings.HasSuffix(strings.ToUpper(s.ID), strings.ToUpper(ref)) {
				found = append(found, s)
			}
		}
		if page.NextPage == nil || *page.NextPage == "" {
			break
		}
		o.Page = *page.NextPage
	}
	switch len(found) {
	case 0:
		return nil, notFound
	case 1:
		return &found[0], nil
	}
	return nil, invalidf("%d sessions end in %q (%s, …): give more characters", len(found), ref, found[0].ID)
}

// writePrefixes reads --write-prefix STORE=/FOLDER/ into the attachments
// of attach (index: store id to attachment), naming the store as
// --instructions does.
func writePrefixes(ctx context.Context, c *cli.Context, db *versions.DB, attach []versions.AttachmentParams, index map[string]int) error {
	for _, p := range c.StringSlice("write-prefix") {
		ref, prefix, ok := strings.Cut(p, "=")
		if !ok || ref == "" || prefix == "" {
			return usageFor(c, "--write-prefix %q is not STORE=/FOLDER/ (as --write-prefix Notes=/projects/p1/)", p)
		}
		s, err := resolveStore(ctx, db, ref)
		if err != nil {
			return err
		}
		i, ok := index[s.ID]
		if !ok {
			return usageFor(c, "--write-prefix names %s, which no --store attaches", ref)
		}
		attach[i].WritePrefix = prefix
	}
	return nil
}
