package versions

import (
	"context"
	"database/sql"
	"strconv"
	"time"
)

// The change feed is how mounts learn what others changed. Its
// source of truth is the database itself, read from a position:
//
//   - Memories: the versions table. A store's versions are one range of
//     seq in commit order (insertVersionQuery), each naming the path it
//     was saved at, the path a rename moved it from, and the handle that
//     wrote it; so a save writes nothing for the feed.
//   - Directories and the store itself (archived, deleted): the changes
//     table, a row per path, trimmed after changeRetention.
//
// A position (FeedPos) is per store: the last version and the last
// changes row of that store applied. Writers of one store commit one at a
// time, so what a reader sees of a store is always a prefix of its feed,
// on both backends, and a reader that missed a wake-up or reconnected
// reads on from its position.
//
// WaitFeed tells when to read: SQLite has no notification between
// processes and is polled; on PostgreSQL each committing transaction that
// changed the feed sends NOTIFY, which a dedicated LISTEN connection
// receives (postgres_listen.go).

// How long the changes table keeps rows: mounts poll every ~100 ms, so a few
// minutes covers any mount that is alive; trimming runs once every
// trimEvery changes this handle writes, over a bounded batch of the oldest.
const (
	changeRetention = 5 * time.Minute
	trimEvery       = 512
	trimBatch       = 1024
)

// FeedPos is how far a reader has applied one store's change feed: compare
// positions with ==, and pass the last one back to Changes. The zero
// FeedPos is before every change.
type FeedPos struct{ v, c int64 }

// recordChange appends a row to the changes table for a directory or store
// path touched by the transaction r belongs to. Memories need none: their
// versions are the feed.
func recordChange(r *run, storeID, path string) error {
	r.changed = true
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

// FeedHead is the current position of a store's feed: the Changes after it
// are those committed from now on.
func (db *DB) FeedHead(ctx context.Context, storeID string) (FeedPos, error) {
	var p FeedPos
	err := db.one(ctx, "read the change feed", func(r *run) error {
		seq, err := db.storeSeq(r, storeID)
		if err != nil {
			return err
		}
		lo, hi := versionRange(seq)
		if err := r.scan("SELECT coalesce((SELECT seq FROM versions WHERE seq > ? AND seq < ? ORDER BY seq DESC LIMIT 1), ?)",
			[]any{lo, hi, lo}, &p.v); err != nil {
			return err
		}
		return r.scan("SELECT coalesce(max(seq), 0) FROM changes WHERE store = ?", []any{storeID}, &p.c)
	})
	return p, err
}

// Changes returns the changes to storeID after position after, and the
// position they lead to. Versions come first, then directory and store
// changes; Seq orders the changes of each kind. A store deleted meanwhile
// still yields its last change ("/").
func (db *DB) Changes(ctx context.Context, storeID string, after FeedPos) ([]Change, FeedPos, error) {
	var out []Change
	pos := after
	err := db.one(ctx, "read changes", func(r *run) error {
		out, pos = out[:0], after
		seq, err := db.storeSeq(r, storeID)
		if err != nil && ErrorCode(err) != CodeNotFound {
			return err
		}
		if err == nil {
			lo, hi := versionRange(seq)
			rows, err := r.query("SELECT seq, path, prev_path, origin, created_at FROM versions WHERE seq > ? AND seq < ? ORDER BY seq",
				max(after.v, lo), hi)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var path, prev sql.NullString
				var origin sql.NullInt64
				var at int64
				c := Change{StoreID: storeID}
				if err := rows.Scan(&c.Seq, &path, &prev, &origin, &at); err != nil {
					return err
				}
				c.At = fromNanos(at)
				pos.v = c.Seq
				if origin.Valid {
					c.Origin = strconv.FormatInt(origin.Int64, 10)
				}
				if prev.Valid {
					pc := c
					pc.Path = prev.String
					out = append(out, pc)
				}
				if path.Valid { // a redacted version names no path
					c.Path = path.String
					out = append(out, c)
				}
			}
			if err := rows.Err(); err != nil {
				return err
			}
			rows.Close()
		}
		rows, err := r.query("SELECT seq, path, origin, at FROM changes WHERE store = ? AND seq > ? ORDER BY seq", storeID, after.c)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			c := Change{StoreID: storeID}
			var at int64
			if err := rows.Scan(&c.Seq, &c.Path, &c.Origin, &at); err != nil {
				return err
			}
			c.At = fromNanos(at)
			pos.c = c.Seq
			out = append(out, c)
		}
		return rows.Err()
	})
	return out, pos, err
}

// FeedMark is what WaitFeed last saw of the whole database's feed.
type FeedMark struct{ v, c, n int64 }

// WaitFeed blocks until the change feed of any store may have moved since
// mark (the zero FeedMark: since ever), then returns the new mark; the
// caller then reads Changes of the stores it follows. On SQLite it polls
// every poll interval, four times less often once nothing changed for 5
// seconds; on PostgreSQL it wakes on the notification a commit sends.
func (db *DB) WaitFeed(ctx context.Context, mark FeedMark, poll time.Duration) (FeedMark, error) {
	if db.pg != nil {
		return db.pg.wait(ctx, db, mark)
	}
	start := time.Now()
	for {
		var m FeedMark
		err := db.one(ctx, "read the change feed", func(r *run) error {
			// Each store's versions are a range of their own, so the
			// largest seq moves only with the newest store: the mark sums
			// every store's last seq, each one a seek, and moves with any.
			return r.scan(`SELECT coalesce((SELECT sum((SELECT max(v.seq) FROM versions v
				WHERE v.seq > s.seq << 40 AND v.seq < (s.seq + 1) << 40)) FROM stores s), 0),
				coalesce((SELECT max(seq) FROM changes), 0)`, nil, &m.v, &m.c)
		})
		if err != nil || m != mark {
			return m, err
		}
		wait := poll
		if time.Since(start) > 5*time.Second {
			wait *= 4
		}
		select {
		case <-ctx.Done():
			return mark, ctx.Err()
		case <-time.After(wait):
		}
	}
}
