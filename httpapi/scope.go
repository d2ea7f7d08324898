package httpapi

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/memfs/memfs/memtool"
	"github.com/memfs/memfs/versions"
)

// checkScope is the one place a key's scope is enforced, for every route
// (those added with Handle too), before the route's handler runs:
//   - a store outside a scoped key's stores does not exist for it: any
//     route under /v1/memory_stores/{id} answers 404 as for an unknown id;
//   - a scoped key creates no stores (a fork creates one too) and reaches
//     no sessions (a session attaches stores of any scope and its listing
//     names them);
//   - a read-only key changes nothing: every method but GET and HEAD is
//     403.
//
// The store listing is the one route that filters rather than refuses; it
// asks the engine for the key's stores only (listStores).
func checkScope(k *versions.APIKey, r *http.Request) error {
	if storeID, ok := pathStore(r); ok && !k.Reaches(storeID) {
		return versions.StoreNotFound(storeID)
	}
	if !k.AllStores() {
		switch {
		case r.URL.Path == "/v1/memory_stores" && r.Method == http.MethodPost:
			return errorf(http.StatusForbidden, TypePermission, "this API key is scoped to some stores, and only a key for every store creates stores: create it with such a key, or with `memfs store create`")
		case isForkRoute(r):
			return errorf(http.StatusForbidden, TypePermission, "this API key is scoped to some stores, and a fork creates a store: fork with a key for every store, or with `memfs store fork`")
		case r.URL.Path == "/v1/sessions" || strings.HasPrefix(r.URL.Path, "/v1/sessions/") || strings.HasPrefix(r.URL.Path, "/memfs/v1/sessions/"):
			return errorf(http.StatusForbidden, TypePermission, "this API key is scoped to some stores, and sessions are reached only with a key for every store (a session can attach any store): use such a key, or `memfs session`")
		}
	}
	// Acting as a session is for a key made for that session, or a key
	// of every store made to act as any: the answer says nothing of
	// whether the session exists.
	if sess := r.Header.Get(memtool.SessionHeader); sess != "" && !k.MayActAs(sess) {
		return errorf(http.StatusForbidden, TypePermission, "this API key may not act as a session (%s header): use a key made for the session (`memfs apikey create --session ID`), or a key of every store made with --any-session", memtool.SessionHeader)
	}
	if k.ReadOnly && r.Method != http.MethodGet && r.Method != http.MethodHead {
		return errorf(http.StatusForbidden, TypePermission, "this API key is read-only: %s %s would change something; use a read-write key", r.Method, r.URL.Path)
	}
	return nil
}

// pathStore is the store a request's path names, /v1/memory_stores/{id}
// and everything below it (memfs's own /memfs/v1/memory_stores/{id}/…
// routes too), decoded as the router decodes it.
func pathStore(r *http.Request) (string, bool) {
	path := r.URL.EscapedPath()
	rest, ok := strings.CutPrefix(path, "/v1/memory_stores/")
	if !ok {
		rest, ok = strings.CutPrefix(path, "/memfs/v1/memory_stores/")
	}
	if !ok {
		return "", false
	}
	seg, _, _ := strings.Cut(rest, "/")
	id, err := url.PathUnescape(seg)
	if err != nil || id == "" {
		return "", false
	}
	return id, true
}

// onlyKey is what a store listing is limited to: the key's id when it is
// scoped, "" for a key of every store.
func onlyKey(r *http.Request) string {
	if k := requestKey(r); !k.AllStores() {
		return k.ID
	}
	return ""
}
