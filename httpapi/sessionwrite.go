package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/memfs/memfs/memtool"
	"github.com/memfs/memfs/versions"
)

// A request that acts as a session — its key was made for the session, or
// it sends X-Memfs-Session with a key that may — writes only what the
// session's attachment of the store lets it write, as through its mount
// and the memory tool: nothing in a store it does not attach or attaches
// read_only, and only paths within the attachment's write prefix
// (versions.Attachment.Writable, the one rule every surface asks). Reads
// are not held. checkSessionWrite refuses what the route alone tells
// (the store, the access, a change to the whole store under a prefix);
// a route that changes memories names the paths it touches, which only it
// can know, to mayWrite (or mayChangeMemory, mayChangeVersion).

// pathRoutes change memories at paths their handlers hold to the write
// prefix; every other write route on a store changes the store as a
// whole, which no write prefix covers.
var pathRoutes = map[string]bool{
	"POST /v1/memory_stores/{memory_store_id}/memories":                                   true,
	"POST /v1/memory_stores/{memory_store_id}/memories/{memory_id}":                       true,
	"DELETE /v1/memory_stores/{memory_store_id}/memories/{memory_id}":                     true,
	"POST /v1/memory_stores/{memory_store_id}/memory_versions/{memory_version_id}/redact": true,
}

// writeBound is the attachment a request acting as a session writes
// through, with the words of its refusals.
type writeBound struct {
	session string
	attach  versions.Attachment
	// instead says what the caller may do instead.
	instead string
}

type boundKey struct{}

// bound is the write bound of the request's session; nil when it acts as
// none, or the session may write anywhere in the store.
func bound(r *http.Request) *writeBound {
	b, _ := r.Context().Value(boundKey{}).(*writeBound)
	return b
}

// actAsKeySession makes a key made for a session act as it on every route,
// the header left out or not: the memory tool's handler reads the session
// from the header.
func actAsKeySession(k *versions.APIKey, r *http.Request) {
	if k.SessionID != "" && r.Header.Get(memtool.SessionHeader) == "" {
		r.Header.Set(memtool.SessionHeader, k.SessionID)
	}
}

// checkSessionWrite refuses a write a request acting as a session may not
// make whatever its paths, and returns the request carrying the bound its
// handler holds the paths to.
func (s *Server) checkSessionWrite(k *versions.APIKey, r *http.Request) (*http.Request, error) {
	sessionID := r.Header.Get(memtool.SessionHeader)
	storeID, onStore := pathStore(r)
	if sessionID == "" || !onStore || r.Method == http.MethodGet || r.Method == http.MethodHead || isToolRoute(r) {
		return r, nil
	}
	b := &writeBound{session: sessionID, instead: "leave out the " + memtool.SessionHeader + " header"}
	if k.SessionID != "" {
		b.instead = "use a key not made for the session"
	}
	sess, err := s.db.GetSession(r.Context(), sessionID)
	if err != nil {
		return nil, err
	}
	a, ok := sess.Attachment(storeID)
	switch {
	case !ok:
		return nil, errorf(http.StatusForbidden, TypePermission, "session %s does not attach memory store %s, so it may change nothing there: %s %s is refused; write to one of the session's stores, or %s",
			sessionID, storeID, r.Method, r.URL.Path, b.instead)
	case a.Access == versions.ReadOnly:
		return nil, errorf(http.StatusForbidden, TypePermission, "session %s attaches memory store %s read_only: %s %s would change it; write with a session that attaches it read_write, or %s",
			sessionID, storeID, r.Method, r.URL.Path, b.instead)
	case a.WritePrefix == "":
		return r, nil
	case !pathRoutes[r.Pattern]:
		return nil, errorf(http.StatusForbidden, TypePermission, "session %s may write only under %s in memory store %s: %s %s changes the whole store; write there, or %s",
			sessionID, a.WritePrefix, storeID, r.Method, r.URL.Path, b.instead)
	}
	b.attach = a
	return r.WithContext(context.WithValue(r.Context(), boundKey{}, b)), nil
}

// isToolRoute: the request is the memory tool's, whose POSTs read as well
// as write; the tool holds each command to the session's attachment
// itself (memtool.ForSession).
func isToolRoute(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/v1/memory_stores/") && strings.HasSuffix(r.URL.Path, "/memory_tool")
}

// mayWrite refuses a change at any of paths outside the write prefix of
// the session the request acts as. A path the engine would refuse anyway
// is left for it to word.
func mayWrite(r *http.Request, paths ...string) error {
	b := bound(r)
	if b == nil {
		return nil
	}
	for _, p := range paths {
		if versions.ValidatePath(p) == nil && !b.attach.Writable(p) {
			return errorf(http.StatusForbidden, TypePermission, "session %s may write only under %s in memory store %s: %s is outside it; write there, or %s",
				b.session, b.attach.WritePrefix, b.attach.StoreID, p, b.instead)
		}
	}
	return nil
}

// mayChangeMemory is mayWrite for a change to a memory named by its id:
// at its path, and at also (where it moves to).
func (s *Server) mayChangeMemory(r *http.Request, storeID, memoryID string, also ...string) error {
	if bound(r) == nil {
		return nil
	}
	m, err := s.db.GetMemory(r.Context(), storeID, memoryID)
	if err != nil {
		return err
	}
	return mayWrite(r, append([]string{m.Path}, also...)...)
}

// mayChangeVersion is mayWrite for a redaction of a version: at the path
// the version was saved at, and at its memory's path now if it lives.
func (s *Server) mayChangeVersion(r *http.Request, storeID, versionID string) error {
	b := bound(r)
	if b == nil {
		return nil
	}
	v, err := s.db.GetVersion(r.Context(), storeID, versionID)
	if err != nil {
		return err
	}
	var paths []string
	if v.Path != nil {
		paths = append(paths, *v.Path)
	}
	switch m, err := s.db.GetMemory(r.Context(), storeID, v.MemoryID); {
	case err == nil:
		paths = append(paths, m.Path)
	case versions.ErrorCode(err) != versions.CodeNotFound:
		return err
	}
	if len(paths) == 0 {
		return errorf(http.StatusForbidden, TypePermission, "session %s may write only under %s in memory store %s: version %s records no path to hold to it; %s",
			b.session, b.attach.WritePrefix, storeID, versionID, b.instead)
	}
	return mayWrite(r, paths...)
}
