package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

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
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "name", Usage: "what the key is for, e.g. the program that uses it (required)"},
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
		k, secret, err := db.CreateAPIKey(ctx, name)
		if err != nil {
			return err
		}
		return emit(c, createdKey{*k, secret}, func(w io.Writer) {
			fmt.Fprintln(w, secret)
			fmt.Fprintf(c.App.ErrWriter, "memfs: made API key %s (%s); it is shown only now: keep it somewhere safe\n", k.ID, k.Name)
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
			row(t, "ID", "NAME", "KEY", "CREATED", "REVOKED")
			for _, k := range keys {
				row(t, k.ID, k.Name, k.Hint, when(k.CreatedAt), whenPtr(k.RevokedAt))
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
		k, err := db.RevokeAPIKey(ctx, c.Args().First())
		if err != nil {
			return err
		}
		return emit(c, k, func(io.Writer) { confirm(c, "revoked API key %s (%s)", k.ID, k.Name) })
	})
}
