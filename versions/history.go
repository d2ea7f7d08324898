package versions

import (
	"context"
	"database/sql"
	"math"
	"strings"
	"time"
)

type VersionListOptions struct {
	MemoryID string
	// Only versions written by this session, API key or service account.
	SessionID        string
	APIKeyID         string
	ServiceAccountID string
	Operation        Operation
	CreatedGTE       time.Time
	CreatedLTE       time.Time
	View             View
	Limit            int
	Page             string
}

const versionCols = `seq, id, memory_id, operation, created_at, actor_type, actor_id, conflict,
	redacted_at, redactor_type, redactor_id, path, sha, size, restored_from, via_key, prev_path`

func scanVersion(sc interface{ Scan(...any) error }, storeID string, withContent bool) (*Version, int64, error) {
	v := Version{StoreID: storeID}
	var seq, created int64
	var op string
	var id, actorType, actorID, redactorType, redactorID, path, sha, content sql.NullString
	var redacted, size sql.NullInt64
	var restoredFrom, via, prevPath sql.NullString
	dest := []any{&seq, &id, &v.MemoryID, &op, &created, &actorType, &actorID, &v.Conflict,
		&redacted, &redactorType, &redactorID, &path, &sha, &size, &restoredFrom, &via, &prevPath}
	if withContent {
		dest = append(dest, &content)
	}
	if err := sc.Scan(dest...); err != nil {
		return nil, 0, err
	}
	v.ID = id.String
	if !id.Valid {
		v.ID = versionID(seq, created)
	}
	v.Operation, v.CreatedAt, v.RedactedAt = Operation(op), fromNanos(created), nullTime(redacted)
	if actorType.Valid {
		v.CreatedBy = &Actor{Type: actorType.String, ID: actorID.String, Via: via.String}
	}
	if redactorType.Valid {
		v.RedactedBy = &Actor{Type: redactorType.String, ID: redactorID.String}
	}
	if path.Valid {
		v.Path = &path.String
	}
	if sha.Valid {
		v.ContentSHA256 = &sha.String
	}
	if size.Valid {
		n := int(size.Int64)
		v.ContentSize = &n
	}
	if content.Valid {
		v.Content = &content.String
	}
	v.RestoredFrom, v.PreviousPath = restoredFrom.String, prevPath.String
	return &v, seq, nil
}

// ListVersions lists newest first.
func (db *DB) ListVersions(ctx context.Context, storeID string, o VersionListOptions) (*Page[Version], error) {
	limit, err := pageSize(o.Limit, o.View)
	if err != nil {
		return nil, err
	}
	switch o.Operation {
	case "", OpCreated, OpModified, OpDeleted:
	default:
		return nil, errorf(CodeInvalid, "operation %q is not one of created, modified, deleted", o.Operation)
	}
	full := o.View == ViewFull
	scope := listingScope("versions", storeID, o.MemoryID, o.SessionID, o.APIKeyID, o.ServiceAccountID, o.Operation, o.CreatedGTE.UnixNano(), o.CreatedLTE.UnixNano())
	if o.Page, err = unscopeCursor(o.Page, scope); err != nil {
		return nil, err
	}
	q, args, err := versionListQuery(o, limit)
	if err != nil {
		return nil, err
	}
	page := &Page[Version]{Data: []Version{}}
	err = db.one(ctx, "list versions", func(r *run) error {
		seq, err := db.storeSeq(r, storeID)
		if err != nil {
			return err
		}
		args[0], args[1] = versionRange(seq)
		rows, err := r.query(q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		var last int64
		for rows.Next() {
			v, vseq, err := scanVersion(rows, storeID, full)
			if err != nil {
				return err
			}
			if len(page.Data) == limit {
				page.NextPage = scopeCursor(encodeSeqCursor(last), scope)
				break
			}
			page.Data = append(page.Data, *v)
			last = vseq
		}
		return rows.Err()
	})
	return page, err
}

// versionListQuery builds the listing's SQL; args[0] and args[1] are left
// for the bounds of the store's versions (versionRange).
func versionListQuery(o VersionListOptions, limit int) (string, []any, error) {
	var q strings.Builder
	q.WriteString("SELECT " + versionCols)
	if o.View == ViewFull {
		q.WriteString(", " + contentOf("versions"))
	}
	q.WriteString(" FROM versions WHERE seq > ? AND seq < ?")
	args := []any{nil, nil}
	if o.MemoryID != "" {
		q.WriteString(" AND memory_id = ?")
		args = append(args, o.MemoryID)
	}
	for _, f := range []struct{ typ, id string }{
		{"session_actor", o.SessionID}, {"api_actor", o.APIKeyID}, {"service_account_actor", o.ServiceAccountID},
	} {
		if f.id != "" {
			q.WriteString(" AND memory_id IN (SELECT a.memory_id FROM actor_memories a WHERE a.actor_id = ?) AND actor_id = ? AND actor_type = ?")
			args = append(args, f.id, f.id, f.typ)
		}
	}
	if o.Operation != "" {
		q.WriteString(" AND operation = ?")
		args = append(args, string(o.Operation))
	}
	if !o.CreatedGTE.IsZero() {
		q.WriteString(" AND created_at >= ?")
		args = append(args, o.CreatedGTE.UnixNano())
	}
	if !o.CreatedLTE.IsZero() {
		q.WriteString(" AND created_at <= ?")
		args = append(args, o.CreatedLTE.UnixNano())
	}
	if o.Page != "" {
		before, err := decodeSeqCursor(o.Page)
		if err != nil {
			return "", nil, err
		}
		q.WriteString(" AND seq < ?")
		args = append(args, before)
	}
	q.WriteString(" ORDER BY seq DESC LIMIT ?")
	return q.String(), append(args, limit+1), nil
}

func versionNotFound(storeID, id string) error {
	return objectError(CodeNotFound, ObjectVersion, storeID, "no version %q in store %s: check its id", id, storeID)
}

// loadVersion reads one version of a store with its content.
func loadVersion(r *run, s *storeRow, id string) (*Version, int64, error) {
	lo, hi := s.versionRange()
	seq, err := findVersion(r, id, lo, hi)
	if err != nil {
		return nil, 0, err
	}
	if seq == 0 {
		return nil, 0, versionNotFound(s.ID, id)
	}
	st, err := r.stmt("SELECT " + versionCols + ", " + contentOf("versions") + " FROM versions WHERE seq = ?")
	if err != nil {
		return nil, 0, err
	}
	v, seq, err := scanVersion(st.QueryRowContext(r.ctx, seq), s.ID, true)
	if err == sql.ErrNoRows {
		return nil, 0, versionNotFound(s.ID, id)
	}
	return v, seq, err
}

// findVersion returns the row of the version id names between lo and hi
// (a store's range; 0, 0: any), or 0: an id stored in the row (a version
// from before ids encoded rows, or imported) by the partial index of
// those, else the row an encoded id names, if it has no id of its own and
// was created in the millisecond the id says (see versionID).
func findVersion(r *run, id string, lo, hi int64) (int64, error) {
	if hi == 0 {
		hi = math.MaxInt64
	}
	var seq int64
	err := r.scan("SELECT seq FROM versions WHERE id = ? AND seq > ? AND seq < ?", []any{id, lo, hi}, &seq)
	if err != sql.ErrNoRows {
		return seq, err
	}
	enc, ms, ok := versionSeq(id)
	if !ok || enc <= lo || enc >= hi {
		return 0, nil
	}
	var created int64
	err = r.scan("SELECT created_at FROM versions WHERE seq = ? AND id IS NULL", []any{enc}, &created)
	if err == sql.ErrNoRows || err == nil && created/1e6 != ms {
		return 0, nil
	}
	return enc, err
}

// contentOf is the SQL of the content of the version row v: its own, or
// that of the version it references (a rename, see newVersion.contentOf).
// isHead is the condition that version v is its memory's head: a head is
// at its memory's path (memories are keyed by store and path).
func isHead(v string) string {
	return "EXISTS (SELECT 1 FROM memories m WHERE m.store = " + v + ".store AND m.path = " + v + ".path AND m.head = " + v + ".seq)"
}

func contentOf(v string) string {
	return "coalesce(" + v + ".content, (SELECT c.content FROM versions c WHERE c.seq = " + v + ".content_of))"
}

// keepReferenced copies into the versions that where selects the content
// they reference, before the versions holding it lose it (pruned or
// redacted). where bounds them to the store's range: a referencing
// version always comes after the one it references.
func keepReferenced(r *run, where string, args ...any) error {
	_, err := r.exec(`UPDATE versions SET content = (SELECT c.content FROM versions c WHERE c.seq = versions.content_of), content_of = NULL
		WHERE `+where, args...)
	return err
}

// GetVersion returns one version with its content.
func (db *DB) GetVersion(ctx context.Context, storeID, versionID string) (*Version, error) {
	var out *Version
	err := db.one(ctx, "get version", func(r *run) error {
		s, err := loadStore(r, storeID)
		if err != nil {
			return err
		}
		out, _, err = loadVersion(r, s, versionID)
		return err
	})
	return out, err
}

// RedactVersion removes a version's content, path, hash and size, keeping
// who, what and when. Redacting twice is harmless; the head of a live
// memory cannot be redacted.
func (db *DB) RedactVersion(ctx context.Context, storeID, versionID string, by Actor) (*Version, error) {
	var out *Version
	err := db.write(ctx, "redact version", func(r *run) error {
		s, err := loadStoreLite(r, storeID, false)
		if err != nil {
			return err
		}
		v, seq, err := loadVersion(r, s, versionID)
		if err != nil {
			return err
		}
		if v.RedactedAt != nil {
			out = v
			return nil
		}
		var head bool
		if err := r.scan("SELECT "+isHead("v")+" FROM versions v WHERE v.seq = ?", []any{seq}, &head); err != nil {
			return err
		}
		if head {
			return errorf(CodeConflict, "version %s holds the current content of memory %s at %s and cannot be redacted: write a new version of the memory (or delete it) first, then redact", v.ID, v.MemoryID, *v.Path)
		}
		now := r.db.nowNanos()
		var rt, rid any
		if by.Type != "" {
			rt, rid = by.Type, by.ID
		}
		// What redaction nulls: the content and the path.
		if freed := VersionCost(v) - VersionCost(&Version{CreatedBy: v.CreatedBy}); freed > 0 {
			if err := freeHistoryBytes(r, s, freed); err != nil {
				return err
			}
		}
		if v.Path != nil {
			// Mounts learn of it as a change at the path: their .history
			// tree shows the version's content until they do.
			if err := recordChange(r, s.ID, ChangeRedacted, *v.Path); err != nil {
				return err
			}
		}
		_, hi := s.versionRange()
		if err := keepReferenced(r, "seq > ?1 AND seq < ?2 AND content_of = ?1", seq, hi); err != nil {
			return err
		}
		if _, err := r.exec(`UPDATE versions SET content = NULL, content_of = NULL, path = NULL, prev_path = NULL, sha = NULL, size = NULL,
			redacted_at = ?, redactor_type = ?, redactor_id = ? WHERE seq = ?`, now, rt, rid, seq); err != nil {
			return err
		}
		out, _, err = loadVersion(r, s, versionID)
		return err
	})
	return out, err
}

// Restore writes an old version's content as a new version: an update
// of the live memory (a new memory at path if path is another), or a new memory at
// path (default: the version's path) if the memory was deleted.
func (db *DB) Restore(ctx context.Context, storeID, versionID, path string, by Actor) (*Memory, error) {
	if path != "" {
		if err := ValidatePath(path); err != nil {
			return nil, err
		}
	}
	var out *Memory
	err := db.write(ctx, "restore version", func(r *run) error {
		s, err := loadStoreLite(r, storeID, true)
		if err != nil {
			return err
		}
		v, _, err := loadVersion(r, s, versionID)
		if err != nil {
			return err
		}
		switch {
		case v.RedactedAt != nil:
			return objectError(CodeConflict, ObjectVersion, s.ID, "version %s was redacted and has no content left: restore another version", v.ID)
		case v.Content == nil:
			return errorf(CodeInvalid, "version %s records a deletion and holds no content: restore the version before it", v.ID)
		}
		// A save of the version's content: a version of its memory if that
		// is live, else a new memory at path, by default the version's. A
		// path other than the live memory's is a copy there, as git show
		// REV:path > other: the live memory stays as it is.
		var m Memory
		var ch Change
		req := SaveReq{StoreID: s.ID, MemoryID: v.MemoryID, Path: path, Memory: &m}
		if path != "" {
			if live, lerr := lookupMemory(r, s, v.MemoryID); lerr == nil && live.Path != path {
				req.MemoryID, req.Exclusive = "", true
			}
		}
		err = saveIn(r, s, req, *v.Content, by, &ch)
		if ErrorCode(err) == CodeNotFound && req.MemoryID != "" {
			req.MemoryID, req.Exclusive = "", true
			if req.Path == "" {
				req.Path = *v.Path
			}
			err = saveIn(r, s, req, *v.Content, by, &ch)
		}
		if err != nil {
			return err
		}
		out = &m
		if ch.Seq == 0 {
			return nil // nothing to change: no version
		}
		return markRestored(r, ch.Seq, v.ID)
	})
	return out, err
}

// markRestored records in the version a restore appended (at row seq)
// which version it took the content from.
func markRestored(r *run, seq int64, fromID string) error {
	_, err := r.exec("UPDATE versions SET restored_from = ? WHERE seq = ?", fromID, seq)
	return err
}

// victims selects the rows PruneVersions removes: of the store ?1's
// versions (its rows ?4..?5), those older than ?3 beyond each memory's ?2
// newest, never a live memory's head, and never a version a checkpoint
// other than a session's needs (checkpointNeeds).
const victims = agedOut + ` AND seq NOT IN (` + checkpointNeeds + `)`

// agedOut is victims without what checkpoints keep.
const agedOut = `SELECT seq FROM (SELECT seq, created_at,
		row_number() OVER (PARTITION BY memory_id ORDER BY seq DESC) AS rn
		FROM versions WHERE seq > ?4 AND seq < ?5) AS ranked
	WHERE rn > ?2 AND created_at < ?3 AND seq NOT IN (SELECT head FROM memories WHERE store = ?1)`

// pruneVictims returns what PruneVersions would remove of s, oldest first,
// and the arguments of victims.
func pruneVictims(r *run, s *storeRow, olderThan time.Duration, keepLast int) ([]Version, []any, error) {
	lo, hi := s.versionRange()
	args := []any{s.seq, keepLast, r.db.now().Add(-olderThan).UnixNano(), lo, hi}
	rows, err := r.query("SELECT "+versionCols+" FROM versions WHERE seq IN ("+victims+") ORDER BY seq", args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	out := []Version{}
	for rows.Next() {
		v, _, err := scanVersion(rows, s.ID, false)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, *v)
	}
	return out, args, rows.Err()
}

// PrunePlan returns the versions PruneVersions with the same arguments
// would remove now, oldest first, removing nothing.
func (db *DB) PrunePlan(ctx context.Context, storeID string, olderThan time.Duration, keepLast int) ([]Version, error) {
	if keepLast < 1 {
		return nil, errorf(CodeInvalid, "keep-last %d would remove every version of a memory: keep at least 1", keepLast)
	}
	if olderThan < 0 {
		return nil, errorf(CodeInvalid, "older-than %s is negative: give a duration such as 720h", olderThan)
	}
	var out []Version
	err := db.read(ctx, "plan a prune", func(r *run) error {
		s, err := loadStore(r, storeID)
		if err != nil {
			return err
		}
		out, _, err = pruneVictims(r, s, olderThan, keepLast)
		return err
	})
	return out, err
}

// VersionsEndingIn returns the ids of the store's versions that end in
// suffix (case aside; at least 6 characters), as people give the end of
// an id that memfs log shows. An id that encodes its row (versionID) ends
// in its row's place in the store: the few rows that suffix can name are
// read by number; ids stored in their rows are read from their index.
func (db *DB) VersionsEndingIn(ctx context.Context, storeID, suffix string) ([]string, error) {
	suffix = strings.ToUpper(suffix)
	if len(suffix) < 6 {
		return nil, errorf(CodeInvalid, "%q is too short to name a version: give at least 6 characters of its id", suffix)
	}
	var out []string
	err := db.read(ctx, "find versions", func(r *run) error {
		out = out[:0]
		seq, err := db.storeSeq(r, storeID)
		if err != nil {
			return err
		}
		lo, hi := versionRange(seq)
		for _, cand := range seqsEndingIn(suffix, lo, hi) {
			var created int64
			err := r.scan("SELECT created_at FROM versions WHERE seq = ? AND id IS NULL", []any{cand}, &created)
			if err == sql.ErrNoRows {
				continue
			}
			if err != nil {
				return err
			}
			if id := versionID(cand, created); strings.HasSuffix(id, suffix) {
				out = append(out, id)
			}
		}
		stored, err := r.strings("SELECT id FROM versions WHERE id IS NOT NULL AND seq > ? AND seq < ? AND upper(id) LIKE ?", lo, hi, "%"+suffix)
		out = append(out, stored...)
		return err
	})
	return out, err
}

// seqsEndingIn returns the rows between lo and hi whose encoded id
// (versionID) would end in suffix: its last characters are the low bits of
// the row number, 5 to a character.
func seqsEndingIn(suffix string, lo, hi int64) []int64 {
	const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	tail := suffix[max(0, len(suffix)-12):] // 60 bits: within the row number
	var v uint64
	for _, ch := range tail {
		d := strings.IndexRune(alphabet, ch)
		if d < 0 {
			return nil
		}
		v = v<<5 | uint64(d)
	}
	step := int64(1) << (5 * len(tail))
	var out []int64
	for s := lo&^(step-1) | int64(v); s < hi && len(out) < 16; s += step {
		if s > lo {
			out = append(out, s)
		}
	}
	return out
}

// PruneVersions deletes versions older than olderThan except each memory's
// keepLast most recent (≥ 1) and returns what it removed. The head of
// a live memory is never removed.
func (db *DB) PruneVersions(ctx context.Context, storeID string, olderThan time.Duration, keepLast int) ([]Version, error) {
	if keepLast < 1 {
		return nil, errorf(CodeInvalid, "keep-last %d would remove every version of a memory: keep at least 1", keepLast)
	}
	if olderThan < 0 {
		return nil, errorf(CodeInvalid, "older-than %s is negative: give a duration such as 720h", olderThan)
	}
	out := []Version{}
	err := db.write(ctx, "prune versions", func(r *run) error {
		s, err := loadStore(r, storeID)
		if err != nil {
			return err
		}
		if err := expireSessionCheckpoints(r, s, olderThan); err != nil {
			return err
		}
		var args []any
		if out, args, err = pruneVictims(r, s, olderThan, keepLast); err != nil {
			return err
		}
		if len(out) == 0 {
			return nil
		}
		var before [2]int
		if before[0], before[1], err = latestCounts(r, s); err != nil {
			return err
		}
		if err := keepReferenced(r, "seq > ?4 AND seq < ?5 AND content_of IN ("+victims+")", args...); err != nil {
			return err
		}
		if _, err = r.exec("DELETE FROM versions WHERE seq IN ("+victims+")", args...); err != nil {
			return err
		}
		freed := 0
		for i := range out {
			freed += VersionCost(&out[i])
		}
		// Each memory keeps its newest version, so the store's latest
		// stays (the next version's number, and a new memory's inode
		// number, count on it); the counts are rebased all the same.
		return rebaseCounts(r, s, freed, before)
	})
	return out, err
}

// Export calls emit with the store and its limits (a StoreExport), then
// every memory (full view) in path order, every directory kept without a
// memory below it (a DirExport) in path order, every version (full)
// oldest first, then every checkpoint (a Checkpoint), all from one
// snapshot: the format Import reads.
func (db *DB) Export(ctx context.Context, storeID string, emit func(v any) error) error {
	return db.read(ctx, "export", func(r *run) error {
		s, err := loadStore(r, storeID)
		if err != nil {
			return err
		}
		if err := emit(StoreExport{s.Store}); err != nil {
			return err
		}
		rows, err := r.query("SELECT "+memCols+", "+contentOf("v")+" FROM memories m JOIN versions v ON v.seq = m.head WHERE m.store = ? ORDER BY m.path", s.seq)
		if err != nil {
			return err
		}
		for rows.Next() {
			m, err := scanMemoryRow(rows, s.ID, true)
			if err == nil {
				err = emit(*m)
			}
			if err != nil {
				rows.Close()
				return err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = r.query("SELECT path FROM dirs WHERE store = ? ORDER BY path", s.seq)
		if err != nil {
			return err
		}
		for rows.Next() {
			var d DirExport
			err := rows.Scan(&d.Path)
			if err == nil {
				err = emit(d)
			}
			if err != nil {
				rows.Close()
				return err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		lo, hi := s.versionRange()
		rows, err = r.query("SELECT "+versionCols+", "+contentOf("versions")+" FROM versions WHERE seq > ? AND seq < ? ORDER BY seq", lo, hi)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			v, _, err := scanVersion(rows, s.ID, true)
			if err == nil {
				err = emit(*v)
			}
			if err != nil {
				return err
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return exportCheckpoints(r, s, emit)
	})
}

// PreviousVersion returns the version of the same memory just before
// versionID, or nil when versionID began the memory (or what came before
// it was pruned).
func (db *DB) PreviousVersion(ctx context.Context, storeID, versionID string) (*Version, error) {
	var out *Version
	err := db.read(ctx, "previous version", func(r *run) error {
		s, err := loadStore(r, storeID)
		if err != nil {
			return err
		}
		v, seq, err := loadVersion(r, s, versionID)
		if err != nil || v.Operation == OpCreated {
			return err
		}
		lo, _ := s.versionRange()
		rows, err := r.query("SELECT "+versionCols+", "+contentOf("versions")+" FROM versions WHERE memory_id = ? AND seq > ? AND seq < ? ORDER BY seq DESC LIMIT 1",
			v.MemoryID, lo, seq)
		if err != nil {
			return err
		}
		defer rows.Close()
		if rows.Next() {
			if out, _, err = scanVersion(rows, s.ID, true); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	return out, err
}
