package httpapi

import (
	"net/http"

	"github.com/memfs/memfs/versions"
)

// searchRoutes are memfs's own routes (beyond the hosted API, under
// /memfs/v1/) for full-text search; docs/search.md describes them.
//
//	GET /memfs/v1/memory_stores/{memory_store_id}/search?q=…
//
// Parameters: q (the query, required), history (true: every version),
// path_prefix, limit (1 to versions.MaxSearchLimit, default 20), lines
// (matching lines per result, default 5). The answer is a list page of
// search_result objects with next_page null. A query the grammar cannot
// read is a 400 invalid_request_error.
func (s *Server) searchRoutes() {
	s.Handle("GET /memfs/v1/memory_stores/{memory_store_id}/search", s.search)
}

func (s *Server) search(w http.ResponseWriter, r *http.Request) error {
	sid, err := StoreID(r)
	if err != nil {
		return err
	}
	q := newQuery(r)
	text := q.str("q")
	o := versions.SearchOptions{
		History:    q.boolean("history"),
		PathPrefix: q.str("path_prefix"),
		Limit:      q.integer("limit", 20),
		MaxLines:   q.integer("lines", 5),
	}
	if q.err != nil {
		return q.err
	}
	if text == "" {
		return invalid("query parameter q is missing: give the words to search for, e.g. ?q=laptop")
	}
	if o.Limit < 1 {
		return invalid("limit %d is out of range: pass 1 to %d", o.Limit, versions.MaxSearchLimit)
	}
	res, err := s.db.Search(r.Context(), []string{sid}, text, o)
	if err != nil {
		return err
	}
	return ok(w, versions.Page[versions.SearchResult]{Data: res})
}
