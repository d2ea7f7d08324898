package versions

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"

	"github.com/memfs/memfs/guard"
)

// The one-statement saves. A save whose caller knows the memory's head
// (Save with HeadVersionID), a new memory's, a rename within a directory
// and a deletion are written by one INSERT of the version (a new memory's
// row follows it) whose subqueries check, against the rows themselves,
// everything the save was decided on: the memory still at that head and
// path, or the path free, the store writable with the limits and guard
// policy the decision used, and the history quota against the store's
// counters (so that two daemons never both see room). The version's
// insert moves the memory's head in the same statement (the triggers of
// migrations/sqlite/0029_memories_by_path.sql). On PostgreSQL each is a function
// of migrations/postgres/0031, one round trip. A version's time
// is taken under the store's write lock, so that times follow the
// versions' order. When the statement writes nothing,
// the save reads everything and decides again in the same transaction, and
// reports whatever made it differ.

// storeFacts are what a save decides on of a store that changes rarely:
// read with the store's row by the saves that read it, and checked again
// by the statement of every save that uses them. The store's row number
// is db.seqs's.
type storeFacts struct {
	guard          GuardPolicy
	maxMemoryBytes int
}

func (db *DB) rememberStore(s *storeRow) {
	db.seqs.Store(s.ID, s.seq)
	db.facts.Store(s.ID, storeFacts{guard: s.Guard, maxMemoryBytes: s.MaxMemoryBytes})
}

// factsOf returns what this handle remembers of a store it saved to, and
// its row number; false before its first save.
func (db *DB) factsOf(storeID string) (storeFacts, int64, bool) {
	fv, ok := db.facts.Load(storeID)
	if !ok {
		return storeFacts{}, 0, false
	}
	sv, ok := db.seqs.Load(storeID)
	if !ok {
		return storeFacts{}, 0, false
	}
	return fv.(storeFacts), sv.(int64), true
}

// knownSaveQuery appends a modified version of memory ?3 at head ?4 and
// path ?15, whose content is not already ?10's (SQLite; see fastSave). Its memory_id is NULL, which the
// column refuses and OR IGNORE turns into no row, unless the memory, its
// store and the store's counters are as the save assumes. The shape to
// keep: INSERT … VALUES whose every value is a subquery that finds one row
// by its key (the store's row by seq, the memory's by store and path, the
// store's last version by seq), and the store's conditions in a CASE apart from
// the memory's lookup, so that each is one index search and none is
// planned as a join or a scan.
const knownSaveQuery = `INSERT OR IGNORE INTO versions (seq, store, memory_id, operation, created_at, actor_type,
	actor_id, conflict, origin, path, sha, size, content, hist, live, via_key)
	VALUES (coalesce((SELECT seq FROM versions WHERE seq > ?1 AND seq < ?2 ORDER BY seq DESC LIMIT 1), ?1) + 1, ?16,
		CASE WHEN (SELECT s.archived_at IS NULL AND s.guard = ?17 AND s.max_memory_bytes = ?18
				AND (s.max_history_bytes <= 0 OR s.history_bytes + s.pending_bytes + ?13
					+ coalesce((SELECT hist FROM versions WHERE seq > ?1 AND seq < ?2 ORDER BY seq DESC LIMIT 1), 0) <= s.max_history_bytes)
			FROM stores s WHERE s.seq = ?16)
		THEN (SELECT m.id FROM memories m WHERE m.store = ?16 AND m.path = ?15 AND m.id = ?3 AND m.head = ?4 AND m.sha <> ?10) END,
		'modified', ?5, ?6, ?7, ?8, ?9, ?15, ?10, ?11, ?12,
		coalesce((SELECT hist FROM versions WHERE seq > ?1 AND seq < ?2 ORDER BY seq DESC LIMIT 1), 0) + ?13,
		coalesce((SELECT live FROM versions WHERE seq > ?1 AND seq < ?2 ORDER BY seq DESC LIMIT 1), 0), ?14)
	RETURNING seq, (SELECT m.ino FROM memories m WHERE m.store = ?16 AND m.path = ?15),
		(SELECT m.created_at FROM memories m WHERE m.store = ?16 AND m.path = ?15)`

// knownSave is a save whose caller knows the head, as both backends'
// statements take it.
type knownSave struct {
	req                     SaveReq
	f                       storeFacts
	store                   int64 // the store's row number
	head, at                int64
	sha                     string
	conflict                bool
	actorType, actorID, via any
}

// knownSaveOf returns the save for the one statement, or false when the
// save must read and decide: one whose caller does not know the memory's
// head (no MemoryID, Path or HeadVersionID of the engine's form; an
// IfSHA256 needs HeadSHA256 too), one of a store this handle has not saved to yet, one of
// those that do more (a rename, a pending row, a conflict refused,
// nothing to save, a precondition that fails) or that the guard finds
// something in.
func (db *DB) knownSaveOf(req SaveReq) (knownSave, bool) {
	if req.MemoryID == "" || req.Path == "" || req.FromPending || req.PendingID != 0 ||
		req.HeadSHA256 == "" && req.IfSHA256 != "" {
		return knownSave{}, false
	}
	head, _, ok := versionSeq(req.HeadVersionID)
	if !ok {
		return knownSave{}, false
	}
	f, store, ok := db.factsOf(req.StoreID)
	if !ok {
		return knownSave{}, false
	}
	k := knownSave{req: req, f: f, store: store, head: head, sha: sha256Hex(req.Content)}
	k.conflict = req.BaseVersionID != "" && req.BaseVersionID != req.HeadVersionID
	switch {
	case k.conflict && req.Strict, k.sha == req.HeadSHA256,
		req.IfSHA256 != "" && !strings.EqualFold(req.IfSHA256, req.HeadSHA256):
		return k, false
	}
	if checkContent(req.Content, f.maxMemoryBytes) != nil {
		return k, false
	}
	if f.guard != guard.Off {
		// Without the head's content, what the save adds is taken to be
		// all of it: a save the guard finds nothing in, whole, is clean.
		head := ""
		if req.HeadContent != nil {
			head = *req.HeadContent
		}
		if len(guard.ScanName(req.Path)) > 0 || len(guard.ScanChange(head, req.Content)) > 0 {
			return k, false
		}
	}
	k.actorType, k.actorID, k.via = actorArgs(req.By)
	return k, true
}

func (k *knownSave) cost() int { return versionCost(len(k.req.Content), k.req.Path, k.req.By.ID) }

// memory fills the caller's req.Memory, if asked, with the memory as the
// save left it.
func (k *knownSave) memory(ch *Change, ino, created int64) {
	if k.req.Memory == nil {
		return
	}
	content := k.req.Content
	*k.req.Memory = Memory{ID: ch.MemoryID, StoreID: ch.StoreID, Path: ch.Path, Content: &content, ContentSHA256: ch.SHA256,
		ContentSize: ch.Size, VersionID: ch.VersionID, CreatedAt: fromNanos(created), UpdatedAt: ch.At, Ino: uint64(ino), Seq: ch.Seq}
}

func (k *knownSave) change(o Origin, seq int64) Change {
	return Change{Seq: seq, StoreID: k.req.StoreID, Op: ChangeModified, Path: k.req.Path, MemoryID: k.req.MemoryID,
		VersionID: versionID(seq, k.at), SHA256: k.sha, Size: len(k.req.Content), Origin: o.name, At: fromNanos(k.at), Conflict: k.conflict}
}

// fastSave is Save's one statement on SQLite, in the caller's
// transaction; ok is false when nothing was written and the save must
// read and decide.
func fastSave(r *run, k knownSave, ch *Change) (ok bool, err error) {
	// The version's time is taken under the database's write lock, so
	// that versions' times follow their order.
	k.at = r.db.nowNanos()
	lo, hi := versionRange(k.store)
	var seq, ino, created int64
	err = r.scan(knownSaveQuery, []any{lo, hi, k.req.MemoryID, k.head, k.at, k.actorType, k.actorID, k.conflict, r.origin().num,
		k.sha, len(k.req.Content), r.db.d.blob(k.req.Content), k.cost(), k.via,
		k.req.Path, k.store, string(k.f.guard), k.f.maxMemoryBytes}, &seq, &ino, &created)
	if err == sql.ErrNoRows {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	r.fed(k.req.StoreID)
	*ch = k.change(r.origin(), seq)
	k.memory(ch, ino, created)
	return true, nil
}

// pgFastSave is Save's one statement on PostgreSQL: memfs_save (migration
// 0031), which notifies the feed's listeners, committed alone in one
// round trip or with the store's other saves of the moment (pggroup.go).
// ok is false when nothing was written.
func (db *DB) pgFastSave(ctx context.Context, k knownSave, ch *Change) (ok bool, err error) {
	var seq, ino, created, at sql.NullInt64
	err = db.pgSave(ctx, k.store, "SELECT * FROM memfs_save(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", []any{k.store, k.req.MemoryID, k.head,
		k.req.Path, db.nowNanos(), k.actorType, k.actorID, k.conflict, db.originOf(ctx).num, k.sha, len(k.req.Content),
		db.d.blob(k.req.Content), k.cost(), k.via, string(k.f.guard), k.f.maxMemoryBytes}, &seq, &ino, &created, &at)
	if err != nil || !seq.Valid {
		return false, err
	}
	k.at = at.Int64
	*ch = k.change(db.originOf(ctx), seq.Int64)
	k.memory(ch, ino.Int64, created.Int64)
	return true, nil
}

// deleteQuery appends the deleted version of memory ?10 (by id; by path
// with deleteByPathQuery) and returns its row and path (SQLite; see
// fastDelete). A deletion is never refused for the store's limits.
const deleteQuery = `INSERT OR IGNORE INTO versions (seq, store, memory_id, operation, created_at, actor_type,
	actor_id, conflict, origin, path, hist, live, via_key)
	VALUES (coalesce((SELECT seq FROM versions WHERE seq > ?1 AND seq < ?2 ORDER BY seq DESC LIMIT 1), ?1) + 1, ?3,
		(SELECT m.id FROM memories m WHERE %[1]s AND (?11 = '' OR m.sha = lower(?11))),
		'deleted', ?4, ?5, ?6, 0, ?7,
		(SELECT m.path FROM memories m WHERE %[1]s),
		coalesce((SELECT hist FROM versions WHERE seq > ?1 AND seq < ?2 ORDER BY seq DESC LIMIT 1), 0) + ?8
			+ 2 * coalesce((SELECT length(CAST(m.path AS BLOB)) FROM memories m WHERE %[1]s), 0),
		coalesce((SELECT live FROM versions WHERE seq > ?1 AND seq < ?2 ORDER BY seq DESC LIMIT 1), 0) - 1, ?9)
	RETURNING seq, path`

var (
	deleteByIDQuery   = strings.ReplaceAll(deleteQuery, "%[1]s", memoryByID("?10", "?3"))
	deleteByPathQuery = strings.ReplaceAll(deleteQuery, "%[1]s", "m.store = ?3 AND m.path = ?10")
)

// fastDelete is DeleteMemory's one statement (a second one keeps the
// memory's directory, if it emptied it, when d.KeepParentDir asks). ok is false
// when the deletion must read and decide: no such memory, or its content
// not d.IfSHA256.
func fastDelete(r *run, storeSeq int64, storeID, ref string, d MemoryDelete, by Actor) (ok bool, err error) {
	q := deleteByIDQuery
	if strings.HasPrefix(ref, "/") {
		q = deleteByPathQuery
	}
	lo, hi := versionRange(storeSeq)
	actorType, actorID, via := actorArgs(by)
	var seq int64
	var path string
	err = r.scan(q, []any{lo, hi, storeSeq, r.db.nowNanos(), actorType, actorID, r.origin().num,
		versionCost(0, "", by.ID), via, ref, d.IfSHA256}, &seq, &path)
	if err == sql.ErrNoRows {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	r.fed(storeID)
	if d.KeepParentDir {
		s := &storeRow{Store: Store{ID: storeID}, seq: storeSeq}
		if err := keepDir(r, s, parentOf(path)); err != nil {
			return false, err
		}
	}
	return true, nil
}

// pgFastDelete is DeleteMemory's one statement on PostgreSQL: memfs_delete
// (migration 0031) in a statement of its own, one round trip. ok is false
// when nothing was written and the deletion must read and decide (no such
// memory, a precondition that fails, or a directory to keep).
func (db *DB) pgFastDelete(ctx context.Context, storeID, ref string, d MemoryDelete, by Actor) (ok bool, err error) {
	actorType, actorID, via := actorArgs(by)
	var seq sql.NullInt64
	err = db.writeStatement(ctx, "delete memory", func(r *run) error {
		err := r.scan("SELECT memfs_delete(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", []any{storeID, strings.HasPrefix(ref, "/"), ref,
			d.IfSHA256, db.nowNanos(), actorType, actorID, db.originOf(ctx).num, versionCost(0, "", by.ID), via, d.KeepParentDir}, &seq)
		r.changed = seq.Valid
		return err
	})
	if err != nil || !seq.Valid {
		return false, err
	}
	return true, nil
}

// createQuery appends the created version of a new memory ?11 at path ?10
// (SQLite; see fastCreate). Its memory_id is NULL, so that no row is
// written, unless the store is as the save assumes (writable, that guard
// policy and per-memory limit, room for one more memory, pending files
// counted, and for the version in the history quota) and the path is
// free: no memory at it or at an ancestor (the JSON array ?7), and no
// memory or kept directory below it (?8 and ?9 bound its subtree). The
// shape to keep is knownSaveQuery's.
const createQuery = `INSERT OR IGNORE INTO versions (seq, store, memory_id, operation, created_at, actor_type,
	actor_id, conflict, origin, path, sha, size, content, hist, live, via_key)
	VALUES (coalesce((SELECT seq FROM versions WHERE seq > ?1 AND seq < ?2 ORDER BY seq DESC LIMIT 1), ?1) + 1, ?3,
		CASE WHEN (SELECT s.archived_at IS NULL AND s.guard = ?4 AND s.max_memory_bytes = ?5
				AND (s.max_history_bytes <= 0 OR s.history_bytes + s.pending_bytes + ?6
					+ coalesce((SELECT hist FROM versions WHERE seq > ?1 AND seq < ?2 ORDER BY seq DESC LIMIT 1), 0) <= s.max_history_bytes)
				AND s.memory_count + coalesce((SELECT live FROM versions WHERE seq > ?1 AND seq < ?2 ORDER BY seq DESC LIMIT 1), 0)
					+ (SELECT count(*) FROM pending WHERE store = ?3) < s.max_memories
			FROM stores s WHERE s.seq = ?3)
			AND NOT EXISTS (SELECT 1 FROM memories WHERE store = ?3 AND path IN (SELECT value FROM json_each(?7)))
			AND NOT EXISTS (SELECT 1 FROM memories WHERE store = ?3 AND path > ?8 AND path < ?9)
			AND NOT EXISTS (SELECT 1 FROM dirs WHERE store = ?3 AND path >= ?10 AND path < ?9 AND (path = ?10 OR path > ?8))
		THEN ?11 END,
		'created', ?12, ?13, ?14, 0, ?15, ?10, ?16, ?17, ?18,
		coalesce((SELECT hist FROM versions WHERE seq > ?1 AND seq < ?2 ORDER BY seq DESC LIMIT 1), 0) + ?6,
		coalesce((SELECT live FROM versions WHERE seq > ?1 AND seq < ?2 ORDER BY seq DESC LIMIT 1), 0) + 1, ?19)
	RETURNING seq`

// knownCreate is a save of a new memory at a path the caller takes to be
// free, as both backends' statements take it.
type knownCreate struct {
	req                     SaveReq
	f                       storeFacts
	store                   int64 // the store's row number
	id                      string
	at                      int64
	sha                     string
	actorType, actorID, via any
}

// knownCreateOf returns the save for the create's one statement, or false
// when the save must read and decide: one that names a memory or a head,
// a base, a precondition or a pending row, one of a store this handle has
// not saved to yet, or one the content's limit or the guard refuses or
// warns about.
func (db *DB) knownCreateOf(req SaveReq) (knownCreate, bool) {
	if req.MemoryID != "" || req.HeadVersionID != "" || req.BaseVersionID != "" || req.IfSHA256 != "" ||
		req.FromPending || req.PendingID != 0 {
		return knownCreate{}, false
	}
	f, store, ok := db.factsOf(req.StoreID)
	if !ok {
		return knownCreate{}, false
	}
	if checkContent(req.Content, f.maxMemoryBytes) != nil {
		return knownCreate{}, false
	}
	if f.guard != guard.Off && (len(guard.ScanName(req.Path)) > 0 || len(guard.ScanChange("", req.Content)) > 0) {
		return knownCreate{}, false
	}
	k := knownCreate{req: req, f: f, store: store, sha: sha256Hex(req.Content)}
	k.actorType, k.actorID, k.via = actorArgs(req.By)
	return k, true
}

func (k *knownCreate) cost() int { return versionCost(len(k.req.Content), k.req.Path, k.req.By.ID) }

// taken is the path and its ancestors: none may hold a memory.
func (k *knownCreate) taken() []string { return append(ancestors(k.req.Path), k.req.Path) }

// saved fills the change, and the caller's req.Memory if asked, with the
// memory as created.
func (k *knownCreate) saved(o Origin, seq, ino int64, ch *Change) {
	vid := versionID(seq, k.at)
	*ch = Change{Seq: seq, StoreID: k.req.StoreID, Op: ChangeCreated, Path: k.req.Path, MemoryID: k.id, VersionID: vid,
		SHA256: k.sha, Size: len(k.req.Content), Origin: o.name, At: fromNanos(k.at)}
	if k.req.Memory != nil {
		content := k.req.Content
		*k.req.Memory = Memory{ID: k.id, StoreID: k.req.StoreID, Path: k.req.Path, Content: &content, ContentSHA256: k.sha,
			ContentSize: len(content), VersionID: vid, CreatedAt: ch.At, UpdatedAt: ch.At, Ino: uint64(ino), Seq: seq}
	}
}

// fastCreate is Save's create on SQLite, in the caller's transaction: the
// version's conditional insert, then the memory's. ok is false when
// nothing was written and the save must read and decide.
func fastCreate(r *run, k knownCreate, ch *Change) (ok bool, err error) {
	k.at = r.db.nowNanos() // under the write lock, as fastSave's
	k.id = r.db.ids.make(prefixMemory, fromNanos(k.at))
	lo, hi := versionRange(k.store)
	taken, err := json.Marshal(k.taken())
	if err != nil {
		return false, err
	}
	below, beyond := subtree(k.req.Path)
	var seq int64
	err = r.scan(createQuery, []any{lo, hi, k.store, string(k.f.guard), k.f.maxMemoryBytes, k.cost(), string(taken), below, beyond,
		k.req.Path, k.id, k.at, k.actorType, k.actorID, r.origin().num, k.sha, len(k.req.Content), r.db.d.blob(k.req.Content), k.via}, &seq)
	if err == sql.ErrNoRows {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	r.fed(k.req.StoreID)
	if _, err := r.exec(insertMemoryQuery, seq, k.id, k.store, k.req.Path, versionID(seq, k.at), k.sha, len(k.req.Content), k.at); err != nil {
		return false, err
	}
	k.saved(r.origin(), seq, seq, ch)
	return true, nil
}

// pgFastCreate is Save's create on PostgreSQL: memfs_create (migration
// 0031), committed as pgFastSave's call is. ok is false when
// nothing was written.
func (db *DB) pgFastCreate(ctx context.Context, k knownCreate, ch *Change) (ok bool, err error) {
	var seq, ino, at sql.NullInt64
	now := db.nowNanos()
	k.id = db.ids.make(prefixMemory, fromNanos(now))
	err = db.pgSave(ctx, k.store, "SELECT * FROM memfs_create(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", []any{k.store, k.id, k.req.Path,
		k.taken(), now, k.actorType, k.actorID, db.originOf(ctx).num, k.sha, len(k.req.Content),
		db.d.blob(k.req.Content), k.cost(), k.via, string(k.f.guard), k.f.maxMemoryBytes}, &seq, &ino, &at)
	if err != nil || !seq.Valid {
		return false, err
	}
	k.at = at.Int64
	k.saved(db.originOf(ctx), seq.Int64, ino.Int64, ch)
	return true, nil
}

// renameQuery appends the version that moves the memory at ?5 to ?7 in
// the same directory, referencing its content (SQLite; see fastRename).
// Its memory_id is NULL, so that no row is written, unless the store is
// writable with the guard policy the rename was decided on, the version
// fits the history quota (its cost ?6 plus the content it references),
// and nothing is at or below ?7 (?8 and ?9 bound its subtree; the
// directory holds the memory moved, so no file lies above ?7). The
// version's insert moves the memory (versions_moved). The shape to keep
// is knownSaveQuery's. RETURNING reads the memory at either path: SQLite
// 3.54 computes it before the AFTER triggers move the memory (at ?5),
// which it does not promise.
const renameQuery = `INSERT OR IGNORE INTO versions (seq, store, memory_id, operation, created_at, actor_type,
	actor_id, conflict, origin, prev_path, path, sha, size, content_of, hist, live, via_key)
	VALUES (coalesce((SELECT seq FROM versions WHERE seq > ?1 AND seq < ?2 ORDER BY seq DESC LIMIT 1), ?1) + 1, ?3,
		CASE WHEN (SELECT s.archived_at IS NULL AND s.guard = ?4
				AND (s.max_history_bytes <= 0 OR s.history_bytes + s.pending_bytes + ?6
					+ coalesce((SELECT m.size FROM memories m WHERE m.store = ?3 AND m.path = ?5), 0)
					+ coalesce((SELECT hist FROM versions WHERE seq > ?1 AND seq < ?2 ORDER BY seq DESC LIMIT 1), 0) <= s.max_history_bytes)
			FROM stores s WHERE s.seq = ?3)
			AND NOT EXISTS (SELECT 1 FROM memories WHERE store = ?3 AND path = ?7)
			AND NOT EXISTS (SELECT 1 FROM memories WHERE store = ?3 AND path > ?8 AND path < ?9)
			AND NOT EXISTS (SELECT 1 FROM dirs WHERE store = ?3 AND path >= ?7 AND path < ?9 AND (path = ?7 OR path > ?8))
		THEN (SELECT m.id FROM memories m WHERE m.store = ?3 AND m.path = ?5) END,
		'modified', ?10, ?11, ?12, 0, ?13, ?5, ?7,
		(SELECT m.sha FROM memories m WHERE m.store = ?3 AND m.path = ?5),
		(SELECT m.size FROM memories m WHERE m.store = ?3 AND m.path = ?5),
		(SELECT coalesce(c.content_of, c.seq) FROM versions c WHERE c.seq = (SELECT m.head FROM memories m WHERE m.store = ?3 AND m.path = ?5)),
		coalesce((SELECT hist FROM versions WHERE seq > ?1 AND seq < ?2 ORDER BY seq DESC LIMIT 1), 0) + ?6
			+ coalesce((SELECT m.size FROM memories m WHERE m.store = ?3 AND m.path = ?5), 0),
		coalesce((SELECT live FROM versions WHERE seq > ?1 AND seq < ?2 ORDER BY seq DESC LIMIT 1), 0), ?14)
	RETURNING seq, memory_id, sha, size,
		coalesce((SELECT m.ino FROM memories m WHERE m.store = ?3 AND m.path = ?5 AND m.id = memory_id),
			(SELECT m.ino FROM memories m WHERE m.store = ?3 AND m.path = ?7 AND m.id = memory_id)),
		coalesce((SELECT m.created_at FROM memories m WHERE m.store = ?3 AND m.path = ?5 AND m.id = memory_id),
			(SELECT m.created_at FROM memories m WHERE m.store = ?3 AND m.path = ?7 AND m.id = memory_id))`

// knownRename is a rename of a file within its directory to a name the
// caller takes to be free, as both backends' statements take it.
type knownRename struct {
	storeID, from, to       string
	f                       storeFacts
	store                   int64 // the store's row number
	at                      int64
	byID                    string
	actorType, actorID, via any
}

// knownRenameOf returns the rename for the one statement, or false when it
// must read and decide: a move to another directory, one of a store this
// handle has not written to yet, or a name the guard finds something in.
func (db *DB) knownRenameOf(storeID, from, to string, by Actor) (knownRename, bool) {
	if from == to || parentOf(from) != parentOf(to) {
		return knownRename{}, false
	}
	f, store, ok := db.factsOf(storeID)
	if !ok {
		return knownRename{}, false
	}
	if f.guard != guard.Off && len(guard.ScanName(to)) > 0 {
		return knownRename{}, false
	}
	k := knownRename{storeID: storeID, from: from, to: to, f: f, store: store, byID: by.ID}
	k.actorType, k.actorID, k.via = actorArgs(by)
	return k, true
}

// moved is the memory as the rename left it (without its content).
func (k *knownRename) moved(seq int64, id, sha string, size, ino, created int64) *Memory {
	return &Memory{ID: id, StoreID: k.storeID, Path: k.to, ContentSHA256: sha, ContentSize: int(size), VersionID: versionID(seq, k.at),
		CreatedAt: fromNanos(created), UpdatedAt: fromNanos(k.at), Ino: uint64(ino), Seq: seq}
}

// fastRename is Rename's one statement on SQLite, in the caller's
// transaction; nil when nothing was written and the rename must read and
// decide.
func fastRename(r *run, k knownRename) (*Memory, error) {
	k.at = r.db.nowNanos() // under the write lock, as fastSave's
	lo, hi := versionRange(k.store)
	below, beyond := subtree(k.to)
	var seq, size, ino, created int64
	var id, sha string
	err := r.scan(renameQuery, []any{lo, hi, k.store, string(k.f.guard), k.from, versionCost(0, k.to, k.byID), k.to, below, beyond,
		k.at, k.actorType, k.actorID, r.origin().num, k.via}, &seq, &id, &sha, &size, &ino, &created)
	if err == sql.ErrNoRows {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r.fed(k.storeID)
	return k.moved(seq, id, sha, size, ino, created), nil
}

// pgFastRename is Rename's one statement on PostgreSQL: memfs_rename
// (migration 0031), committed as pgFastSave's call is; nil when nothing
// was written.
func (db *DB) pgFastRename(ctx context.Context, k knownRename) (*Memory, error) {
	var seq, size, ino, created, at sql.NullInt64
	var id, sha sql.NullString
	below, beyond := subtree(k.to)
	err := db.pgSave(ctx, k.store, "SELECT * FROM memfs_rename(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", []any{k.store, k.from, k.to, below, beyond,
		db.nowNanos(), k.actorType, k.actorID, db.originOf(ctx).num, versionCost(0, k.to, k.byID), k.via, string(k.f.guard)},
		&seq, &id, &sha, &size, &ino, &created, &at)
	if err != nil || !seq.Valid {
		return nil, err
	}
	k.at = at.Int64
	return k.moved(seq.Int64, id.String, sha.String, size.Int64, ino.Int64, created.Int64), nil
}
