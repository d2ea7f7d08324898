package webui

import (
	"net/http"

	"github.com/memfs/memfs/versions"
)

// storeUndo is the undo of a session in one of its stores: the plan (a
// dry run on the confirmation page, what was written after the POST), or
// why there is none.
type storeUndo struct {
	versions.Attachment
	Plan    *versions.Plan
	Nothing bool   // the session wrote nothing there
	Problem string // the engine's refusal, as a person reads it
}

// undoSession plans (dryRun) or applies the undo of a session in each
// store it has: each one the engine's UndoSession, attributed to the key.
// A session still running is refused by the engine, as by `memfs undo`.
func (u *UI) undoSession(r *http.Request, me *who, dryRun bool) (*versions.Session, []storeUndo, error) {
	if err := sessionsAllowed(me); err != nil {
		return nil, nil, err
	}
	if me.key.ReadOnly {
		return nil, nil, refusal(http.StatusForbidden, "your API key is read-only: it changes nothing; sign in with a read-write key")
	}
	ctx := r.Context()
	s, err := u.db.GetSession(ctx, r.PathValue("session"))
	if err != nil {
		return nil, nil, err
	}
	by := versions.Actor{Type: "api_actor", ID: me.key.ID}
	var out []storeUndo
	for _, a := range s.Resources {
		su := storeUndo{Attachment: a}
		plan, err := u.db.UndoSession(ctx, a.StoreID, s.ID, versions.UndoOptions{DryRun: dryRun}, by)
		switch {
		case versions.SessionWroteNothing(err):
			su.Nothing = true
		case err != nil && versions.ErrorCode(err) != versions.CodeInternal:
			su.Problem = err.Error()
		case err != nil:
			return nil, nil, err
		default:
			su.Plan = plan
		}
		out = append(out, su)
	}
	return s, out, nil
}

func (u *UI) undoPage(w http.ResponseWriter, r *http.Request, me *who) error {
	s, stores, err := u.undoSession(r, me, true)
	if err != nil {
		return err
	}
	u.render(w, r, me, http.StatusOK, "undo", "Undo "+s.ID, map[string]any{"S": s, "Stores": stores, "Done": false})
	return nil
}

func (u *UI) undo(w http.ResponseWriter, r *http.Request, me *who) error {
	s, stores, err := u.undoSession(r, me, false)
	if err != nil {
		return err
	}
	u.o.Logger.Info("web UI action", "action", "undo session", "session", s.ID, "api_key_id", me.key.ID)
	u.render(w, r, me, http.StatusOK, "undo", "Undone "+s.ID, map[string]any{"S": s, "Stores": stores, "Done": true})
	return nil
}
