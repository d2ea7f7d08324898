package versions

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memfs/memfs/slugify"
)

// MountRoot is where a sandbox mounts a session's stores.
const MountRoot = "/mnt/memory"

type AttachmentParams struct {
	StoreID      string
	Access       Access // "" = read_write
	Instructions *string
	// WritePrefix, when set ("/projects/p1/"), makes only that folder
	// writable to the session (see writeprefix.go).
	WritePrefix string
}

// SessionParams create a session. Agent (a JSON string or object) and
// EnvironmentID are recorded as given.
type SessionParams struct {
	Resources     []AttachmentParams
	Agent         json.RawMessage
	EnvironmentID *string
	Title         *string
	Metadata      map[string]string
	// Lease, if set, is a mount lease (leases.go) taken for the new
	// session in the same transaction, its SessionID filled in: the
	// process that creates a session for a mount it is about to start
	// (memfs run) holds it, so that the session ends as a dead mount's
	// does even if that process is killed before the mount holds a lease.
	Lease *MountLease
}

// SessionUpdate changes what is non-nil; Metadata merges, a nil value
// removing its key.
type SessionUpdate struct {
	Title    *string
	Metadata map[string]*string
}

// MaxTitleChars bounds a session's title.
const MaxTitleChars = 1024

// Bounds on what a session records of its creator's words, as the hosted
// API bounds its strings (a name, 255 characters; a description, 1,024):
// the agent (an id string, or an object naming one) and the environment id.
const (
	MaxAgentIDChars       = 255
	MaxAgentObjectBytes   = 1024
	MaxEnvironmentIDChars = 255
	// MaxOpenSessionsPerStore bounds the sessions that attach a store and
	// have not ended: each keeps its attachments' instructions and the
	// store's description.
	MaxOpenSessionsPerStore = 1000
)

// validateAgent bounds the session's agent and environment id.
func validateAgent(agent json.RawMessage, env *string) error {
	if len(agent) > 0 {
		var id string
		if json.Unmarshal(agent, &id) == nil {
			if n := utf8.RuneCountInString(id); n > MaxAgentIDChars || strings.ContainsFunc(id, isControl) {
				return errorf(CodeInvalid, "the session's agent is %d characters, over the limit of %d (or holds control characters): give the agent's id", n, MaxAgentIDChars)
			}
		} else if len(agent) > MaxAgentObjectBytes {
			return errorf(CodeInvalid, "the session's agent is %d bytes of JSON, over the limit of %d: give the agent's id and version only", len(agent), MaxAgentObjectBytes)
		}
	}
	if env != nil {
		if n := utf8.RuneCountInString(*env); !utf8.ValidString(*env) || n > MaxEnvironmentIDChars || strings.ContainsFunc(*env, isControl) {
			return errorf(CodeInvalid, "the session's environment_id is %d characters, over the limit of %d (or not plain UTF-8 text): give the environment's id", n, MaxEnvironmentIDChars)
		}
	}
	return nil
}

// openSessionsOf counts the sessions that attach the store and are open.
const openSessionsOf = `SELECT count(*) FROM attachments a JOIN sessions s ON s.seq = a.session
	WHERE a.store_id = ? AND s.ended_at IS NULL AND s.archived_at IS NULL`

// CreateSession creates a session of the given attachments.
func (db *DB) CreateSession(ctx context.Context, attach []AttachmentParams) (*Session, error) {
	return db.CreateSessionFrom(ctx, SessionParams{Resources: attach})
}

// CreateSessionFrom snapshots each store's name and description and assigns
// distinct slugs (slugify.Unique) and mount paths.
func (db *DB) CreateSessionFrom(ctx context.Context, p SessionParams) (*Session, error) {
	attach := p.Resources
	if err := CheckAttachmentCount(len(attach)); err != nil {
		return nil, err
	}
	if err := validateSessionFields(p.Title, p.Metadata); err != nil {
		return nil, err
	}
	if len(p.Agent) > 0 && !json.Valid(p.Agent) {
		return nil, errorf(CodeInvalid, "the session's agent is not valid JSON")
	}
	if err := validateAgent(p.Agent, p.EnvironmentID); err != nil {
		return nil, err
	}
	meta, err := json.Marshal(nonNil(p.Metadata))
	if err != nil {
		return nil, err
	}
	var agent any
	if len(p.Agent) > 0 {
		agent = string(p.Agent)
	}
	seen := map[string]bool{}
	for _, a := range attach {
		if seen[a.StoreID] {
			return nil, errorf(CodeInvalid, "memory store %s is attached twice: attach each store once", a.StoreID)
		}
		seen[a.StoreID] = true
		switch a.Access {
		case "", ReadWrite, ReadOnly:
		default:
			return nil, errorf(CodeInvalid, "access %q for store %s is not read_write or read_only", a.Access, a.StoreID)
		}
		if a.Instructions != nil {
			if err := validateInstructions(*a.Instructions); err != nil {
				return nil, err
			}
		}
		if err := checkWritePrefix(a); err != nil {
			return nil, err
		}
	}
	var out *Session
	if p.Lease != nil {
		db.leases.setOwn(p.Lease.ID, p.Lease.Epoch, true)
	}
	err = db.write(ctx, "create session", func(r *run) error {
		if p.Lease != nil {
			if err := db.beginLease(r); err != nil {
				return err
			}
		}
		// Attaching reads the stores and changes none: no store's row is
		// locked (sessions attaching the same stores in another order
		// would deadlock).
		r.write = false
		now := r.db.nowNanos()
		sess := Session{ID: r.db.ids.make(prefixSession, fromNanos(now)), CreatedAt: fromNanos(now), UpdatedAt: fromNanos(now),
			Agent: p.Agent, EnvironmentID: p.EnvironmentID, Title: p.Title, Metadata: nonNil(p.Metadata)}
		names := make([]string, len(attach))
		for i, a := range attach {
			s, err := loadStore(r, a.StoreID)
			if err != nil {
				return err
			}
			if s.ArchivedAt != nil {
				return errorf(CodeReadOnly, "memory store %s (%q) is archived: archived stores cannot be attached to new sessions", s.ID, s.Name)
			}
			var open int
			if err := r.scan(openSessionsOf, []any{s.ID}, &open); err != nil {
				return err
			}
			if open >= MaxOpenSessionsPerStore {
				return errorf(CodeInvalid, "memory store %s is attached to %d open sessions, the limit: end some (memfs session end ID) before you attach it to another", s.ID, open)
			}
			access := a.Access
			if access == "" {
				access = ReadWrite
			}
			names[i] = s.Name
			sess.Resources = append(sess.Resources, Attachment{StoreID: s.ID, Access: access,
				Instructions: a.Instructions, Name: s.Name, Description: s.Description, WritePrefix: a.WritePrefix})
		}
		for i, slug := range slugify.Unique(names) {
			sess.Resources[i].Slug = slug
			sess.Resources[i].MountPath = MountRoot + "/" + slug
		}
		seq, err := r.insertKey("seq", "INSERT INTO sessions (id, created_at, updated_at, agent, environment_id, title, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)",
			sess.ID, now, now, agent, p.EnvironmentID, p.Title, string(meta))
		if err != nil {
			return err
		}
		for i, a := range sess.Resources {
			var prefix any
			if a.WritePrefix != "" {
				prefix = a.WritePrefix
			}
			if _, err := r.exec(`INSERT INTO attachments (session, pos, store_id, access, instructions, name, description, slug, write_prefix)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, seq, i, a.StoreID, string(a.Access), a.Instructions, a.Name, a.Description, a.Slug, prefix); err != nil {
				return err
			}
		}
		if p.Lease != nil {
			l := *p.Lease
			l.SessionID = sess.ID
			if err := db.putLease(r, l, l.Epoch); err != nil {
				return err
			}
		}
		out = &sess
		return nil
	})
	if p.Lease != nil {
		if err != nil {
			db.leases.setOwn(p.Lease.ID, 0, false)
		} else {
			p.Lease.SessionID = out.ID
		}
	}
	return out, err
}

// CheckAttachmentCount refuses a session of n stores when n is not 1 to
// MaxAttachments, for callers that want to refuse before doing other work.
func CheckAttachmentCount(n int) error {
	if n == 0 {
		return errorf(CodeInvalid, "a session needs at least one memory store: attach 1 to %d stores", MaxAttachments)
	}
	if n > MaxAttachments {
		return errorf(CodeInvalid, "a session can attach at most %d memory stores, not %d: attach fewer", MaxAttachments, n)
	}
	return nil
}

// CheckOpen refuses to use a session that ended or was archived: nothing
// mounts it again.
func (s *Session) CheckOpen() error {
	if s.EndedAt != nil {
		return objectError(CodeConflict, ObjectSession, "", "session %s ended at %s and cannot be used again: create a new session",
			s.ID, s.EndedAt.UTC().Format(time.RFC3339))
	}
	if s.ArchivedAt != nil {
		return objectError(CodeConflict, ObjectSession, "", "session %s was archived at %s and cannot be used again: create a new session",
			s.ID, s.ArchivedAt.UTC().Format(time.RFC3339))
	}
	return nil
}

func validateSessionFields(title *string, meta map[string]string) error {
	if title != nil {
		if !utf8.ValidString(*title) {
			return errorf(CodeInvalid, "the session's title is not valid UTF-8: use UTF-8 text")
		}
		if n := utf8.RuneCountInString(*title); n > MaxTitleChars {
			return errorf(CodeInvalid, "the session's title is %d characters, over the limit of %d: shorten it", n, MaxTitleChars)
		}
	}
	return validateMetadata(meta)
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func loadSession(r *run, id string) (*Session, error) {
	var seq, created int64
	var ended, updated, archived sql.NullInt64
	var agent, env, title sql.NullString
	var meta string
	err := r.scan("SELECT seq, created_at, ended_at, updated_at, archived_at, agent, environment_id, title, metadata FROM sessions WHERE id = ?",
		[]any{id}, &seq, &created, &ended, &updated, &archived, &agent, &env, &title, &meta)
	if err == sql.ErrNoRows {
		return nil, objectError(CodeNotFound, ObjectSession, "", "no session %q: check its id", id)
	}
	if err != nil {
		return nil, err
	}
	s := &Session{ID: id, CreatedAt: fromNanos(created), UpdatedAt: fromNanos(created), EndedAt: nullTime(ended),
		ArchivedAt: nullTime(archived), Resources: []Attachment{}}
	if updated.Valid {
		s.UpdatedAt = fromNanos(updated.Int64)
	}
	if agent.Valid {
		s.Agent = json.RawMessage(agent.String)
	}
	if env.Valid {
		s.EnvironmentID = &env.String
	}
	if title.Valid {
		s.Title = &title.String
	}
	if err := json.Unmarshal([]byte(meta), &s.Metadata); err != nil {
		return nil, fmt.Errorf("session %s: metadata: %w", id, err)
	}
	rows, err := r.query("SELECT store_id, access, instructions, name, description, slug, write_prefix FROM attachments WHERE session = ? ORDER BY pos", seq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var a Attachment
		var access string
		var instr, prefix sql.NullString
		if err := rows.Scan(&a.StoreID, &access, &instr, &a.Name, &a.Description, &a.Slug, &prefix); err != nil {
			return nil, err
		}
		a.Access, a.MountPath, a.WritePrefix = Access(access), MountRoot+"/"+a.Slug, prefix.String
		if instr.Valid {
			a.Instructions = &instr.String
		}
		s.Resources = append(s.Resources, a)
	}
	return s, rows.Err()
}

func (db *DB) GetSession(ctx context.Context, id string) (*Session, error) {
	var out *Session
	err := db.read(ctx, "get session", func(r *run) error {
		var err error
		out, err = loadSession(r, id)
		return err
	})
	return out, err
}

// SessionListOptions select sessions to list. Zero times are no bound.
type SessionListOptions struct {
	IncludeArchived bool
	MemoryStoreID   string // only sessions that attach this store
	CreatedGT       time.Time
	CreatedGTE      time.Time
	CreatedLT       time.Time
	CreatedLTE      time.Time
	Newest          bool // newest first; else in the order they were created
	Limit           int
	Page            string
}

// ListSessions lists sessions in the order they were created, or newest
// first.
func (db *DB) ListSessions(ctx context.Context, o SessionListOptions) (*Page[Session], error) {
	limit, err := pageSize(o.Limit, ViewBasic)
	if err != nil {
		return nil, err
	}
	scope := listingScope("sessions", o.IncludeArchived, o.MemoryStoreID, o.CreatedGT.UnixNano(), o.CreatedGTE.UnixNano(),
		o.CreatedLT.UnixNano(), o.CreatedLTE.UnixNano(), o.Newest)
	if o.Page, err = unscopeCursor(o.Page, scope); err != nil {
		return nil, err
	}
	var q strings.Builder
	var args []any
	q.WriteString("SELECT seq, id FROM sessions WHERE 1 = 1")
	if o.Page != "" {
		at, err := decodeSeqCursor(o.Page)
		if err != nil {
			return nil, err
		}
		if o.Newest {
			q.WriteString(" AND seq < ?")
		} else {
			q.WriteString(" AND seq > ?")
		}
		args = append(args, at)
	}
	if !o.IncludeArchived {
		q.WriteString(" AND archived_at IS NULL")
	}
	if o.MemoryStoreID != "" {
		q.WriteString(" AND EXISTS (SELECT 1 FROM attachments a WHERE a.session = sessions.seq AND a.store_id = ?)")
		args = append(args, o.MemoryStoreID)
	}
	for _, b := range []struct {
		op string
		t  time.Time
	}{{">", o.CreatedGT}, {">=", o.CreatedGTE}, {"<", o.CreatedLT}, {"<=", o.CreatedLTE}} {
		if !b.t.IsZero() {
			q.WriteString(" AND created_at " + b.op + " ?")
			args = append(args, b.t.UnixNano())
		}
	}
	if o.Newest {
		q.WriteString(" ORDER BY seq DESC LIMIT ?")
	} else {
		q.WriteString(" ORDER BY seq LIMIT ?")
	}
	args = append(args, limit+1)
	out := &Page[Session]{Data: []Session{}}
	err = db.read(ctx, "list sessions", func(r *run) error {
		rows, err := r.query(q.String(), args...)
		if err != nil {
			return err
		}
		var ids []string
		var seqs []int64
		for rows.Next() {
			var seq int64
			var id string
			if err := rows.Scan(&seq, &id); err != nil {
				rows.Close()
				return err
			}
			ids, seqs = append(ids, id), append(seqs, seq)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(ids) > limit {
			ids = ids[:limit]
			out.NextPage = scopeCursor(encodeSeqCursor(seqs[limit-1]), scope)
		}
		for _, id := range ids {
			s, err := loadSession(r, id)
			if err != nil {
				return err
			}
			out.Data = append(out.Data, *s)
		}
		return nil
	})
	return out, err
}

// EndSession records that the session ended; ending twice is harmless.
func (db *DB) EndSession(ctx context.Context, id string) (*Session, error) {
	var out *Session
	err := db.write(ctx, "end session", func(r *run) error {
		if _, err := r.exec("UPDATE sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL", r.db.nowNanos(), id); err != nil {
			return err
		}
		var err error
		out, err = loadSession(r, id)
		return err
	})
	return out, err
}

// UpdateSession changes a session's title and metadata.
func (db *DB) UpdateSession(ctx context.Context, id string, u SessionUpdate) (*Session, error) {
	if err := validateSessionFields(u.Title, nil); err != nil {
		return nil, err
	}
	var out *Session
	err := db.write(ctx, "update session", func(r *run) error {
		s, err := loadSession(r, id)
		if err != nil {
			return err
		}
		changed := false
		if u.Title != nil && (s.Title == nil || *s.Title != *u.Title) {
			s.Title, changed = u.Title, true
		}
		if patchMetadata(s.Metadata, u.Metadata) {
			changed = true
		}
		if !changed {
			out = s
			return nil
		}
		if err := validateMetadata(s.Metadata); err != nil {
			return err
		}
		meta, err := json.Marshal(s.Metadata)
		if err != nil {
			return err
		}
		now := r.db.nowNanos()
		if _, err := r.exec("UPDATE sessions SET title = ?, metadata = ?, updated_at = ? WHERE id = ?", s.Title, string(meta), now, id); err != nil {
			return err
		}
		s.UpdatedAt = fromNanos(now)
		out = s
		return nil
	})
	return out, err
}

// ArchiveSession archives a session for good: it cannot be mounted again
// and lists leave it out unless asked. Archiving twice is harmless.
func (db *DB) ArchiveSession(ctx context.Context, id string) (*Session, error) {
	var out *Session
	err := db.write(ctx, "archive session", func(r *run) error {
		now := r.db.nowNanos()
		if _, err := r.exec("UPDATE sessions SET archived_at = ?, updated_at = ? WHERE id = ? AND archived_at IS NULL", now, now, id); err != nil {
			return err
		}
		var err error
		out, err = loadSession(r, id)
		return err
	})
	return out, err
}

// DeleteSession removes a session's record and attachments. The versions
// it wrote keep naming it as their actor.
func (db *DB) DeleteSession(ctx context.Context, id string) error {
	return db.write(ctx, "delete session", func(r *run) error {
		var seq int64
		err := r.scan("SELECT seq FROM sessions WHERE id = ?", []any{id}, &seq)
		if err == sql.ErrNoRows {
			return objectError(CodeNotFound, ObjectSession, "", "no session %q: check its id", id)
		}
		if err != nil {
			return err
		}
		if _, err := r.exec("DELETE FROM attachments WHERE session = ?", seq); err != nil {
			return err
		}
		_, err = r.exec("DELETE FROM sessions WHERE seq = ?", seq)
		return err
	})
}
