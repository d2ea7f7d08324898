package versions

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// APIKey is a key of the HTTP API, without the key itself: only its hash is
// kept.
type APIKey struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Hint      string     `json:"partial_key_hint"` // the key's prefix and last characters
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at"`
	APIKeyScope
}

// APIKeyScope is what a key reaches. The zero scope is every store, read
// and write.
type APIKeyScope struct {
	// StoreIDs, when not nil, are the only stores the key reaches (an
	// empty list: none, as when every store it named was deleted).
	StoreIDs []string `json:"store_ids"`
	// ReadOnly keys change nothing.
	ReadOnly bool `json:"read_only"`
	// SessionID: the key was made for this session, and may act as it
	// (X-Memfs-Session); its stores are the session's.
	SessionID string `json:"session_id,omitempty"`
	// AnySession: a key of every store made to act as any session.
	AnySession bool `json:"any_session,omitempty"`
}

// MayActAs tells whether the key may act as session id: it was made for
// that session, or it reaches every store and was made to act as any.
func (s APIKeyScope) MayActAs(id string) bool {
	return id != "" && (s.SessionID == id || s.AnySession && s.AllStores())
}

// Reaches tells whether the scope includes the store.
func (s APIKeyScope) Reaches(storeID string) bool {
	return s.StoreIDs == nil || slices.Contains(s.StoreIDs, storeID)
}

// AllStores tells whether the scope is every store, the ones made later too.
func (s APIKeyScope) AllStores() bool { return s.StoreIDs == nil }

func (k APIKey) MarshalJSON() ([]byte, error) {
	type plain APIKey
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
	}{"api_key", plain(k)})
}

const (
	prefixAPIKey = "apikey_"
	// keyPrefix starts every key, so that a leaked one is recognisable.
	keyPrefix = "sk-memfs-"
	// MaxAPIKeyNameChars bounds a key's name.
	MaxAPIKeyNameChars = 255
)

func hashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// CreateAPIKey makes a key named name that reaches every store.
func (db *DB) CreateAPIKey(ctx context.Context, name string) (*APIKey, string, error) {
	return db.CreateScopedAPIKey(ctx, name, APIKeyScope{})
}

// CreateScopedAPIKey makes a key named name with the given scope and
// returns it with the key itself, which is not kept (only its SHA-256: 256
// random bits need no slow hash) and cannot be shown again. Every store of
// the scope must exist; archived ones may be named.
func (db *DB) CreateScopedAPIKey(ctx context.Context, name string, scope APIKeyScope) (*APIKey, string, error) {
	if n := utf8.RuneCountInString(name); !utf8.ValidString(name) || n == 0 || n > MaxAPIKeyNameChars || strings.ContainsFunc(name, isControl) {
		return nil, "", errorf(CodeInvalid, "API key name %q must be 1 to %d characters of UTF-8 text without control characters", name, MaxAPIKeyNameChars)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, "", err
	}
	secret := keyPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	if scope.AnySession && (scope.StoreIDs != nil || scope.SessionID != "") {
		return nil, "", errorf(CodeInvalid, "only a key of every store may act as any session: leave out its stores and session, or make a key for one session")
	}
	var out *APIKey
	err := db.write(ctx, "create API key", func(r *run) error {
		now := r.db.nowNanos()
		if scope.SessionID != "" {
			// A key for a session reaches the session's stores.
			sess, err := loadSession(r, scope.SessionID)
			if err != nil {
				return err
			}
			if err := sess.CheckOpen(); err != nil {
				return err
			}
			if scope.StoreIDs != nil {
				return errorf(CodeInvalid, "a key for a session reaches the session's stores: leave out --store")
			}
			scope.StoreIDs = []string{}
			for _, a := range sess.Resources {
				scope.StoreIDs = append(scope.StoreIDs, a.StoreID)
			}
		}
		k := &APIKey{ID: r.db.ids.make(prefixAPIKey, fromNanos(now)), Name: name,
			Hint: keyPrefix + "…" + secret[len(secret)-4:], CreatedAt: fromNanos(now),
			APIKeyScope: APIKeyScope{ReadOnly: scope.ReadOnly, SessionID: scope.SessionID, AnySession: scope.AnySession}}
		var session any
		if scope.SessionID != "" {
			session = scope.SessionID
		}
		if _, err := r.exec("INSERT INTO api_keys (id, name, hash, hint, created_at, scoped, read_only, session, any_session) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
			k.ID, k.Name, hashKey(secret), k.Hint, now, scope.StoreIDs != nil, scope.ReadOnly, session, scope.AnySession); err != nil {
			return err
		}
		if scope.StoreIDs != nil {
			k.StoreIDs = []string{}
		}
		for _, id := range scope.StoreIDs {
			if slices.Contains(k.StoreIDs, id) {
				continue
			}
			if _, err := loadStore(r, id); err != nil {
				return err
			}
			if _, err := r.exec("INSERT INTO api_key_stores (key_id, store_id) VALUES (?, ?)", k.ID, id); err != nil {
				return err
			}
			k.StoreIDs = append(k.StoreIDs, id)
		}
		out = k
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return out, secret, nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

const apiKeyCols = "id, name, hint, created_at, revoked_at, scoped, read_only, session, any_session"

func scanAPIKey(sc interface{ Scan(...any) error }) (*APIKey, error) {
	var k APIKey
	var created int64
	var revoked sql.NullInt64
	var scoped bool
	var session sql.NullString
	if err := sc.Scan(&k.ID, &k.Name, &k.Hint, &created, &revoked, &scoped, &k.ReadOnly, &session, &k.AnySession); err != nil {
		return nil, err
	}
	k.SessionID = session.String
	k.CreatedAt, k.RevokedAt = fromNanos(created), nullTime(revoked)
	if scoped {
		k.StoreIDs = []string{}
	}
	return &k, nil
}

// loadKeyStores fills in the stores of a scoped key.
func loadKeyStores(r *run, k *APIKey) error {
	if k.StoreIDs == nil {
		return nil
	}
	ids, err := r.strings("SELECT store_id FROM api_key_stores WHERE key_id = ? ORDER BY store_id", k.ID)
	k.StoreIDs = append(k.StoreIDs, ids...)
	return err
}

// ListAPIKeys lists every key, revoked ones too, oldest first.
func (db *DB) ListAPIKeys(ctx context.Context) ([]APIKey, error) {
	out := []APIKey{}
	err := db.one(ctx, "list API keys", func(r *run) error {
		rows, err := r.query("SELECT " + apiKeyCols + " FROM api_keys ORDER BY id")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			k, err := scanAPIKey(rows)
			if err != nil {
				return err
			}
			out = append(out, *k)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		for i := range out {
			if err := loadKeyStores(r, &out[i]); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// RevokeAPIKey makes a key refused from now on and ends the web page's
// sign-ins with it; revoking twice is harmless.
func (db *DB) RevokeAPIKey(ctx context.Context, id string) (*APIKey, error) {
	var out *APIKey
	err := db.write(ctx, "revoke API key", func(r *run) error {
		if _, err := r.exec("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", r.db.nowNanos(), id); err != nil {
			return err
		}
		// The web page's sign-ins with the key end with it.
		if _, err := r.exec("DELETE FROM ui_sessions WHERE key_id = ?", id); err != nil {
			return err
		}
		k, err := scanAPIKey(mustRow(r, "SELECT "+apiKeyCols+" FROM api_keys WHERE id = ?", id))
		if err == sql.ErrNoRows {
			return errorf(CodeNotFound, "no API key %q: check its id", id)
		}
		if err != nil {
			return err
		}
		out = k
		return loadKeyStores(r, k)
	})
	return out, err
}

func mustRow(r *run, q string, args ...any) interface{ Scan(...any) error } {
	s, err := r.stmt(q)
	if err != nil {
		return errRow{err}
	}
	return s.QueryRowContext(r.ctx, args...)
}

type errRow struct{ err error }

func (e errRow) Scan(...any) error { return e.err }

// AuthenticateAPIKey returns the live key key is, with its scope;
// CodeNotFound when it is unknown or revoked.
func (db *DB) AuthenticateAPIKey(ctx context.Context, key string) (*APIKey, error) {
	if !strings.HasPrefix(key, keyPrefix) || len(key) > 256 {
		return nil, errorf(CodeNotFound, "not an API key memfs made")
	}
	return db.liveKey(ctx, "check API key", "hash", hashKey(key), errorf(CodeNotFound, "unknown API key"))
}

// GetAPIKey returns the live key with id, with its scope; CodeNotFound when
// there is none or it was revoked. What holds a key's id rather than the
// key itself (a web page's sign-in) checks it with this on every request,
// so that a revocation takes effect at once.
func (db *DB) GetAPIKey(ctx context.Context, id string) (*APIKey, error) {
	return db.liveKey(ctx, "read API key", "id", id, errorf(CodeNotFound, "no API key %q", id))
}

// liveKey reads the key whose column col is v, with its scope: notFound
// when there is none, CodeNotFound when it was revoked.
func (db *DB) liveKey(ctx context.Context, op, col, v string, notFound error) (*APIKey, error) {
	var k *APIKey
	err := db.one(ctx, op, func(r *run) error {
		var err error
		k, err = scanAPIKey(mustRow(r, "SELECT "+apiKeyCols+" FROM api_keys WHERE "+col+" = ?", v))
		if err == sql.ErrNoRows {
			return notFound
		}
		if err != nil {
			return err
		}
		return loadKeyStores(r, k)
	})
	switch {
	case err != nil:
		return nil, err
	case k.RevokedAt != nil:
		return nil, errorf(CodeNotFound, "API key %s was revoked", k.ID)
	}
	return k, nil
}
