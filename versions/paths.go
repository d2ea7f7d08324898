package versions

import (
	"database/sql"
)

// Path bookkeeping shared by the memory and filesystem operations. A
// directory exists when it is the store's root, is in the dirs table, or has
// a memory or a directory below it.

// fileAtOrAbove returns the memory at path or at an ancestor of it (other
// than exceptID), or nothing. One index probe per level: far cheaper than
// one statement with an IN list, whose binding and temporary table cost
// more than the probes of a usual path.
func fileAtOrAbove(r *run, storeSeq int64, path, exceptID string) (id, at string, err error) {
	probe := func(p string) (bool, error) {
		err := r.scan("SELECT id FROM memories WHERE store = ? AND path = ?", []any{storeSeq, p}, &id)
		if err == sql.ErrNoRows || (err == nil && id == exceptID) {
			id = ""
			return false, nil
		}
		at = p
		return err == nil, err
	}
	if found, err := probe(path); found || err != nil {
		return id, at, err
	}
	for _, a := range ancestors(path) {
		if found, err := probe(a); found || err != nil {
			return id, at, err
		}
	}
	return "", "", nil
}

// memoryBelow returns a memory strictly below dir (other than exceptID).
func memoryBelow(r *run, storeSeq int64, dir, exceptID string) (id, at string, err error) {
	lo, hi := subtree(dir)
	err = r.scan("SELECT id, path FROM memories WHERE store = ? AND path > ? AND path < ? AND id <> ? ORDER BY path LIMIT 1",
		[]any{storeSeq, lo, hi, exceptID}, &id, &at)
	if err == sql.ErrNoRows {
		return "", "", nil
	}
	return id, at, err
}

// explicitDirAtOrBelow returns an explicit directory at path or below it.
func explicitDirAtOrBelow(r *run, storeSeq int64, path string) (string, error) {
	lo, hi := subtree(path)
	var at string
	err := r.scan("SELECT path FROM dirs WHERE store = ? AND path >= ? AND path < ? AND (path = ? OR path >= ?) LIMIT 1",
		[]any{storeSeq, path, hi, path, lo}, &at)
	if err == sql.ErrNoRows {
		return "", nil
	}
	return at, err
}

// checkFree refuses a path that a memory other than exceptID or a directory
// occupies, or that overlaps one as ancestor or descendant (S1; API.md).
func checkFree(r *run, s *storeRow, path, exceptID string) error {
	id, at, err := fileAtOrAbove(r, s.seq, path, exceptID)
	if err != nil {
		return err
	}
	if id != "" {
		if at == path {
			return &Error{Code: CodePathConflict, ConflictingMemoryID: id, ConflictingPath: at,
				Message: "a memory already exists at " + at + " (" + id + "): update it, or delete or rename it first"}
		}
		return &Error{Code: CodePathConflict, ConflictingMemoryID: id, ConflictingPath: at,
			Message: "path " + path + " would lie below the memory at " + at + " (" + id + "), which is a file: delete or rename the memory at " + at + " first, or choose another path"}
	}
	// One EXISTS query answers the usual case (nothing below); the queries
	// that name what is in the way run only when something is.
	lo, hi := subtree(path)
	var taken bool
	if err := r.scan(`SELECT EXISTS (SELECT 1 FROM memories WHERE store = ?1 AND path > ?2 AND path < ?3 AND id <> ?4)
		OR EXISTS (SELECT 1 FROM dirs WHERE store = ?1 AND path >= ?5 AND path < ?3 AND (path = ?5 OR path > ?2))`,
		[]any{s.seq, lo, hi, exceptID, path}, &taken); err != nil || !taken {
		return err
	}
	if id, at, err = memoryBelow(r, s.seq, path, exceptID); err != nil {
		return err
	}
	if id != "" {
		return &Error{Code: CodePathConflict, ConflictingMemoryID: id, ConflictingPath: at,
			Message: "path " + path + " is a directory holding the memory at " + at + " (" + id + "): choose another path, or move what lies below " + path + " first"}
	}
	dir, err := explicitDirAtOrBelow(r, s.seq, path)
	if err != nil {
		return err
	}
	if dir != "" {
		return &Error{Code: CodePathConflict, ConflictingPath: dir,
			Message: "path " + path + " is a directory (" + dir + " exists): choose another path, or remove the directory first"}
	}
	return nil
}

// isDir reports whether a directory exists at path (not a memory: the
// caller checks that first).
func isDir(r *run, storeSeq int64, path string) (bool, error) {
	if path == "/" {
		return true, nil
	}
	lo, hi := subtree(path)
	var ok bool
	err := r.scan(`SELECT EXISTS (SELECT 1 FROM dirs WHERE store = ?1 AND path >= ?2 AND path < ?4 AND (path = ?2 OR path >= ?3))
		OR EXISTS (SELECT 1 FROM memories WHERE store = ?1 AND path > ?3 AND path < ?4)`,
		[]any{storeSeq, path, lo, hi}, &ok)
	return ok, err
}

// hasChildren reports whether anything (memory or directory) lies below dir.
func hasChildren(r *run, storeSeq int64, dir string) (bool, error) {
	lo, hi := subtree(dir)
	var ok bool
	err := r.scan(`SELECT EXISTS (SELECT 1 FROM memories WHERE store = ?1 AND path > ?2 AND path < ?3)
		OR EXISTS (SELECT 1 FROM dirs WHERE store = ?1 AND path > ?2 AND path < ?3)`,
		[]any{storeSeq, lo, hi}, &ok)
	return ok, err
}

// keepDir makes dir an explicit directory when nothing is left below it, so
// that a move or delete through a mount does not make its parent vanish.
func keepDir(r *run, s *storeRow, dir string) error {
	if dir == "/" {
		return nil
	}
	lo, hi := subtree(dir)
	res, err := r.exec(`INSERT OR IGNORE INTO dirs (store, path) SELECT ?1, ?2
		WHERE NOT EXISTS (SELECT 1 FROM memories WHERE store = ?1 AND path > ?3 AND path < ?4)
		AND NOT EXISTS (SELECT 1 FROM dirs WHERE store = ?1 AND path > ?3 AND path < ?4)`, s.seq, dir, lo, hi)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return recordChange(r, s.ID, dir)
	}
	return nil
}

// checkParent requires the directory that would hold path to exist: a
// memory on the way is CodeNotDir, a missing directory CodeNotFound.
func checkParent(r *run, s *storeRow, path string) error {
	parent := parentOf(path)
	if parent == "/" {
		return nil
	}
	id, at, err := fileAtOrAbove(r, s.seq, parent, "")
	if err != nil {
		return err
	}
	if id != "" {
		return errorf(CodeNotDir, "%s is a file (memory %s), not a directory: %s cannot lie below it", at, id, path)
	}
	ok, err := isDir(r, s.seq, parent)
	if err != nil {
		return err
	}
	if !ok {
		return errorf(CodeNotFound, "directory %s does not exist in store %s: create it first", parent, s.ID)
	}
	return nil
}
