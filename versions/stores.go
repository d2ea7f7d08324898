package versions

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memfs/memfs/guard"
	"github.com/memfs/memfs/slugify"
)

// StoreParams create a store. Zero limits mean the defaults.
type StoreParams struct {
	Name           string
	Description    string
	Metadata       map[string]string
	MaxMemories    int
	MaxMemoryBytes int
	// MaxDirectories bounds the directories the store keeps: 0 means
	// the default.
	MaxDirectories int
	// MaxHistoryBytes is the quota on the content the store's versions
	// retain: 0 means the default, negative means no quota.
	MaxHistoryBytes int
	// Guard is the credential guard's policy; "" means guard.Refuse.
	Guard GuardPolicy
}

// StoreUpdate changes what is non-nil. Metadata merges: a nil value removes
// the key.
type StoreUpdate struct {
	Name        *string
	Description *string
	Metadata    map[string]*string
	// MaxHistoryBytes sets the history quota: 0 means the default,
	// negative means no quota.
	MaxHistoryBytes *int
	Guard           *GuardPolicy
	// MaxMemories and MaxMemoryBytes change the store's limits; neither
	// may go below what the store already holds.
	MaxMemories    *int
	MaxMemoryBytes *int
}

type StoreListOptions struct {
	IncludeArchived bool
	CreatedGTE      time.Time // zero: no bound
	CreatedLTE      time.Time
	Limit           int    // 0: DefaultPageSize
	Page            string // cursor from a previous page's NextPage
	// OnlyKey, when set, is a scoped API key's id: only the stores in its
	// scope are listed.
	OnlyKey string
}

// storeRow is a store with what the engine needs besides the API object.
type storeRow struct {
	Store
	seq int64
	// liveBase and histBase are the store row's memory_count and
	// history_bytes: the store's counts less its latest version's running
	// counts (migration 0008). loadStoreLite reads only these; MemoryCount
	// and HistoryBytes are known once a version is inserted, or read by
	// checkRoom.
	liveBase, histBase int
	// pendingBytes is what the store's pending files count toward its
	// history quota (pending.go); read with the row by the writers.
	pendingBytes int
}

// latestCount is a store's running count col (live or hist) as its latest
// version carries it, in a query over stores.
func latestCount(col string) string {
	return `coalesce((SELECT v.` + col + ` FROM versions v WHERE v.seq > (stores.seq << 40) AND v.seq < ((stores.seq + 1) << 40) ORDER BY v.seq DESC LIMIT 1), 0)`
}

// versionRange bounds the seq of the store's versions, exclusive at both
// ends (see insertVersionQuery).
func (s *storeRow) versionRange() (lo, hi int64) { return versionRange(s.seq) }

// maxStoreSeq bounds a store's row number: a memory's inode number is the
// seq of one of its versions, which a mount needs below 2^61 (see
// internal/mirror's inos.go), and a store's versions are numbered from its
// row number times 2^40. Row numbers are never reused.
const maxStoreSeq = 1<<21 - 1

// storeNumbered refuses a store that took a row number above maxStoreSeq.
func storeNumbered(seq int64) error {
	if seq > maxStoreSeq {
		return errorf(CodeConflict, "this database has numbered %d stores, deleted ones included, the most it can: export the stores you keep (memfs export) and import them into a new database", maxStoreSeq)
	}
	return nil
}

func versionRange(storeSeq int64) (lo, hi int64) { return storeSeq << 40, (storeSeq + 1) << 40 }

var storeCols = `seq, id, name, description, metadata, max_memories, max_memory_bytes,
	memory_count + ` + latestCount("live") + `, created_at, updated_at, archived_at, max_history_bytes,
	history_bytes + ` + latestCount("hist") + `, memory_count, history_bytes, guard, max_directories`

func scanStore(sc interface{ Scan(...any) error }) (*storeRow, error) {
	var s storeRow
	var meta string
	var created, updated int64
	var archived sql.NullInt64
	if err := sc.Scan(&s.seq, &s.ID, &s.Name, &s.Description, &meta, &s.MaxMemories,
		&s.MaxMemoryBytes, &s.MemoryCount, &created, &updated, &archived, &s.MaxHistoryBytes, &s.HistoryBytes,
		&s.liveBase, &s.histBase, &s.Guard, &s.MaxDirectories); err != nil {
		return nil, err
	}
	s.Metadata = map[string]string{}
	if err := json.Unmarshal([]byte(meta), &s.Metadata); err != nil {
		return nil, err
	}
	s.CreatedAt, s.UpdatedAt, s.ArchivedAt = fromNanos(created), fromNanos(updated), nullTime(archived)
	return &s, nil
}

func storeNotFound(id string) error {
	return objectError(CodeNotFound, ObjectStore, "", "no memory store %q: check its id", id)
}

// StoreNotFound is the error of a store that does not exist, for an edge
// that hides a store which does (a scoped API key's view).
func StoreNotFound(id string) error { return storeNotFound(id) }

// loadStore reads a store by id.
func loadStore(r *run, id string) (*storeRow, error) {
	s, err := r.stmt("SELECT " + storeCols + " FROM stores WHERE id = ?" + r.lockClause())
	if err != nil {
		return nil, err
	}
	st, err := scanStore(s.QueryRowContext(r.ctx, id))
	if err == sql.ErrNoRows {
		return nil, storeNotFound(id)
	}
	if err == nil && r.write {
		// On PostgreSQL the statement that waited for the row's lock
		// read the versions before the commit it waited for: count again.
		err = r.scan("SELECT memory_count, history_bytes, memory_count + "+latestCount("live")+", history_bytes + "+latestCount("hist")+", pending_bytes FROM stores WHERE seq = ?",
			[]any{st.seq}, &st.liveBase, &st.histBase, &st.MemoryCount, &st.HistoryBytes, &st.pendingBytes)
	}
	return st, err
}

// loadWritable reads a store that is about to change: archived stores are
// read-only.
func loadWritable(r *run, id string) (*storeRow, error) {
	s, err := loadStore(r, id)
	if err != nil {
		return nil, err
	}
	if s.ArchivedAt != nil {
		return nil, archivedError(s)
	}
	return s, nil
}

// loadStoreLite reads what changing a store's memories needs: not the
// metadata, whose decoding costs more than the rest of a save's reads.
func loadStoreLite(r *run, id string, writable bool) (*storeRow, error) {
	s := storeRow{Store: Store{ID: id}}
	var archived sql.NullInt64
	err := r.scan("SELECT seq, name, max_memories, max_memory_bytes, memory_count, archived_at, max_history_bytes, history_bytes, guard, pending_bytes FROM stores WHERE id = ?"+r.lockClause(),
		[]any{id}, &s.seq, &s.Name, &s.MaxMemories, &s.MaxMemoryBytes, &s.liveBase, &archived, &s.MaxHistoryBytes, &s.histBase, &s.Guard, &s.pendingBytes)
	if err == sql.ErrNoRows {
		return nil, storeNotFound(id)
	}
	if err != nil {
		return nil, err
	}
	s.ArchivedAt = nullTime(archived)
	if writable && s.ArchivedAt != nil {
		return nil, archivedError(&s)
	}
	return &s, nil
}

func archivedError(s *storeRow) error {
	return errorf(CodeReadOnly, "memory store %s (%q) is archived and read-only: its memories can be read and deleted but not created or changed", s.ID, s.Name)
}

func (db *DB) CreateStore(ctx context.Context, p StoreParams) (*Store, error) {
	if err := validateStoreName(p.Name); err != nil {
		return nil, err
	}
	if err := validateDescription(p.Description); err != nil {
		return nil, err
	}
	if err := validateMetadata(p.Metadata); err != nil {
		return nil, err
	}
	if p.MaxMemories < 0 || p.MaxMemoryBytes < 0 || p.MaxDirectories < 0 {
		return nil, errorf(CodeInvalid, "store limits must be positive (0 means the default of %d memories, %d bytes per memory and %d directories)", DefaultMaxMemories, DefaultMaxMemoryBytes, DefaultMaxDirectories)
	}
	if p.MaxDirectories == 0 {
		p.MaxDirectories = DefaultMaxDirectories
	}
	if p.MaxMemories == 0 {
		p.MaxMemories = DefaultMaxMemories
	}
	if p.MaxMemoryBytes == 0 {
		p.MaxMemoryBytes = DefaultMaxMemoryBytes
	}
	switch {
	case p.MaxHistoryBytes == 0:
		p.MaxHistoryBytes = DefaultMaxHistoryBytes
	case p.MaxHistoryBytes < 0:
		p.MaxHistoryBytes = 0 // stored as "no quota"
	}
	if p.Guard == "" {
		p.Guard = guard.Refuse
	}
	if _, err := guard.ParsePolicy(string(p.Guard)); err != nil {
		return nil, errorf(CodeInvalid, "%v", err)
	}
	meta := p.Metadata
	if meta == nil {
		meta = map[string]string{}
	}
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	var out *Store
	err = db.write(ctx, "create store", func(r *run) error {
		now := db.now()
		id := db.ids.make(prefixStore, now)
		if _, err := r.exec(`INSERT INTO stores (id, name, description, metadata, max_memories,
			max_memory_bytes, max_history_bytes, created_at, updated_at, guard, max_directories) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, p.Name, p.Description, string(metaJSON), p.MaxMemories, p.MaxMemoryBytes, p.MaxHistoryBytes,
			now.UnixNano(), now.UnixNano(), string(p.Guard), p.MaxDirectories); err != nil {
			return err
		}
		s, err := loadStore(r, id)
		if err != nil {
			return err
		}
		if err := storeNumbered(s.seq); err != nil {
			return err
		}
		out = &s.Store
		return nil
	})
	return out, err
}

func (db *DB) GetStore(ctx context.Context, storeID string) (*Store, error) {
	var out *Store
	err := db.one(ctx, "get store", func(r *run) error {
		s, err := loadStore(r, storeID)
		if err == nil {
			out = &s.Store
		}
		return err
	})
	return out, err
}

// ResolveStore finds a store by memstore_ id or by exact name when exactly
// one store has that name (archived ones included).
func (db *DB) ResolveStore(ctx context.Context, ref string) (*Store, error) {
	if strings.HasPrefix(ref, prefixStore) {
		if s, err := db.GetStore(ctx, ref); ErrorCode(err) != CodeNotFound {
			return s, err
		}
	}
	var found []*storeRow
	err := db.one(ctx, "resolve store", func(r *run) error {
		rows, err := r.query("SELECT "+storeCols+" FROM stores WHERE name = ? ORDER BY seq LIMIT 2", ref)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			s, err := scanStore(rows)
			if err != nil {
				return err
			}
			found = append(found, s)
		}
		return rows.Err()
	})
	switch {
	case err != nil:
		return nil, err
	case len(found) == 0:
		if like := db.storesLike(ctx, ref); len(like) > 0 {
			return nil, objectError(CodeNotFound, ObjectStore, "", "no memory store has the id or name %q: did you mean %s? (a name is matched exactly, case included)", ref, strings.Join(like, " or "))
		}
		return nil, objectError(CodeNotFound, ObjectStore, "", "no memory store has the id or name %q: check the id or name", ref)
	case len(found) > 1:
		return nil, objectError(CodeInvalid, ObjectStore, "", "several memory stores are named %q: name the one you mean by its memstore_ id", ref)
	}
	return &found[0].Store, nil
}

// storesLike names the stores a person who typed ref may have meant: a
// name that differs in case only, or whose directory in a mount (its
// slug) is ref. At most three, quoted; none when the lookup fails, since
// a hint must not turn a not-found into another error.
func (db *DB) storesLike(ctx context.Context, ref string) []string {
	var like []string
	_ = db.one(ctx, "suggest a store", func(r *run) error {
		rows, err := r.query("SELECT name FROM stores ORDER BY seq")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() && len(like) < 3 {
			var name string
			if err := rows.Scan(&name); err != nil {
				return err
			}
			q := strconv.Quote(name)
			if (strings.EqualFold(name, ref) || slugify.Make(name) == ref) && !slices.Contains(like, q) {
				like = append(like, q)
			}
		}
		return rows.Err()
	})
	return like
}

func (db *DB) UpdateStore(ctx context.Context, storeID string, u StoreUpdate) (*Store, error) {
	if u.Name != nil {
		if err := validateStoreName(*u.Name); err != nil {
			return nil, err
		}
	}
	if u.Description != nil {
		if err := validateDescription(*u.Description); err != nil {
			return nil, err
		}
	}
	if u.Guard != nil {
		if _, err := guard.ParsePolicy(string(*u.Guard)); err != nil {
			return nil, errorf(CodeInvalid, "%v", err)
		}
	}
	for _, l := range []struct {
		name string
		v    *int
	}{{"max_memories", u.MaxMemories}, {"max_memory_bytes", u.MaxMemoryBytes}} {
		if l.v != nil && *l.v < 1 {
			return nil, errorf(CodeInvalid, "%s %d for memory store %s: a limit below 1 would refuse every save; give 1 or more", l.name, *l.v, storeID)
		}
	}
	var out *Store
	err := db.write(ctx, "update store", func(r *run) error {
		s, err := loadWritable(r, storeID)
		if err != nil {
			return err
		}
		// The guard is no field of the API's store object: changing it
		// leaves updated_at as it is.
		if u.Guard != nil && *u.Guard != s.Guard {
			if _, err := r.exec("UPDATE stores SET guard = ? WHERE seq = ?", string(*u.Guard), s.seq); err != nil {
				return err
			}
			s.Guard = *u.Guard
		}
		changed := false
		if u.Name != nil && *u.Name != s.Name {
			s.Name, changed = *u.Name, true
		}
		if u.Description != nil && *u.Description != s.Description {
			s.Description, changed = *u.Description, true
		}
		if patchMetadata(s.Metadata, u.Metadata) {
			changed = true
		}
		if u.MaxHistoryBytes != nil {
			q := *u.MaxHistoryBytes
			switch {
			case q == 0:
				q = DefaultMaxHistoryBytes
			case q < 0:
				q = 0
			}
			if q != s.MaxHistoryBytes {
				s.MaxHistoryBytes, changed = q, true
			}
		}
		limits, err := newLimits(r, s, u)
		if err != nil {
			return err
		}
		if !changed && !limits {
			out = &s.Store
			return nil
		}
		if err := validateMetadata(s.Metadata); err != nil {
			return err
		}
		meta, err := json.Marshal(s.Metadata)
		if err != nil {
			return err
		}
		// The limits are no field of the API's store object: changing
		// only them leaves updated_at as it is, as the guard does.
		now := s.UpdatedAt.UnixNano()
		if changed {
			now = db.nowNanos()
		}
		if _, err := r.exec("UPDATE stores SET name = ?, description = ?, metadata = ?, max_history_bytes = ?, max_memories = ?, max_memory_bytes = ?, updated_at = ? WHERE seq = ?",
			s.Name, s.Description, string(meta), s.MaxHistoryBytes, s.MaxMemories, s.MaxMemoryBytes, now, s.seq); err != nil {
			return err
		}
		if limits {
			// A mount refuses writes past the limits it read: a change at
			// "/" makes it read the store again, as an archive does.
			if err := recordChange(r, s.ID, ChangeStore, "/"); err != nil {
				return err
			}
		}
		s.UpdatedAt = fromNanos(now)
		out = &s.Store
		return nil
	})
	return out, err
}

// newLimits applies u's memory limits to s, refusing one below what the
// store already holds: its live memories and pending files (each holds a
// memory's slot), or its largest live memory. Lowering a limit under what
// is there would leave the store over it, refusing every save.
func newLimits(r *run, s *storeRow, u StoreUpdate) (changed bool, err error) {
	if u.MaxMemories != nil && *u.MaxMemories != s.MaxMemories {
		var pending int
		if err := r.scan("SELECT count(*) FROM pending WHERE store = ?", []any{s.seq}, &pending); err != nil {
			return false, err
		}
		if held := s.MemoryCount + pending; *u.MaxMemories < held {
			return false, errorf(CodeInvalid, "memory store %s holds %d memories, more than a limit of %d: give at least %d, or delete some first", s.ID, held, *u.MaxMemories, held)
		}
		s.MaxMemories, changed = *u.MaxMemories, true
	}
	if u.MaxMemoryBytes != nil && *u.MaxMemoryBytes != s.MaxMemoryBytes {
		var largest int
		if err := r.scan("SELECT coalesce(max(size), 0) FROM memories WHERE store = ?", []any{s.seq}, &largest); err != nil {
			return false, err
		}
		if *u.MaxMemoryBytes < largest {
			return false, errorf(CodeInvalid, "memory store %s holds a memory of %d bytes, more than a limit of %d: give at least %d, or shorten its largest memories first", s.ID, largest, *u.MaxMemoryBytes, largest)
		}
		s.MaxMemoryBytes, changed = *u.MaxMemoryBytes, true
	}
	return changed, nil
}

func (db *DB) ListStores(ctx context.Context, o StoreListOptions) (*Page[Store], error) {
	limit, err := pageSize(o.Limit, ViewBasic)
	if err != nil {
		return nil, err
	}
	scope := listingScope("stores", o.IncludeArchived, o.CreatedGTE.UnixNano(), o.CreatedLTE.UnixNano())
	if o.Page, err = unscopeCursor(o.Page, scope); err != nil {
		return nil, err
	}
	var after int64
	if o.Page != "" {
		if after, err = decodeSeqCursor(o.Page); err != nil {
			return nil, err
		}
	}
	gte, lte := int64(-1<<63), int64(1<<63-1)
	if !o.CreatedGTE.IsZero() {
		gte = o.CreatedGTE.UnixNano()
	}
	if !o.CreatedLTE.IsZero() {
		lte = o.CreatedLTE.UnixNano()
	}
	page := &Page[Store]{Data: []Store{}}
	err = db.one(ctx, "list stores", func(r *run) error {
		rows, err := r.query(`SELECT `+storeCols+` FROM stores WHERE seq > ?
			AND (? OR archived_at IS NULL) AND created_at >= ? AND created_at <= ?
			AND (? = '' OR id IN (SELECT store_id FROM api_key_stores WHERE key_id = ?))
			ORDER BY seq LIMIT ?`, after, o.IncludeArchived, gte, lte, o.OnlyKey, o.OnlyKey, limit+1)
		if err != nil {
			return err
		}
		defer rows.Close()
		var last int64
		for rows.Next() {
			s, err := scanStore(rows)
			if err != nil {
				return err
			}
			if len(page.Data) == limit {
				page.NextPage = scopeCursor(encodeSeqCursor(last), scope)
				break
			}
			page.Data = append(page.Data, s.Store)
			last = s.seq
		}
		return rows.Err()
	})
	return page, err
}

// ArchiveStore makes a store read-only for good; archiving twice is harmless.
func (db *DB) ArchiveStore(ctx context.Context, storeID string) (*Store, error) {
	var out *Store
	err := db.write(ctx, "archive store", func(r *run) error {
		s, err := loadStore(r, storeID)
		if err != nil {
			return err
		}
		if s.ArchivedAt == nil {
			now := db.nowNanos()
			if _, err := r.exec("UPDATE stores SET archived_at = ?, updated_at = ? WHERE seq = ?", now, now, s.seq); err != nil {
				return err
			}
			s.ArchivedAt, s.UpdatedAt = nullTime(sql.NullInt64{Int64: now, Valid: true}), fromNanos(now)
			// Mounts learn of it from the feed, to turn read-only.
			if err := recordChange(r, s.ID, ChangeStore, "/"); err != nil {
				return err
			}
		}
		out = &s.Store
		return nil
	})
	return out, err
}

// DeleteStore removes the store with all its memories, versions and
// directories.
func (db *DB) DeleteStore(ctx context.Context, storeID string) error {
	defer db.forgetStore(storeID)
	return db.write(ctx, "delete store", func(r *run) error {
		s, err := loadStore(r, storeID)
		if err != nil {
			return err
		}
		// Versions have no foreign key (its cascade would need an index
		// the save path does not pay for): they go first, by their range.
		// The store's path_memories go before them, so that no deleted
		// version looks for the others of its memory at its path.
		if _, err := r.exec("DELETE FROM path_memories WHERE store = ?", s.seq); err != nil {
			return err
		}
		lo, hi := s.versionRange()
		if _, err := r.exec("DELETE FROM versions WHERE seq > ? AND seq < ?", lo, hi); err != nil {
			return err
		}
		if _, err := r.exec("DELETE FROM stores WHERE seq = ?", s.seq); err != nil {
			return err
		}
		return recordChange(r, s.ID, ChangeStore, "/")
	})
}
