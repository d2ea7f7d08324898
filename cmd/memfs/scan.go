package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/guard"
	"github.com/memfs/memfs/versions"
)

// exitFound: memfs scan found credentials that are still there.
const exitFound = 8

func guardFlag() cli.Flag {
	return &cli.StringFlag{Name: "guard", Usage: "the credential guard on writes: refuse (the default) refuses a write that holds a credential, " +
		"warn saves it and logs it, off checks nothing"}
}

// guardPolicy reads --guard.
func guardPolicy(c *cli.Context) (*versions.GuardPolicy, error) {
	if !c.IsSet("guard") {
		return nil, nil
	}
	p, err := guard.ParsePolicy(c.String("guard"))
	if err != nil {
		return nil, usageFor(c, "--guard %q: give refuse, warn or off", c.String("guard"))
	}
	return &p, nil
}

func scanCommand() *cli.Command {
	return &cli.Command{
		Name:      "scan",
		Usage:     "find credentials in a store's memories and their whole history (and redact the old versions that hold them)",
		ArgsUsage: "STORE",
		Description: "Checks every version that still holds content, current ones and history alike, with the credential\n" +
			"guard's rules, whatever the store's --guard, and prints one line per finding: version id, path,\n" +
			"rule and line, and \"head\" when the version is a memory's current content. The secret itself is\n" +
			"never printed. Exit status 8 when it finds any (0 when none).\n\n" +
			"With --redact it redacts the versions found, after asking on a terminal (--yes skips the question;\n" +
			"without a terminal --yes is needed). A memory's current version cannot be redacted: update the\n" +
			"memory without the credential (or delete it), then run the scan with --redact again.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "redact", Usage: "redact the versions that hold a credential (not the current ones)"},
			yesFlag(),
		},
		Action: scanStore,
	}
}

func scanStore(c *cli.Context) error {
	if err := wantArgs(c, 1, "STORE"); err != nil {
		return err
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		found, err := scanFindings(ctx, db, s.ID)
		if err != nil {
			return err
		}
		var old []string // versions to redact, oldest first
		heads := map[string]versions.ScanFinding{}
		seen := map[string]bool{}
		for _, f := range found {
			if f.Head {
				heads[f.VersionID] = f
			} else if !seen[f.VersionID] {
				old = append(old, f.VersionID)
			}
			seen[f.VersionID] = true
		}
		err = emit(c, versions.Page[versions.ScanFinding]{Data: found}, func(w io.Writer) {
			for _, f := range found {
				line := fmt.Sprintf("%s\t%s\t%s\tline %d", f.VersionID, f.Path, f.Rule, f.Line)
				if f.Head {
					line += "\thead"
				}
				fmt.Fprintln(w, line)
			}
		})
		if err != nil {
			return err
		}
		if len(found) == 0 {
			confirm(c, "no credential found in memory store %s (%s)", s.ID, s.Name)
			return nil
		}
		confirm(c, "%s in %s of memory store %s (%s), %d of them current",
			counted(len(found), "credential", "credentials"), counted(len(seen), "version", "versions"), s.ID, s.Name, len(heads))
		if !c.Bool("redact") {
			confirm(c, "run memfs scan %s --redact to redact the old versions; update or delete the memories whose current version holds one first", s.ID)
			return cli.Exit("", exitFound)
		}
		if len(old) > 0 {
			if err := confirmed(c, "redact %s of memory store %s (%s)? Their content is removed for good", counted(len(old), "version", "versions"), s.ID, s.Name); err != nil {
				return err
			}
			for i, id := range old {
				if _, err := db.RedactVersion(ctx, s.ID, id, cliActor()); err != nil {
					if i > 0 {
						// Say what is done: those are redacted for good.
						return fmt.Errorf("redacted %s of %d, then %s: %w; run the scan with --redact again for the rest", counted(i, "version", "versions"), len(old), id, err)
					}
					return err
				}
			}
			confirm(c, "redacted %s", counted(len(old), "version", "versions"))
		}
		if len(heads) == 0 {
			return nil
		}
		for _, f := range heads {
			confirm(c, "%s is the current version of %s (%s): it cannot be redacted; update the memory without the credential (memfs memory update %s %s --file F) or delete it, then run memfs scan %s --redact again",
				f.VersionID, f.Path, f.MemoryID, s.ID, f.MemoryID, s.ID)
		}
		return cli.Exit("", exitFound)
	})
}

func scanFindings(ctx context.Context, db *versions.DB, storeID string) ([]versions.ScanFinding, error) {
	found := []versions.ScanFinding{}
	err := db.ScanStore(ctx, storeID, func(f versions.ScanFinding) error {
		found = append(found, f)
		return nil
	})
	return found, err
}

// reportImported tells what credentials the stores an import wrote hold:
// an import restores history as it was and refuses nothing.
func reportImported(ctx context.Context, c *cli.Context, db *versions.DB, storeID string) error {
	found, err := scanFindings(ctx, db, storeID)
	if err != nil || len(found) == 0 {
		return err
	}
	var rules []string
	seen := map[string]bool{}
	for _, f := range found {
		if !seen[f.Rule] {
			seen[f.Rule] = true
			rules = append(rules, f.Rule)
		}
	}
	confirm(c, "memory store %s holds %s (%s): see memfs scan %s, which can redact them",
		storeID, counted(len(found), "credential", "credentials"), strings.Join(rules, ", "), storeID)
	return nil
}

// logGuard logs what a store's guard let through on warn (a refusal is
// the write's error, which its surface reports). Never the secret.
func logGuard(e versions.GuardEvent) {
	if !e.Refused {
		slog.Warn("credential saved: the store's guard warns", "store", e.StoreID, "path", e.Path, "rule", e.Rule, "line", e.Line)
	}
}

// counted is "1 version", "2 versions".
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
