package webui

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/memfs/memfs/versions"
)

// cookieName is the sign-in cookie; it is scoped to the UI's paths.
const cookieName = "memfs_ui"

// sessions are the signed-in browsers. They are kept in the database
// (versions.UISession), so that every `memfs serve` on it knows them:
// several behind one address, or one restarted. The cookie is a random
// token of which the database keeps only the SHA-256. A session holds the
// key's id, never the key: the key itself is read once, at sign-in, and
// each request reads the key by id again (versions.DB.GetAPIKey), so that
// a revocation or a change of scope takes effect at once.
type sessions struct {
	db      *versions.DB
	idle    time.Duration
	maxLife time.Duration
	now     func() time.Time
}

func newSessions(db *versions.DB, idle, maxLife time.Duration) *sessions {
	return &sessions{db: db, idle: idle, maxLife: maxLife, now: time.Now}
}

func randomToken() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// start makes a session for keyID and returns its cookie value; the
// sign-ins that have lapsed end with it.
func (s *sessions) start(ctx context.Context, keyID string) (string, error) {
	now := s.now()
	token := randomToken()
	err := s.db.CreateUISession(ctx, token, versions.UISession{KeyID: keyID, CSRF: randomToken(), CreatedAt: now, LastSeenAt: now},
		now.Add(-s.idle), now.Add(-s.maxLife))
	return token, err
}

func (s *sessions) expired(u *versions.UISession, now time.Time) bool {
	return now.Sub(u.LastSeenAt) > s.idle || now.Sub(u.CreatedAt) > s.maxLife
}

// touchEvery is how old a session's recorded last use may grow before a
// request records it again: recording every click would make every page
// view a write, and the idle time is counted to within this anyway.
func (s *sessions) touchEvery() time.Duration { return min(time.Minute, s.idle/10) }

// get returns the live session of a cookie value, or nil; touch marks it
// used (a person's request does, a live page's wait does not).
func (s *sessions) get(ctx context.Context, token string, touch bool) (*versions.UISession, error) {
	u, err := s.db.GetUISession(ctx, token)
	if versions.ErrorCode(err) == versions.CodeNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	now := s.now()
	if s.expired(u, now) {
		return nil, s.end(ctx, token)
	}
	if touch && now.Sub(u.LastSeenAt) > s.touchEvery() {
		if err := s.db.TouchUISession(ctx, token, now); err != nil {
			return nil, err
		}
		u.LastSeenAt = now
	}
	return u, nil
}

// end forgets a session (sign-out, or it lapsed).
func (s *sessions) end(ctx context.Context, token string) error {
	return s.db.EndUISession(ctx, token)
}

// signInLimiter bounds sign-in attempts per client address: a burst of
// signInBurst, then one every signInEvery.
type signInLimiter struct {
	mu      sync.Mutex // guards buckets
	buckets map[string]*bucket
	now     func() time.Time
}

type bucket struct {
	tokens float64
	at     time.Time
}

const (
	signInBurst   = 10
	signInEvery   = 6 * time.Second
	maxSignInHost = 10000
)

func (l *signInLimiter) allow(host string) bool {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buckets == nil {
		l.buckets = map[string]*bucket{}
	}
	b, ok := l.buckets[host]
	if !ok {
		if len(l.buckets) >= maxSignInHost {
			for h, o := range l.buckets {
				if now.Sub(o.at) > signInBurst*signInEvery {
					delete(l.buckets, h)
				}
			}
			if len(l.buckets) >= maxSignInHost {
				return false
			}
		}
		b = &bucket{tokens: signInBurst, at: now}
		l.buckets[host] = b
	}
	b.tokens = min(signInBurst, b.tokens+float64(now.Sub(b.at))/float64(signInEvery))
	b.at = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// clientHost is the address a request came from, without its port.
func clientHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// private tells whether a key may cross this connection: TLS, or a client
// on this host (the loopback network never leaves it).
func private(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	ip := net.ParseIP(clientHost(r))
	return ip != nil && ip.IsLoopback()
}

// who is the signed-in browser of a request: its session and its key.
type who struct {
	token string
	sess  *versions.UISession
	key   *versions.APIKey
}

type whoKey struct{}

func whoOf(r *http.Request) *who {
	w, _ := r.Context().Value(whoKey{}).(*who)
	return w
}

// authenticate finds the request's session and reads its key again; nil
// when there is no live session or its key was revoked (the session then
// ends).
func (u *UI) authenticate(ctx context.Context, r *http.Request) (*who, error) {
	return u.signedIn(ctx, r, true)
}

func (u *UI) signedIn(ctx context.Context, r *http.Request, touch bool) (*who, error) {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return nil, nil
	}
	sess, err := u.sessions.get(ctx, c.Value, touch)
	if sess == nil || err != nil {
		return nil, err
	}
	k, err := u.db.GetAPIKey(ctx, sess.KeyID)
	if versions.ErrorCode(err) == versions.CodeNotFound {
		// Revoked: revoking ended the key's sign-ins already.
		return nil, u.sessions.end(ctx, c.Value)
	}
	if err != nil {
		return nil, err
	}
	return &who{token: c.Value, sess: sess, key: k}, nil
}

// csrfOK checks a change's form token against the session's.
func (w *who) csrfOK(r *http.Request) bool {
	got := r.PostFormValue("csrf")
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(w.sess.CSRF)) == 1
}

// sameOrigin refuses a POST another site's page sent: browsers name the
// sending page's origin (Origin) or its relation (Sec-Fetch-Site).
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	if o := r.Header.Get("Origin"); o != "" {
		scheme := "http://"
		if r.TLS != nil {
			scheme = "https://"
		}
		return o == scheme+r.Host
	}
	return true
}

func setCookie(w http.ResponseWriter, r *http.Request, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: value, Path: "/ui/", MaxAge: maxAge,
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode,
	})
}
