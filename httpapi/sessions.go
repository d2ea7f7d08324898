package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/memfs/memfs/versions"
)

func sessionID(r *http.Request) (string, error) { return id(r, "session_id", "sesn_") }

// memoryStoreResource is the one resource type memfs sessions take.
type memoryStoreResource struct {
	Type          string  `json:"type"`
	MemoryStoreID string  `json:"memory_store_id"`
	Access        string  `json:"access"`
	Instructions  *string `json:"instructions"`
	// WritePrefix is memfs's own: only this folder is writable to the
	// session.
	WritePrefix string `json:"write_prefix"`
}

func (s *Server) createSession(w http.ResponseWriter, r *http.Request) error {
	var p struct {
		Agent         json.RawMessage   `json:"agent"`
		EnvironmentID *string           `json:"environment_id"`
		Title         *string           `json:"title"`
		Metadata      map[string]string `json:"metadata"`
		Resources     []json.RawMessage `json:"resources"`
		// What a hosted session may also carry; memfs runs no agents, so
		// each is refused unless empty.
		VaultIDs      []string          `json:"vault_ids"`
		InitialEvents []json.RawMessage `json:"initial_events"`
		Budget        json.RawMessage   `json:"budget"`
	}
	if err := DecodeBody(w, r, smallBody, &p); err != nil {
		return err
	}
	switch {
	case len(p.VaultIDs) > 0:
		return invalid("vault_ids are not supported: memfs sessions carry memory stores only; leave vault_ids out")
	case len(p.InitialEvents) > 0:
		return invalid("initial_events are not supported: memfs runs no agent to send them to; leave initial_events out")
	case len(p.Budget) > 0 && !bytes.Equal(p.Budget, []byte("null")):
		return invalid("budget is not supported: memfs runs no model to spend it; leave budget out")
	}
	agent := bytes.TrimSpace(p.Agent)
	if len(agent) > 0 && !bytes.Equal(agent, []byte("null")) {
		if agent[0] != '"' && agent[0] != '{' {
			return invalid("agent must be an agent id (a string) or an agent object, not %s", agent)
		}
	} else {
		agent = nil
	}
	params := versions.SessionParams{Agent: agent, EnvironmentID: p.EnvironmentID, Title: p.Title, Metadata: p.Metadata}
	for i, raw := range p.Resources {
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return invalid("resources[%d] is not a resource object: %v", i, err)
		}
		if head.Type != "memory_store" {
			return invalid("resources[%d] has type %q: memfs sessions take only resources of type memory_store", i, head.Type)
		}
		var res memoryStoreResource
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&res); err != nil {
			return invalid("resources[%d]: %v", i, jsonError(err))
		}
		if res.MemoryStoreID == "" {
			return invalid("resources[%d] has no memory_store_id: name the store to attach", i)
		}
		params.Resources = append(params.Resources, versions.AttachmentParams{
			StoreID: res.MemoryStoreID, Access: versions.Access(res.Access), Instructions: res.Instructions, WritePrefix: res.WritePrefix})
	}
	sess, err := s.db.CreateSessionFrom(r.Context(), params)
	if err != nil {
		return err
	}
	return ok(w, sess)
}

// sessionPage is a session listing: the SDK reads sessions as a
// bidirectional page, with a prev_page memfs never has.
type sessionPage struct {
	Data     []versions.Session `json:"data"`
	NextPage *string            `json:"next_page"`
	PrevPage *string            `json:"prev_page"`
}

func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	o := versions.SessionListOptions{
		IncludeArchived: q.boolean("include_archived"),
		MemoryStoreID:   q.str("memory_store_id"),
		CreatedGT:       q.time("created_at[gt]"),
		CreatedGTE:      q.time("created_at[gte]"),
		CreatedLT:       q.time("created_at[lt]"),
		CreatedLTE:      q.time("created_at[lte]"),
		Newest:          true,
		Limit:           q.limit(),
		Page:            q.str("page"),
	}
	switch order := q.str("order"); order {
	case "", "desc":
	case "asc":
		o.Newest = false
	default:
		q.fail("order %q is not asc or desc", order)
	}
	for _, p := range []string{"agent_id", "agent_version", "deployment_id", "statuses", "statuses[]"} {
		if q.str(p) != "" {
			q.fail("filter %s is not supported: memfs sessions run no agents; filter by memory_store_id or created_at", p)
		}
	}
	if q.err != nil {
		return q.err
	}
	page, err := s.db.ListSessions(r.Context(), o)
	if err != nil {
		return err
	}
	return ok(w, sessionPage{Data: page.Data, NextPage: page.NextPage})
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request) error {
	sid, err := sessionID(r)
	if err != nil {
		return err
	}
	sess, err := s.db.GetSession(r.Context(), sid)
	if err != nil {
		return err
	}
	return ok(w, sess)
}

func (s *Server) updateSession(w http.ResponseWriter, r *http.Request) error {
	sid, err := sessionID(r)
	if err != nil {
		return err
	}
	var p struct {
		Title    *string            `json:"title"`
		Metadata map[string]*string `json:"metadata"`
	}
	if err := DecodeBody(w, r, smallBody, &p); err != nil {
		return err
	}
	sess, err := s.db.UpdateSession(r.Context(), sid, versions.SessionUpdate{Title: p.Title, Metadata: p.Metadata})
	if err != nil {
		return err
	}
	return ok(w, sess)
}

func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) error {
	sid, err := sessionID(r)
	if err != nil {
		return err
	}
	if err := s.db.DeleteSession(r.Context(), sid); err != nil {
		return err
	}
	return ok(w, deleted{"session_deleted", sid})
}

func (s *Server) archiveSession(w http.ResponseWriter, r *http.Request) error {
	sid, err := sessionID(r)
	if err != nil {
		return err
	}
	sess, err := s.db.ArchiveSession(r.Context(), sid)
	if err != nil {
		return err
	}
	return ok(w, sess)
}

// A session's memory-store resources are named by their store's id: a
// session attaches each store once.
func (s *Server) listResources(w http.ResponseWriter, r *http.Request) error {
	sid, err := sessionID(r)
	if err != nil {
		return err
	}
	q := newQuery(r)
	if q.str("page") != "" {
		q.fail("page %q is not one this listing issued: a session's resources fit on one page", q.str("page"))
	}
	if n := q.integer("limit", versions.MaxAttachments); n < 1 || n > 1000 {
		q.fail("limit %d is out of range: pass 1 to 1000", n)
	}
	if q.err != nil {
		return q.err
	}
	sess, err := s.db.GetSession(r.Context(), sid)
	if err != nil {
		return err
	}
	// At most MaxAttachments: one page, whatever the limit.
	return ok(w, versions.Page[versions.Attachment]{Data: sess.Resources})
}

func (s *Server) getResource(w http.ResponseWriter, r *http.Request) error {
	sid, err := sessionID(r)
	if err != nil {
		return err
	}
	rid, err := id(r, "resource_id", "memstore_")
	if err != nil {
		return err
	}
	sess, err := s.db.GetSession(r.Context(), sid)
	if err != nil {
		return err
	}
	for _, a := range sess.Resources {
		if a.StoreID == rid {
			return ok(w, a)
		}
	}
	return errorf(http.StatusNotFound, TypeNotFound, "session %s has no resource %q: its memory-store resources are named by their memory_store_id (GET /v1/sessions/%s/resources lists them)", sid, rid, sid)
}
