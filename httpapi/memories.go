package httpapi

import (
	"net/http"

	"github.com/memfs/memfs/versions"
)

// memoryIDs are the ids of the store and the memory a route names.
func memoryIDs(r *http.Request) (sid, mid string, err error) {
	if sid, err = StoreID(r); err != nil {
		return "", "", err
	}
	mid, err = id(r, "memory_id", "mem_")
	return sid, mid, err
}

// view strips the content of a memory in the basic view.
func view(m *versions.Memory, v versions.View) *versions.Memory {
	if v != versions.ViewFull {
		cp := *m
		cp.Content = nil
		return &cp
	}
	return m
}

// decodeMemory decodes the body of a route that carries a memory, bounded by
// its store's limit.
func (s *Server) decodeMemory(w http.ResponseWriter, r *http.Request, storeID string, p any) error {
	st, err := s.db.GetStore(r.Context(), storeID)
	if err != nil {
		return err
	}
	return DecodeBody(w, r, memoryBody(st.MaxMemoryBytes), p)
}

func (s *Server) createMemory(w http.ResponseWriter, r *http.Request) error {
	sid, err := StoreID(r)
	if err != nil {
		return err
	}
	q := newQuery(r)
	v := q.view(versions.ViewBasic)
	if q.err != nil {
		return q.err
	}
	var p struct {
		Path    *string `json:"path"`
		Content *string `json:"content"`
	}
	if err := s.decodeMemory(w, r, sid, &p); err != nil {
		return err
	}
	switch {
	case p.Path == nil:
		return invalid("path is required: give the memory a path such as /notes/todo.md")
	case p.Content == nil:
		return invalid("content is required: give the memory's text (\"\" for an empty memory)")
	}
	if err := mayWrite(r, *p.Path); err != nil {
		return err
	}
	var m versions.Memory
	if _, err := s.db.Save(r.Context(), versions.SaveReq{StoreID: sid, Path: *p.Path, Content: *p.Content, By: Actor(r), Exclusive: true, Memory: &m}); err != nil {
		return err
	}
	s.metrics.saved("create")
	return ok(w, view(&m, v))
}

func (s *Server) listMemories(w http.ResponseWriter, r *http.Request) error {
	sid, err := StoreID(r)
	if err != nil {
		return err
	}
	q := newQuery(r)
	o := versions.MemoryListOptions{
		PathPrefix: q.str("path_prefix"),
		Depth:      q.integer("depth", 0),
		View:       q.view(versions.ViewBasic),
		Limit:      q.limit(),
		Page:       q.str("page"),
	}
	if q.err != nil {
		return q.err
	}
	page, err := s.db.ListMemories(r.Context(), sid, o)
	if err != nil {
		return err
	}
	return ok(w, page)
}

func (s *Server) getMemory(w http.ResponseWriter, r *http.Request) error {
	sid, mid, err := memoryIDs(r)
	if err != nil {
		return err
	}
	q := newQuery(r)
	v := q.view(versions.ViewFull)
	if q.err != nil {
		return q.err
	}
	m, err := s.db.GetMemory(r.Context(), sid, mid)
	if err != nil {
		return err
	}
	return ok(w, view(m, v))
}

// precondition is the update's optional precondition object.
type precondition struct {
	Type          string  `json:"type"`
	ContentSHA256 *string `json:"content_sha256"`
}

func (s *Server) updateMemory(w http.ResponseWriter, r *http.Request) error {
	sid, mid, err := memoryIDs(r)
	if err != nil {
		return err
	}
	q := newQuery(r)
	v := q.view(versions.ViewBasic)
	if q.err != nil {
		return q.err
	}
	var p struct {
		Path         *string       `json:"path"`
		Content      *string       `json:"content"`
		Precondition *precondition `json:"precondition"`
	}
	if err := s.decodeMemory(w, r, sid, &p); err != nil {
		return err
	}
	var moveTo []string
	if p.Path != nil {
		moveTo = append(moveTo, *p.Path)
	}
	if err := s.mayChangeMemory(r, sid, mid, moveTo...); err != nil {
		return err
	}
	u := versions.MemoryUpdate{Content: p.Content, Path: p.Path}
	if pc := p.Precondition; pc != nil {
		if pc.Type != "content_sha256" {
			return invalid("precondition type %q is not supported: use content_sha256", pc.Type)
		}
		if pc.ContentSHA256 == nil {
			return invalid("precondition content_sha256 is required with type content_sha256")
		}
		if err := sha("precondition content_sha256", *pc.ContentSHA256); err != nil {
			return err
		}
		u.IfSHA256 = *pc.ContentSHA256
	}
	var m *versions.Memory
	if u.Content != nil {
		// A save of new content (moved to Path if given).
		m = new(versions.Memory)
		req := versions.SaveReq{StoreID: sid, MemoryID: mid, Content: *u.Content, By: Actor(r), IfSHA256: u.IfSHA256, Memory: m}
		if u.Path != nil {
			req.Path = *u.Path
		}
		_, err = s.db.Save(r.Context(), req)
	} else {
		m, err = s.db.UpdateMemory(r.Context(), sid, mid, u, Actor(r))
	}
	if err != nil {
		return err
	}
	s.metrics.saved("update")
	return ok(w, view(m, v))
}

func (s *Server) deleteMemory(w http.ResponseWriter, r *http.Request) error {
	sid, mid, err := memoryIDs(r)
	if err != nil {
		return err
	}
	q := newQuery(r)
	want := q.str("expected_content_sha256")
	if q.err != nil {
		return q.err
	}
	if want != "" {
		if err := sha("expected_content_sha256", want); err != nil {
			return err
		}
	}
	if err := s.mayChangeMemory(r, sid, mid); err != nil {
		return err
	}
	if err := s.db.DeleteMemory(r.Context(), sid, mid, versions.MemoryDelete{IfSHA256: want}, Actor(r)); err != nil {
		return err
	}
	s.metrics.saved("delete")
	return ok(w, deleted{"memory_deleted", mid})
}
