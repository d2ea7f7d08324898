package versions

import (
	"context"
	"sort"
	"strings"
)

type MemoryListOptions struct {
	PathPrefix string // "" or ending in "/"
	Depth      int    // 0: whole subtree; 1: direct children and prefixes
	View       View   // "" = basic
	Limit      int
	Page       string
}

// ListMemories lists in byte order of path. The cursor is the lowest path
// the next page may start at, so pages stay stable while memories change.
func (db *DB) ListMemories(ctx context.Context, storeID string, o MemoryListOptions) (*Page[MemoryItem], error) {
	if o.PathPrefix != "" && (!strings.HasPrefix(o.PathPrefix, "/") || !strings.HasSuffix(o.PathPrefix, "/")) {
		return nil, errorf(CodeInvalid, "path_prefix %q must start and end with /, e.g. /notes/", o.PathPrefix)
	}
	if o.Depth != 0 && o.Depth != 1 {
		return nil, errorf(CodeInvalid, "depth %d is not supported: use 0 (everything below) or 1 (direct children)", o.Depth)
	}
	limit, err := pageSize(o.Limit, o.View)
	if err != nil {
		return nil, err
	}
	base := o.PathPrefix
	if base == "" {
		base = "/"
	}
	lo, hi := base, base[:len(base)-1]+"0"
	scope := listingScope("memories", storeID, o.PathPrefix, o.Depth)
	if o.Page, err = unscopeCursor(o.Page, scope); err != nil {
		return nil, err
	}
	if o.Page != "" {
		c, err := decodeCursor(o.Page)
		if err != nil {
			return nil, err
		}
		if c < lo || c > hi {
			return nil, badCursor(o.Page)
		}
		// Cursors of earlier versions ended a path with NUL.
		c = strings.Replace(c, "\x00", "\x01", 1)
		lo = c
	}
	full := o.View == ViewFull
	q := "SELECT " + memCols + " FROM memories m WHERE m.store = ? AND m.path >= ? AND m.path < ? ORDER BY m.path LIMIT ?"
	if full {
		q = "SELECT " + memCols + ", " + contentOf("v") + " FROM memories m JOIN versions v ON v.seq = m.head WHERE m.store = ? AND m.path >= ? AND m.path < ? ORDER BY m.path LIMIT ?"
	}
	page := &Page[MemoryItem]{Data: []MemoryItem{}}
	err = db.read(ctx, "list memories", func(r *run) error {
		seq, err := db.storeSeq(r, storeID)
		if err != nil {
			return err
		}
		for {
			rows, err := r.query(q, seq, lo, hi, limit-len(page.Data)+1)
			if err != nil {
				return err
			}
			more, err := func() (bool, error) {
				defer rows.Close()
				for rows.Next() {
					m, err := scanMemoryRow(rows, storeID, full)
					if err != nil {
						return false, err
					}
					if len(page.Data) == limit {
						page.NextPage = scopeCursor(encodeCursor(lo), scope)
						return false, nil
					}
					if o.Depth == 1 {
						rest := m.Path[len(base):]
						if i := strings.IndexByte(rest, '/'); i >= 0 {
							// Everything deeper is one prefix item: skip past
							// it with a new query rather than reading it.
							page.Data = append(page.Data, MemoryItem{Prefix: base + rest[:i+1]})
							lo = base + rest[:i] + "0"
							return true, nil
						}
					}
					page.Data = append(page.Data, MemoryItem{Memory: m})
					// The next path in byte order: paths hold no control
					// character, and PostgreSQL's text takes no NUL.
					lo = m.Path + "\x01"
				}
				return false, rows.Err()
			}()
			if err != nil || !more {
				return err
			}
		}
	})
	return page, err
}

// ReadDir lists a directory's direct children sorted by name.
func (db *DB) ReadDir(ctx context.Context, storeID, dir string) ([]Entry, error) {
	if dir != "/" {
		if err := ValidatePath(dir); err != nil {
			return nil, err
		}
	}
	var out []Entry
	err := db.read(ctx, "read directory", func(r *run) error {
		seq, err := db.storeSeq(r, storeID)
		if err != nil {
			return err
		}
		if dir != "/" {
			if err := requireDir(r, seq, storeID, dir); err != nil {
				return err
			}
		}
		out, err = children(r, seq, storeID, dir)
		return err
	})
	return out, err
}

// requireDir checks that dir is an existing directory.
func requireDir(r *run, seq int64, storeID, dir string) error {
	if dir == "/" {
		return nil
	}
	m, ok, err := entryAt(r, seq, storeID, dir)
	if err != nil {
		return err
	}
	if m != nil {
		return errorf(CodeNotDir, "%s is a file (memory %s), not a directory", dir, m.ID)
	}
	if !ok {
		return errorf(CodeNotFound, "no directory %s in store %s", dir, storeID)
	}
	return nil
}

// children lists what lies directly in dir: memories, and directories
// (implicit from deeper memories, or explicit), sorted by name.
func children(r *run, seq int64, storeID, dir string) ([]Entry, error) {
	base, hi := subtree(dir)
	lo := base
	out := []Entry{}
	seen := map[string]bool{}
	addDir := func(name string) {
		if !seen[name] {
			seen[name] = true
			out = append(out, Entry{Name: name, Path: base + name, Dir: true})
		}
	}
	const q = "SELECT " + memCols + " FROM memories m WHERE m.store = ? AND m.path >= ? AND m.path < ? ORDER BY m.path"
	for more := true; more; {
		rows, err := r.query(q, seq, lo, hi)
		if err != nil {
			return nil, err
		}
		more = false
		for rows.Next() {
			m, err := scanMemoryRow(rows, storeID, false)
			if err != nil {
				rows.Close()
				return nil, err
			}
			rest := m.Path[len(base):]
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				addDir(rest[:i])
				lo, more = base+rest[:i]+"0", true
				break
			}
			out = append(out, Entry{Name: rest, Path: m.Path, Memory: m})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	rows, err := r.query("SELECT path FROM dirs WHERE store = ? AND path > ? AND path < ? ORDER BY path", seq, base, hi)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		rest := p[len(base):]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			rest = rest[:i]
		}
		addDir(rest)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
