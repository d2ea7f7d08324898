package versions

import (
	"context"
	"database/sql"
	"strings"
)

// MemoryUpdate changes content, path or both.
type MemoryUpdate struct {
	Content  *string
	Path     *string
	IfSHA256 string // precondition on the current content
	// BaseVersionID is the version a writer started from (a mount passes the
	// head it read); if another version became head since, the new version
	// is marked Conflict, or with Strict the update fails CodeStale.
	BaseVersionID string
	Strict        bool
	// KeepParentDir keeps the old parent directory (as an explicit one) when
	// a rename empties it, as a filesystem does.
	KeepParentDir bool
	// pathFree: the caller has checked that Path is free (renameFile).
	pathFree bool
	// from, instead of Content: the row of a version whose content (of
	// fromSize bytes) becomes the memory's (a file renamed onto it).
	from     int64
	fromSize int
}

type MemoryDelete struct {
	IfSHA256      string
	KeepParentDir bool
}

// CreateMemory writes a new memory and its "created" version (a Save
// that fails CodePathConflict when a memory is at path). Returns the
// memory in the full view.
func (db *DB) CreateMemory(ctx context.Context, storeID, path, content string, by Actor) (*Memory, error) {
	var out Memory
	if _, err := db.Save(ctx, SaveReq{StoreID: storeID, Path: path, Content: content, By: by, Exclusive: true, Memory: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetMemory returns a live memory (full view) by mem_ id or by path.
func (db *DB) GetMemory(ctx context.Context, storeID, ref string) (*Memory, error) {
	var out *Memory
	err := db.one(ctx, "get memory", func(r *run) error {
		seq, err := r.db.storeSeq(r, storeID)
		if err != nil {
			return err
		}
		// The content by a correlated subquery: the equivalent JOIN
		// measured over twice as slow (BenchmarkGetMemory).
		m, err := scanMemory(r, storeID, true, `SELECT `+memCols+`, (SELECT `+contentOf("v")+` FROM versions v WHERE v.seq = m.head)
			FROM memories m WHERE `+memoryRef(ref), seq, ref)
		if err == sql.ErrNoRows {
			return memoryNotFound(storeID, ref)
		}
		if err == nil {
			out = m
		}
		return err
	})
	return out, err
}

// UpdateMemory returns the memory in the full view. memoryID may also be the
// memory's path. An update of the content is a Save; one of the path
// alone, a rename.
func (db *DB) UpdateMemory(ctx context.Context, storeID, memoryID string, u MemoryUpdate, by Actor) (*Memory, error) {
	if u.Path != nil {
		if err := ValidatePath(*u.Path); err != nil {
			return nil, err
		}
	}
	if u.Content != nil {
		var out Memory
		req := SaveReq{StoreID: storeID, MemoryID: memoryID, Content: *u.Content, By: by, IfSHA256: u.IfSHA256,
			BaseVersionID: u.BaseVersionID, Strict: u.Strict, KeepParentDir: u.KeepParentDir, Memory: &out}
		if u.Path != nil {
			req.Path = *u.Path
		}
		if _, err := db.Save(ctx, req); err != nil {
			return nil, err
		}
		return &out, nil
	}
	var out *Memory
	err := db.write(ctx, "update memory", func(r *run) error {
		s, m, err := storeAndMemory(r, storeID, memoryID, true)
		if err != nil {
			return err
		}
		if u.IfSHA256 != "" && !strings.EqualFold(u.IfSHA256, m.ContentSHA256) {
			if u.Path != nil && *u.Path != m.Path {
				return errorf(CodePreconditionFailed, "memory %s at %s has content_sha256 %s, not %s: nothing was changed; re-read the memory and retry with its current content_sha256",
					m.ID, m.Path, m.ContentSHA256, u.IfSHA256)
			}
			// A retried request whose change already happened: succeed, write nothing.
			u.Path = nil
		}
		if u.Path != nil && *u.Path != m.Path {
			if err := guardName(r, s, *u.Path); err != nil {
				return err
			}
		}
		if out, err = applyUpdate(r, s, m, u, "", by); err != nil || out.Content != nil {
			return err
		}
		c, err := headContent(r, m.Seq) // renamed: the version references it
		out.Content = &c
		return err
	})
	return out, err
}

// DeleteMemory removes a live memory, recording a "deleted" version (works
// on archived stores too). memoryID may also be the memory's path.
func (db *DB) DeleteMemory(ctx context.Context, storeID, memoryID string, d MemoryDelete, by Actor) error {
	if db.d.name == "postgres" {
		if done, err := db.pgFastDelete(ctx, storeID, memoryID, d, by); done || err != nil {
			return err
		}
	}
	return db.write(ctx, "delete memory", func(r *run) error {
		if db.d.name == "sqlite" {
			storeSeq, err := db.storeSeq(r, storeID)
			if err != nil {
				return err
			}
			done, err := fastDelete(r, storeSeq, storeID, memoryID, d, by)
			if done || err != nil {
				return err
			}
		}
		s, m, err := storeAndMemory(r, storeID, memoryID, false)
		if err != nil {
			return err
		}
		if d.IfSHA256 != "" && !strings.EqualFold(d.IfSHA256, m.ContentSHA256) {
			return errorf(CodePreconditionFailed, "memory %s at %s has content_sha256 %s, not %s: nothing was deleted; re-read the memory and retry with its current content_sha256",
				m.ID, m.Path, m.ContentSHA256, d.IfSHA256)
		}
		_, err = deleteMemory(r, s, m, d.KeepParentDir, by)
		return err
	})
}

// ---- helpers, each running inside the caller's transaction ----

const memCols = `m.ino, m.id, m.path, m.head, m.version_id, m.sha, m.size, m.created_at, m.updated_at`

// memoryByID is the condition that row m of memories is memory id (an
// SQL expression, read twice) of the store whose row number is store
// (read three times): the row at the path of the memory's latest
// version in that store. A live memory's latest version is its head,
// which is never redacted, so its path is the memory's. On SQLite the
// memories table is keyed by store and path only (migration 0029), and
// this is two searches of an index, where a third index, by id, would cost
// every deletion a page.
func memoryByID(id, store string) string {
	return "m.store = " + store + " AND m.path = (SELECT mv.path FROM versions mv WHERE mv.memory_id = " + id +
		" AND mv.seq > CAST(" + store + " AS BIGINT) << 40 AND mv.seq < (CAST(" + store + " AS BIGINT) + 1) << 40 ORDER BY mv.seq DESC LIMIT 1) AND m.id = " + id
}

// memoryRef is the condition that row m of memories is the memory ref
// names (an id, or a path beginning with /) in the store ?1, and ref's
// place among the arguments, ?2.
func memoryRef(ref string) string {
	if strings.HasPrefix(ref, "/") {
		return "m.store = ?1 AND m.path = ?2"
	}
	return memoryByID("?2", "?1")
}

func scanMemoryRow(sc interface{ Scan(...any) error }, storeID string, withContent bool) (*Memory, error) {
	m := Memory{StoreID: storeID}
	var created, updated int64
	dest := []any{&m.Ino, &m.ID, &m.Path, &m.Seq, &m.VersionID, &m.ContentSHA256, &m.ContentSize, &created, &updated}
	var content sql.NullString
	if withContent {
		dest = append(dest, &content)
	}
	if err := sc.Scan(dest...); err != nil {
		return nil, err
	}
	m.CreatedAt, m.UpdatedAt = fromNanos(created), fromNanos(updated)
	if withContent {
		m.Content = &content.String
	}
	return &m, nil
}

func scanMemory(r *run, storeID string, withContent bool, q string, args ...any) (*Memory, error) {
	s, err := r.stmt(q)
	if err != nil {
		return nil, err
	}
	return scanMemoryRow(s.QueryRowContext(r.ctx, args...), storeID, withContent)
}

func memoryNotFound(storeID, ref string) error {
	return objectError(CodeNotFound, ObjectMemory, storeID, "no memory %q in store %s: check its id or path", ref, storeID)
}

// lookupMemory finds a live memory (basic view) by id or path.
func lookupMemory(r *run, s *storeRow, ref string) (*Memory, error) {
	m, err := scanMemory(r, s.ID, false, "SELECT "+memCols+" FROM memories m WHERE "+memoryRef(ref), s.seq, ref)
	if err == sql.ErrNoRows {
		return nil, memoryNotFound(s.ID, ref)
	}
	return m, err
}

// storeAndMemory reads what a save needs of a store and one of its live
// memories by id or path, in two statements: SQLite runs them several
// times faster than the equivalent LEFT JOIN, and on PostgreSQL the
// memory must be read after the store's lock is granted (a statement that
// waited for the lock reads from before the commit it waited for, and a
// save updates no store row that would make it read again).
func storeAndMemory(r *run, storeID, ref string, writable bool) (*storeRow, *Memory, error) {
	s, err := loadStoreLite(r, storeID, writable)
	if err != nil {
		return nil, nil, err
	}
	m, err := lookupMemory(r, s, ref)
	return s, m, err
}

// memoryAt returns the live memory at path, or nil.
func memoryAt(r *run, storeSeq int64, storeID, path string) (*Memory, error) {
	m, err := scanMemory(r, storeID, false, "SELECT "+memCols+" FROM memories m WHERE m.store = ? AND m.path = ?", storeSeq, path)
	if err == sql.ErrNoRows {
		return nil, nil
	}
	return m, err
}

func headContent(r *run, head int64) (string, error) {
	var c sql.NullString
	err := r.scan("SELECT "+contentOf("v")+" FROM versions v WHERE v.seq = ?", []any{head}, &c)
	return c.String, err
}

// roomQuery reads a store's pending files (counted in their index) and
// the live memories its latest version counts (see storeRow).
const roomQuery = `SELECT (SELECT count(*) FROM pending WHERE store = ?1),
	coalesce((SELECT live FROM versions WHERE seq > ?2 AND seq < ?3 ORDER BY seq DESC LIMIT 1), 0)`

// checkRoom refuses one more memory, or one more pending file, in a store
// whose live memories and pending files fill its limit. A pending file
// holds its slot from its first save, so that publishing it never fails
// for the limit: mounts and the API adding memories to one store at once
// cannot promise more than it holds. s was read under the store's write
// lock (loadStoreLite), which also serializes pending saves.
func checkRoom(r *run, s *storeRow) error {
	var pending, live int
	lo, hi := s.versionRange()
	if err := r.scan(roomQuery, []any{s.seq, lo, hi}, &pending, &live); err != nil {
		return err
	}
	s.MemoryCount = s.liveBase + live
	if s.MemoryCount+pending < s.MaxMemories {
		return nil
	}
	if pending > 0 {
		return errorf(CodeStoreFull, "memory store %s holds its maximum of %d memories (%d of them files saved through a mount and about to be published): delete some, or raise the store's limit", s.ID, s.MaxMemories, pending)
	}
	return errorf(CodeStoreFull, "memory store %s holds its maximum of %d memories: delete some, or raise the store's limit", s.ID, s.MaxMemories)
}

// insertMemory writes a new memory at a free, valid path with its "created"
// version, enforcing the store's memory limit.
func insertMemory(r *run, s *storeRow, path, content string, by Actor) (*Memory, error) {
	if err := checkRoom(r, s); err != nil {
		return nil, err
	}
	return insertMemoryRoom(r, s, path, content, by)
}

// insertMemoryRoom is insertMemory for a memory whose slot of the store's
// limit is already held (a pending file being published).
func insertMemoryRoom(r *run, s *storeRow, path, content string, by Actor) (*Memory, error) {
	return insertMemoryAs(r, s, path, content, by, false)
}

// insertMemoryQuery inserts a new memory's row, its created version ?1
// inserted already. The version's seq is the memory's inode number too
// (see migrations/sqlite/0029_memories_by_path.sql).
const insertMemoryQuery = `INSERT INTO memories (ino, id, store, path, head, version_id, sha, size, created_at, updated_at)
	VALUES (?1, ?2, ?3, ?4, ?1, ?5, ?6, ?7, ?8, ?8)`

// insertMemoryAs is insertMemoryRoom with the version marked conflict (a
// save whose base is gone).
func insertMemoryAs(r *run, s *storeRow, path, content string, by Actor, conflict bool) (*Memory, error) {
	now := r.db.nowNanos()
	m := Memory{
		ID: r.db.ids.make(prefixMemory, fromNanos(now)), StoreID: s.ID, Path: path,
		Content: &content, ContentSHA256: sha256Hex(content), ContentSize: len(content),
		CreatedAt: fromNanos(now), UpdatedAt: fromNanos(now),
	}
	head, vid, err := insertVersion(r, s, newVersion{memoryID: m.ID, op: OpCreated, path: path, content: &content, sha: m.ContentSHA256, at: now, by: by, live: 1, conflict: conflict})
	if err != nil {
		return nil, err
	}
	m.VersionID, m.Seq = vid, head
	if _, err := r.exec(insertMemoryQuery, head, m.ID, s.seq, path, vid, m.ContentSHA256, m.ContentSize, now); err != nil {
		return nil, err
	}
	m.Ino = uint64(head)
	return &m, nil
}

// applyUpdate changes a live memory's content and/or path, appending one
// "modified" version, or nothing when nothing changes. newSHA is the
// hash of the new content (*u.Content, or u.from's) when one is given. A
// version that keeps the memory's content (a rename) or takes another
// version's (u.from) references it rather than copying it, and the memory
// returned then carries no content.
func applyUpdate(r *run, s *storeRow, m *Memory, u MemoryUpdate, newSHA string, by Actor) (*Memory, error) {
	contentChanged := (u.Content != nil || u.from != 0) && newSHA != m.ContentSHA256
	pathChanged := u.Path != nil && *u.Path != m.Path
	if !contentChanged && !pathChanged {
		c, err := headContent(r, m.Seq)
		m.Content = &c
		return m, err
	}
	conflict := u.BaseVersionID != "" && u.BaseVersionID != m.VersionID
	if conflict && u.Strict {
		return nil, errorf(CodeStale, "memory %s at %s changed since it was read (its head is now %s, not %s): nothing was saved; re-read it and save again",
			m.ID, m.Path, m.VersionID, u.BaseVersionID)
	}
	now := r.db.nowNanos()
	nv := newVersion{memoryID: m.ID, op: OpModified, at: now, by: by, conflict: conflict}
	switch {
	case contentChanged && u.Content != nil:
		if err := checkContent(*u.Content, s.MaxMemoryBytes); err != nil {
			return nil, err
		}
		nv.content, nv.sha, nv.size = u.Content, newSHA, len(*u.Content)
	case contentChanged:
		nv.contentOf, nv.sha, nv.size = u.from, newSHA, u.fromSize
	default:
		nv.contentOf, nv.sha, nv.size = m.Seq, m.ContentSHA256, m.ContentSize
	}
	oldPath := m.Path
	if pathChanged {
		if !u.pathFree {
			if err := checkFree(r, s, *u.Path, m.ID); err != nil {
				return nil, err
			}
		}
		m.Path = *u.Path
		nv.prevPath = oldPath
	}
	nv.path = m.Path
	head, vid, err := insertVersion(r, s, nv)
	if err != nil {
		return nil, err
	}
	// The version's insert moved the memory's head (and path) in the same
	// statement (the versions_head and versions_moved triggers).
	m.Seq, m.VersionID, m.ContentSHA256, m.ContentSize, m.UpdatedAt, m.Content = head, vid, nv.sha, nv.size, fromNanos(now), nv.content
	if pathChanged && u.KeepParentDir {
		if err := keepDir(r, s, parentOf(oldPath)); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// deleteMemory removes a live memory and appends its "deleted" version,
// whose feed position it returns.
func deleteMemory(r *run, s *storeRow, m *Memory, keepParent bool, by Actor) (int64, error) {
	seq, _, err := insertVersion(r, s, newVersion{memoryID: m.ID, op: OpDeleted, path: m.Path, at: r.db.nowNanos(), by: by, live: -1})
	if err != nil {
		return 0, err
	}
	// The version's insert removed the memory's row (the versions_gone
	// trigger).
	if keepParent {
		return seq, keepDir(r, s, parentOf(m.Path))
	}
	return seq, nil
}

// newVersion is a version about to be appended; content nil for a
// deletion, or when contentOf names the version whose content it has.
type newVersion struct {
	memoryID string
	op       Operation
	path     string
	content  *string
	// contentOf: the row of a version whose content this one has (a
	// rename); the new row references the version that holds it.
	contentOf int64
	sha       string
	size      int
	at        int64
	by        Actor
	conflict  bool
	prevPath  string // the path a rename moved the memory from
	// live is what the version changes in the store's count of live
	// memories: +1 for a new memory, -1 for a deletion.
	live int
}

// insertVersionQuery appends a version as the next of its store: the
// store's versions are the rowid range (seq<<40, (seq+1)<<40) in commit
// order (its writers are serialized), which makes the table its own change
// feed. ?1 and ?2 bound the range. Its id is the row number it gets
// (versionID), so none is stored. A version that has the content of
// version ?15 references the one holding it (content_of). The version
// carries the store's running counts (see storeRow): the latest version's
// plus ?17 bytes and ?18 memories, so that a save writes no row of the
// store.
const insertVersionQuery = `INSERT INTO versions (seq, store, memory_id, operation, created_at, actor_type,
	actor_id, conflict, origin, prev_path, path, sha, size, content_of, content, hist, live, via_key)
	VALUES (coalesce((SELECT seq FROM versions WHERE seq > ?1 AND seq < ?2 ORDER BY seq DESC LIMIT 1), ?1) + 1,
	?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,
	(SELECT coalesce(c.content_of, c.seq) FROM versions c WHERE c.seq = ?15), ?16,
	coalesce((SELECT hist FROM versions WHERE seq > ?1 AND seq < ?2 ORDER BY seq DESC LIMIT 1), 0) + ?17,
	coalesce((SELECT live FROM versions WHERE seq > ?1 AND seq < ?2 ORDER BY seq DESC LIMIT 1), 0) + ?18, ?19)
	RETURNING seq, hist, live`

// insertVersion appends v and returns its row and id.
func insertVersion(r *run, s *storeRow, v newVersion) (seq int64, id string, err error) {
	var sha, size, content, contentOf, prev any
	actorType, actorID, via := actorArgs(v.by)
	switch {
	case v.content != nil:
		sha, content, size = v.sha, r.db.d.blob(*v.content), len(*v.content)
		v.size = len(*v.content)
	case v.contentOf != 0:
		sha, size, contentOf = v.sha, v.size, v.contentOf
	default: // a deletion
		v.size = 0
	}
	if v.prevPath != "" {
		prev = v.prevPath
	}
	lo, hi := s.versionRange()
	var hist, live int
	cost := versionCost(v.size, v.path, v.by.ID)
	err = r.scan(insertVersionQuery, []any{lo, hi,
		s.seq, v.memoryID, string(v.op), v.at, actorType, actorID, v.conflict, r.origin().num, prev, v.path, sha, size, contentOf, content,
		cost, v.live, via}, &seq, &hist, &live)
	if err != nil {
		return 0, "", err
	}
	r.fed(s.ID)
	s.HistoryBytes, s.MemoryCount = s.histBase+hist, s.liveBase+live
	if sha != nil {
		// Checked once the version is in, which is when the count is
		// known; the error rolls the transaction back. A version that
		// references its content counts it as one that copies it would,
		// so that pruning the one holding it (which copies it over)
		// changes no count.
		if err := checkQuota(s, cost); err != nil {
			return 0, "", err
		}
	}
	return seq, versionID(seq, v.at), nil
}

// VersionRecordBytes is what a version's record costs besides its
// content, path and actor: ids, times, hash and the indexes over them.
const VersionRecordBytes = 320

// actorArgs are a version's actor_type, actor_id and via_key columns for
// by: NULL where by has none.
func actorArgs(by Actor) (typ, id, via any) {
	if by.Type != "" {
		typ, id = by.Type, by.ID
	}
	if by.Via != "" {
		via = by.Via
	}
	return typ, id, via
}

// versionCost is what a version counts toward its store's history quota:
// its content, its path twice (the row and the path index), its actor and
// VersionRecordBytes. A rename costs as a save does, though its content is the
// previous version's; a deletion costs its record. Redaction frees the
// content and the path; pruning frees all of it. A one-statement deletion
// reads its path in SQL and adds the "2 × path" term there: deleteQuery
// (fastsave.go) and memfs_delete (migrations/postgres/0031_applied_versions.sql)
// copy it.
func versionCost(size int, path, actorID string) int {
	return size + 2*len(path) + len(actorID) + VersionRecordBytes
}

// VersionCost is what v, as read back, counts toward its store's history
// quota (versionCost): a redacted version, its record only.
func VersionCost(v *Version) int {
	n := VersionRecordBytes
	if v.ContentSize != nil {
		n += *v.ContentSize
	}
	if v.Path != nil {
		n += 2 * len(*v.Path)
	}
	if v.CreatedBy != nil {
		n += len(v.CreatedBy.ID)
	}
	return n
}

// checkQuota refuses a version costing n bytes, just counted in
// s.HistoryBytes, that took the store's retained history past its quota.
// Deletions carry no content and are never refused, so that a store over
// its quota can still be cleaned up.
func checkQuota(s *storeRow, n int) error {
	// Files saved through mounts and not published yet count as the
	// versions they become (pending.go).
	if s.MaxHistoryBytes <= 0 || s.HistoryBytes+s.pendingBytes <= s.MaxHistoryBytes {
		return nil
	}
	if s.pendingBytes > 0 {
		return errorf(CodeOverQuota, "memory store %s (%q) retains %d bytes of history and %d of files saved through mounts and not published yet, and this change costs %d more (content, path and the version's record), past its quota of %d bytes: nothing was changed; run `memfs version prune` to remove old versions (or raise the store's history quota)",
			s.ID, s.Name, s.HistoryBytes-n, s.pendingBytes, n, s.MaxHistoryBytes)
	}
	return errorf(CodeOverQuota, "memory store %s (%q) retains %d bytes of history and this change costs %d more (content, path and the version's record), past its quota of %d bytes: nothing was changed; run `memfs version prune` to remove old versions (or raise the store's history quota)",
		s.ID, s.Name, s.HistoryBytes-n, n, s.MaxHistoryBytes)
}

// latestCounts returns the running counts of the store's latest version
// (see storeRow).
func latestCounts(r *run, s *storeRow) (hist, live int, err error) {
	lo, hi := s.versionRange()
	err = r.scan(`SELECT coalesce((SELECT hist FROM versions WHERE seq > ?1 AND seq < ?2 ORDER BY seq DESC LIMIT 1), 0),
		coalesce((SELECT live FROM versions WHERE seq > ?1 AND seq < ?2 ORDER BY seq DESC LIMIT 1), 0)`, []any{lo, hi}, &hist, &live)
	return hist, live, err
}

// freeHistoryBytes takes n bytes that redaction removed off the store's
// count of retained history, in the caller's transaction.
func freeHistoryBytes(r *run, s *storeRow, n int) error {
	if _, err := r.exec("UPDATE stores SET history_bytes = history_bytes - ? WHERE seq = ?", n, s.seq); err != nil {
		return err
	}
	s.histBase -= n
	s.HistoryBytes -= n
	return nil
}

// rebaseCounts keeps the store's counts exact after versions were deleted
// (n bytes of content among them): the store's latest version, whose
// running counts the store's are taken from, may be another now. before
// holds the latest version's counts read before the deletion.
func rebaseCounts(r *run, s *storeRow, n int, before [2]int) error {
	hist, live, err := latestCounts(r, s)
	if err != nil {
		return err
	}
	s.histBase += before[0] - hist - n
	s.liveBase += before[1] - live
	s.HistoryBytes -= n
	_, err = r.exec("UPDATE stores SET history_bytes = ?, memory_count = ? WHERE seq = ?", s.histBase, s.liveBase, s.seq)
	return err
}
