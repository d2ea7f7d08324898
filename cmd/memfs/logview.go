package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/versions"
)

// logStyle is how memfs log prints: a table (one header, then each
// version, with its change under it for -p or --stat), or one line a
// version.
type logStyle struct {
	patch, stat, oneline bool
	pickaxe              string
	color                bool
}

// needsChanges: what each version changed must be read.
func (s logStyle) needsChanges() bool { return s.patch || s.stat || s.pickaxe != "" }

// logChange is what one version changed: its diff against the version of
// its memory before it, and the lines added and removed.
type logChange struct {
	diff           string
	unreadable     string // why there is no diff (a redacted version)
	added, removed int
	before, after  string
}

// loadChanges reads what each of vs changed, as memfs diff VERSION shows it.
func loadChanges(ctx context.Context, db *versions.DB, storeID string, vs []versions.Version) ([]logChange, error) {
	out := make([]logChange, len(vs))
	for i := range vs {
		to, err := db.GetVersion(ctx, storeID, vs[i].ID)
		if err != nil {
			return nil, err
		}
		from, pruned, err := previousVersion(ctx, db, storeID, to)
		if err != nil {
			return nil, err
		}
		text, err := unifiedDiff(from, to, pruned)
		if err != nil {
			out[i].unreadable = err.Error()
			continue
		}
		out[i].diff = text
		a, _ := diffContent(from)
		b, _ := diffContent(to)
		out[i].before, out[i].after = a, b
		for _, line := range strings.Split(text, "\n") {
			switch {
			case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			case strings.HasPrefix(line, "+"):
				out[i].added++
			case strings.HasPrefix(line, "-"):
				out[i].removed++
			}
		}
	}
	return out, nil
}

// pickaxe keeps the versions that changed how many times text occurs, as
// git log -S: those that added it or removed it.
func pickaxe(vs []versions.Version, changes []logChange, text string) ([]versions.Version, []logChange) {
	var keptV []versions.Version
	var keptC []logChange
	for i, ch := range changes {
		if ch.unreadable == "" && strings.Count(ch.before, text) != strings.Count(ch.after, text) {
			keptV, keptC = append(keptV, vs[i]), append(keptC, ch)
		}
	}
	return keptV, keptC
}

// logEntry is a version with its change, memfs log -p or --stat with
// --format json: the version object and, as memfs extensions, the diff
// (as memfs diff prints it) and the lines it added and removed.
type logEntry struct {
	versions.Version
	Diff    *string `json:"diff,omitempty"`
	Added   *int    `json:"lines_added,omitempty"`
	Removed *int    `json:"lines_removed,omitempty"`
}

func (e logEntry) MarshalJSON() ([]byte, error) {
	v, err := json.Marshal(e.Version)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, err
	}
	if e.Diff != nil {
		m["diff"] = *e.Diff
	}
	if e.Added != nil {
		m["lines_added"], m["lines_removed"] = *e.Added, *e.Removed
	}
	return json.Marshal(m)
}

func jsonEntries(vs []versions.Version, changes []logChange, style logStyle) []logEntry {
	out := make([]logEntry, len(vs))
	for i, v := range vs {
		out[i].Version = v
		ch := changes[i]
		if ch.unreadable != "" {
			continue
		}
		if style.patch {
			out[i].Diff = &ch.diff
		}
		if style.stat {
			out[i].Added, out[i].Removed = &ch.added, &ch.removed
		}
	}
	return out
}

// printLog is memfs log's text: what a person scans for first (the path)
// comes first, a rename shows both paths, ids are shortened as
// resolveVersion accepts them. The header is printed once, whatever is
// printed between the versions.
func printLog(w io.Writer, vs []versions.Version, changes []logChange, short map[string]string, style logStyle) {
	if len(vs) == 0 {
		return // as git log: nothing, not a header
	}
	if style.oneline {
		for _, v := range vs {
			fmt.Fprintln(w, onelineOf(v, short))
		}
		return
	}
	var buf strings.Builder
	t := table(&buf)
	row(t, "PATH", "OPERATION", "ACTOR", "TIME", "SIZE", "SHA256", "VERSION", "NOTE")
	for _, v := range vs {
		row(t, logPath(v), string(v.Operation), shortActor(v.CreatedBy), v.CreatedAt.Local().Format("2006-01-02 15:04:05"),
			size(v.ContentSize), shortSHA(v.ContentSHA256), shortOf(short, v.ID), logNotes(v, short))
	}
	t.Flush()
	lines := strings.SplitAfter(buf.String(), "\n")
	io.WriteString(w, lines[0])
	for i := range vs {
		io.WriteString(w, lines[i+1])
		if changes == nil || !style.patch && !style.stat {
			continue
		}
		printChange(w, vs[i], changes[i], style)
		if i < len(vs)-1 {
			fmt.Fprintln(w)
		}
	}
}

// onelineOf is a version in one line, as git log --oneline.
func onelineOf(v versions.Version, short map[string]string) string {
	line := fmt.Sprintf("%s %s %s %s %s", shortOf(short, v.ID), v.CreatedAt.Local().Format("2006-01-02 15:04:05"), v.Operation, logPath(v), shortActor(v.CreatedBy))
	if n := logNotes(v, short); n != "" {
		line += " (" + n + ")"
	}
	return line
}

// logPath is the PATH column: a rename shows where the memory moved from,
// as git's "R old → new".
func logPath(v versions.Version) string {
	if v.PreviousPath != "" && v.Path != nil && *v.Path != v.PreviousPath {
		return v.PreviousPath + " → " + *v.Path
	}
	return orDash(v.Path)
}

func shortOf(short map[string]string, id string) string {
	if s, ok := short[id]; ok {
		return s
	}
	return shortID(id)
}

func shortActor(a *versions.Actor) string {
	if a == nil {
		return "-"
	}
	s := actor(a)
	return strings.TrimSuffix(s, a.ID) + shortID(a.ID)
}

// logNotes marks versions a person should notice in a log.
func logNotes(v versions.Version, short map[string]string) string {
	var n []string
	if v.Conflict {
		n = append(n, "conflict")
	}
	if v.RedactedAt != nil {
		n = append(n, "redacted")
	}
	if v.PreviousPath != "" {
		n = append(n, "renamed")
	}
	if v.RestoredFrom != "" {
		n = append(n, "restored from "+shortOf(short, v.RestoredFrom))
	}
	return strings.Join(n, ", ")
}

// byActor keeps the versions written by who: a session (its id or the end
// of one, as the log shows it: a session that does not exist is an
// error, as everywhere a session is named), an API key or a user.
func byActor(ctx context.Context, db *versions.DB, vs []versions.Version, who string) ([]versions.Version, error) {
	if sess, err := resolveSession(ctx, db, who); err == nil {
		who = sess.ID
	} else if strings.HasPrefix(who, "sesn_") || versions.ErrorCode(err) != versions.CodeNotFound {
		return nil, err
	}
	return filter(vs, func(v versions.Version) bool { return matchActor(v.CreatedBy, who) }), nil
}

// watchLog prints the store's versions as they are saved, one line each
// (JSON Lines with --format json), until interrupted: it follows the
// store's change feed, as a mount does.
func watchLog(c *cli.Context, db *versions.DB, s *versions.Store, style logStyle) error {
	ctx := c.Context
	pos, err := db.FeedHead(ctx, s.ID)
	if err != nil {
		return err
	}
	var mark versions.FeedMark
	w := c.App.Writer
	for {
		if mark, _, err = db.WaitFeed(ctx, mark, 200*time.Millisecond, versions.Followed{Store: s.ID}); err != nil {
			return err
		}
		var changes []versions.Change
		if changes, pos, err = db.Changes(ctx, s.ID, pos); err != nil {
			return err
		}
		for _, ch := range changes {
			if ch.Op == versions.ChangeStore && ch.Path == "/" {
				if _, err := db.GetStore(ctx, s.ID); versions.ErrorCode(err) == versions.CodeNotFound {
					return err
				}
			}
			if ch.VersionID == "" {
				continue
			}
			v, err := db.GetVersion(ctx, s.ID, ch.VersionID)
			if err != nil {
				return err
			}
			v.Content = nil
			if asJSON(c) {
				if err := json.NewEncoder(w).Encode(v); err != nil {
					return err
				}
				continue
			}
			short, err := shortIDs(ctx, db, s.ID, []versions.Version{*v})
			if err != nil {
				return err
			}
			fmt.Fprintln(w, onelineOf(*v, short))
			if style.patch || style.stat {
				lc, err := loadChanges(ctx, db, s.ID, []versions.Version{*v})
				if err != nil {
					return err
				}
				printChange(w, *v, lc[0], style)
			}
		}
	}
}

func printChange(w io.Writer, v versions.Version, ch logChange, style logStyle) {
	switch {
	case ch.unreadable != "":
		fmt.Fprintf(w, "(%s)\n", ch.unreadable)
		return
	case style.stat:
		fmt.Fprintf(w, "  %s | %d %s%s\n", orDash(v.Path), ch.added+ch.removed, strings.Repeat("+", min(ch.added, 40)), strings.Repeat("-", min(ch.removed, 40)))
	}
	if style.patch {
		writeDiff(w, ch.diff, style.color)
	}
}
