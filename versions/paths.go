package versions

import (
	"database/sql"
	"fmt"
	"strings"
)

// Path bookkeeping shared by the memory and filesystem operations. A
// directory exists when it is the store's root, is in the dirs table, or has
// a memory or a directory below it.

// fileAtOrAbove returns the memory at path or at an ancestor of it (other
// than exceptID), or nothing.
func fileAtOrAbove(r *run, storeSeq int64, path, exceptID string) (id, at string, err error) {
	up := ancestors(path)
	err = r.scan(chainQueries[len(up)], chainArgs(storeSeq, exceptID, path, up), &id, &at)
	if err == sql.ErrNoRows {
		return "", "", nil
	}
	return id, at, err
}

// chainArgs are the arguments of chainQueries and freeQueries.
func chainArgs(storeSeq int64, exceptID, path string, up []string, more ...any) []any {
	args := make([]any, 0, 3+len(up)+len(more))
	args = append(args, storeSeq, exceptID, path)
	for _, a := range up {
		args = append(args, a)
	}
	return append(args, more...)
}

// chainQueries[n] finds a memory other than ?2 in store ?1 at a path (?3)
// or at one of its n ancestors (?4...), in that order: one statement of one
// index probe per level, cheaper than a statement per probe, and than an
// IN list, whose binding and temporary table cost more than the probes of
// a usual path. freeQueries[n] adds a last row of empty strings when a memory
// other than ?2 or an explicit directory lies below the path (the subtree's
// bounds follow the ancestors), so that one statement tells that a path is
// free.
var chainQueries, freeQueries = func() (chain, free [MaxPathSegments]string) {
	for n := range chain {
		var b strings.Builder
		for i := range n + 1 {
			if i > 0 {
				b.WriteString(" UNION ALL ")
			}
			fmt.Fprintf(&b, "SELECT id, path FROM memories WHERE store = ?1 AND path = ?%d AND id <> ?2", i+3)
		}
		arms := b.String()
		chain[n] = arms + " LIMIT 1"
		lo, hi := n+4, n+5
		free[n] = arms + fmt.Sprintf(` UNION ALL SELECT '', ''
			WHERE EXISTS (SELECT 1 FROM memories WHERE store = ?1 AND path > ?%[1]d AND path < ?%[2]d AND id <> ?2)
			OR EXISTS (SELECT 1 FROM dirs WHERE store = ?1 AND path >= ?3 AND path < ?%[2]d AND (path = ?3 OR path > ?%[1]d))
			LIMIT 1`, lo, hi)
	}
	return chain, free
}()

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
// occupies, or that overlaps one as ancestor or descendant (the hosted API's rule).
func checkFree(r *run, s *storeRow, path, exceptID string) error {
	up := ancestors(path)
	lo, hi := subtree(path)
	var id, at string
	err := r.scan(freeQueries[len(up)], chainArgs(s.seq, exceptID, path, up, lo, hi), &id, &at)
	if err == sql.ErrNoRows {
		return nil
	}
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
	// Something lies below: the queries that name it run only now.
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
	// At the store's directory limit an emptied directory is not kept:
	// a move or delete is never refused for it.
	res, err := r.exec(`INSERT INTO dirs (store, path) SELECT CAST(?1 AS BIGINT), CAST(?2 AS TEXT)
		WHERE NOT EXISTS (SELECT 1 FROM memories WHERE store = ?1 AND path > ?3 AND path < ?4)
		AND NOT EXISTS (SELECT 1 FROM dirs WHERE store = ?1 AND path > ?3 AND path < ?4)
		AND (SELECT count(*) FROM dirs WHERE store = ?1) < (SELECT max_directories FROM stores WHERE seq = ?1)
		ON CONFLICT DO NOTHING`, s.seq, dir, lo, hi)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return recordChange(r, s.ID, ChangeDirMade, dir)
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

// checkDirLimit refuses a directory the store has no room for: past its
// directory limit (CodeStoreFull), or whose path, counted with the paths of
// the directories it keeps, would take the store past its history quota
// (CodeOverQuota): a directory costs its path twice (row and index) and a
// record, as a version does.
func checkDirLimit(r *run, s *storeRow, path string) error {
	var n, max, paths int
	if err := r.scan(`SELECT count(*), coalesce(sum(`+byteLength(r, "path")+`), 0), (SELECT max_directories FROM stores WHERE seq = ?1)
		FROM dirs WHERE store = ?1`, []any{s.seq}, &n, &paths, &max); err != nil {
		return err
	}
	if n >= max {
		return errorf(CodeStoreFull, "memory store %s keeps its maximum of %d directories: remove empty ones (rmdir), or create the store with a higher --max-directories", s.ID, max)
	}
	if s.MaxHistoryBytes <= 0 {
		return nil
	}
	hist, _, err := latestCounts(r, s)
	if err != nil {
		return err
	}
	dirs := 2*paths + n*VersionRecordBytes
	cost := 2*len(path) + VersionRecordBytes
	if held := s.histBase + hist + dirs; held+cost > s.MaxHistoryBytes {
		return errorf(CodeOverQuota, "memory store %s (%q) holds %d bytes of history and directories, and directory %s costs %d more, past its quota of %d bytes: nothing was made; remove empty directories, run `memfs version prune`, or raise the store's history quota",
			s.ID, s.Name, held, path, cost, s.MaxHistoryBytes)
	}
	return nil
}

// byteLength is SQL for the length in bytes of a text column.
func byteLength(r *run, col string) string {
	if r.db.d.name == "postgres" {
		return "octet_length(" + col + ")"
	}
	return "length(CAST(" + col + " AS BLOB))"
}
