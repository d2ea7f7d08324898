package versions

import (
	"context"
	"errors"
	"strings"
)

// Operations of the client-side memory tool, each one transaction: whole
// subtrees for a caller that speaks of directories the way the tool does (a
// delete takes everything below, a move makes the destination's parents as
// it goes), and an edit that reads and writes a memory at once.

// DeleteTree removes the memory at path, or, when path is a directory,
// every memory and explicit directory below it, in one transaction: one
// "deleted" version per memory. The parent directory stays, as an explicit
// one if it is left empty. Returns how many memories were deleted.
// Errors: CodeNotFound, CodeReadOnly (archived store), CodeInvalid.
func (db *DB) DeleteTree(ctx context.Context, storeID, path string, by Actor) (int, error) {
	if path == "/" {
		return 0, errorf(CodeInvalid, "/ is the store's root and cannot be deleted: delete the store instead")
	}
	if err := ValidatePath(path); err != nil {
		return 0, err
	}
	n := 0
	err := db.write(ctx, "delete tree", func(r *run) error {
		n = 0
		s, err := loadStoreLite(r, storeID, true)
		if err != nil {
			return err
		}
		m, dir, err := entryAt(r, s.seq, s.ID, path)
		if err != nil {
			return err
		}
		if m != nil {
			n = 1
			_, err := deleteMemory(r, s, m, true, by)
			return err
		}
		if !dir {
			return errorf(CodeNotFound, "nothing at %s in store %s to delete", path, s.ID)
		}
		below, err := memoriesBelow(r, s, path)
		if err != nil {
			return err
		}
		for _, m := range below {
			if _, err := deleteMemory(r, s, m, false, by); err != nil {
				return err
			}
		}
		n = len(below)
		lo, hi := subtree(path)
		if _, err := r.exec("DELETE FROM dirs WHERE store = ? AND path >= ? AND path < ? AND (path = ? OR path > ?)", s.seq, path, hi, path, lo); err != nil {
			return err
		}
		if err := recordChange(r, s.ID, ChangeDirRemoved, path); err != nil {
			return err
		}
		return keepDir(r, s, parentOf(path))
	})
	return n, err
}

// MoveTree moves the memory or directory at from to the free path to in one
// transaction, keeping every memory's id (one "modified" version each). Unlike
// Rename it never replaces anything and needs no existing parent at to: the
// directories above to are implied by what lands there. The directory left
// behind stays, as an explicit one if it is left empty.
// Errors: CodeNotFound, CodePathConflict (something at, above as a file, or
// below to), CodeInvalid (a directory into its own subtree), CodeReadOnly.
func (db *DB) MoveTree(ctx context.Context, storeID, from, to string, by Actor) error {
	if from == "/" || to == "/" {
		return errorf(CodeInvalid, "the store's root cannot be moved or replaced")
	}
	if err := ValidatePath(from); err != nil {
		return err
	}
	if err := ValidatePath(to); err != nil {
		return err
	}
	if from == to {
		return &Error{Code: CodePathConflict, ConflictingPath: to, Message: to + " already exists: moving it onto itself changes nothing"}
	}
	return db.write(ctx, "move tree", func(r *run) error {
		s, err := loadStoreLite(r, storeID, true)
		if err != nil {
			return err
		}
		m, dir, err := entryAt(r, s.seq, s.ID, from)
		if err != nil {
			return err
		}
		if m == nil && !dir {
			return errorf(CodeNotFound, "nothing at %s in store %s to move", from, s.ID)
		}
		if err := guardName(r, s, to); err != nil {
			return err
		}
		if dir && strings.HasPrefix(to, from+"/") {
			return errorf(CodeInvalid, "cannot move directory %s into its own subtree (%s)", from, to)
		}
		if err := checkFree(r, s, to, ""); err != nil {
			return err
		}
		if m != nil {
			_, err := applyUpdate(r, s, m, MemoryUpdate{Path: &to, KeepParentDir: true, pathFree: true}, "", by)
			return err
		}
		return moveSubtree(r, s, from, to, by)
	})
}

// memoriesBelow lists the live memories strictly below dir, in path order.
func memoriesBelow(r *run, s *storeRow, dir string) ([]*Memory, error) {
	lo, hi := subtree(dir)
	rows, err := r.query("SELECT "+memCols+" FROM memories m WHERE m.store = ? AND m.path > ? AND m.path < ? ORDER BY m.path", s.seq, lo, hi)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Memory
	for rows.Next() {
		m, err := scanMemoryRow(rows, s.ID, false)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// errEditRefused ends the transaction of an edit its function refused.
var errEditRefused = errors.New("edit refused")

// EditMemory saves what edit makes of the content of the memory at path,
// reading and writing in one write transaction, so that no other save can
// come between the two: one "modified" version, or none when edit changes
// nothing. edit may run more than once (when the database retries the
// transaction) and must depend only on its argument; an error it returns
// comes back as is, with nothing changed.
// Errors: CodeNotFound (no memory at path, a directory included),
// CodeReadOnly, CodeTooLarge and the content rules.
func (db *DB) EditMemory(ctx context.Context, storeID, path string, edit func(content string) (string, error), by Actor) (*Memory, error) {
	if err := ValidatePath(path); err != nil {
		return nil, err
	}
	var out *Memory
	var refused error
	err := db.write(ctx, "edit memory", func(r *run) error {
		refused = nil
		s, err := loadStoreLite(r, storeID, true)
		if err != nil {
			return err
		}
		m, err := memoryAt(r, s.seq, s.ID, path)
		if err != nil {
			return err
		}
		if m == nil {
			return errorf(CodeNotFound, "no memory at %s in store %s", path, s.ID)
		}
		content, err := headContent(r, m.Seq)
		if err != nil {
			return err
		}
		next, err := edit(content)
		if err != nil {
			refused = err
			return errEditRefused
		}
		// A save of the edited content, on the head just read.
		var saved Memory
		var ch Change
		if err := saveVersion(r, s, m, SaveReq{StoreID: s.ID, Path: path, Memory: &saved}, next, sha256Hex(next), &content, by, &ch); err != nil {
			return err
		}
		out = &saved
		return nil
	})
	if refused != nil {
		return nil, refused
	}
	return out, err
}
