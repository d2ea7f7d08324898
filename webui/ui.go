// Package webui is the web page of `memfs serve` at /ui/: stores, trees,
// file histories, diffs, sessions, and the actions that undo what agents
// wrote (restore, undelete, redact), each one new version attributed to the
// signed-in API key. Pages are rendered on the server with html/template,
// which escapes every name, path and content by context; the one script,
// static/ui.js, only reloads a page's live part when the store's change feed
// moves. Assets are embedded: nothing is fetched from elsewhere.
package webui

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/memfs/memfs/httpapi"
	"github.com/memfs/memfs/versions"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configure the UI. Zero values mean the defaults noted.
type Options struct {
	// IdleTimeout ends a sign-in unused for this long (default 30 minutes);
	// MaxLifetime ends it anyway (default 12 hours).
	IdleTimeout, MaxLifetime time.Duration
	// PollInterval is how often the live pages look for changes on SQLite
	// (default 100 ms); PostgreSQL wakes them by notification.
	PollInterval time.Duration
	Logger       *slog.Logger
}

// UI is the web page's handler, mounted at /ui/.
type UI struct {
	db       *versions.DB
	o        Options
	mux      *http.ServeMux
	pages    map[string]*template.Template
	sessions *sessions
	limiter  signInLimiter
}

// New makes the UI over db.
func New(db *versions.DB, o Options) *UI {
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 30 * time.Minute
	}
	if o.MaxLifetime <= 0 {
		o.MaxLifetime = 12 * time.Hour
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 100 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	u := &UI{db: db, o: o, mux: http.NewServeMux(), sessions: newSessions(db, o.IdleTimeout, o.MaxLifetime)}
	u.limiter.now = time.Now
	u.pages = parsePages()
	u.routes()
	return u
}

func (u *UI) routes() {
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/ui/static/", http.FileServerFS(static))
	u.mux.Handle("GET /ui/static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=3600")
		files.ServeHTTP(w, r)
	}))
	u.mux.HandleFunc("GET /ui/signin", u.signInPage)
	u.mux.HandleFunc("POST /ui/signin", u.signIn)
	u.mux.HandleFunc("POST /ui/signout", u.signOut)
	u.page("GET /ui/{$}", u.storesPage)
	u.page("GET /ui/stores/{store}/{$}", u.treePage)
	u.page("GET /ui/stores/{store}/history", u.historyPage)
	u.page("GET /ui/stores/{store}/search", u.searchPage)
	u.page("GET /ui/stores/{store}/versions/{version}", u.versionPage)
	u.page("GET /ui/stores/{store}/diff", u.diffPage)
	u.page("GET /ui/stores/{store}/versions/{version}/{action}", u.confirmPage)
	u.page("POST /ui/stores/{store}/versions/{version}/{action}", u.act)
	u.page("GET /ui/sessions", u.sessionsPage)
	u.page("GET /ui/sessions/{session}", u.sessionPage)
	u.page("GET /ui/sessions/{session}/undo", u.undoPage)
	u.page("POST /ui/sessions/{session}/undo", u.undo)
	u.mux.HandleFunc("GET /ui/stores/{store}/events", u.events)
}

// ServeHTTP answers a request under /ui/.
func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin") // no-referrer would make the browser send "Origin: null" with forms
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	if r.URL.Path == "/ui" {
		http.Redirect(w, r, "/ui/", http.StatusFound)
		return
	}
	u.mux.ServeHTTP(w, r)
}

// pageFunc renders one page for a signed-in browser; what it returns is
// shown as an error page.
type pageFunc func(w http.ResponseWriter, r *http.Request, me *who) error

// page registers a route that needs a signed-in browser: without one, a
// GET goes to the sign-in page and anything else is refused. Every POST
// is checked for its origin and its CSRF token, and refused for a
// read-only key, before its handler runs.
func (u *UI) page(pattern string, h pageFunc) {
	u.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		me, err := u.authenticate(r.Context(), r)
		if err != nil {
			u.fail(w, r, nil, err)
			return
		}
		if me == nil {
			if r.Method == http.MethodGet {
				http.Redirect(w, r, "/ui/signin", http.StatusSeeOther)
				return
			}
			u.fail(w, r, nil, refusal(http.StatusUnauthorized, "you are not signed in (or your sign-in ended): sign in again with an API key"))
			return
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
			switch {
			case !sameOrigin(r) || !me.csrfOK(r):
				u.fail(w, r, me, refusal(http.StatusForbidden, "this change did not come from a page of this server (its form token is missing or wrong): reload the page and try again"))
				return
			case me.key.ReadOnly:
				u.fail(w, r, me, refusal(http.StatusForbidden, "your API key is read-only: it changes nothing; sign in with a read-write key"))
				return
			}
		}
		if err := h(w, r, me); err != nil {
			u.fail(w, r, me, err)
		}
	})
}

// refused is an error with the status and message a person sees.
type refused struct {
	status int
	msg    string
}

func (e *refused) Error() string { return e.msg }

func refusal(status int, msg string) error { return &refused{status, msg} }

// fail shows err as an error page: the engine's message for its errors,
// never the details of an internal one (the log has those).
func (u *UI) fail(w http.ResponseWriter, r *http.Request, me *who, err error) {
	status, msg := http.StatusInternalServerError, ""
	var rf *refused
	if errors.As(err, &rf) {
		status, msg = rf.status, rf.msg
	} else {
		var b httpapi.Body
		status, b = httpapi.NewBody(err)
		msg = b.Error.Message
	}
	if status >= 500 && !errors.Is(err, context.Canceled) {
		u.o.Logger.Error("web UI request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	u.render(w, r, me, status, "error", "Error", map[string]any{"Status": status, "StatusText": http.StatusText(status), "Message": msg})
}

// view is what every page's layout shows.
type view struct {
	Title string
	Me    *viewer
	CSRF  string
	// Live is the change feed the page follows (events URL), if any.
	Live string
	Data any
}

// viewer is the signed-in key as a page shows it.
type viewer struct {
	KeyID, KeyName string
	ReadOnly       bool
	AllStores      bool
}

func (u *UI) render(w http.ResponseWriter, r *http.Request, me *who, status int, name, title string, data any) {
	u.renderLive(w, r, me, status, name, title, "", data)
}

func (u *UI) renderLive(w http.ResponseWriter, r *http.Request, me *who, status int, name, title, live string, data any) {
	v := view{Title: title, Live: live, Data: data}
	if me != nil {
		v.Me = &viewer{KeyID: me.key.ID, KeyName: me.key.Name, ReadOnly: me.key.ReadOnly, AllStores: me.key.AllStores()}
		v.CSRF = me.sess.CSRF
	}
	var buf bytes.Buffer
	if err := u.pages[name].ExecuteTemplate(&buf, "layout", v); err != nil {
		u.o.Logger.Error("web UI page failed to render", "page", name, "err", err)
		http.Error(w, "internal error: the server's log has the details", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// storeOf is the store a route names, if the key reaches it; a store
// outside the key's scope is not found, as in the API.
func (u *UI) storeOf(r *http.Request, me *who) (*versions.Store, error) {
	id := r.PathValue("store")
	if !me.key.Reaches(id) {
		return nil, versions.StoreNotFound(id)
	}
	return u.db.GetStore(r.Context(), id)
}

// pagePath is a page's path in the URL of a link or form.
func pagePath(parts ...string) string { return "/ui/" + strings.Join(parts, "/") }
