package httpapi

import (
	"net/http"
	"strings"

	"github.com/memfs/memfs/versions"
)

// memfs's own routes for a store as of any moment: checkpoints, the store
// as of a moment, restore --as-of, undo of a session and fork. They live
// under /memfs/v1/ so that the hosted API's routes stay exactly its own;
// a key's scope holds as on /v1/ (checkScope), and a read-only key
// reaches only the GET routes.
func (s *Server) timeTravelRoutes() {
	const store = "/memfs/v1/memory_stores/{memory_store_id}"
	s.Handle("GET "+store+"/checkpoints", s.listCheckpoints)
	s.Handle("POST "+store+"/checkpoints", s.createCheckpoint)
	s.Handle("GET "+store+"/checkpoints/{name}", s.getCheckpoint)
	s.Handle("DELETE "+store+"/checkpoints/{name}", s.deleteCheckpoint)
	s.Handle("GET "+store+"/as_of", s.storeAsOf)
	s.Handle("POST "+store+"/restore", s.restoreAsOf)
	s.Handle("POST "+store+"/undo", s.undoInStore)
	s.Handle("POST "+store+"/fork", s.forkStore)
	s.Handle("POST /memfs/v1/sessions/{session_id}/undo", s.undoSession)
}

// isForkRoute: the request forks a store (it creates one).
func isForkRoute(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/memfs/v1/memory_stores/") && strings.HasSuffix(r.URL.Path, "/fork")
}

func (s *Server) listCheckpoints(w http.ResponseWriter, r *http.Request) error {
	sid, err := StoreID(r)
	if err != nil {
		return err
	}
	list, err := s.db.ListCheckpoints(r.Context(), sid)
	if err != nil {
		return err
	}
	return ok(w, versions.Page[versions.Checkpoint]{Data: list})
}

func (s *Server) createCheckpoint(w http.ResponseWriter, r *http.Request) error {
	sid, err := StoreID(r)
	if err != nil {
		return err
	}
	var p struct {
		Name string `json:"name"`
		Note string `json:"note"`
	}
	if err := DecodeBody(w, r, smallBody, &p); err != nil {
		return err
	}
	cp, err := s.db.CreateCheckpoint(r.Context(), sid, versions.CheckpointOptions{Name: p.Name, Note: p.Note}, Actor(r))
	if err != nil {
		return err
	}
	return ok(w, cp)
}

func (s *Server) getCheckpoint(w http.ResponseWriter, r *http.Request) error {
	sid, err := StoreID(r)
	if err != nil {
		return err
	}
	cp, err := s.db.GetCheckpoint(r.Context(), sid, r.PathValue("name"))
	if err != nil {
		return err
	}
	return ok(w, cp)
}

func (s *Server) deleteCheckpoint(w http.ResponseWriter, r *http.Request) error {
	sid, err := StoreID(r)
	if err != nil {
		return err
	}
	cp, err := s.db.DeleteCheckpoint(r.Context(), sid, r.PathValue("name"))
	if err != nil {
		return err
	}
	return ok(w, map[string]string{"type": "memory_checkpoint_deleted", "memory_store_id": sid, "name": cp.Name})
}

// storeAsOf lists the store as of ?when= (path_prefix, view as the
// memory listing takes them; no paging: a store holds at most its limit).
func (s *Server) storeAsOf(w http.ResponseWriter, r *http.Request) error {
	sid, err := StoreID(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	when := q.Get("when")
	if when == "" {
		return invalid("when is required: a session id, a checkpoint's name, a date (2026-12-01) or an RFC 3339 time")
	}
	o := versions.SnapshotOptions{PathPrefix: q.Get("path_prefix")}
	switch v := q.Get("view"); v {
	case "", string(versions.ViewBasic):
	case string(versions.ViewFull):
		o.Content = true
	default:
		return invalid("view %q is not basic or full", v)
	}
	a, files, err := s.db.StoreAsOf(r.Context(), sid, when, o)
	if err != nil {
		return err
	}
	if files == nil {
		files = []versions.SnapshotFile{}
	}
	return ok(w, struct {
		Type     string                  `json:"type"`
		StoreID  string                  `json:"memory_store_id"`
		AsOf     *versions.AsOf          `json:"as_of"`
		Data     []versions.SnapshotFile `json:"data"`
		NextPage *string                 `json:"next_page"`
	}{"memory_store_as_of", sid, a, files, nil})
}

func (s *Server) restoreAsOf(w http.ResponseWriter, r *http.Request) error {
	sid, err := StoreID(r)
	if err != nil {
		return err
	}
	var p struct {
		AsOf   string `json:"as_of"`
		DryRun bool   `json:"dry_run"`
	}
	if err := DecodeBody(w, r, smallBody, &p); err != nil {
		return err
	}
	if p.AsOf == "" {
		return invalid("as_of is required: a session id, a checkpoint's name, a date (2026-12-01) or an RFC 3339 time")
	}
	plan, err := s.db.RestoreAsOf(r.Context(), sid, p.AsOf, p.DryRun, Actor(r))
	if err != nil {
		return err
	}
	return ok(w, plan)
}

type undoBody struct {
	SessionID string `json:"session_id"`
	DryRun    bool   `json:"dry_run"`
	Force     bool   `json:"force"`
}

func (s *Server) undoInStore(w http.ResponseWriter, r *http.Request) error {
	sid, err := StoreID(r)
	if err != nil {
		return err
	}
	var p undoBody
	if err := DecodeBody(w, r, smallBody, &p); err != nil {
		return err
	}
	if p.SessionID == "" {
		return invalid("session_id is required: the session whose changes to undo")
	}
	plan, err := s.db.UndoSession(r.Context(), sid, p.SessionID, versions.UndoOptions{DryRun: p.DryRun, Force: p.Force}, Actor(r))
	if err != nil {
		return err
	}
	return ok(w, plan)
}

// undoSession undoes a session in each store it is attached to that it
// wrote in.
func (s *Server) undoSession(w http.ResponseWriter, r *http.Request) error {
	sessionID, err := id(r, "session_id", "sesn_")
	if err != nil {
		return err
	}
	var p undoBody
	if err := DecodeBody(w, r, smallBody, &p); err != nil {
		return err
	}
	sess, err := s.db.GetSession(r.Context(), sessionID)
	if err != nil {
		return err
	}
	plans := []*versions.Plan{}
	for _, a := range sess.Resources {
		plan, err := s.db.UndoSession(r.Context(), a.StoreID, sessionID, versions.UndoOptions{DryRun: p.DryRun, Force: p.Force}, Actor(r))
		if versions.SessionWroteNothing(err) || versions.ErrorCode(err) == versions.CodeNotFound && strings.Contains(err.Error(), a.StoreID) {
			continue
		}
		if err != nil {
			return err
		}
		plans = append(plans, plan)
	}
	if len(plans) == 0 {
		return &versions.Error{Code: versions.CodeNotFound, Message: "session " + sessionID + " wrote nothing in any of its stores: there is nothing to undo"}
	}
	return ok(w, versions.Page[*versions.Plan]{Data: plans})
}

func (s *Server) forkStore(w http.ResponseWriter, r *http.Request) error {
	sid, err := StoreID(r)
	if err != nil {
		return err
	}
	var p struct {
		Name           *string `json:"name"`
		AsOf           string  `json:"as_of"`
		WithHistory    bool    `json:"with_history"`
		AllowDuplicate bool    `json:"allow_duplicate"`
	}
	if err := DecodeBody(w, r, smallBody, &p); err != nil {
		return err
	}
	if p.Name == nil {
		return invalid("name is required: the new store's name")
	}
	f, err := s.db.ForkStore(r.Context(), sid, versions.ForkOptions{Name: *p.Name, When: p.AsOf, WithHistory: p.WithHistory, AllowDuplicate: p.AllowDuplicate}, Actor(r))
	if err != nil {
		return err
	}
	skipped := f.Skipped
	if skipped == nil {
		skipped = []versions.PlannedChange{}
	}
	return ok(w, struct {
		Type     string                   `json:"type"`
		Store    *versions.Store          `json:"memory_store"`
		AsOf     *versions.AsOf           `json:"as_of"`
		Memories int                      `json:"memories"`
		Versions int                      `json:"versions"`
		Skipped  []versions.PlannedChange `json:"skipped"`
	}{"memory_store_fork", f.Store, f.AsOf, f.Memories, f.Versions, skipped})
}
