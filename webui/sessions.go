package webui

import (
	"net/http"

	"github.com/memfs/memfs/versions"
)

// Sessions are reached only with a key for every store, as in the API: a
// session attaches stores of any scope, and its page names them.
func sessionsAllowed(me *who) error {
	if !me.key.AllStores() {
		return refusal(http.StatusForbidden, "your API key is scoped to some stores, and sessions are shown only to a key for every store (a session can attach any store)")
	}
	return nil
}

func (u *UI) sessionsPage(w http.ResponseWriter, r *http.Request, me *who) error {
	if err := sessionsAllowed(me); err != nil {
		return err
	}
	page, err := u.db.ListSessions(r.Context(), versions.SessionListOptions{Newest: true, IncludeArchived: true, Limit: 100, Page: r.URL.Query().Get("page")})
	if err != nil {
		return err
	}
	next := ""
	if page.NextPage != nil {
		next = *page.NextPage
	}
	u.render(w, r, me, http.StatusOK, "sessions", "Sessions", map[string]any{"Sessions": page.Data, "Next": next})
	return nil
}

// sessionStore is what a session changed in one of its stores.
type sessionStore struct {
	versions.Attachment
	Versions []versions.Version
	More     bool
	Gone     bool // the store was deleted since
}

// maxSessionVersions bounds what a session's page lists per store.
const maxSessionVersions = 500

func (u *UI) sessionPage(w http.ResponseWriter, r *http.Request, me *who) error {
	if err := sessionsAllowed(me); err != nil {
		return err
	}
	ctx := r.Context()
	s, err := u.db.GetSession(ctx, r.PathValue("session"))
	if err != nil {
		return err
	}
	var stores []sessionStore
	for _, a := range s.Resources {
		ss := sessionStore{Attachment: a}
		page, err := u.db.ListVersions(ctx, a.StoreID, versions.VersionListOptions{SessionID: s.ID, Limit: maxSessionVersions})
		switch {
		case versions.ErrorCode(err) == versions.CodeNotFound:
			ss.Gone = true
		case err != nil:
			return err
		default:
			ss.Versions, ss.More = page.Data, page.NextPage != nil
		}
		stores = append(stores, ss)
	}
	u.render(w, r, me, http.StatusOK, "session", s.ID, map[string]any{"S": s, "Stores": stores})
	return nil
}
