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

func apikeyCommand() *cli.Command {
	return &cli.Command{
		Name:  "apikey",
		Usage: "make, list and revoke the API keys memfs serve accepts",
		Subcommands: []*cli.Command{
			{
				Name:      "create",
				Usage:     "make a key and print it once (only its hash is kept)",
				ArgsUsage: " ",
				Description: `Without --store the key reaches every store, those made later too, and
may create stores and sessions. With --store (repeatable) it reaches only
those stores: any other store answers 404 as if it did not exist, and it
creates no stores and reaches no sessions. With --read-only every change
(any method but GET) is refused with 403 permission_error. With --session
it acts as the session on every route: a write the session's attachment
does not allow (a read_only store, a path outside its write prefix) is
403 permission_error.`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "name", Usage: "what the key is for, e.g. the program that uses it (required)"},
					&cli.StringSliceFlag{Name: "store", Usage: "limit the key to `STORE` (an id or a unique name; repeat for more)"},
					&cli.BoolFlag{Name: "read-only", Usage: "the key reads and changes nothing"},
					&cli.StringFlag{Name: "session", Usage: "a key for session `ID`: it reaches the session's stores and acts as the session, writing only what its attachments let it (read_write, inside a --write-prefix)"},
					&cli.BoolFlag{Name: "any-session", Usage: "a key of every store that may act as any session (X-Memfs-Session): for a harness that runs sessions"},
				},
				Action: apikeyCreate,
			},
			{
				Name:      "list",
				Usage:     "list keys, revoked ones too (never the keys themselves)",
				ArgsUsage: " ",
				Action:    apikeyList,
			},
			{
				Name:      "revoke",
				Usage:     "refuse a key from now on",
				ArgsUsage: "ID",
				Action:    apikeyRevoke,
			},
		},
	}
}

// createdKey is apikey create's object with --format json: the key's record
// and, this once, the key.
type createdKey struct {
	versions.APIKey
	Key string `json:"key"`
}

func (k createdKey) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(k.APIKey)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["key"] = k.Key
	return json.Marshal(m)
}

func apikeyCreate(c *cli.Context) error {
	if err := wantArgs(c, 0); err != nil {
		return err
	}
	name := c.String("name")
	if name == "" {
		return usageFor(c, "needs --name NAME")
	}
	return withDB(c, func(ctx context.Context, db *versions.DB) error {
		scope := versions.APIKeyScope{ReadOnly: c.Bool("read-only"), SessionID: c.String("session"), AnySession: c.Bool("any-session")}
		if c.IsSet("store") {
			scope.StoreIDs = []string{}
			for _, ref := range c.StringSlice("store") {
				st, err := resolveStore(ctx, db, ref)
				if err != nil {
					return err
				}
				scope.StoreIDs = append(scope.StoreIDs, st.ID)
			}
		}
		k, secret, err := db.CreateScopedAPIKey(ctx, name, scope)
		if err != nil {
			return err
		}
		return emit(c, createdKey{*k, secret}, func(w io.Writer) {
			fmt.Fprintln(w, secret)
			fmt.Fprintf(c.App.ErrWriter, "memfs: made API key %s (%s) for %s; it is shown only now: keep it somewhere safe\n", k.ID, k.Name, scopeText(k.APIKeyScope))
		})
	})
}

func apikeyList(c *cli.Context) error {
	if err := wantArgs(c, 0); err != nil {
		return err
	}
	return withDB(c, func(ctx context.Context, db *versions.DB) error {
		keys, err := db.ListAPIKeys(ctx)
		if err != nil {
			return err
		}
		return emit(c, versions.Page[versions.APIKey]{Data: keys}, func(w io.Writer) {
			t := table(w)
			row(t, "ID", "NAME", "KEY", "SCOPE", "CREATED", "REVOKED")
			for _, k := range keys {
				row(t, k.ID, k.Name, k.Hint, scopeText(k.APIKeyScope), when(k.CreatedAt), whenPtr(k.RevokedAt))
			}
			t.Flush()
		})
	})
}

func apikeyRevoke(c *cli.Context) error {
	if err := wantArgs(c, 1, "ID"); err != nil {
		return err
	}
	return withDB(c, func(ctx context.Context, db *versions.DB) error {
		keys, err := db.ListAPIKeys(ctx)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if k.ID == c.Args().First() && k.RevokedAt != nil {
				return emit(c, &k, func(io.Writer) {
					confirm(c, "API key %s (%s) was already revoked (%s): nothing to do", k.ID, k.Name, when(*k.RevokedAt))
				})
			}
		}
		k, err := db.RevokeAPIKey(ctx, c.Args().First())
		if err != nil {
			return err
		}
		return emit(c, k, func(io.Writer) { confirm(c, "revoked API key %s (%s)", k.ID, k.Name) })
	})
}

// scopeText says what a key reaches: "every store, read-write", or its
// stores and access.
func scopeText(s versions.APIKeyScope) string {
	stores := "every store"
	switch {
	case s.AllStores():
	case len(s.StoreIDs) == 0:
		stores = "no store (its stores were deleted)"
	default:
		stores = strings.Join(s.StoreIDs, ",")
	}
	switch {
	case s.SessionID != "":
		stores += ", as session " + s.SessionID
	case s.AnySession:
		stores += ", as any session"
	}
	if s.ReadOnly {
		return stores + ", read-only"
	}
	return stores + ", read-write"
}
