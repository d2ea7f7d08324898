package versions

import (
	"context"
	"database/sql"
	"slices"
	"strconv"
	"strings"
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
//     table, a row per path with what happened there (ChangeOp), trimmed
//     after changeRetention.
//
// Each Change says what it did (see Change), so a mount applies it without
// asking the engine again, and a read of the feed is one statement
// (changesQuery).
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
// positions from Changes with ==, and pass the last one back to Changes
// (or ChangesHeard). The zero FeedPos is before every change. g, set by
// ChangesHeard only, is the generation of the store's notifications it
// was read at.
type FeedPos struct{ v, c, g int64 }

// recordChange appends a row to the changes table for a directory or store
// path touched by the transaction r belongs to. Memories need none: their
// versions are the feed.
func recordChange(r *run, storeID string, op ChangeOp, path string) error {
	r.fed(storeID)
	_, err := r.exec("INSERT INTO changes (store, path, origin, at, op) VALUES (?, ?, ?, ?, ?)",
		storeID, path, r.origin().name, r.db.nowNanos(), string(op))
	if err != nil {
		return err
	}
	if r.db.changesWritten.Add(1)%trimEvery != 0 {
		return nil
	}
	cutoff := r.db.now().Add(-changeRetention).UnixNano()
	_, err = r.exec(`DELETE FROM changes WHERE seq IN (SELECT seq FROM
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

// changesQuery reads a store's feed after a position in one statement:
// its versions after ?1 below ?2 (its rowid range, see
// insertVersionQuery) and its rows of the changes table after ?4. Each kind comes in the order
// of its commits; the two are merged by commit time, which orders them
// exactly when one host wrote both (the writers of a store are serialized)
// and to within the hosts' clock skew otherwise. A redacted version names
// no path and is left out: it changed no file.
const changesQuery = `SELECT 0 AS k, seq, operation, path, prev_path, memory_id, id, sha, size,
		CAST(origin AS TEXT), created_at AS at
	FROM versions WHERE seq > ?1 AND seq < ?2 AND path IS NOT NULL
	UNION ALL
	SELECT 1, seq, op, path, NULL, NULL, NULL, NULL, NULL, origin, at
	FROM changes WHERE store = ?3 AND seq > ?4
	ORDER BY at, k, seq`

// ChangesHeard is Changes for a follower woken by WaitFeed: on PostgreSQL
// it returns, without reading, the changes the store's notifications
// brought since after when they are all there is from after on, as far
// as they go (the functions of one round trip say what they wrote; a
// commit of another kind, a reconnection, a position from elsewhere, or
// none heard makes it read). While the listener polls (pollFeed), the
// polls bring every version, and only a store's other changes make it
// read. Commits not heard yet are left for the next call, after the wait
// they wake: a caller that must see its own commit calls Changes.
func (db *DB) ChangesHeard(ctx context.Context, storeID string, after FeedPos) ([]Change, FeedPos, error) {
	if db.pg == nil {
		return db.Changes(ctx, storeID, after)
	}
	heard, pos, gen, ok := db.pg.listener.heardSince(storeID, after)
	if ok {
		return heard, pos, nil
	}
	changes, pos, err := db.Changes(ctx, storeID, after)
	pos.g = gen
	return changes, pos, err
}

// changeCols is where a row of changesQuery or pollQuery is scanned after
// its seq: a version's operation, path, prev_path, memory_id, id, sha,
// size, origin (as text) and time, or a change row's.
type changeCols struct {
	op, path, prev, memID, verID, sha, origin sql.NullString
	size, at                                  sql.NullInt64
}

func (r *changeCols) dest() []any {
	return []any{&r.op, &r.path, &r.prev, &r.memID, &r.verID, &r.sha, &r.size, &r.origin, &r.at}
}

// version is the change version seq of store storeID made.
func (r *changeCols) version(storeID string, seq int64) Change {
	c := Change{Seq: seq, StoreID: storeID, Op: versionChange(Operation(r.op.String), r.prev.String), Path: r.path.String,
		PrevPath: r.prev.String, MemoryID: r.memID.String, VersionID: r.verID.String, SHA256: r.sha.String,
		Size: int(r.size.Int64), Origin: r.origin.String, At: fromNanos(r.at.Int64)}
	if !r.verID.Valid {
		c.VersionID = versionID(seq, r.at.Int64)
	}
	return c
}

// versionChange is what a version of operation op did at its path; prev
// is the path a rename left.
func versionChange(op Operation, prev string) ChangeOp {
	switch {
	case op == OpCreated:
		return ChangeCreated
	case op == OpDeleted:
		return ChangeDeleted
	case prev != "":
		return ChangeRenamed
	}
	return ChangeModified
}

// Changes returns the changes to storeID after position after, in the
// order they were committed (see changesQuery), and the position they lead
// to; one statement reads them. A store deleted meanwhile still yields its
// last change (ChangeStore).
func (db *DB) Changes(ctx context.Context, storeID string, after FeedPos) ([]Change, FeedPos, error) {
	var out []Change
	pos := after
	err := db.one(ctx, "read changes", func(r *run) error {
		out, pos = out[:0], after
		// A deleted store's versions are gone with it: an empty range.
		lo, hi := int64(0), int64(0)
		if seq, err := db.storeSeq(r, storeID); err == nil {
			lo, hi = versionRange(seq)
		} else if ErrorCode(err) != CodeNotFound {
			return err
		}
		rows, err := r.query(changesQuery, max(after.v, lo), hi, storeID, after.c)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var kind int
			var seq int64
			var cols changeCols
			if err := rows.Scan(append([]any{&kind, &seq}, cols.dest()...)...); err != nil {
				return err
			}
			if kind == 1 {
				pos.c = max(pos.c, seq)
				out = append(out, Change{Seq: seq, StoreID: storeID, Op: ChangeOp(cols.op.String), Path: cols.path.String,
					Origin: cols.origin.String, At: fromNanos(cols.at.Int64)})
				continue
			}
			pos.v = max(pos.v, seq)
			out = append(out, cols.version(storeID, seq))
		}
		return rows.Err()
	})
	if slices.ContainsFunc(out, func(c Change) bool { return c.Op == ChangeStore }) {
		// Deleted or imported again, perhaps by another process: its row
		// number may be another now.
		db.forgetStore(storeID)
	}
	return out, pos, err
}

// FeedsMoved reports, for each of the stores, whether its feed holds a
// change after its position after[i] (what Changes would return), in one
// statement for them all: a follower woken by any store's commit reads
// the Changes of those of its stores that moved, not of every one.
func (db *DB) FeedsMoved(ctx context.Context, stores []string, after []FeedPos) ([]bool, error) {
	moved := make([]bool, len(stores))
	if len(stores) == 0 {
		return moved, nil
	}
	err := db.one(ctx, "read the change feed", func(r *run) error {
		var q strings.Builder
		var args []any
		for i, id := range stores {
			seq, err := db.storeSeq(r, id)
			if ErrorCode(err) == CodeNotFound {
				moved[i] = true // gone: Changes says so
				continue
			} else if err != nil {
				return err
			}
			lo, hi := versionRange(seq)
			if q.Len() > 0 {
				q.WriteString(" UNION ALL ")
			}
			// A redacted version names no path and is no change (changesQuery).
			q.WriteString("SELECT " + strconv.Itoa(i) + ` WHERE EXISTS (SELECT 1 FROM versions WHERE seq > ? AND seq < ? AND path IS NOT NULL)
				OR EXISTS (SELECT 1 FROM changes WHERE store = ? AND seq > ?)`)
			args = append(args, max(after[i].v, lo), hi, id, after[i].c)
		}
		if q.Len() == 0 {
			return nil
		}
		rows, err := r.query(q.String(), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var i int
			if err := rows.Scan(&i); err != nil {
				return err
			}
			moved[i] = true
		}
		return rows.Err()
	})
	return moved, err
}

// WakeFollowers makes the waits of WaitFeed on this handle return now, as
// if any store may have moved: a follower that now needs its own commits
// too (a history someone looks at) reads what it let pass.
func (db *DB) WakeFollowers() {
	if db.pg != nil { // SQLite's followers read every change, their own too
		db.pg.listener.wakeAll()
	}
}

// FeedMark is what WaitFeed last saw of the whole database's feed.
type FeedMark struct{ v, c, n int64 }

// A Followed is a store whose change feed WaitFeed waits on. Own, if set,
// is the origin of the follower's own writes (WithOrigin): on PostgreSQL
// commits of that origin alone do not wake it, since it knows what it
// wrote; it reads them with the next change that is not its own, or after
// the wait's 5 s bound.
type Followed struct {
	Store string
	Own   Origin
}

// WaitFeed blocks until the change feed of one of the followed stores (of
// any store, when none is given) may have moved since mark (the zero
// FeedMark: since ever), then returns the new mark and which of them
// moved; the caller then reads their Changes. On PostgreSQL it wakes on
// the notification a commit sends to each store's channel, which names
// its origin; a store's first wait returns once its channel is listened
// to, since commits before that were not heard. moved is nil when any may
// have: on SQLite, and wherever no store is followed, which it polls
// every poll interval (four times less often once nothing changed for 5
// seconds), and on PostgreSQL after a notification that named no store, a
// reconnection, WakeFollowers, or 5 s without one.
func (db *DB) WaitFeed(ctx context.Context, mark FeedMark, poll time.Duration, follow ...Followed) (_ FeedMark, moved []bool, _ error) {
	if db.pg != nil && len(follow) > 0 {
		return db.pg.wait(ctx, db, mark, follow)
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
			return m, nil, err
		}
		wait := poll
		if time.Since(start) > 5*time.Second {
			wait *= 4
		}
		select {
		case <-ctx.Done():
			return mark, nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}
