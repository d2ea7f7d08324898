package httpapi

import (
	"net/http"

	"github.com/memfs/memfs/versions"
)

// versionIDs are the ids of the store and the memory version a route names.
func versionIDs(r *http.Request) (sid, vid string, err error) {
	if sid, err = StoreID(r); err != nil {
		return "", "", err
	}
	vid, err = id(r, "memory_version_id", "memver_")
	return sid, vid, err
}

func (s *Server) listVersions(w http.ResponseWriter, r *http.Request) error {
	sid, err := StoreID(r)
	if err != nil {
		return err
	}
	q := newQuery(r)
	o := versions.VersionListOptions{
		MemoryID:         q.str("memory_id"),
		SessionID:        q.str("session_id"),
		APIKeyID:         q.str("api_key_id"),
		ServiceAccountID: q.str("service_account_id"),
		Operation:        versions.Operation(q.str("operation")),
		CreatedGTE:       q.time("created_at[gte]"),
		CreatedLTE:       q.time("created_at[lte]"),
		View:             q.view(versions.ViewBasic),
		Limit:            q.limit(),
		Page:             q.str("page"),
	}
	if q.err != nil {
		return q.err
	}
	page, err := s.db.ListVersions(r.Context(), sid, o)
	if err != nil {
		return err
	}
	return ok(w, page)
}

func (s *Server) getVersion(w http.ResponseWriter, r *http.Request) error {
	sid, vid, err := versionIDs(r)
	if err != nil {
		return err
	}
	q := newQuery(r)
	v := q.view(versions.ViewFull)
	if q.err != nil {
		return q.err
	}
	ver, err := s.db.GetVersion(r.Context(), sid, vid)
	if err != nil {
		return err
	}
	if v == versions.ViewBasic {
		ver.Content = nil
	}
	return ok(w, ver)
}

func (s *Server) redactVersion(w http.ResponseWriter, r *http.Request) error {
	sid, vid, err := versionIDs(r)
	if err != nil {
		return err
	}
	if err := s.mayChangeVersion(r, sid, vid); err != nil {
		return err
	}
	ver, err := s.db.RedactVersion(r.Context(), sid, vid, Actor(r))
	if err != nil {
		return err
	}
	return ok(w, ver)
}
