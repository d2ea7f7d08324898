package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
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
	style := logStyle{patch: c.Bool("p"), stat: c.Bool("stat"), oneline: c.Bool("oneline"), pickaxe: c.String("S"), color: color}
	if style.oneline && (style.patch || style.stat) {
		return usageFor(c, "--oneline shows one line a version: give it without -p and --stat")
	}
	if c.Bool("follow") && (c.Args().Get(1) == "" || strings.HasSuffix(c.Args().Get(1), "/")) {
		return usageFor(c, "--follow follows one memory across its paths: give its PATH or mem_ id")
	}
	if c.Bool("watch") && (c.NArg() > 1 || c.IsSet("n") || c.IsSet("since") || c.IsSet("until") || c.IsSet("actor") || c.IsSet("S") || c.Bool("follow")) {
		// Rather than print versions these would have left out.
		return usageFor(c, "--watch prints every version the store saves from now on: give it STORE alone, without a PATH, -n, --since, --until, --actor, -S or --follow")
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		if c.Bool("watch") {
			return watchLog(c, db, s, style)
		}
		all, err := logVersions(ctx, c, db, s, o)
		if err != nil {
			return err
		}
		if who := c.String("actor"); who != "" {
			if all, err = byActor(ctx, db, all, who); err != nil {
				return err
			}
		}
		var changes []logChange
		if style.needsChanges() {
			if changes, err = loadChanges(ctx, db, s.ID, all); err != nil {
				return err
			}
			if style.pickaxe != "" {
				all, changes = pickaxe(all, changes, style.pickaxe)
			}
		}
		if c.IsSet("n") && len(all) > limit {
			all = all[:limit] // -n 0: nothing, as git log -n 0
		}
		if all == nil {
			all = []versions.Version{}
		}
		if asJSON(c) {
			if style.patch || style.stat {
				return emit(c, versions.Page[logEntry]{Data: jsonEntries(all, changes, style)}, nil)
			}
			return emit(c, versions.Page[versions.Version]{Data: all}, nil)
		}
		short, err := shortIDs(ctx, db, s.ID, all)
		if err != nil {
			return err
		}
		return paged(c, func(w io.Writer) error {
			printLog(w, all, changes, short, style)
			return nil
		})
	})
}

// logVersions selects what log shows, newest first: the whole store, a
// directory, a path's history with the renames that moved its memories
// away, or one memory's (with --follow, the memory last saved at PATH)
// across its paths and the restores that brought it back.
func logVersions(ctx context.Context, c *cli.Context, db *versions.DB, s *versions.Store, o versions.VersionListOptions) ([]versions.Version, error) {
	ref := c.Args().Get(1)
	switch {
	case ref == "":
		return allVersions(ctx, db, s.ID, o)
	case strings.HasSuffix(ref, "/"):
		if !strings.HasPrefix(ref, "/") {
			return nil, usageFor(c, "a directory starts and ends with /, as /notes/, not %q", ref)
		}
		all, err := allVersions(ctx, db, s.ID, o)
		all = filter(all, func(v versions.Version) bool {
			return v.Path != nil && strings.HasPrefix(*v.Path, ref) || strings.HasPrefix(v.PreviousPath, ref)
		})
		if err == nil && len(all) == 0 {
			err = &versions.Error{Code: versions.CodeNotFound, Message: fmt.Sprintf(
				"nothing was saved under %s in store %s (in that span); see memfs log %s", ref, s.ID, s.ID)}
		}
		return all, err
	case !strings.HasPrefix(ref, "/") && !strings.HasPrefix(ref, "mem_"):
		return nil, memoryRef(ref)
	}
	if strings.HasPrefix(ref, "mem_") || c.Bool("follow") {
		id := ref
		if !strings.HasPrefix(ref, "mem_") {
			at, err := pathHistory(ctx, db, s.ID, ref, versions.VersionListOptions{})
			if err != nil {
				return nil, err
			}
			id = at[0].MemoryID
		}
		return memoryLineage(ctx, db, s.ID, id, o)
	}
	all, err := pathHistory(ctx, db, s.ID, ref, o)
	if err != nil {
		return nil, err
	}
	if all, err = withRenamesAway(ctx, db, s.ID, ref, all, o); err != nil {
		return nil, err
	}
	if len(all) == 0 && o.CreatedGTE.IsZero() && o.CreatedLTE.IsZero() {
		return nil, &versions.Error{Code: versions.CodeNotFound, Message: fmt.Sprintf(
			"no versions of %s in store %s (pruned, or never there); see memfs log %s", ref, s.ID, s.ID)}
	}
	return all, nil
}

// withRenamesAway adds to a path's history the renames that moved its
// memories from the path, which a history of what was saved at the path
// leaves out, as git log shows a file's rename.
func withRenamesAway(ctx context.Context, db *versions.DB, storeID, path string, vs []versions.Version, o versions.VersionListOptions) ([]versions.Version, error) {
	seen := map[string]bool{}
	have := map[string]bool{}
	for _, v := range vs {
		have[v.ID] = true
	}
	out := vs
	for _, v := range vs {
		if seen[v.MemoryID] {
			continue
		}
		seen[v.MemoryID] = true
		o.MemoryID = v.MemoryID
		mine, err := allVersions(ctx, db, storeID, o)
		if err != nil {
			return nil, err
		}
		for _, m := range mine {
			if m.PreviousPath == path && !have[m.ID] {
				out = append(out, m)
				have[m.ID] = true
			}
		}
	}
	newestFirst(out)
	return out, nil
}

// memoryLineage is a memory's versions wherever it was saved, and those of
// the memories a restore of it recreated after its deletion (or that it
// was recreated from), so that the memory reads as one history across an
// undelete.
func memoryLineage(ctx context.Context, db *versions.DB, storeID, memoryID string, o versions.VersionListOptions) ([]versions.Version, error) {
	everything, err := allVersions(ctx, db, storeID, versions.VersionListOptions{})
	if err != nil {
		return nil, err
	}
	memoryOf := map[string]string{}
	for _, v := range everything {
		memoryOf[v.ID] = v.MemoryID
	}
	// Two memories are one lineage when a version that began one was
	// restored from a version of the other.
	linked := map[string][]string{}
	for _, v := range everything {
		if v.Operation == versions.OpCreated && v.RestoredFrom != "" {
			if from, ok := memoryOf[v.RestoredFrom]; ok && from != v.MemoryID {
				linked[from] = append(linked[from], v.MemoryID)
				linked[v.MemoryID] = append(linked[v.MemoryID], from)
			}
		}
	}
	in := map[string]bool{memoryID: true}
	for queue := []string{memoryID}; len(queue) > 0; queue = queue[1:] {
		for _, m := range linked[queue[0]] {
			if !in[m] {
				in[m] = true
				queue = append(queue, m)
			}
		}
	}
	var out []versions.Version
	for _, v := range everything {
		if in[v.MemoryID] && (o.CreatedGTE.IsZero() || !v.CreatedAt.Before(o.CreatedGTE)) && (o.CreatedLTE.IsZero() || !v.CreatedAt.After(o.CreatedLTE)) {
			out = append(out, v)
		}
	}
	if len(out) == 0 && o.CreatedGTE.IsZero() && o.CreatedLTE.IsZero() {
		return nil, &versions.Error{Code: versions.CodeNotFound, Object: versions.ObjectMemory, StoreID: storeID, Message: fmt.Sprintf(
			"no versions of memory %s in store %s (pruned, or never there)", memoryID, storeID)}
	}
	return out, nil
}

// newestFirst orders versions as every listing does: by id, which sorts by
// creation time and then by the order of saves.
func newestFirst(vs []versions.Version) {
	sort.SliceStable(vs, func(i, j int) bool {
		if !vs[i].CreatedAt.Equal(vs[j].CreatedAt) {
			return vs[i].CreatedAt.After(vs[j].CreatedAt)
		}
		return vs[i].ID > vs[j].ID
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

// shortIDs are the ends of the ids a log shows, each long enough to name
// its version alone in the store (as git lengthens abbreviated hashes).
func shortIDs(ctx context.Context, db *versions.DB, storeID string, vs []versions.Version) (map[string]string, error) {
	var ids []string
	for _, v := range vs {
		ids = append(ids, v.ID)
		if v.RestoredFrom != "" {
			ids = append(ids, v.RestoredFrom)
		}
	}
	return db.ShortVersionIDs(ctx, storeID, ids, shortIDLen)
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
