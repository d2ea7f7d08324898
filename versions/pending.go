package versions

import (
	"context"
	"database/sql"
	"time"
)

// Pending is a file saved through a mount and not published yet: its content
// is durable, but it is no memory, has no version, and only the mount that
// saved it shows it. The mount publishes it (PublishPending) when it
// outlives a grace period or is renamed onto its target, or drops it
// (DropPending) when it is removed first: a temporary file then leaves
// nothing in the store's history.
type Pending struct {
	ID      int64
	StoreID string
	// Owner names the mount that saved it, so that the same mount started
	// again after a crash publishes what it left.
	Owner   string
	Path    string
	Content string
	By      Actor
	SavedAt time.Time
}

// SavePending writes content as the pending file id (a new one when id is
// 0) and returns its id. The path and content must be valid for the store,
// which must be writable: a pending save is refused for the same reasons a
// save is, and a new pending file holds a slot of the store's memory limit
// until it is published or dropped.
func (db *DB) SavePending(ctx context.Context, storeID, owner, path, content string, by Actor, id int64) (int64, error) {
	if err := ValidatePath(path); err != nil {
		return 0, err
	}
	err := db.write(ctx, "save pending file", func(r *run) error {
		s, err := loadStoreLite(r, storeID, true)
		if err != nil {
			return err
		}
		if err := checkContent(content, s.MaxMemoryBytes); err != nil {
			return err
		}
		if s.Guard != GuardOff {
			base, err := pendingContent(r, s, id, path)
			if err != nil {
				return err
			}
			if err := guardCheck(r, s, path, base, content); err != nil {
				return err
			}
		}
		now := r.db.nowNanos()
		if id != 0 {
			res, err := r.exec("UPDATE pending SET path = ?, content = ?, actor_type = ?, actor_id = ?, saved_at = ? WHERE id = ? AND store = ?",
				path, r.db.d.blob(content), by.Type, by.ID, now, id, s.seq)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n == 1 {
				return err
			}
		}
		// A new pending file takes a memory slot (checkRoom); its later
		// saves keep the one it holds.
		if err := checkRoom(r, s); err != nil {
			return err
		}
		id, err = r.insertKey("id", "INSERT INTO pending (store, owner, path, actor_type, actor_id, saved_at, content) VALUES (?, ?, ?, ?, ?, ?, ?)",
			s.seq, owner, path, by.Type, by.ID, now, r.db.d.blob(content))
		return err
	})
	return id, err
}

// DropPending forgets a pending file; one already gone is no error.
func (db *DB) DropPending(ctx context.Context, storeID string, id int64) error {
	return db.write(ctx, "drop pending file", func(r *run) error {
		_, err := r.exec("DELETE FROM pending WHERE id = ? AND store = (SELECT seq FROM stores WHERE id = ?)", id, storeID)
		return err
	})
}

// PublishPending turns pending file id into a version at path, in one
// transaction that also drops it: a "modified" version of the memory at
// path when there is one (its id kept: the write-temp-then-rename of
// atomic savers), else a new memory with its "created" version (created
// is true). The version is attributed to whoever saved the pending file.
func (db *DB) PublishPending(ctx context.Context, storeID string, id int64, path string) (out *Memory, created bool, err error) {
	if err := ValidatePath(path); err != nil {
		return nil, false, err
	}
	err = db.write(ctx, "publish pending file", func(r *run) error {
		created = false // a retried transaction starts again
		s, err := loadStoreLite(r, storeID, true)
		if err != nil {
			return err
		}
		var content []byte
		var by Actor
		err = r.scan("DELETE FROM pending WHERE id = ? AND store = ? RETURNING content, actor_type, actor_id", []any{id, s.seq}, &content, &by.Type, &by.ID)
		if err == sql.ErrNoRows {
			return errorf(CodeNotFound, "no pending file %d in store %s (published or dropped already)", id, s.ID)
		}
		if err != nil {
			return err
		}
		c := string(content)
		m, err := memoryAt(r, s.seq, s.ID, path)
		if err != nil {
			return err
		}
		if m != nil {
			out, err = applyUpdate(r, s, m, MemoryUpdate{Content: &c}, sha256Hex(c), by)
			return err
		}
		if err := checkFree(r, s, path, ""); err != nil {
			return err
		}
		// No checkRoom: the pending file has held its memory's slot since
		// its first save, so that its publication never fails for the limit.
		out, err = insertMemoryRoom(r, s, path, c, by)
		created = err == nil
		return err
	})
	if err != nil {
		return nil, false, err
	}
	out.Content = nil
	return out, created, nil
}

// ListPending returns the store's pending files that owner saved or that
// were saved before savedBefore (a mount that never came back), oldest
// first.
func (db *DB) ListPending(ctx context.Context, storeID, owner string, savedBefore time.Time) ([]Pending, error) {
	var out []Pending
	err := db.one(ctx, "list pending files", func(r *run) error {
		rows, err := r.query(`SELECT p.id, p.owner, p.path, p.actor_type, p.actor_id, p.saved_at, p.content FROM pending p
			WHERE p.store = (SELECT seq FROM stores WHERE id = ?) AND (p.owner = ? OR p.saved_at < ?) ORDER BY p.id`,
			storeID, owner, savedBefore.UnixNano())
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p Pending
			var at int64
			var content []byte
			if err := rows.Scan(&p.ID, &p.Owner, &p.Path, &p.By.Type, &p.By.ID, &at, &content); err != nil {
				return err
			}
			p.StoreID, p.SavedAt, p.Content = storeID, fromNanos(at), string(content)
			out = append(out, p)
		}
		return rows.Err()
	})
	return out, err
}

// HasPending reports whether any store has a pending file: tests and tools
// wait for it to become false before reading what mounts saved.
func (db *DB) HasPending(ctx context.Context) (bool, error) {
	var n int
	err := db.one(ctx, "look for pending files", func(r *run) error {
		return r.scan("SELECT count(*) FROM (SELECT 1 FROM pending LIMIT 1) p", nil, &n)
	})
	return n > 0, err
}
