package versions

import (
	"context"
	"database/sql"
	"slices"
	"sort"
	"strings"
	"time"
)

// A path's history is every version saved at the path, whichever memory it
// belongs to: the versions of a memory deleted there and of the one created
// there next, and of a memory renamed there from elsewhere from its rename
// on (its earlier versions are in the history of the path they were saved
// at). memfs log STORE PATH, memfs version list --memory PATH and the
// mount's .history tree show this one meaning. It is read from the
// path_memories table, a page at a time.
//
// A redacted version names no path; it stays in the history of the path it
// was saved at, which its memory's next version still tells (the path that
// version moved the memory from, or its own), else the one before it (see
// redactedPlaces).

// PathHistoryOptions select and page a path's history.
type PathHistoryOptions struct {
	CreatedGTE, CreatedLTE time.Time
	// OldestFirst lists in save order; the default is newest first, as
	// every version listing.
	OldestFirst bool
	View        View
	Limit       int
	Page        string
}

// PathHistory lists the versions saved at path (see above), newest first
// unless o.OldestFirst. Errors: CodeNotFound (no store), CodeInvalid (a bad
// path, view or cursor). A path nothing was ever saved at has an empty
// history.
func (db *DB) PathHistory(ctx context.Context, storeID, path string, o PathHistoryOptions) (*Page[Version], error) {
	if err := ValidatePath(path); err != nil {
		return nil, err
	}
	limit, err := pageSize(o.Limit, o.View)
	if err != nil {
		return nil, err
	}
	scope := listingScope("path_history", storeID, path, o.OldestFirst, o.CreatedGTE.UnixNano(), o.CreatedLTE.UnixNano())
	if o.Page, err = unscopeCursor(o.Page, scope); err != nil {
		return nil, err
	}
	var from int64 // exclusive: the cursor's seq
	if o.Page != "" {
		if from, err = decodeSeqCursor(o.Page); err != nil {
			return nil, err
		}
	}
	full := o.View == ViewFull
	page := &Page[Version]{Data: []Version{}}
	err = db.read(ctx, "read the history of a path", func(r *run) error {
		page.Data, page.NextPage = page.Data[:0], nil
		seq, err := db.storeSeq(r, storeID)
		if err != nil {
			return err
		}
		lo, hi := versionRange(seq)
		if from != 0 {
			if o.OldestFirst {
				lo = from
			} else {
				hi = from
			}
		}
		var gte, lte int64 = 0, 1<<63 - 1
		if !o.CreatedGTE.IsZero() {
			gte = o.CreatedGTE.UnixNano()
		}
		if !o.CreatedLTE.IsZero() {
			lte = o.CreatedLTE.UnixNano()
		}
		rows, err := r.query(pathHistoryQuery(full, o.OldestFirst), seq, path, lo, hi, gte, lte, limit+1)
		if err != nil {
			return err
		}
		type found struct {
			v   Version
			seq int64
		}
		var got []found
		for rows.Next() {
			v, vseq, err := scanVersion(rows, storeID, full)
			if err != nil {
				rows.Close()
				return err
			}
			got = append(got, found{*v, vseq})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		placed, err := redactedPlaces(r, seq, storeID)
		if err != nil {
			return err
		}
		// Only those that can be on this page are read: the limit+1
		// nearest the cursor.
		var here []placedVersion
		for _, p := range placed {
			if p.path == path && p.seq > lo && p.seq < hi && p.at >= gte && p.at <= lte {
				here = append(here, p)
			}
		}
		if !o.OldestFirst {
			slices.Reverse(here)
		}
		for _, p := range here[:min(len(here), limit+1)] {
			v, _, err := loadVersion(r, &storeRow{Store: Store{ID: storeID}, seq: seq}, p.id)
			if err != nil {
				return err
			}
			if !full {
				v.Content = nil
			}
			got = append(got, found{*v, p.seq})
		}
		sort.Slice(got, func(i, j int) bool {
			if o.OldestFirst {
				return got[i].seq < got[j].seq
			}
			return got[i].seq > got[j].seq
		})
		for i, f := range got {
			if i == limit {
				page.NextPage = scopeCursor(encodeSeqCursor(got[i-1].seq), scope)
				break
			}
			page.Data = append(page.Data, f.v)
		}
		return nil
	})
	return page, err
}

// pathHistoryQuery reads a page of a path's history: the versions at the
// path of the memories path_memories lists for it.
func pathHistoryQuery(content, oldestFirst bool) string {
	cols, order := versionCols, "DESC"
	if content {
		cols += ", " + contentOf("versions")
	}
	if oldestFirst {
		order = "ASC"
	}
	return "SELECT " + cols + " FROM versions WHERE memory_id IN (SELECT p.memory_id FROM path_memories p WHERE p.store = ?1 AND p.path = ?2)" +
		" AND store = ?1 AND path = ?2 AND seq > ?3 AND seq < ?4 AND created_at >= ?5 AND created_at <= ?6 ORDER BY seq " + order + " LIMIT ?7"
}

// The queries that place redacted versions.
const (
	redactedQuery  = "SELECT seq, id, memory_id, created_at FROM versions WHERE store = ? AND redacted_at IS NOT NULL ORDER BY seq"
	placeNextQuery = `SELECT coalesce(prev_path, path) FROM versions WHERE memory_id = ? AND seq > ? AND seq < ?
			AND redacted_at IS NULL ORDER BY seq LIMIT 1`
	placePrevQuery = `SELECT path FROM versions WHERE memory_id = ? AND seq > ? AND seq < ?
				AND redacted_at IS NULL ORDER BY seq DESC LIMIT 1`
)

// placedVersion is a redacted version and the path it was saved at.
type placedVersion struct {
	seq, at  int64
	id, path string
}

// redactedPlaces places the redacted versions of a store (see above); one
// whose place no version tells any more is left out.
func redactedPlaces(r *run, storeSeq int64, storeID string) ([]placedVersion, error) {
	lo, hi := versionRange(storeSeq)
	rows, err := r.query(redactedQuery, storeSeq)
	if err != nil {
		return nil, err
	}
	type redacted struct {
		placedVersion
		memory string
	}
	var all []redacted
	for rows.Next() {
		var v redacted
		var id sql.NullString
		if err := rows.Scan(&v.seq, &id, &v.memory, &v.at); err != nil {
			rows.Close()
			return nil, err
		}
		v.id = id.String
		if !id.Valid {
			v.id = versionID(v.seq, v.at)
		}
		all = append(all, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// A redacted version just before an unredacted one is where that one
	// says (the path it moved the memory from, or its own): exactly. One
	// further back in a run of redactions takes the path of the unredacted
	// version before the run (a rename inside the run is lost with it),
	// else the run's next. Each memory's redacted versions are walked once
	// each way, one query each that reads one row, however long the run.
	byMemory := map[string][]int{}
	var order []string
	for i, v := range all {
		if _, ok := byMemory[v.memory]; !ok {
			order = append(order, v.memory)
		}
		byMemory[v.memory] = append(byMemory[v.memory], i)
	}
	placed := make([]bool, len(all))
	for _, mem := range order {
		idx := byMemory[mem]
		exact := make([]bool, len(idx))
		runNext := make([]string, len(idx))
		carry := ""
		for k := len(idx) - 1; k >= 0; k-- {
			bound := hi
			if k+1 < len(idx) {
				bound = all[idx[k+1]].seq
			}
			var p sql.NullString
			err := r.scan(placeNextQuery, []any{mem, all[idx[k]].seq, bound}, &p)
			if err != nil && err != sql.ErrNoRows {
				return nil, err
			}
			if err == nil && p.Valid {
				carry, exact[k] = p.String, true
			}
			runNext[k] = carry
		}
		carry = ""
		for k := range idx {
			bound := lo
			if k > 0 {
				bound = all[idx[k-1]].seq
			}
			var p sql.NullString
			err := r.scan(placePrevQuery, []any{mem, bound, all[idx[k]].seq}, &p)
			if err != nil && err != sql.ErrNoRows {
				return nil, err
			}
			if err == nil && p.Valid {
				carry = p.String
			}
			v := &all[idx[k]]
			switch {
			case exact[k]:
				v.path = runNext[k]
			case carry != "":
				v.path = carry
			default:
				v.path = runNext[k]
			}
			placed[idx[k]] = v.path != ""
		}
	}
	out := make([]placedVersion, 0, len(all))
	for i, v := range all {
		if placed[i] {
			out = append(out, v.placedVersion)
		}
	}
	return out, nil
}

// HistoryDir is what a directory of a store's history tree holds: the
// names of the paths directly below dir that something was ever saved at
// or below (sorted), and whether dir itself has a history of its own (a
// file was saved at that path).
type HistoryDir struct {
	Names    []string
	HasFiles bool
}

// HistoryChildren lists one directory of the tree of every path the
// store's memories ever had, live or deleted, whole (HistoryNames a page at
// a time). Errors: CodeNotFound (no store), CodeInvalid.
func (db *DB) HistoryChildren(ctx context.Context, storeID, dir string) (*HistoryDir, error) {
	out := &HistoryDir{}
	after := ""
	for {
		p, err := db.HistoryNames(ctx, storeID, dir, after, historyNamesMax)
		if err != nil {
			return nil, err
		}
		if after == "" {
			out.HasFiles = p.HasFiles
		}
		out.Names = append(out.Names, p.Names...)
		if p.Next == "" {
			break
		}
		after = p.Next
	}
	sort.Strings(out.Names)
	return out, nil
}

// historyNamesMax is the most names HistoryNames returns at once.
const historyNamesMax = 1000

// HistoryNamesPage is a page of the names of a directory of the history
// tree, in the order of the paths they come from (not sorted).
type HistoryNamesPage struct {
	Names []string
	// HasFiles: the directory's own path has a history (first page only).
	HasFiles bool
	// Next is the cursor of the page after this one; "" at the end.
	Next string
}

// historyNamesQuery is the one ordered scan a page of names is read from:
// the paths of the directory's subtree from the cursor on, in order of
// path_memories.
const historyNamesQuery = "SELECT path FROM path_memories WHERE store = ? AND path > ? AND path < ? ORDER BY path"

// HistoryNames lists a page of the names directly below dir in the tree
// of every path the store's memories ever had (HistoryChildren), at most
// limit of them, from after (a cursor of the page before; "" for the
// first). A page is read from one ordered scan of the path index, not a
// seek per name; a name that is both a file and a directory is looked up
// once more, when the directory turns up. Errors: CodeNotFound (no store),
// CodeInvalid.
func (db *DB) HistoryNames(ctx context.Context, storeID, dir, after string, limit int) (*HistoryNamesPage, error) {
	if dir != "/" {
		if err := ValidatePath(dir); err != nil {
			return nil, err
		}
	}
	if limit <= 0 || limit > historyNamesMax {
		limit = historyNamesMax
	}
	base, hi := subtree(dir)
	from := base
	if after != "" {
		if !strings.HasPrefix(after, base) || after >= hi {
			return nil, errorf(CodeInvalid, "invalid page cursor %q: list the directory again from its first page", after)
		}
		from = after
	}
	out := &HistoryNamesPage{}
	err := db.read(ctx, "list the paths of a store's history", func(r *run) error {
		*out = HistoryNamesPage{}
		seq, err := db.storeSeq(r, storeID)
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		var dirs []string // names first met as a directory on this page
		rows, err := r.query(historyNamesQuery, seq, from, hi)
		if err != nil {
			return err
		}
		last := ""
		for rows.Next() {
			var p string
			if err := rows.Scan(&p); err != nil {
				rows.Close()
				return err
			}
			name, isDir := p[len(base):], false
			if i := strings.IndexByte(name, '/'); i >= 0 {
				name, isDir = name[:i], true
			}
			if seen[name] {
				last = p
				continue
			}
			if len(out.Names) == limit {
				out.Next = last
				break
			}
			seen[name] = true
			last = p
			if isDir {
				dirs = append(dirs, name)
			}
			out.Names = append(out.Names, name)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		// A name first met here as a directory whose path was a file's
		// too was listed by an earlier page, when the file's path (which
		// sorts before the directory's) came.
		keep := out.Names[:0]
		gone := map[string]bool{}
		for _, name := range dirs {
			if after == "" {
				break
			}
			var one int
			err := r.scan("SELECT 1 FROM path_memories WHERE store = ? AND path = ? LIMIT 1", []any{seq, base + name}, &one)
			if err != nil && err != sql.ErrNoRows {
				return err
			}
			gone[name] = err == nil
		}
		for _, name := range out.Names {
			if !gone[name] {
				keep = append(keep, name)
			}
		}
		out.Names = keep
		if after != "" {
			return nil
		}
		// The first page also holds what only redacted versions left.
		placed, err := redactedPlaces(r, seq, storeID)
		if err != nil {
			return err
		}
		for _, v := range placed {
			if v.path == dir {
				out.HasFiles = true
			} else if strings.HasPrefix(v.path, base) {
				rest := v.path[len(base):]
				if i := strings.IndexByte(rest, '/'); i >= 0 {
					rest = rest[:i]
				}
				if !seen[rest] {
					in, err := inHistory(r, seq, base+rest)
					if err != nil {
						return err
					}
					if !in {
						seen[rest] = true
						out.Names = append(out.Names, rest)
					}
				}
			}
		}
		if dir != "/" && !out.HasFiles {
			var one int
			err := r.scan("SELECT 1 FROM path_memories WHERE store = ? AND path = ? LIMIT 1", []any{seq, dir}, &one)
			if err != nil && err != sql.ErrNoRows {
				return err
			}
			out.HasFiles = err == nil
		}
		return nil
	})
	return out, err
}

// InHistory reports whether path is in the store's history tree: a file
// was saved at it or below it. Errors: CodeNotFound (no store), CodeInvalid.
func (db *DB) InHistory(ctx context.Context, storeID, path string) (bool, error) {
	if err := ValidatePath(path); err != nil {
		return false, err
	}
	in := false
	err := db.read(ctx, "look up a path in a store's history", func(r *run) error {
		seq, err := db.storeSeq(r, storeID)
		if err != nil {
			return err
		}
		if in, err = inHistory(r, seq, path); err != nil || in {
			return err
		}
		placed, err := redactedPlaces(r, seq, storeID)
		lo, _ := subtree(path)
		for _, v := range placed {
			if v.path == path || strings.HasPrefix(v.path, lo) {
				in = true
			}
		}
		return err
	})
	return in, err
}

// inHistory reports whether a version that is not redacted was saved at
// path or below it.
func inHistory(r *run, storeSeq int64, path string) (bool, error) {
	lo, hi := subtree(path)
	var one int
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"SELECT 1 FROM path_memories WHERE store = ? AND path = ? LIMIT 1", []any{storeSeq, path}},
		{"SELECT 1 FROM path_memories WHERE store = ? AND path >= ? AND path < ? LIMIT 1", []any{storeSeq, lo, hi}},
	} {
		err := r.scan(q.sql, q.args, &one)
		if err != nil && err != sql.ErrNoRows {
			return false, err
		}
		if err == nil {
			return true, nil
		}
	}
	return false, nil
}

// HistoryVersion is version versionID when it is in path's history (see
// above), with its content. Errors: CodeNotFound when it is not (or the
// store is not there), CodeInvalid.
func (db *DB) HistoryVersion(ctx context.Context, storeID, path, versionID string) (*Version, error) {
	if err := ValidatePath(path); err != nil {
		return nil, err
	}
	var out *Version
	err := db.read(ctx, "read a version of a path's history", func(r *run) error {
		storeSeq, err := db.storeSeq(r, storeID)
		if err != nil {
			return err
		}
		s := &storeRow{Store: Store{ID: storeID}, seq: storeSeq}
		v, seq, err := loadVersion(r, s, versionID)
		if err != nil {
			return err
		}
		if v.RedactedAt == nil {
			if v.Path == nil || *v.Path != path {
				return versionNotFound(storeID, versionID)
			}
			out = v
			return nil
		}
		placed, err := redactedPlaces(r, s.seq, storeID)
		if err != nil {
			return err
		}
		for _, p := range placed {
			if p.seq == seq && p.path == path {
				out = v
				return nil
			}
		}
		return versionNotFound(storeID, versionID)
	})
	return out, err
}
