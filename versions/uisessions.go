package versions

import (
	"context"
	"database/sql"
	"time"
)

// UISession is a sign-in of the web page: the API key it signed in with
// (its id: the key itself is not kept), the form token its pages carry,
// and when it began and was last used. It is found by its cookie, of
// which only the SHA-256 is kept; what ends it when (idle, too old) is the
// web page's rule, applied to these times.
type UISession struct {
	KeyID      string
	CSRF       string
	CreatedAt  time.Time
	LastSeenAt time.Time
}

// MaxUISessionsPerKey bounds the sign-ins of one key: a new one beyond it
// ends the key's oldest.
const MaxUISessionsPerKey = 100

// CreateUISession records a sign-in whose cookie is token. The key must
// exist. In the same transaction it ends the sign-ins that have lapsed,
// last used before idleSince or begun before startedBefore, so that the
// table holds only live ones and those lapsed since the last sign-in, and
// the key's oldest beyond MaxUISessionsPerKey.
func (db *DB) CreateUISession(ctx context.Context, token string, s UISession, idleSince, startedBefore time.Time) error {
	return db.write(ctx, "record web page sign-in", func(r *run) error {
		if _, err := r.exec("DELETE FROM ui_sessions WHERE last_seen_at < ? OR created_at < ?", idleSince.UnixNano(), startedBefore.UnixNano()); err != nil {
			return err
		}
		if _, err := r.exec("INSERT INTO ui_sessions (token_hash, key_id, csrf, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?)",
			hashKey(token), s.KeyID, s.CSRF, s.CreatedAt.UnixNano(), s.LastSeenAt.UnixNano()); err != nil {
			return err
		}
		_, err := r.exec(`DELETE FROM ui_sessions WHERE key_id = ? AND token_hash NOT IN
			(SELECT token_hash FROM ui_sessions WHERE key_id = ? ORDER BY created_at DESC, token_hash LIMIT ?)`,
			s.KeyID, s.KeyID, MaxUISessionsPerKey)
		return err
	})
}

// GetUISession returns the sign-in whose cookie is token; CodeNotFound
// when there is none (never made, ended, or its key revoked).
func (db *DB) GetUISession(ctx context.Context, token string) (*UISession, error) {
	var s UISession
	err := db.one(ctx, "read web page sign-in", func(r *run) error {
		var created, seen int64
		err := r.scan("SELECT key_id, csrf, created_at, last_seen_at FROM ui_sessions WHERE token_hash = ?",
			[]any{hashKey(token)}, &s.KeyID, &s.CSRF, &created, &seen)
		if err == sql.ErrNoRows {
			return errorf(CodeNotFound, "no such web page sign-in")
		}
		s.CreatedAt, s.LastSeenAt = fromNanos(created), fromNanos(seen)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// TouchUISession records that the sign-in whose cookie is token was used
// at at (never moving its time back).
func (db *DB) TouchUISession(ctx context.Context, token string, at time.Time) error {
	return db.write(ctx, "touch web page sign-in", func(r *run) error {
		_, err := r.exec("UPDATE ui_sessions SET last_seen_at = ? WHERE token_hash = ? AND last_seen_at < ?",
			at.UnixNano(), hashKey(token), at.UnixNano())
		return err
	})
}

// EndUISession ends the sign-in whose cookie is token; ending one that is
// gone is harmless.
func (db *DB) EndUISession(ctx context.Context, token string) error {
	return db.write(ctx, "end web page sign-in", func(r *run) error {
		_, err := r.exec("DELETE FROM ui_sessions WHERE token_hash = ?", hashKey(token))
		return err
	})
}
