package versions

import (
	"context"
	"database/sql"
	"strings"
)

// Paths as a filesystem sees them.

// Stat returns what is at path ("/" is the store's root directory). A
// memory comes in the basic view.
func (db *DB) Stat(ctx context.Context, storeID, path string) (*Entry, error) {
	if path != "/" {
		if err := ValidatePath(path); err != nil {
			return nil, err
		}
	}
	var out *Entry
	err := db.one(ctx, "stat", func(r *run) error {
		seq, err := db.storeSeq(r, storeID)
		if err != nil {
			return err
		}
		if path == "/" {
			out = &Entry{Name: "", Path: "/", Dir: true}
			return nil
		}
		// One statement, so one read transaction (each costs SQLite
		// several lock system calls, more than the searches themselves).
		m, dir, err := entryAt(r, seq, storeID, path)
		if err != nil {
			return err
		}
		if m == nil && !dir {
			return errorf(CodeNotFound, "no file or directory %s in store %s", path, storeID)
		}
		out = &Entry{Name: baseName(path), Path: path, Dir: dir}
		if m != nil {
			out.Memory = m
		}
		return nil
	})
	return out, err
}

// statQuery is a file's row, else one row of an empty id if a directory is
// there.
const statQuery = `SELECT ` + memCols + ` FROM memories m WHERE m.store = ?1 AND m.path = ?2
	UNION ALL SELECT 0, '', '', 0, '', '', 0, 0, 0
	WHERE EXISTS (SELECT 1 FROM dirs WHERE store = ?1 AND path >= ?2 AND path < ?4 AND (path = ?2 OR path >= ?3))
	OR EXISTS (SELECT 1 FROM memories WHERE store = ?1 AND path > ?3 AND path < ?4)
	LIMIT 1`

// entryAt returns the live memory at path, or else whether a directory is
// there, in one statement.
func entryAt(r *run, storeSeq int64, storeID, path string) (m *Memory, dir bool, err error) {
	lo, hi := subtree(path)
	m, err = scanMemory(r, storeID, false, statQuery, storeSeq, path, lo, hi)
	switch {
	case err == sql.ErrNoRows:
		return nil, false, nil
	case err != nil:
		return nil, false, err
	case m.ID == "":
		return nil, true, nil
	}
	return m, false, nil
}

// MakeDir persists an empty directory (its parent must exist).
func (db *DB) MakeDir(ctx context.Context, storeID, path string) error {
	if path == "/" {
		return &Error{Code: CodePathConflict, ConflictingPath: "/", Message: "/ is the store's root and always exists"}
	}
	if err := ValidatePath(path); err != nil {
		return err
	}
	return db.write(ctx, "make directory", func(r *run) error {
		s, err := loadStoreLite(r, storeID, true)
		if err != nil {
			return err
		}
		id, at, err := fileAtOrAbove(r, s.seq, path, "")
		if err != nil {
			return err
		}
		if at == path {
			return &Error{Code: CodePathConflict, ConflictingMemoryID: id, ConflictingPath: at,
				Message: "a memory already exists at " + at + " (" + id + "): choose another directory name"}
		}
		if id != "" {
			return errorf(CodeNotDir, "%s is a file (memory %s), not a directory: %s cannot lie below it", at, id, path)
		}
		exists, err := isDir(r, s.seq, path)
		if err != nil {
			return err
		}
		if exists {
			return &Error{Code: CodePathConflict, ConflictingPath: path, Message: "directory " + path + " already exists"}
		}
		if err := guardName(r, s, path); err != nil {
			return err
		}
		if err := checkParent(r, s, path); err != nil {
			return err
		}
		if err := checkDirLimit(r, s, path); err != nil {
			return err
		}
		if _, err := r.exec("INSERT INTO dirs (store, path) VALUES (?, ?)", s.seq, path); err != nil {
			return err
		}
		return recordChange(r, s.ID, ChangeDirMade, path)
	})
}

// RemoveDir removes an empty directory: CodeNotEmpty if anything is below it.
// Its parent stays, as an explicit directory if it is left empty.
func (db *DB) RemoveDir(ctx context.Context, storeID, path string) error {
	if path == "/" {
		return errorf(CodeInvalid, "/ is the store's root and cannot be removed: delete the store instead")
	}
	if err := ValidatePath(path); err != nil {
		return err
	}
	return db.write(ctx, "remove directory", func(r *run) error {
		s, err := loadStoreLite(r, storeID, true)
		if err != nil {
			return err
		}
		m, err := memoryAt(r, s.seq, s.ID, path)
		if err != nil {
			return err
		}
		if m != nil {
			return errorf(CodeNotDir, "%s is a file (memory %s), not a directory: delete the memory instead", path, m.ID)
		}
		full, err := hasChildren(r, s.seq, path)
		if err != nil {
			return err
		}
		if full {
			return errorf(CodeNotEmpty, "directory %s is not empty: delete or move what lies below it first", path)
		}
		res, err := r.exec("DELETE FROM dirs WHERE store = ? AND path = ?", s.seq, path)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errorf(CodeNotFound, "no directory %s in store %s", path, s.ID)
		}
		if err := recordChange(r, s.ID, ChangeDirRemoved, path); err != nil {
			return err
		}
		return keepDir(r, s, parentOf(path))
	})
}

// Rename moves a file or a directory with POSIX rename semantics in one
// transaction: every memory moved gets a "modified" version (ids kept); a file
// renamed onto an existing file records the content as a "modified" version
// of the destination's memory and a "deleted" version of the source.
// Errors: CodeNotFound, CodePathConflict (noReplace and the destination
// exists), CodeIsDir, CodeNotDir, CodeNotEmpty, CodeInvalid (a directory into
// its own subtree). Parent directories emptied by the move are kept. When a
// file moved, the memory now at to is returned, without its content (a mount
// keeps its attributes instead of reading them again); nil for a directory.
func (db *DB) Rename(ctx context.Context, storeID, from, to string, noReplace bool, by Actor) (*Memory, error) {
	if from == "/" || to == "/" {
		return nil, errorf(CodeInvalid, "the store's root cannot be renamed or replaced")
	}
	if err := ValidatePath(from); err != nil {
		return nil, err
	}
	if err := ValidatePath(to); err != nil {
		return nil, err
	}
	k, known := db.knownRenameOf(storeID, from, to, by)
	if known && db.d.name == "postgres" {
		if m, err := db.pgFastRename(ctx, k); m != nil || err != nil {
			return m, err
		}
	}
	var moved *Memory
	err := db.write(ctx, "rename", func(r *run) error {
		moved = nil
		if known && db.d.name == "sqlite" {
			m, err := fastRename(r, k)
			if m != nil || err != nil {
				moved = m
				return err
			}
		}
		s, err := loadStoreLite(r, storeID, true)
		if err != nil {
			return err
		}
		if err := guardName(r, s, to); err != nil {
			return err
		}
		src, err := memoryAt(r, s.seq, s.ID, from)
		if err != nil {
			return err
		}
		if src != nil {
			moved, err = renameFile(r, s, src, to, noReplace, by)
			return err
		}
		if err := requireDir(r, s.seq, s.ID, from); err != nil {
			if ErrorCode(err) == CodeNotFound {
				return errorf(CodeNotFound, "nothing at %s in store %s to rename", from, s.ID)
			}
			return err
		}
		return renameDir(r, s, from, to, noReplace, by)
	})
	if err != nil {
		return nil, err
	}
	if moved != nil {
		moved.Content = nil
	}
	return moved, nil
}

func renameFile(r *run, s *storeRow, src *Memory, to string, noReplace bool, by Actor) (*Memory, error) {
	if src.Path == to {
		return src, nil
	}
	// Within one directory (mv of a name, an editor's atomic save), the
	// source's directory is the destination's: it exists, and what lands
	// in it keeps it from being left empty.
	sameDir := parentOf(src.Path) == parentOf(to)
	dst, isdir, err := entryAt(r, s.seq, s.ID, to)
	if err != nil {
		return nil, err
	}
	if dst != nil {
		if noReplace {
			return nil, &Error{Code: CodePathConflict, ConflictingMemoryID: dst.ID, ConflictingPath: to,
				Message: "a memory already exists at " + to + " (" + dst.ID + "): delete it first or allow replacing it"}
		}
		// The destination's new version references the source's content.
		m, err := applyUpdate(r, s, dst, MemoryUpdate{from: src.Seq, fromSize: src.ContentSize}, src.ContentSHA256, by)
		if err != nil {
			return nil, err
		}
		_, err = deleteMemory(r, s, src, !sameDir, by)
		return m, err
	}
	if isdir {
		return nil, errorf(CodeIsDir, "%s is a directory: a file cannot replace it", to)
	}
	if !sameDir {
		if err := checkParent(r, s, to); err != nil {
			return nil, err
		}
	}
	// Nothing is at or below to and no file above it: the path is free.
	return applyUpdate(r, s, src, MemoryUpdate{Path: &to, KeepParentDir: !sameDir, pathFree: true}, "", by)
}

func renameDir(r *run, s *storeRow, from, to string, noReplace bool, by Actor) error {
	if from == to {
		return nil
	}
	if strings.HasPrefix(to, from+"/") {
		return errorf(CodeInvalid, "cannot move directory %s into its own subtree (%s)", from, to)
	}
	dst, err := memoryAt(r, s.seq, s.ID, to)
	if err != nil {
		return err
	}
	if dst != nil {
		return errorf(CodeNotDir, "%s is a file (memory %s): a directory cannot replace it", to, dst.ID)
	}
	exists, err := isDir(r, s.seq, to)
	if err != nil {
		return err
	}
	if exists {
		if noReplace {
			return &Error{Code: CodePathConflict, ConflictingPath: to, Message: "directory " + to + " already exists: remove it first or allow replacing it"}
		}
		full, err := hasChildren(r, s.seq, to)
		if err != nil {
			return err
		}
		if full {
			return errorf(CodeNotEmpty, "directory %s is not empty: a directory can only replace an empty one", to)
		}
		if _, err := r.exec("DELETE FROM dirs WHERE store = ? AND path = ?", s.seq, to); err != nil {
			return err
		}
	} else if err := checkParent(r, s, to); err != nil {
		return err
	}
	return moveSubtree(r, s, from, to, by)
}

// moveSubtree moves the directory from, with everything below it, to the
// free path to, and keeps from's parent as a directory.
func moveSubtree(r *run, s *storeRow, from, to string, by Actor) error {
	if err := moveMemories(r, s, from, to, by); err != nil {
		return err
	}
	if err := moveDirs(r, s, from, to); err != nil {
		return err
	}
	if err := recordChange(r, s.ID, ChangeDirRemoved, from); err != nil {
		return err
	}
	if err := recordChange(r, s.ID, ChangeDirMade, to); err != nil {
		return err
	}
	return keepDir(r, s, parentOf(from))
}

// moveMemories gives every memory below from a "modified" version at the
// same place below to.
func moveMemories(r *run, s *storeRow, from, to string, by Actor) error {
	lo, hi := subtree(from)
	rows, err := r.query("SELECT "+memCols+" FROM memories m WHERE m.store = ? AND m.path > ? AND m.path < ? ORDER BY m.path", s.seq, lo, hi)
	if err != nil {
		return err
	}
	var moving []*Memory
	for rows.Next() {
		m, err := scanMemoryRow(rows, s.ID, false)
		if err != nil {
			rows.Close()
			return err
		}
		moving = append(moving, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, m := range moving {
		p := to + m.Path[len(from):]
		if err := ValidatePath(p); err != nil {
			return err
		}
		if _, err := applyUpdate(r, s, m, MemoryUpdate{Path: &p}, "", by); err != nil {
			return err
		}
	}
	return nil
}

// moveDirs moves the explicit directories at and below from.
func moveDirs(r *run, s *storeRow, from, to string) error {
	lo, hi := subtree(from)
	rows, err := r.query("SELECT path FROM dirs WHERE store = ? AND path >= ? AND path < ? AND (path = ? OR path > ?)", s.seq, from, hi, from, lo)
	if err != nil {
		return err
	}
	var paths []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return err
		}
		paths = append(paths, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, p := range paths {
		np := to + p[len(from):]
		if err := ValidatePath(np); err != nil {
			return err
		}
		if _, err := r.exec("UPDATE dirs SET path = ? WHERE store = ? AND path = ?", np, s.seq, p); err != nil {
			return err
		}
		if err := recordChange(r, s.ID, ChangeDirRemoved, p); err != nil {
			return err
		}
		if err := recordChange(r, s.ID, ChangeDirMade, np); err != nil {
			return err
		}
	}
	return nil
}
