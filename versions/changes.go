package versions

import (
	"context"
	"time"
)

// How long the change feed keeps rows: mounts poll every ~100 ms, so a few
// minutes covers any mount that is alive; trimming runs once every
// trimEvery changes this handle writes, over a bounded batch of the oldest.
const (
	changeRetention = 5 * time.Minute
	trimEvery       = 512
	trimBatch       = 1024
)

// recordChange appends a row to the change feed (F10) for a path touched by
// the transaction r belongs to.
func recordChange(r *run, storeID, path string) error {
	if _, err := r.exec("INSERT INTO changes (store, path, origin, at) VALUES (?, ?, ?, ?)",
		storeID, path, r.db.origin, r.db.nowNanos()); err != nil {
		return err
	}
	if r.db.changesWritten.Add(1)%trimEvery != 0 {
		return nil
	}
	cutoff := r.db.now().Add(-changeRetention).UnixNano()
	_, err := r.exec(`DELETE FROM changes WHERE seq IN (SELECT seq FROM
		(SELECT seq, at FROM changes ORDER BY seq LIMIT ?) AS oldest WHERE at < ?)
		AND seq < (SELECT max(seq) FROM changes)`, trimBatch, cutoff)
	return err
}

// Changes returns the changes to storeID with Seq > after, oldest first, and
// the highest Seq in the database (pass it as after next time).
func (db *DB) Changes(ctx context.Context, storeID string, after int64) ([]Change, int64, error) {
	var out []Change
	var top int64
	err := db.one(ctx, "read changes", func(r *run) error {
		// The highest seq, read first: every change up to it has committed
		// (there is one writer at a time), so bounding the query by it never
		// skips a change that commits meanwhile.
		err := r.scan("SELECT coalesce(max(seq), 0) FROM changes", nil, &top)
		if err != nil || top <= after {
			return err
		}
		rows, err := r.query("SELECT seq, path, origin FROM changes WHERE seq > ? AND seq <= ? AND store = ? ORDER BY seq",
			after, top, storeID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			c := Change{StoreID: storeID}
			if err := rows.Scan(&c.Seq, &c.Path, &c.Origin); err != nil {
				return err
			}
			out = append(out, c)
		}
		return rows.Err()
	})
	return out, top, err
}
