package versions

import (
	"context"
	"database/sql"
	"strings"
	"time"
)

// Heads are the store's live memories with their content, by path: what
// memfs lint reads.
func (db *DB) Heads(ctx context.Context, storeID string) ([]Memory, error) {
	var out []Memory
	err := db.read(ctx, "read memories", func(r *run) error {
		seq, err := db.storeSeq(r, storeID)
		if err != nil {
			return err
		}
		rows, err := r.query("SELECT "+memCols+", "+contentOf("v")+" FROM memories m JOIN versions v ON v.seq = m.head WHERE m.store = ? ORDER BY m.path", seq)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			m, err := scanMemoryRow(rows, storeID, true)
			if err != nil {
				return err
			}
			out = append(out, *m)
		}
		return rows.Err()
	})
	return out, err
}

// Conflict is an open conflict: a save whose writer had not seen the
// version it replaced (Overwrote), followed by no save based on it and
// not marked resolved, whose memory's current content lacks lines of
// the version it overwrote or of its own.
type Conflict struct {
	VersionID string    `json:"memory_version_id"`
	MemoryID  string    `json:"memory_id"`
	Path      string    `json:"path"`
	CreatedAt time.Time `json:"created_at"`
	CreatedBy *Actor    `json:"created_by"`
	// Overwrote is the version the conflicting save replaced unseen.
	Overwrote string `json:"overwrote_version_id"`
	// Lost are the lines of Overwrote and of the conflicting version that
	// the memory's current content does not hold.
	Lost []string `json:"lost_lines"`
}

// OpenConflicts lists the store's open conflicts, oldest first. A conflict
// is closed by the next save of its memory when that save is not itself a
// conflict (its writer saw the conflicting version), by a current content
// that holds every line of both sides, or by ResolveConflict.
func (db *DB) OpenConflicts(ctx context.Context, storeID string) ([]Conflict, error) {
	var out []Conflict
	err := db.read(ctx, "list conflicts", func(r *run) error {
		seq, err := db.storeSeq(r, storeID)
		if err != nil {
			return err
		}
		lo, hi := versionRange(seq)
		rows, err := r.query(`SELECT v.seq, v.id, v.memory_id, v.path, v.created_at, v.actor_type, v.actor_id,
				(SELECT p.seq FROM versions p WHERE p.memory_id = v.memory_id AND p.seq < v.seq ORDER BY p.seq DESC LIMIT 1),
				(SELECT n.conflict FROM versions n WHERE n.memory_id = v.memory_id AND n.seq > v.seq ORDER BY n.seq LIMIT 1),
				(SELECT m.head FROM memories m WHERE `+memoryByID("v.memory_id", "v.store")+`)
			FROM versions v WHERE v.seq > ? AND v.seq < ? AND v.conflict AND v.resolved_at IS NULL ORDER BY v.seq`, lo, hi)
		if err != nil {
			return err
		}
		type cand struct {
			c               Conflict
			seq, prev, head sql.NullInt64
		}
		var cands []cand
		for rows.Next() {
			var c cand
			var id, path, actorType, actorID sql.NullString
			var created int64
			var next sql.NullBool
			if err := rows.Scan(&c.seq, &id, &c.c.MemoryID, &path, &created, &actorType, &actorID, &c.prev, &next, &c.head); err != nil {
				rows.Close()
				return err
			}
			if next.Valid && !next.Bool || !c.head.Valid {
				continue // a later save saw it, or the memory was deleted since
			}
			c.c.VersionID, c.c.Path, c.c.CreatedAt = id.String, path.String, fromNanos(created)
			if !id.Valid {
				c.c.VersionID = versionID(c.seq.Int64, created)
			}
			if actorType.Valid {
				c.c.CreatedBy = &Actor{Type: actorType.String, ID: actorID.String}
			}
			cands = append(cands, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, c := range cands {
			head, err := headContent(r, c.head.Int64)
			if err != nil {
				return err
			}
			have := map[string]bool{}
			for _, l := range strings.Split(head, "\n") {
				have[strings.TrimSpace(l)] = true
			}
			var sides []string
			if c.prev.Valid {
				var pid sql.NullString
				var pcreated int64
				if err := r.scan("SELECT id, created_at FROM versions WHERE seq = ?", []any{c.prev.Int64}, &pid, &pcreated); err != nil {
					return err
				}
				c.c.Overwrote = pid.String
				if !pid.Valid {
					c.c.Overwrote = versionID(c.prev.Int64, pcreated)
				}
				prev, err := headContent(r, c.prev.Int64)
				if err != nil {
					return err
				}
				sides = append(sides, prev)
			}
			own, err := headContent(r, c.seq.Int64)
			if err != nil {
				return err
			}
			sides = append(sides, own)
			seen := map[string]bool{}
			for _, side := range sides {
				for _, l := range strings.Split(side, "\n") {
					if t := strings.TrimSpace(l); t != "" && !have[t] && !seen[t] {
						seen[t] = true
						c.c.Lost = append(c.c.Lost, t)
					}
				}
			}
			if len(c.c.Lost) > 0 {
				out = append(out, c.c)
			}
		}
		return nil
	})
	return out, err
}

// ResolveConflict marks a conflicting version resolved: lint no longer
// reports it. Resolving one already resolved changes nothing.
func (db *DB) ResolveConflict(ctx context.Context, storeID, versionID string, by Actor) (*Version, error) {
	var out *Version
	err := db.write(ctx, "resolve conflict", func(r *run) error {
		// Like a redaction, a store's archiving does not forbid it.
		s, err := loadStoreLite(r, storeID, false)
		if err != nil {
			return err
		}
		v, seq, err := loadVersion(r, s, versionID)
		if err != nil {
			return err
		}
		if !v.Conflict {
			return errorf(CodeInvalid, "version %s of store %s is not a conflict: only versions memfs log marks as conflicts can be resolved", versionID, storeID)
		}
		if _, err := r.exec("UPDATE versions SET resolved_at = coalesce(resolved_at, ?), resolver_type = coalesce(resolver_type, ?), resolver_id = coalesce(resolver_id, ?) WHERE seq = ?",
			r.db.nowNanos(), by.Type, by.ID, seq); err != nil {
			return err
		}
		out = v
		return nil
	})
	return out, err
}
