package webui

import (
	"net/http"
	"net/url"

	"github.com/memfs/memfs/versions"
)

// An action is asked for with a GET of its confirmation page, which says
// what will happen, and done by the POST of that page's form. Each one
// writes through the engine as the signed-in key's api_actor: a restore
// and an undelete append one version, a redaction changes one version's
// content to nothing (and the engine refuses it for a head).

// action is a version and what may be done to it.
type action struct {
	Name    string // restore, undelete or redact
	V       *versions.Version
	Source  *versions.Version // undelete: the version whose content comes back
	Path    string
	IsHead  bool
	Problem string // why it cannot be done, if it cannot
}

func (u *UI) loadAction(r *http.Request, st *versions.Store) (*action, error) {
	ctx := r.Context()
	v, err := u.db.GetVersion(ctx, st.ID, r.PathValue("version"))
	if err != nil {
		return nil, err
	}
	prev, err := u.db.PreviousVersion(ctx, st.ID, v.ID)
	if err != nil {
		return nil, err
	}
	head, err := u.headOf(r, st.ID, v.MemoryID)
	if err != nil {
		return nil, err
	}
	a := &action{Name: r.PathValue("action"), V: v, Path: versionPath(v, prev), IsHead: head != nil && head.VersionID == v.ID}
	switch a.Name {
	case "restore":
		switch {
		case v.RedactedAt != nil:
			a.Problem = "this version was redacted: it has no content to restore"
		case v.Operation == versions.OpDeleted:
			a.Problem = "this version records a deletion: undelete it instead"
		case a.IsHead:
			a.Problem = "this version is already the file's current content"
		}
	case "undelete":
		switch {
		case v.Operation != versions.OpDeleted:
			a.Problem = "this version is not a deletion"
		case head != nil:
			a.Problem = "this memory was brought back already"
		case prev == nil || prev.Content == nil:
			a.Problem = "the version before this deletion has no content left (redacted or pruned): restore another version"
		}
		a.Source = prev
	case "redact":
		switch {
		case v.RedactedAt != nil:
			a.Problem = "this version is redacted already"
		case a.IsHead:
			a.Problem = "this version is the file's current content, which cannot be redacted: save a new version (or delete the file) first"
		}
	default:
		return nil, refusal(http.StatusNotFound, "there is no action "+a.Name+": the actions are restore, undelete and redact")
	}
	return a, nil
}

func (u *UI) confirmPage(w http.ResponseWriter, r *http.Request, me *who) error {
	if me.key.ReadOnly {
		return refusal(http.StatusForbidden, "your API key is read-only: it changes nothing; sign in with a read-write key")
	}
	st, err := u.storeOf(r, me)
	if err != nil {
		return err
	}
	a, err := u.loadAction(r, st)
	if err != nil {
		return err
	}
	u.render(w, r, me, http.StatusOK, "confirm", a.Name, map[string]any{"Store": st, "A": a})
	return nil
}

func (u *UI) act(w http.ResponseWriter, r *http.Request, me *who) error {
	st, err := u.storeOf(r, me)
	if err != nil {
		return err
	}
	a, err := u.loadAction(r, st)
	if err != nil {
		return err
	}
	if a.Problem != "" {
		return refusal(http.StatusConflict, a.Problem)
	}
	by := versions.Actor{Type: "api_actor", ID: me.key.ID}
	ctx := r.Context()
	path := a.Path
	switch a.Name {
	case "restore":
		m, err := u.db.Restore(ctx, st.ID, a.V.ID, "", by)
		if err != nil {
			return err
		}
		path = m.Path
	case "undelete":
		m, err := u.db.Restore(ctx, st.ID, a.Source.ID, "", by)
		if err != nil {
			return err
		}
		path = m.Path
	case "redact":
		if _, err := u.db.RedactVersion(ctx, st.ID, a.V.ID, by); err != nil {
			return err
		}
	}
	u.o.Logger.Info("web UI action", "action", a.Name, "store", st.ID, "version", a.V.ID, "api_key_id", me.key.ID)
	if path == "" {
		http.Redirect(w, r, pagePath("stores", st.ID, ""), http.StatusSeeOther)
		return nil
	}
	http.Redirect(w, r, pagePath("stores", st.ID, "history")+"?"+url.Values{"path": {path}}.Encode(), http.StatusSeeOther)
	return nil
}
