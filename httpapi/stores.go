package httpapi

import (
	"net/http"

	"github.com/memfs/memfs/versions"
)

// routes registers the memory-store API as the official SDKs call it.
func (s *Server) routes() {
	s.Handle("POST /v1/memory_stores", s.createStore)
	s.Handle("GET /v1/memory_stores", s.listStores)
	s.Handle("GET /v1/memory_stores/{memory_store_id}", s.getStore)
	s.Handle("POST /v1/memory_stores/{memory_store_id}", s.updateStore)
	s.Handle("DELETE /v1/memory_stores/{memory_store_id}", s.deleteStore)
	s.Handle("POST /v1/memory_stores/{memory_store_id}/archive", s.archiveStore)

	s.Handle("POST /v1/memory_stores/{memory_store_id}/memories", s.createMemory)
	s.Handle("GET /v1/memory_stores/{memory_store_id}/memories", s.listMemories)
	s.Handle("GET /v1/memory_stores/{memory_store_id}/memories/{memory_id}", s.getMemory)
	s.Handle("POST /v1/memory_stores/{memory_store_id}/memories/{memory_id}", s.updateMemory)
	s.Handle("DELETE /v1/memory_stores/{memory_store_id}/memories/{memory_id}", s.deleteMemory)

	s.Handle("GET /v1/memory_stores/{memory_store_id}/memory_versions", s.listVersions)
	s.Handle("GET /v1/memory_stores/{memory_store_id}/memory_versions/{memory_version_id}", s.getVersion)
	s.Handle("POST /v1/memory_stores/{memory_store_id}/memory_versions/{memory_version_id}/redact", s.redactVersion)

	s.Handle("POST /v1/sessions", s.createSession)
	s.Handle("GET /v1/sessions", s.listSessions)
	s.Handle("GET /v1/sessions/{session_id}", s.getSession)
	s.Handle("POST /v1/sessions/{session_id}", s.updateSession)
	s.Handle("DELETE /v1/sessions/{session_id}", s.deleteSession)
	s.Handle("POST /v1/sessions/{session_id}/archive", s.archiveSession)
	s.Handle("GET /v1/sessions/{session_id}/resources", s.listResources)
	s.Handle("GET /v1/sessions/{session_id}/resources/{resource_id}", s.getResource)

	s.searchRoutes()
}

// StoreID is the memory_store_id of a route's path, checked to be a
// memstore_ id.
func StoreID(r *http.Request) (string, error) { return id(r, "memory_store_id", "memstore_") }

func (s *Server) createStore(w http.ResponseWriter, r *http.Request) error {
	var p struct {
		Name        *string           `json:"name"`
		Description *string           `json:"description"`
		Metadata    map[string]string `json:"metadata"`
	}
	if err := DecodeBody(w, r, smallBody, &p); err != nil {
		return err
	}
	if p.Name == nil {
		return invalid("name is required: give the store a name of 1 to %d characters", versions.MaxStoreNameChars)
	}
	sp := versions.StoreParams{Name: *p.Name, Metadata: p.Metadata}
	if p.Description != nil {
		sp.Description = *p.Description
	}
	st, err := s.db.CreateStore(r.Context(), sp)
	if err != nil {
		return err
	}
	return ok(w, st)
}

func (s *Server) listStores(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	o := versions.StoreListOptions{
		IncludeArchived: q.boolean("include_archived"),
		CreatedGTE:      q.time("created_at[gte]"),
		CreatedLTE:      q.time("created_at[lte]"),
		Limit:           q.limit(),
		Page:            q.str("page"),
		OnlyKey:         onlyKey(r),
	}
	if q.err != nil {
		return q.err
	}
	page, err := s.db.ListStores(r.Context(), o)
	if err != nil {
		return err
	}
	return ok(w, page)
}

func (s *Server) getStore(w http.ResponseWriter, r *http.Request) error {
	sid, err := StoreID(r)
	if err != nil {
		return err
	}
	st, err := s.db.GetStore(r.Context(), sid)
	if err != nil {
		return err
	}
	return ok(w, st)
}

func (s *Server) updateStore(w http.ResponseWriter, r *http.Request) error {
	sid, err := StoreID(r)
	if err != nil {
		return err
	}
	var p struct {
		Name        *string            `json:"name"`
		Description *string            `json:"description"`
		Metadata    map[string]*string `json:"metadata"`
	}
	if err := DecodeBody(w, r, smallBody, &p); err != nil {
		return err
	}
	st, err := s.db.UpdateStore(r.Context(), sid, versions.StoreUpdate{Name: p.Name, Description: p.Description, Metadata: p.Metadata})
	if err != nil {
		return err
	}
	return ok(w, st)
}

func (s *Server) deleteStore(w http.ResponseWriter, r *http.Request) error {
	sid, err := StoreID(r)
	if err != nil {
		return err
	}
	if err := s.db.DeleteStore(r.Context(), sid); err != nil {
		return err
	}
	return ok(w, deleted{"memory_store_deleted", sid})
}

func (s *Server) archiveStore(w http.ResponseWriter, r *http.Request) error {
	sid, err := StoreID(r)
	if err != nil {
		return err
	}
	st, err := s.db.ArchiveStore(r.Context(), sid)
	if err != nil {
		return err
	}
	return ok(w, st)
}
