package versions

import (
	"context"
	"database/sql"
)

// Writes is how many write transactions this handle committed: a test
// counts the commits an operation costs.
func (db *DB) Writes() int64 { return db.writes.Load() }

// PublishPendingOver is PublishPending for a temporary file renamed over
// path by a save that started from version base of the memory there (an
// atomic save): one transaction drops the pending row and writes the
// version, marked as a conflict when the memory's head is no longer base,
// or refused with CodeStale when strict (the row then stays). base "" is
// no base: no conflict.
func (db *DB) PublishPendingOver(ctx context.Context, storeID string, id int64, path, base string, strict bool) (out *Memory, created bool, err error) {
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
			out, err = applyUpdate(r, s, m, MemoryUpdate{Content: &c, BaseVersionID: base, Strict: strict}, sha256Hex(c), by)
			return err
		}
		if err := checkFree(r, s, path, ""); err != nil {
			return err
		}
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
