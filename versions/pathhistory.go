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
// versions_path index, a page at a time.
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

// pathHistoryQuery reads a page of a path's history from versions_path.
func pathHistoryQuery(content, oldestFirst bool) string {
	cols, order := versionCols, "DESC"
	if content {
		cols += ", " + contentOf("versions")
	}
	if oldestFirst {
		order = "ASC"
	}
	return "SELECT " + cols + " FROM versions WHERE store = ? AND path = ? AND seq > ? AND seq < ? AND created_at >= ? AND created_at <= ? ORDER BY seq " + order + " LIMIT ?"
}

// The queries that place redacted versions.
const (
	redactedQuery  = "SELECT seq, id, memory_id, created_at FROM versions WHERE store = ? AND redacted_at IS NOT NULL ORDER BY seq"
	placeNextQuery = `SELECT coalesce(prev_path, path) FROM versions WHERE memory_id = ? AND seq > ? AND seq < ?
			AND redacted_at IS NULL ORDER BY seq LIMIT 1`
	placePrevQuery = `SELECT path FROM versions WHERE memory_id = ? AND seq > ? AND seq < ?
				AND redacted_at IS NULL ORDER BY seq DESC LIMIT 1`
)

// The seeks that list a directory of the history: the next path after
// one, or from one on.
const (
	nextPathAfter = "SELECT path FROM versions WHERE store = ? AND path > ? AND path < ? ORDER BY path LIMIT 1"
	nextPathFrom  = "SELECT path FROM versions WHERE store = ? AND path >= ? AND path < ? ORDER BY path LIMIT 1"
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
// store's memories ever had, live or deleted: a seek per name.
// Errors: CodeNotFound (no store), CodeInvalid.
func (db *DB) HistoryChildren(ctx context.Context, storeID, dir string) (*HistoryDir, error) {
	if dir != "/" {
		if err := ValidatePath(dir); err != nil {
			return nil, err
		}
	}
	out := &HistoryDir{}
	err := db.read(ctx, "list the paths of a store's history", func(r *run) error {
		out.Names, out.HasFiles = out.Names[:0], false
		seq, err := db.storeSeq(r, storeID)
		if err != nil {
			return err
		}
		base, hi := subtree(dir)
		seen := map[string]bool{}
		add := func(name string) {
			if !seen[name] {
				seen[name] = true
				out.Names = append(out.Names, name)
			}
		}
		// Each query finds the next path; the next seek skips what that
		// name holds: a file path's other versions, a directory's subtree.
		q, lo := nextPathFrom, base
		for {
			var p string
			err := r.scan(q, []any{seq, lo, hi}, &p)
			if err == sql.ErrNoRows {
				break
			}
			if err != nil {
				return err
			}
			rest := p[len(base):]
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				add(rest[:i])
				q, lo = nextPathFrom, base+rest[:i]+"0"
				continue
			}
			add(rest)
			q, lo = nextPathAfter, p
		}
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
				add(rest)
			}
		}
		if dir != "/" && !out.HasFiles {
			var one int
			err := r.scan("SELECT 1 FROM versions WHERE store = ? AND path = ? LIMIT 1", []any{seq, dir}, &one)
			if err != nil && err != sql.ErrNoRows {
				return err
			}
			out.HasFiles = err == nil
		}
		sort.Strings(out.Names)
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
		lo, hi := subtree(path)
		var one int
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{"SELECT 1 FROM versions WHERE store = ? AND path = ? LIMIT 1", []any{seq, path}},
			{"SELECT 1 FROM versions WHERE store = ? AND path >= ? AND path < ? LIMIT 1", []any{seq, lo, hi}},
		} {
			err := r.scan(q.sql, q.args, &one)
			if err != nil && err != sql.ErrNoRows {
				return err
			}
			if in = err == nil; in {
				return nil
			}
		}
		placed, err := redactedPlaces(r, seq, storeID)
		for _, v := range placed {
			if v.path == path || strings.HasPrefix(v.path, lo) {
				in = true
			}
		}
		return err
	})
	return in, err
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
