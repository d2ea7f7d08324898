package versions

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Undoing a session reverts every change it made to a store: each memory
// it wrote goes back to its version before the session's first change to
// it (renamed back, if the session moved it), and each memory it created
// is deleted. A memory someone else changed after the session's first
// change is a conflict: listed and skipped, unless forced. The session's
// versions are found by their actor (the memories actor_memories lists for
// it), so an undo reads what the session touched, not the store.

// UndoOptions tune UndoSession.
type UndoOptions struct {
	DryRun bool
	// Force reverts memories changed by others since, and undoes a session
	// that is still running.
	Force bool
}

// nothingWritten is the refusal of an undo of a session that
// wrote nothing in the store.
func nothingWritten(sessionID, storeID string) error {
	return objectError(CodeNotFound, "", storeID, "session %s wrote nothing in store %s: there is nothing to undo (memfs version list %s --session %s lists what a session wrote)", sessionID, storeID, storeID, sessionID)
}

// SessionWroteNothing reports whether err is UndoSession's refusal of a
// session that wrote nothing in the store.
func SessionWroteNothing(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == CodeNotFound && e.Object == "" && strings.Contains(e.Message, "there is nothing to undo")
}

// UndoSession plans, and unless o.DryRun applies, the undo of what session
// sessionID wrote in the store (see above). Errors: CodeNotFound (no
// store or session, or a session that wrote nothing there), CodeConflict
// (the session is still running, without o.Force), CodeReadOnly.
func (db *DB) UndoSession(ctx context.Context, storeID, sessionID string, o UndoOptions, by Actor) (*Plan, error) {
	var out *Plan
	err := db.write(ctx, "undo a session", func(r *run) error {
		s, err := loadStore(r, storeID)
		if err != nil {
			return err
		}
		if s.ArchivedAt != nil && !o.DryRun {
			return archivedError(s)
		}
		var ended sql.NullInt64
		err = r.scan("SELECT ended_at FROM sessions WHERE id = ?", []any{sessionID}, &ended)
		if err == sql.ErrNoRows {
			return objectError(CodeNotFound, ObjectSession, "", "no session %q: check its id", sessionID)
		}
		if err != nil {
			return err
		}
		if !ended.Valid && !o.Force && !o.DryRun {
			return objectError(CodeConflict, "", s.ID, "session %s is still running: end it first (memfs session end %s), or pass --force to undo what it wrote so far", sessionID, sessionID)
		}
		out = &Plan{StoreID: s.ID, SessionID: sessionID}
		lo, hi := s.versionRange()
		rows, err := r.query(`SELECT memory_id, min(seq), max(seq) FROM versions
			WHERE memory_id IN (SELECT a.memory_id FROM actor_memories a WHERE a.actor_id = ?1)
			AND actor_id = ?1 AND actor_type = 'session_actor' AND seq > ?2 AND seq < ?3 GROUP BY memory_id`, sessionID, lo, hi)
		if err != nil {
			return err
		}
		type touched struct {
			memory      string
			first, last int64
		}
		var all []touched
		for rows.Next() {
			var t touched
			if err := rows.Scan(&t.memory, &t.first, &t.last); err != nil {
				rows.Close()
				return err
			}
			all = append(all, t)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(all) == 0 {
			return nothingWritten(sessionID, s.ID)
		}
		var desc map[string]*Memory // read once a memory the session wrote is not live
		for _, t := range all {
			w, err := stateBefore(r, s, t.memory, t.first)
			if err != nil {
				return err
			}
			live, err := scanMemory(r, s.ID, false, "SELECT "+memCols+" FROM memories m WHERE "+memoryByID("?2", "?1"), s.seq, t.memory)
			if err == sql.ErrNoRows {
				live, err = nil, nil
				if desc == nil {
					all, err := liveMemories(r, s)
					if err != nil {
						return err
					}
					if desc, err = descendants(r, s, all); err != nil {
						return err
					}
				}
				live = desc[t.memory]
			}
			if err != nil {
				return err
			}
			c, ok := planChange(live, w)
			if !ok {
				continue
			}
			if c.Action != ActSkip && !o.Force {
				other, err := changedAfter(r, t.memory, sessionID, t.first, hi)
				if err != nil {
					return err
				}
				if other != "" {
					c.Action, c.Reason = ActSkip, "conflict: "+other+" after the session's first change to it; pass --force to revert it anyway"
					if live != nil && c.FromPath == "" && live.Path != c.Path {
						c.FromPath = live.Path
					}
				}
			}
			out.Changes = append(out.Changes, c)
		}
		sortChanges(out.Changes)
		if o.DryRun {
			return nil
		}
		if err := applyPlan(r, s, out, safetyName("undo", db.now()), "taken by an undo of session "+sessionID, by); err != nil {
			return err
		}
		out.Applied = out.Writes() > 0
		return nil
	})
	return out, err
}

// stateBefore is what memory looked like just before row first: its latest
// version before it, or absent.
func stateBefore(r *run, s *storeRow, memory string, first int64) (wanted, error) {
	lo, _ := s.versionRange()
	w := wanted{memoryID: memory}
	var seq, created int64
	var id, op, path, sha sql.NullString
	var size, red sql.NullInt64
	err := r.scan(`SELECT seq, id, created_at, operation, path, sha, size, redacted_at FROM versions
		WHERE memory_id = ? AND seq > ? AND seq < ? ORDER BY seq DESC LIMIT 1`, []any{memory, lo, first},
		&seq, &id, &created, &op, &path, &sha, &size, &red)
	if err == sql.ErrNoRows || err == nil && Operation(op.String) == OpDeleted {
		return w, nil
	}
	if err != nil {
		return w, err
	}
	w.present, w.seq, w.path, w.sha, w.size, w.redacted = true, seq, path.String, sha.String, int(size.Int64), red.Valid
	w.id = id.String
	if !id.Valid {
		w.id = versionID(seq, created)
	}
	return w, nil
}

// changedAfter describes the latest version of memory after row first
// that session did not write ("" when none).
func changedAfter(r *run, memory, session string, first, hi int64) (string, error) {
	var seq, created int64
	var id, at, aid sql.NullString
	err := r.scan(`SELECT seq, id, created_at, actor_type, actor_id FROM versions
		WHERE memory_id = ? AND seq > ? AND seq < ? AND (actor_id IS NULL OR actor_id <> ? OR actor_type <> 'session_actor')
		ORDER BY seq DESC LIMIT 1`, []any{memory, first, hi, session}, &seq, &id, &created, &at, &aid)
	if err == sql.ErrNoRows {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	vid := id.String
	if !id.Valid {
		vid = versionID(seq, created)
	}
	who := "someone"
	if at.Valid {
		who = at.String + ":" + aid.String
	}
	return fmt.Sprintf("changed by %s at %s (version %s)", who, fromNanos(created).Format(time.RFC3339), vid), nil
}
