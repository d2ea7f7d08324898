package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/versions"
)

// pathHistory is a path's history, newest first: every version saved at it,
// whichever memory (versions.DB.PathHistory). A mem_ id gives that memory's
// versions.
func pathHistory(ctx context.Context, db *versions.DB, storeID, ref string, o versions.VersionListOptions) ([]versions.Version, error) {
	if strings.HasPrefix(ref, "mem_") {
		o.MemoryID = ref
		return allVersions(ctx, db, storeID, o)
	}
	ho := versions.PathHistoryOptions{CreatedGTE: o.CreatedGTE, CreatedLTE: o.CreatedLTE, Limit: versions.MaxPageSize}
	out := []versions.Version{}
	for {
		page, err := db.PathHistory(ctx, storeID, ref, ho)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Data...)
		if page.NextPage == nil {
			break
		}
		ho.Page = *page.NextPage
	}
	if len(out) == 0 && o.CreatedGTE.IsZero() && o.CreatedLTE.IsZero() {
		return nil, noPathHistory(storeID, ref)
	}
	return out, nil
}

// noPathHistory is the error of a path nothing was saved at (or whose
// versions were all pruned).
func noPathHistory(storeID, path string) error {
	return &versions.Error{Code: versions.CodeNotFound, Message: fmt.Sprintf(
		"no memory was ever saved at %s in store %s (or its versions were pruned); see the paths in memfs log %s", path, storeID, storeID)}
}

// matchActor reports whether a version's writer is who: a full id, its end
// as the log shows it, or a user's name.
func matchActor(a *versions.Actor, who string) bool {
	if who == "" {
		return true
	}
	if a == nil {
		return false
	}
	return a.ID == who || shortID(a.ID) == who || actor(a) == who ||
		len(who) >= 6 && strings.HasSuffix(strings.ToUpper(a.ID), strings.ToUpper(who))
}

func logHistory(c *cli.Context) error {
	if err := wantArgs(c, 1, "STORE", "PATH"); err != nil {
		return err
	}
	now := time.Now()
	var o versions.VersionListOptions
	var err error
	if o.CreatedGTE, err = parseWhen("--since", c.String("since"), now); err != nil {
		return err
	}
	if o.CreatedLTE, err = parseWhen("--until", c.String("until"), now); err != nil {
		return err
	}
	limit := c.Int("n")
	if limit < 0 {
		return usageFor(c, "-n must not be negative")
	}
	color, err := useColor(c)
	if err != nil {
		return err
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		var all []versions.Version
		var err error
		switch ref := c.Args().Get(1); {
		case ref == "":
			all, err = allVersions(ctx, db, s.ID, o)
		case strings.HasSuffix(ref, "/"):
			if !strings.HasPrefix(ref, "/") {
				return usageFor(c, "a directory starts and ends with /, as /notes/, not %q", ref)
			}
			all, err = allVersions(ctx, db, s.ID, o)
			all = filter(all, func(v versions.Version) bool { return v.Path != nil && strings.HasPrefix(*v.Path, ref) })
			if err == nil && len(all) == 0 {
				err = &versions.Error{Code: versions.CodeNotFound, Message: fmt.Sprintf(
					"nothing was saved under %s in store %s (in that span); see memfs log %s", ref, s.ID, s.ID)}
			}
		default:
			all, err = pathHistory(ctx, db, s.ID, ref, o)
			if err == nil && len(all) == 0 && o.CreatedGTE.IsZero() && o.CreatedLTE.IsZero() {
				err = &versions.Error{Code: versions.CodeNotFound, Message: fmt.Sprintf(
					"no versions of %s in store %s (pruned, or never there); see memfs log %s", ref, s.ID, s.ID)}
			}
		}
		if err != nil {
			return err
		}
		if who := c.String("actor"); who != "" {
			all = filter(all, func(v versions.Version) bool { return matchActor(v.CreatedBy, who) })
		}
		if c.IsSet("n") && len(all) > limit {
			all = all[:limit] // -n 0: nothing, as git log -n 0
		}
		if all == nil {
			all = []versions.Version{}
		}
		if asJSON(c) {
			return emit(c, versions.Page[versions.Version]{Data: all}, nil)
		}
		return paged(c, func(w io.Writer) error {
			if !c.Bool("p") {
				printLog(w, all)
				return nil
			}
			for _, v := range all {
				printLog(w, []versions.Version{v})
				if err := logPatch(ctx, db, s.ID, w, &v, color); err != nil {
					return err
				}
				fmt.Fprintln(w)
			}
			return nil
		})
	})
}

func filter(vs []versions.Version, keep func(versions.Version) bool) []versions.Version {
	out := []versions.Version{}
	for _, v := range vs {
		if keep(v) {
			out = append(out, v)
		}
	}
	return out
}

// printLog is memfs log's table: what a person scans for first (the path)
// comes first, ids are shortened as resolveVersion accepts them.
func printLog(w io.Writer, vs []versions.Version) {
	if len(vs) == 0 {
		return // as git log: nothing, not a header
	}
	t := table(w)
	row(t, "PATH", "OPERATION", "ACTOR", "TIME", "SIZE", "SHA256", "VERSION", "NOTE")
	for _, v := range vs {
		row(t, orDash(v.Path), string(v.Operation), shortActor(v.CreatedBy), v.CreatedAt.Local().Format("2006-01-02 15:04:05"),
			size(v.ContentSize), shortSHA(v.ContentSHA256), shortID(v.ID), notes(v))
	}
	t.Flush()
}

func shortActor(a *versions.Actor) string {
	if a == nil {
		return "-"
	}
	s := actor(a)
	return strings.TrimSuffix(s, a.ID) + shortID(a.ID)
}

// logPatch writes the change v made, as memfs diff VERSION would.
func logPatch(ctx context.Context, db *versions.DB, storeID string, w io.Writer, v *versions.Version, color bool) error {
	to, err := db.GetVersion(ctx, storeID, v.ID)
	if err != nil {
		return err
	}
	from, pruned, err := previousVersion(ctx, db, storeID, to)
	if err != nil {
		return err
	}
	text, err := unifiedDiff(from, to, pruned)
	if err != nil {
		// A redacted version: say so in place of its patch.
		fmt.Fprintf(w, "(%v)\n", err)
		return nil
	}
	writeDiff(w, text, color)
	return nil
}

// paged writes a long listing through $PAGER when standard output is a
// terminal, as git does; otherwise straight to the command's writer. The
// listing is made first, so that a pager that cannot run loses nothing: it
// is then printed as it is, with a warning.
func paged(c *cli.Context, write func(io.Writer) error) error {
	out, ok := c.App.Writer.(*os.File)
	pager := os.Getenv("PAGER")
	if !ok || !isTerminal(out) || pager == "cat" {
		return write(c.App.Writer)
	}
	if pager == "" {
		pager = "less"
	}
	var buf bytes.Buffer
	werr := write(&buf)
	if name := strings.Fields(pager); len(name) > 0 && !strings.ContainsAny(name[0], "$`'\"|;&<>(){}=") {
		if _, err := exec.LookPath(name[0]); err != nil {
			fmt.Fprintf(c.App.ErrWriter, "memfs: the pager %q cannot run (%v): printing without it; set PAGER to a pager on your PATH, or PAGER=cat\n", pager, err)
			out.Write(buf.Bytes())
			return werr
		}
	}
	cmd := exec.Command("sh", "-c", pager)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = &buf, out, c.App.ErrWriter
	// less: quit if one screen, keep colours, leave the screen as it was.
	cmd.Env = append(os.Environ(), "LESS="+envOr("LESS", "FRX"))
	whole := buf.Bytes()
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() == 126 || exit.ExitCode() == 127) {
		// The shell could not start the pager (not found, not
		// executable); a pager's own failure, or a person quitting it
		// early, is no reason to print the listing again.
		fmt.Fprintf(c.App.ErrWriter, "memfs: the pager %q did not run (%v): printing without it; set PAGER to a pager that works, or PAGER=cat\n", pager, err)
		out.Write(whole)
	}
	return werr
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
