package webui

import (
	"net/http"
	"strings"

	"github.com/memfs/memfs/versions"
)

func (u *UI) signInPage(w http.ResponseWriter, r *http.Request) {
	if me, err := u.authenticate(r.Context(), r); err == nil && me != nil {
		http.Redirect(w, r, "/ui/", http.StatusSeeOther)
		return
	}
	u.showSignIn(w, r, http.StatusOK, "")
}

func (u *UI) showSignIn(w http.ResponseWriter, r *http.Request, status int, msg string) {
	u.render(w, r, nil, status, "signin", "Sign in", map[string]any{"Message": msg, "Private": private(r)})
}

// signIn takes an API key posted once and answers with the session cookie.
// The key is never put in a URL, a cookie or a log line.
func (u *UI) signIn(w http.ResponseWriter, r *http.Request) {
	switch {
	case !private(r):
		u.showSignIn(w, r, http.StatusForbidden, "sign-in is refused over plain HTTP from another host: the key would cross the network in clear text. Serve with --tls-cert and --tls-key, or open the page on the server's own host.")
		return
	case !sameOrigin(r):
		u.showSignIn(w, r, http.StatusForbidden, "this sign-in did not come from this server's page: open /ui/signin and sign in there.")
		return
	case !u.limiter.allow(clientHost(r)):
		w.Header().Set("Retry-After", "6")
		u.showSignIn(w, r, http.StatusTooManyRequests, "too many sign-in attempts from your address: wait a minute, then try again.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	key := strings.TrimSpace(r.PostFormValue("key"))
	if key == "" {
		u.showSignIn(w, r, http.StatusBadRequest, "give an API key (make one with `memfs apikey create --name NAME`).")
		return
	}
	k, err := u.db.AuthenticateAPIKey(r.Context(), key)
	switch versions.ErrorCode(err) {
	case versions.CodeNotFound, versions.CodeInvalid:
		u.o.Logger.Info("web UI sign-in refused: unknown or revoked key", "client", clientHost(r))
		u.showSignIn(w, r, http.StatusUnauthorized, "that API key is unknown or revoked: check it, or make one with `memfs apikey create --name NAME`.")
		return
	}
	if err != nil {
		u.fail(w, r, nil, err)
		return
	}
	token, err := u.sessions.start(r.Context(), k.ID)
	if err != nil {
		u.fail(w, r, nil, err)
		return
	}
	setCookie(w, r, token, 0)
	u.o.Logger.Info("web UI sign-in", "api_key_id", k.ID, "client", clientHost(r))
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

// signOut ends the session; it needs the session's form token, so that
// another site cannot sign a browser out.
func (u *UI) signOut(w http.ResponseWriter, r *http.Request) {
	me, err := u.authenticate(r.Context(), r)
	if err != nil {
		u.fail(w, r, nil, err)
		return
	}
	if me != nil {
		if !sameOrigin(r) || !me.csrfOK(r) {
			u.fail(w, r, me, refusal(http.StatusForbidden, "this sign-out did not come from a page of this server: use the Sign out button"))
			return
		}
		if err := u.sessions.end(r.Context(), me.token); err != nil {
			u.fail(w, r, me, err)
			return
		}
	}
	setCookie(w, r, "", -1)
	http.Redirect(w, r, "/ui/signin", http.StatusSeeOther)
}
