package versions

import (
	"context"
	"database/sql"
)

// A fork is a new store in the same database made from a store as of a
// moment (now, by default): its memories, with new ids, each with one
// "created" version written by the caller; or, with history, every version
// up to the moment too, with new ids and their original actors, times and
// redactions, so that the fork's log reads as the original's did then.
// The fork keeps the original's description, metadata, limits and guard
// policy; it is written as an import is (importOne), in one transaction.
// A memory whose content then was redacted has no content to fork and is
// left out, and said so.

// ForkOptions make a fork.
type ForkOptions struct {
	Name string
	// When is the moment (see asof.go); "": now.
	When        string
	WithHistory bool
	// AllowDuplicate lets the fork take a name another store has.
	AllowDuplicate bool
}

// Forked is what ForkStore made.
type Forked struct {
	Store    *Store
	AsOf     *AsOf // nil: as of now
	Memories int
	Versions int
	// Skipped are the memories left out: their content then was redacted.
	Skipped []PlannedChange
}

// ForkStore forks a store (see above). Errors: CodeNotFound (no store),
// CodeInvalid (a bad name or moment), CodeConflict (the name is taken,
// without AllowDuplicate).
func (db *DB) ForkStore(ctx context.Context, storeID string, o ForkOptions, by Actor) (*Forked, error) {
	if err := validateStoreName(o.Name); err != nil {
		return nil, err
	}
	var out *Forked
	err := db.write(ctx, "fork a store", func(r *run) error {
		s, err := loadStore(r, storeID)
		if err != nil {
			return err
		}
		out = &Forked{}
		if !o.AllowDuplicate {
			var other string
			err := r.scan("SELECT id FROM stores WHERE name = ? ORDER BY seq LIMIT 1", []any{o.Name}, &other)
			if err == nil {
				return objectError(CodeConflict, "", "", "a memory store named %q already exists (%s): choose another name for the fork, or pass --allow-duplicate", o.Name, other)
			}
			if err != sql.ErrNoRows {
				return err
			}
		}
		pos := int64(0)
		if o.When != "" {
			if out.AsOf, err = resolveAsOf(r, s, o.When); err != nil {
				return err
			}
			pos = out.AsOf.Pos
		} else if pos, err = headPos(r, s); err != nil {
			return err
		}
		files, err := snapshot(r, s.seq, s.ID, pos)
		if err != nil {
			return err
		}
		now := db.now()
		st := &importStore{store: s.Store}
		st.store.ID = db.ids.make(prefixStore, now)
		st.store.Name, st.store.ArchivedAt = o.Name, nil
		st.store.CreatedAt, st.store.UpdatedAt = now, now
		var memIDs, verIDs map[string]string
		if o.WithHistory {
			if memIDs, verIDs, err = forkHistory(r, s, pos, st); err != nil {
				return err
			}
		}
		for _, f := range files {
			if f.Redacted {
				out.Skipped = append(out.Skipped, PlannedChange{Action: ActSkip, MemoryID: f.Memory.ID, Path: f.Memory.Path, VersionID: f.Memory.VersionID,
					Reason: "version " + f.Memory.VersionID + ", which held its content then, was redacted: it is not forked"})
				continue
			}
			content, err := headContent(r, f.seq)
			if err != nil {
				return err
			}
			m := f.Memory
			m.Content = &content
			if o.WithHistory {
				m.ID, m.VersionID = memIDs[m.ID], verIDs[m.VersionID]
			} else {
				m.ID = db.ids.make(prefixMemory, now)
				m.VersionID = db.ids.make(prefixVersion, now)
				m.CreatedAt, m.UpdatedAt = now, now
				path, sha, size, actor := m.Path, m.ContentSHA256, m.ContentSize, by
				st.versions = append(st.versions, Version{ID: m.VersionID, MemoryID: m.ID, StoreID: st.store.ID, Operation: OpCreated,
					Path: &path, Content: &content, ContentSHA256: &sha, ContentSize: &size, CreatedAt: now, CreatedBy: &actor})
			}
			st.memories = append(st.memories, m)
		}
		got, err := importOne(r, st)
		if err != nil {
			return err
		}
		if _, err := r.exec("UPDATE stores SET guard = ? WHERE id = ?", string(s.Guard), st.store.ID); err != nil {
			return err
		}
		got.Store.Guard = s.Guard
		out.Store, out.Memories, out.Versions = got.Store, got.Memories, got.Versions
		return nil
	})
	return out, err
}

// forkHistory appends to st every version of s up to row pos, with new
// ids (kept in order, so that the fork's ids sort as the original's), and
// returns the maps of old memory and version ids to new ones. The fork
// keeps the original's creation time: its history begins then.
func forkHistory(r *run, s *storeRow, pos int64, st *importStore) (mems, vers map[string]string, err error) {
	lo, _ := s.versionRange()
	rows, err := r.query("SELECT "+versionCols+", "+contentOf("versions")+" FROM versions WHERE seq > ? AND seq <= ? ORDER BY seq", lo, pos)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	mems, vers = map[string]string{}, map[string]string{}
	st.store.CreatedAt = s.CreatedAt
	for rows.Next() {
		v, _, err := scanVersion(rows, st.store.ID, true)
		if err != nil {
			return nil, nil, err
		}
		if _, ok := mems[v.MemoryID]; !ok {
			mems[v.MemoryID] = r.db.ids.make(prefixMemory, v.CreatedAt)
		}
		old := v.ID
		v.ID = r.db.ids.make(prefixVersion, v.CreatedAt)
		vers[old] = v.ID
		v.MemoryID = mems[v.MemoryID]
		if v.RestoredFrom != "" {
			v.RestoredFrom = vers[v.RestoredFrom]
		}
		if v.CreatedAt.Before(st.store.CreatedAt) {
			st.store.CreatedAt = v.CreatedAt
		}
		st.versions = append(st.versions, *v)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	st.store.UpdatedAt = r.db.now().UTC()
	if st.store.UpdatedAt.Before(st.store.CreatedAt) {
		st.store.UpdatedAt = st.store.CreatedAt
	}
	return mems, vers, nil
}
