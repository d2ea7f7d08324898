package versions

import (
	"context"
	"database/sql"
	"encoding/json"
	"sort"
	"strings"
	"time"
)

// A store as of a moment is a query over its versions, not a copy: every
// version up to a position of its feed (a row of the versions table), and
// of each memory the latest of them, unless that one records its deletion.
// A moment (WHEN) is read, in this order, as:
//
//   - a session id (sesn_…): the store as it was when that session began:
//     its session checkpoint if it has one, else the session's start time;
//   - a checkpoint's name;
//   - a time, in UTC: a date (2026-12-01, that day at 00:00), a minute
//     (2026-12-01T10:00Z) or an RFC 3339 time; the position is the latest
//     version saved at or before it.
//
// A checkpoint's name cannot read as a session id, a date or a time, so no
// name hides another reading. A time before the store was created or
// after now is refused, as is a WHEN that reads as none of these.
//
// What the store held of a redacted version is listed without content:
// its path is the one its memory's neighbouring versions tell (see
// redactedPlaces), and a reader shows it empty. Explicit empty directories
// (mkdir) are not versioned: the tree as of a moment holds the directories
// its memories' paths imply.

// AsOf is a moment of a store's history, resolved to a feed position.
type AsOf struct {
	StoreID string
	// When is what the caller gave; Reading how it was read: "session",
	// "checkpoint" or "time".
	When    string
	Reading string
	// Time is the moment: the session's start, the checkpoint's time or
	// the time given.
	Time time.Time
	// Pos is the feed position: every version of the store up to this
	// row is in the store as of the moment, none after it.
	Pos int64
	// Checkpoint is the checkpoint the moment was read from, if any.
	Checkpoint *Checkpoint
}

func (a AsOf) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		When       string      `json:"when"`
		Reading    string      `json:"reading"`
		Time       time.Time   `json:"time"`
		Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
	}{a.When, a.Reading, a.Time, a.Checkpoint})
}

// ParseWhenTime reads a WHEN that is a time, in UTC: a date (00:00 that
// day), a minute with its zone (2026-12-01T10:00Z) or an RFC 3339 time.
func ParseWhenTime(s string) (time.Time, bool) {
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t.UTC(), true
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
		if t, err := time.Parse(layout, strings.Replace(s, " ", "T", 1)); err == nil && strings.Count(s, " ") == 1 {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// ResolveAsOf reads when (see above) for a store. Errors: CodeNotFound (no
// store, or an unknown session), CodeInvalid (a time out of the store's
// life, or a WHEN that reads as nothing).
func (db *DB) ResolveAsOf(ctx context.Context, storeID, when string) (*AsOf, error) {
	var out *AsOf
	err := db.read(ctx, "resolve a moment of a store", func(r *run) error {
		s, err := loadStore(r, storeID)
		if err != nil {
			return err
		}
		out, err = resolveAsOf(r, s, when)
		return err
	})
	return out, err
}

func resolveAsOf(r *run, s *storeRow, when string) (*AsOf, error) {
	a := &AsOf{StoreID: s.ID, When: when}
	if when == "" {
		return nil, errorf(CodeInvalid, "no moment given: give a session id, a checkpoint's name, a date (2026-12-01) or an RFC 3339 time in UTC")
	}
	if strings.HasPrefix(when, prefixSession) {
		a.Reading = "session"
		if c, err := loadCheckpoint(r, s.seq, s.ID, when); err == nil {
			a.Time, a.Pos, a.Checkpoint = c.CreatedAt, c.Pos, c
			return a, nil
		} else if ErrorCode(err) != CodeNotFound {
			return nil, err
		}
		var created int64
		err := r.scan("SELECT created_at FROM sessions WHERE id = ?", []any{when}, &created)
		if err == sql.ErrNoRows {
			return nil, objectError(CodeNotFound, ObjectSession, "", "no session %q: check its id", when)
		}
		if err != nil {
			return nil, err
		}
		a.Time = fromNanos(created)
		if a.Time.Before(s.CreatedAt) {
			a.Time = s.CreatedAt // began before the store was made: it was empty
		}
		return a, posAt(r, s, a)
	}
	if c, err := loadCheckpoint(r, s.seq, s.ID, when); err == nil {
		a.Reading, a.Time, a.Pos, a.Checkpoint = "checkpoint", c.CreatedAt, c.Pos, c
		return a, nil
	} else if ErrorCode(err) != CodeNotFound {
		return nil, err
	}
	t, ok := ParseWhenTime(when)
	if !ok {
		return nil, objectError(CodeInvalid, ObjectCheckpoint, s.ID, "%q is not a session id, a checkpoint of store %s, a date (2026-12-01) or an RFC 3339 time (2026-12-01T10:00:00Z): give one of these", when, s.ID)
	}
	now := r.db.now()
	switch {
	case t.Before(s.CreatedAt):
		return nil, errorf(CodeInvalid, "%s is before store %s was created (%s): give a later time", t.Format(time.RFC3339Nano), s.ID, s.CreatedAt.UTC().Format(time.RFC3339Nano))
	case t.After(now):
		return nil, errorf(CodeInvalid, "%s is in the future (it is %s now): give a time that has passed", t.Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339))
	}
	a.Reading, a.Time = "time", t
	return a, posAt(r, s, a)
}

// posAt sets a.Pos to the latest version saved at or before a.Time.
func posAt(r *run, s *storeRow, a *AsOf) error {
	lo, hi := s.versionRange()
	// Read from the newest back: a recent moment is found at once.
	err := r.scan("SELECT seq FROM versions WHERE seq > ? AND seq < ? AND created_at <= ? ORDER BY seq DESC LIMIT 1",
		[]any{lo, hi, a.Time.UnixNano()}, &a.Pos)
	if err == sql.ErrNoRows {
		a.Pos, err = lo, nil
	}
	return err
}

// SnapshotFile is one memory of a store as of a moment.
type SnapshotFile struct {
	// Memory as it was: its id, path, hash, size, the version that held its
	// content (VersionID) and its times (CreatedAt: its first version
	// still kept; UpdatedAt: that version's). Content is nil unless asked.
	Memory Memory
	// Writer is the actor of the version.
	Writer *Actor
	// Redacted: the version was redacted since; it has no content, hash
	// or size left.
	Redacted bool
	seq      int64
}

// Seq is the version's row: the position it was saved at.
func (f *SnapshotFile) Seq() int64 { return f.seq }

func (f SnapshotFile) MarshalJSON() ([]byte, error) {
	type plain Memory
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
		Writer   *Actor `json:"created_by"`
		Redacted bool   `json:"redacted,omitempty"`
	}{"memory", plain(f.Memory), f.Writer, f.Redacted})
}

// A snapshot starts from the live memories and takes back what changed
// after the position: a live memory whose head is at or before it is as it
// was then, and each memory with a version after it (a row range of the
// store, short for a recent position) is what its latest version up to
// the position says, a seek of versions_memory each, in one statement. A position in the
// past costs what changed since, not the store's whole history.
const (
	snapshotLive = `SELECT m.id, m.path, m.head, m.version_id, m.sha, m.size, m.created_at, m.updated_at, v.actor_type, v.actor_id
		FROM memories m JOIN versions v ON v.seq = m.head WHERE m.store = ? AND m.head <= ?`
	snapshotThen = `SELECT t.first, v.seq, v.id, v.memory_id, v.operation, v.created_at, v.actor_type, v.actor_id, v.redacted_at, v.path, v.sha, v.size
		FROM (SELECT c.memory_id,
			(SELECT s.seq FROM versions s WHERE s.memory_id = c.memory_id AND s.seq > ?1 AND s.seq <= ?2 ORDER BY s.seq DESC LIMIT 1) AS at,
			(SELECT s.created_at FROM versions s WHERE s.memory_id = c.memory_id AND s.seq > ?1 AND s.seq < ?3 ORDER BY s.seq LIMIT 1) AS first
			FROM (SELECT DISTINCT memory_id FROM versions WHERE seq > ?2 AND seq < ?3) c) t
		JOIN versions v ON v.seq = t.at`
)

// Snapshot lists the store as of a (ResolveAsOf) in path order, without
// content. Errors: CodeNotFound (no store).
func (db *DB) Snapshot(ctx context.Context, a *AsOf) ([]SnapshotFile, error) {
	var out []SnapshotFile
	err := db.read(ctx, "list a store as of a moment", func(r *run) error {
		seq, err := db.storeSeq(r, a.StoreID)
		if err != nil {
			return err
		}
		out, err = snapshot(r, seq, a.StoreID, a.Pos)
		return err
	})
	return out, err
}

func snapshot(r *run, storeSeq int64, storeID string, pos int64) ([]SnapshotFile, error) {
	lo, hi := versionRange(storeSeq)
	var out []SnapshotFile
	rows, err := r.query(snapshotLive, storeSeq, pos)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var f SnapshotFile
		m := &f.Memory
		var created, updated int64
		var at, aid sql.NullString
		if err := rows.Scan(&m.ID, &m.Path, &f.seq, &m.VersionID, &m.ContentSHA256, &m.ContentSize, &created, &updated, &at, &aid); err != nil {
			rows.Close()
			return nil, err
		}
		m.StoreID, m.CreatedAt, m.UpdatedAt = storeID, fromNanos(created), fromNanos(updated)
		if at.Valid {
			f.Writer = &Actor{Type: at.String, ID: aid.String}
		}
		out = append(out, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = r.query(snapshotThen, lo, pos, hi)
	if err != nil {
		return nil, err
	}
	var redacted bool
	for rows.Next() {
		var f SnapshotFile
		var created, first int64
		var op string
		var id, at, aid, path, sha sql.NullString
		var red, size sql.NullInt64
		m := &f.Memory
		if err := rows.Scan(&first, &f.seq, &id, &m.ID, &op, &created, &at, &aid, &red, &path, &sha, &size); err != nil {
			rows.Close()
			return nil, err
		}
		if Operation(op) == OpDeleted {
			continue
		}
		m.StoreID, m.Path, m.ContentSHA256, m.ContentSize = storeID, path.String, sha.String, int(size.Int64)
		m.VersionID = id.String
		if !id.Valid {
			m.VersionID = versionID(f.seq, created)
		}
		m.CreatedAt, m.UpdatedAt = fromNanos(first), fromNanos(created)
		if at.Valid {
			f.Writer = &Actor{Type: at.String, ID: aid.String}
		}
		if f.Redacted = red.Valid; f.Redacted {
			redacted = true
		}
		out = append(out, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if redacted {
		placed, err := redactedPlaces(r, storeSeq, storeID)
		if err != nil {
			return nil, err
		}
		at := make(map[int64]string, len(placed))
		for _, p := range placed {
			at[p.seq] = p.path
		}
		keep := out[:0]
		for _, f := range out {
			if f.Redacted {
				if f.Memory.Path = at[f.seq]; f.Memory.Path == "" {
					continue // nothing tells where it was
				}
			}
			keep = append(keep, f)
		}
		out = keep
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Memory.Path < out[j].Memory.Path })
	return out, nil
}

// SnapshotContent returns the content of a version the snapshot listed,
// as the history views show it: "" and why (redacted, or withheld by the
// credential guard: WithheldFromHistory) when they show none. Errors:
// CodeNotFound.
func (db *DB) SnapshotContent(ctx context.Context, storeID, versionID string) (content, empty string, err error) {
	err = db.read(ctx, "read a store as of a moment", func(r *run) error {
		s, err := loadStoreLite(r, storeID, false)
		if err != nil {
			return err
		}
		v, _, err := loadVersion(r, s, versionID)
		if err != nil {
			return err
		}
		content, empty = "", ""
		switch {
		case v.RedactedAt != nil:
			empty = "redacted"
		case WithheldFromHistory(s.Guard, v):
			empty = WithheldReason
		case v.Content != nil:
			content = *v.Content
		}
		return nil
	})
	return content, empty, err
}

// SnapshotOptions select what StoreAsOf lists.
type SnapshotOptions struct {
	// PathPrefix, if set, ends with '/' and keeps the memories below it.
	PathPrefix string
	// Content: each memory carries its content (redacted: none).
	Content bool
}

// StoreAsOf resolves when and lists the store then, in one snapshot of
// the database: what the HTTP API and the CLI show.
func (db *DB) StoreAsOf(ctx context.Context, storeID, when string, o SnapshotOptions) (*AsOf, []SnapshotFile, error) {
	if o.PathPrefix != "" && (!strings.HasPrefix(o.PathPrefix, "/") || !strings.HasSuffix(o.PathPrefix, "/")) {
		return nil, nil, errorf(CodeInvalid, "path_prefix %q must begin and end with '/'", o.PathPrefix)
	}
	var a *AsOf
	var out []SnapshotFile
	err := db.read(ctx, "list a store as of a moment", func(r *run) error {
		s, err := loadStore(r, storeID)
		if err != nil {
			return err
		}
		if a, err = resolveAsOf(r, s, when); err != nil {
			return err
		}
		all, err := snapshot(r, s.seq, s.ID, a.Pos)
		if err != nil {
			return err
		}
		out = all[:0]
		for _, f := range all {
			if strings.HasPrefix(f.Memory.Path, o.PathPrefix) {
				out = append(out, f)
			}
		}
		if !o.Content {
			return nil
		}
		for i := range out {
			f := &out[i]
			if f.Redacted {
				continue
			}
			c, err := headContent(r, f.seq)
			if err != nil {
				return err
			}
			f.Memory.Content = &c
		}
		return nil
	})
	return a, out, err
}
