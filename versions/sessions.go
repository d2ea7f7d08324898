package versions

import (
	"context"
	"database/sql"
	"time"

	"github.com/memfs/memfs/slugify"
)

// MountRoot is where a sandbox mounts a session's stores.
const MountRoot = "/mnt/memory"

type AttachmentParams struct {
	StoreID      string
	Access       Access // "" = read_write
	Instructions *string
}

// CreateSession snapshots each store's name and description and assigns
// distinct slugs (slugify.Unique) and mount paths.
func (db *DB) CreateSession(ctx context.Context, attach []AttachmentParams) (*Session, error) {
	if err := CheckAttachmentCount(len(attach)); err != nil {
		return nil, err
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
	}
	var out *Session
	err := db.write(ctx, "create session", func(r *run) error {
		// Attaching reads the stores and changes none: no store's row is
		// locked (sessions attaching the same stores in another order
		// would deadlock).
		r.write = false
		now := r.db.nowNanos()
		sess := Session{ID: r.db.ids.make(prefixSession, fromNanos(now)), CreatedAt: fromNanos(now)}
		names := make([]string, len(attach))
		for i, a := range attach {
			s, err := loadStore(r, a.StoreID)
			if err != nil {
				return err
			}
			if s.ArchivedAt != nil {
				return errorf(CodeReadOnly, "memory store %s (%q) is archived: archived stores cannot be attached to new sessions", s.ID, s.Name)
			}
			access := a.Access
			if access == "" {
				access = ReadWrite
			}
			names[i] = s.Name
			sess.Resources = append(sess.Resources, Attachment{StoreID: s.ID, Access: access,
				Instructions: a.Instructions, Name: s.Name, Description: s.Description})
		}
		for i, slug := range slugify.Unique(names) {
			sess.Resources[i].Slug = slug
			sess.Resources[i].MountPath = MountRoot + "/" + slug
		}
		seq, err := r.insertKey("seq", "INSERT INTO sessions (id, created_at) VALUES (?, ?)", sess.ID, now)
		if err != nil {
			return err
		}
		for i, a := range sess.Resources {
			if _, err := r.exec(`INSERT INTO attachments (session, pos, store_id, access, instructions, name, description, slug)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, seq, i, a.StoreID, string(a.Access), a.Instructions, a.Name, a.Description, a.Slug); err != nil {
				return err
			}
		}
		out = &sess
		return nil
	})
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

// CheckOpen refuses to use a session that ended: nothing mounts it again.
func (s *Session) CheckOpen() error {
	if s.EndedAt != nil {
		return objectError(CodeConflict, ObjectSession, "", "session %s ended at %s and cannot be used again: create a new session",
			s.ID, s.EndedAt.UTC().Format(time.RFC3339))
	}
	return nil
}

func loadSession(r *run, id string) (*Session, error) {
	var seq, created int64
	var ended sql.NullInt64
	err := r.scan("SELECT seq, created_at, ended_at FROM sessions WHERE id = ?", []any{id}, &seq, &created, &ended)
	if err == sql.ErrNoRows {
		return nil, objectError(CodeNotFound, ObjectSession, "", "no session %q: check its id", id)
	}
	if err != nil {
		return nil, err
	}
	s := &Session{ID: id, CreatedAt: fromNanos(created), EndedAt: nullTime(ended), Resources: []Attachment{}}
	rows, err := r.query("SELECT store_id, access, instructions, name, description, slug FROM attachments WHERE session = ? ORDER BY pos", seq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var a Attachment
		var access string
		var instr sql.NullString
		if err := rows.Scan(&a.StoreID, &access, &instr, &a.Name, &a.Description, &a.Slug); err != nil {
			return nil, err
		}
		a.Access, a.MountPath = Access(access), MountRoot+"/"+a.Slug
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

// ListSessions lists sessions in the order they were created.
func (db *DB) ListSessions(ctx context.Context, limit int, page string) (*Page[Session], error) {
	limit, err := pageSize(limit, ViewBasic)
	if err != nil {
		return nil, err
	}
	scope := listingScope("sessions")
	if page, err = unscopeCursor(page, scope); err != nil {
		return nil, err
	}
	var after int64
	if page != "" {
		if after, err = decodeSeqCursor(page); err != nil {
			return nil, err
		}
	}
	out := &Page[Session]{Data: []Session{}}
	err = db.read(ctx, "list sessions", func(r *run) error {
		rows, err := r.query("SELECT seq, id FROM sessions WHERE seq > ? ORDER BY seq LIMIT ?", after, limit+1)
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
