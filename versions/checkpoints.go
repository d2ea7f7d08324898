package versions

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
)

// A checkpoint names a position of a store's history: the store as of a
// checkpoint is every version up to it (see asof.go). Nothing is copied:
// a checkpoint is one row. Named checkpoints (taken by someone) and safety
// checkpoints (taken by a restore or an undo before it writes) keep what
// they need through a prune; session checkpoints (one when a session
// begins) last as long as the retention window and are pruned with it.
//
// A name may not read as anything else a WHEN can be (a session id, a
// date or a time): it begins with a letter, is not sesn_…, and holds
// letters, digits, '.', '_' and '-'. A session checkpoint is named by its
// session's id, which reads the same either way.

// CheckpointKind is why a checkpoint was taken.
type CheckpointKind string

const (
	CheckpointNamed   CheckpointKind = "named"
	CheckpointSession CheckpointKind = "session"
	CheckpointSafety  CheckpointKind = "safety"
)

// MaxCheckpointName is the longest name a checkpoint may have, in bytes.
const MaxCheckpointName = 100

// Checkpoint is one named position of a store's history.
type Checkpoint struct {
	StoreID   string
	Name      string
	Kind      CheckpointKind
	CreatedAt time.Time
	CreatedBy *Actor
	Note      string
	// Pos is the store's feed position: the row of its latest version
	// then. Versions after it are not in the store as of the checkpoint.
	Pos int64
	// VersionID names the version at Pos ("" when the store had none).
	VersionID string
}

func (c Checkpoint) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type      string         `json:"type"`
		StoreID   string         `json:"memory_store_id"`
		Name      string         `json:"name"`
		Kind      CheckpointKind `json:"kind"`
		CreatedAt time.Time      `json:"created_at"`
		CreatedBy *Actor         `json:"created_by"`
		Note      string         `json:"note"`
		VersionID *string        `json:"memory_version_id"`
	}{"memory_checkpoint", c.StoreID, c.Name, c.Kind, c.CreatedAt, c.CreatedBy, c.Note, strPtrOrNil(c.VersionID)})
}

func strPtrOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// CheckpointOptions take a checkpoint. An empty Name gets one made from the
// time ("checkpoint-20261201T100000Z").
type CheckpointOptions struct {
	Name string
	Note string
	Kind CheckpointKind // "": named
}

// ValidateCheckpointName checks a checkpoint name given by a person.
func ValidateCheckpointName(name string) error {
	switch {
	case name == "":
		return errorf(CodeInvalid, "a checkpoint needs a name: give letters, digits, '.', '_' or '-', beginning with a letter")
	case len(name) > MaxCheckpointName:
		return errorf(CodeInvalid, "checkpoint name %q is %d bytes, over the limit of %d: give a shorter name", name, len(name), MaxCheckpointName)
	case strings.HasPrefix(name, prefixSession):
		return errorf(CodeInvalid, "checkpoint name %q reads as a session id: give a name that does not begin with %s", name, prefixSession)
	case !isLetter(name[0]):
		return errorf(CodeInvalid, "checkpoint name %q does not begin with a letter (a name beginning with a digit could read as a date or a time): give a name such as before-cleanup", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isLetter(c) && !(c >= '0' && c <= '9') && c != '.' && c != '_' && c != '-' {
			r, _ := utf8.DecodeRuneInString(name[i:])
			return errorf(CodeInvalid, "checkpoint name %q holds %q: use letters, digits, '.', '_' and '-' only", name, r)
		}
	}
	return nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

const checkpointCols = "c.name, c.kind, c.created_at, c.actor_type, c.actor_id, c.note, c.pos"

func scanCheckpoint(sc interface{ Scan(...any) error }, storeID string) (*Checkpoint, error) {
	c := Checkpoint{StoreID: storeID}
	var created int64
	var at, aid sql.NullString
	var kind string
	if err := sc.Scan(&c.Name, &kind, &created, &at, &aid, &c.Note, &c.Pos); err != nil {
		return nil, err
	}
	c.Kind, c.CreatedAt = CheckpointKind(kind), fromNanos(created)
	if at.Valid {
		c.CreatedBy = &Actor{Type: at.String, ID: aid.String}
	}
	return &c, nil
}

// positionID fills c.VersionID from the version at c.Pos, if any is left.
func positionID(r *run, c *Checkpoint) error {
	var id sql.NullString
	var created int64
	err := r.scan("SELECT id, created_at FROM versions WHERE seq = ?", []any{c.Pos}, &id, &created)
	switch {
	case err == sql.ErrNoRows:
		return nil
	case err != nil:
		return err
	case id.Valid:
		c.VersionID = id.String
	default:
		c.VersionID = versionID(c.Pos, created)
	}
	return nil
}

// headPos is the store's feed position now: its latest version's row, or
// the start of its range when it has none.
func headPos(r *run, s *storeRow) (int64, error) {
	lo, hi := s.versionRange()
	var pos int64
	err := r.scan("SELECT coalesce((SELECT seq FROM versions WHERE seq > ? AND seq < ? ORDER BY seq DESC LIMIT 1), ?)", []any{lo, hi, lo}, &pos)
	return pos, err
}

func checkpointNotFound(storeID, name string) error {
	return objectError(CodeNotFound, ObjectCheckpoint, storeID, "no checkpoint %q in store %s: list them with memfs checkpoint list", name, storeID)
}

// insertCheckpoint records a checkpoint of s at its position now.
func insertCheckpoint(r *run, s *storeRow, o CheckpointOptions, by Actor) (*Checkpoint, error) {
	pos, err := headPos(r, s)
	if err != nil {
		return nil, err
	}
	now := r.db.nowNanos()
	c := &Checkpoint{StoreID: s.ID, Name: o.Name, Kind: o.Kind, CreatedAt: fromNanos(now), Note: o.Note, Pos: pos}
	if by.Type != "" {
		c.CreatedBy = &by
	}
	var one int
	err = r.scan("SELECT 1 FROM checkpoints WHERE store = ? AND name = ?", []any{s.seq, c.Name}, &one)
	if err == nil {
		return nil, objectError(CodeConflict, ObjectCheckpoint, s.ID, "store %s already has a checkpoint named %q: choose another name, or delete that one first", s.ID, c.Name)
	}
	if err != sql.ErrNoRows {
		return nil, err
	}
	at, aid := actorCols(c.CreatedBy)
	if _, err := r.exec("INSERT INTO checkpoints (store, name, pos, created_at, actor_type, actor_id, note, kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		s.seq, c.Name, pos, now, at, aid, c.Note, string(c.Kind)); err != nil {
		return nil, err
	}
	return c, positionID(r, c)
}

// defaultCheckpointName names a checkpoint taken without a name.
func defaultCheckpointName(prefix string, t time.Time) string {
	return prefix + "-" + t.UTC().Format("20060102T150405.000000000Z")
}

// CreateCheckpoint records a checkpoint of the store at its latest version.
// Errors: CodeNotFound (no store), CodeInvalid (a bad name), CodeConflict
// (the name is taken).
func (db *DB) CreateCheckpoint(ctx context.Context, storeID string, o CheckpointOptions, by Actor) (*Checkpoint, error) {
	if o.Kind == "" {
		o.Kind = CheckpointNamed
	}
	switch {
	case o.Kind == CheckpointSession:
		if !strings.HasPrefix(o.Name, prefixSession) {
			return nil, errorf(CodeInvalid, "a session checkpoint is named by its session's id, not %q", o.Name)
		}
	case o.Name == "":
		o.Name = defaultCheckpointName("checkpoint", db.now())
	default:
		if err := ValidateCheckpointName(o.Name); err != nil {
			return nil, err
		}
	}
	if len(o.Note) > MaxDescriptionChars {
		return nil, errorf(CodeInvalid, "a checkpoint's note holds at most %d characters: shorten it", MaxDescriptionChars)
	}
	var out *Checkpoint
	err := db.write(ctx, "create checkpoint", func(r *run) error {
		s, err := loadStoreLite(r, storeID, false)
		if err != nil {
			return err
		}
		out, err = insertCheckpoint(r, s, o, by)
		return err
	})
	return out, err
}

// ListCheckpoints lists a store's checkpoints, oldest first.
func (db *DB) ListCheckpoints(ctx context.Context, storeID string) ([]Checkpoint, error) {
	out := []Checkpoint{}
	err := db.read(ctx, "list checkpoints", func(r *run) error {
		out = out[:0]
		seq, err := db.storeSeq(r, storeID)
		if err != nil {
			return err
		}
		out, err = listCheckpoints(r, seq, storeID, out)
		return err
	})
	return out, err
}

func listCheckpoints(r *run, storeSeq int64, storeID string, out []Checkpoint) ([]Checkpoint, error) {
	rows, err := r.query("SELECT "+checkpointCols+" FROM checkpoints c WHERE c.store = ? ORDER BY c.pos, c.created_at, c.name", storeSeq)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		c, err := scanCheckpoint(rows, storeID)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, *c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		if err := positionID(r, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// GetCheckpoint returns one checkpoint of a store. Errors: CodeNotFound.
func (db *DB) GetCheckpoint(ctx context.Context, storeID, name string) (*Checkpoint, error) {
	var out *Checkpoint
	err := db.read(ctx, "get checkpoint", func(r *run) error {
		seq, err := db.storeSeq(r, storeID)
		if err != nil {
			return err
		}
		out, err = loadCheckpoint(r, seq, storeID, name)
		return err
	})
	return out, err
}

func loadCheckpoint(r *run, storeSeq int64, storeID, name string) (*Checkpoint, error) {
	st, err := r.stmt("SELECT " + checkpointCols + " FROM checkpoints c WHERE c.store = ? AND c.name = ?")
	if err != nil {
		return nil, err
	}
	c, err := scanCheckpoint(st.QueryRowContext(r.ctx, storeSeq, name), storeID)
	if err == sql.ErrNoRows {
		return nil, checkpointNotFound(storeID, name)
	}
	if err != nil {
		return nil, err
	}
	return c, positionID(r, c)
}

// DeleteCheckpoint removes a checkpoint (the versions it named stay until
// a prune removes them). Errors: CodeNotFound.
func (db *DB) DeleteCheckpoint(ctx context.Context, storeID, name string) (*Checkpoint, error) {
	var out *Checkpoint
	err := db.write(ctx, "delete checkpoint", func(r *run) error {
		s, err := loadStoreLite(r, storeID, false)
		if err != nil {
			return err
		}
		if out, err = loadCheckpoint(r, s.seq, storeID, name); err != nil {
			return err
		}
		_, err = r.exec("DELETE FROM checkpoints WHERE store = ? AND name = ?", s.seq, name)
		return err
	})
	return out, err
}

// CheckpointSessionStores takes a session checkpoint, named by the
// session's id, of each store the session is attached to that has none
// yet (a session mounted again keeps its first). Errors: CodeNotFound (no
// session).
func (db *DB) CheckpointSession(ctx context.Context, sessionID string) ([]Checkpoint, error) {
	sess, err := db.GetSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	var out []Checkpoint
	err = db.write(ctx, "checkpoint a session", func(r *run) error {
		out = out[:0]
		for _, a := range sess.Resources {
			s, err := loadStoreLite(r, a.StoreID, false)
			if ErrorCode(err) == CodeNotFound {
				continue // deleted since the session was made
			}
			if err != nil {
				return err
			}
			var one int
			err = r.scan("SELECT 1 FROM checkpoints WHERE store = ? AND name = ?", []any{s.seq, sessionID}, &one)
			if err == nil {
				continue
			}
			if err != sql.ErrNoRows {
				return err
			}
			c, err := insertCheckpoint(r, s, CheckpointOptions{Name: sessionID, Kind: CheckpointSession, Note: "taken when the session began"}, SessionActor(sessionID))
			if err != nil {
				return err
			}
			out = append(out, *c)
		}
		return nil
	})
	return out, err
}

// exportCheckpoints emits the store's checkpoints, oldest first.
func exportCheckpoints(r *run, s *storeRow, emit func(v any) error) error {
	cps, err := listCheckpoints(r, s.seq, s.ID, nil)
	if err != nil {
		return err
	}
	for _, c := range cps {
		if err := emit(c); err != nil {
			return err
		}
	}
	return nil
}

// readCheckpointLine reads a checkpoint line of an export (line n) of the
// store st.
func readCheckpointLine(n int, line []byte, st *importStore) (*Checkpoint, error) {
	var in struct {
		Name      string         `json:"name"`
		Kind      CheckpointKind `json:"kind"`
		CreatedAt time.Time      `json:"created_at"`
		CreatedBy *Actor         `json:"created_by"`
		Note      string         `json:"note"`
		VersionID *string        `json:"memory_version_id"`
	}
	if err := json.Unmarshal(line, &in); err != nil {
		return nil, lineError(n, "memory_checkpoint", err)
	}
	c := &Checkpoint{StoreID: st.store.ID, Name: in.Name, Kind: in.Kind, CreatedAt: in.CreatedAt, CreatedBy: in.CreatedBy, Note: in.Note}
	if in.VersionID != nil {
		c.VersionID = *in.VersionID
		if _, ok := st.lines[c.VersionID]; !ok {
			return nil, errorf(CodeInvalid, "import: line %d: checkpoint %q names version %s, which no earlier line of the store holds: give a file memfs export wrote", n, c.Name, c.VersionID)
		}
	}
	switch c.Kind {
	case CheckpointNamed, CheckpointSafety, CheckpointSession:
	default:
		return nil, errorf(CodeInvalid, "import: line %d: checkpoint %q has kind %q, not named, session or safety", n, c.Name, c.Kind)
	}
	if c.Name == "" || len(c.Name) > MaxCheckpointName {
		return nil, errorf(CodeInvalid, "import: line %d: checkpoint name %q is empty or over %d bytes", n, c.Name, MaxCheckpointName)
	}
	for _, other := range st.checkpoints {
		if other.Name == c.Name {
			return nil, errorf(CodeInvalid, "import: line %d repeats the checkpoint %q", n, c.Name)
		}
	}
	return c, nil
}

// importCheckpoints writes st's checkpoints into the store at row
// storeSeq; heads maps its version ids to their rows.
func importCheckpoints(r *run, storeSeq int64, st *importStore, heads map[string]int64) error {
	lo, _ := versionRange(storeSeq)
	for _, c := range st.checkpoints {
		pos := lo
		if c.VersionID != "" {
			pos = heads[c.VersionID]
		}
		at, aid := actorCols(c.CreatedBy)
		if _, err := r.exec("INSERT INTO checkpoints (store, name, pos, created_at, actor_type, actor_id, note, kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			storeSeq, c.Name, pos, c.CreatedAt.UnixNano(), at, aid, c.Note, string(c.Kind)); err != nil {
			return err
		}
	}
	return nil
}

// checkpointNeeds selects, of the store ?1's versions (rows ?4..?5), those
// a named or safety checkpoint needs: each memory's latest version up to
// the checkpoint's position, which is what the store held then (a
// deletion too: without it the memory's version before would show).
const checkpointNeeds = `SELECT max(v.seq) FROM versions v JOIN checkpoints c ON c.store = ?1 AND c.kind <> 'session' AND v.seq <= c.pos
	WHERE v.seq > ?4 AND v.seq < ?5 GROUP BY c.name, v.memory_id`

// expireSessionCheckpoints removes the store's session checkpoints older
// than the retention window: they are pruned with the versions.
func expireSessionCheckpoints(r *run, s *storeRow, olderThan time.Duration) error {
	_, err := r.exec("DELETE FROM checkpoints WHERE store = ? AND kind = ? AND created_at < ?",
		s.seq, string(CheckpointSession), r.db.now().Add(-olderThan).UnixNano())
	return err
}

// KeptVersion is a version a prune would remove but keeps, and the
// checkpoints that need it.
type KeptVersion struct {
	Version     Version
	Checkpoints []string
}

// PruneReport tells what a prune with these arguments keeps for
// checkpoints (oldest first) and which session checkpoints it removes as
// past the window. It changes nothing.
func (db *DB) PruneReport(ctx context.Context, storeID string, olderThan time.Duration, keepLast int) (kept []KeptVersion, expiring []Checkpoint, err error) {
	err = db.read(ctx, "plan a prune", func(r *run) error {
		kept, expiring = nil, nil
		s, err := loadStore(r, storeID)
		if err != nil {
			return err
		}
		lo, hi := s.versionRange()
		cutoff := r.db.now().Add(-olderThan).UnixNano()
		all, err := listCheckpoints(r, s.seq, s.ID, nil)
		if err != nil {
			return err
		}
		for _, c := range all {
			if c.Kind == CheckpointSession && c.CreatedAt.UnixNano() < cutoff {
				expiring = append(expiring, c)
			}
		}
		rows, err := r.query(`SELECT c.name, max(v.seq) FROM versions v JOIN checkpoints c ON c.store = ?1 AND c.kind <> 'session' AND v.seq <= c.pos
			WHERE v.seq > ?4 AND v.seq < ?5 GROUP BY c.name, v.memory_id HAVING max(v.seq) IN (`+agedOut+`) ORDER BY 2, 1`,
			s.seq, keepLast, cutoff, lo, hi)
		if err != nil {
			return err
		}
		byRow := map[int64]int{}
		var order []int64
		names := map[int64][]string{}
		for rows.Next() {
			var name string
			var seq int64
			if err := rows.Scan(&name, &seq); err != nil {
				rows.Close()
				return err
			}
			if _, ok := byRow[seq]; !ok {
				byRow[seq] = len(order)
				order = append(order, seq)
			}
			names[seq] = append(names[seq], name)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		st, err := r.stmt("SELECT " + versionCols + " FROM versions WHERE seq = ?")
		if err != nil {
			return err
		}
		for _, seq := range order {
			v, _, err := scanVersion(st.QueryRowContext(r.ctx, seq), s.ID, false)
			if err != nil {
				return err
			}
			kept = append(kept, KeptVersion{Version: *v, Checkpoints: names[seq]})
		}
		return nil
	})
	return kept, expiring, err
}
