package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/memfs/memfs/versions"
)

type ctxKey struct{}

// Actor is who a request acts as: the api_actor of its key.
func Actor(r *http.Request) versions.Actor {
	return versions.Actor{Type: "api_actor", ID: requestKey(r).ID}
}

// requestKey is the authenticated key of a request.
func requestKey(r *http.Request) *versions.APIKey {
	if k, ok := r.Context().Value(ctxKey{}).(*versions.APIKey); ok {
		return k
	}
	return &versions.APIKey{}
}

// wrap puts a route's handler behind authentication, the limits, panic
// recovery and the metrics (labelled by the route's pattern).
func (s *Server) wrap(route string, h HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				s.o.Logger.Error("handler panicked", "request_id", w.Header().Get("request-id"),
					"route", route, "panic", p, "stack", string(debug.Stack()))
				if rec.status == 0 {
					s.writeError(rec, r, fmt.Errorf("panic: %v", p))
				}
			}
			s.metrics.observe(route, rec.status, time.Since(start))
		}()
		err := s.serve(rec, r, h)
		if err != nil {
			if rec.status != 0 {
				// The handler already began its answer; the log has it.
				s.o.Logger.Warn("request failed after its response began", "request_id", w.Header().Get("request-id"), "route", route, "err", err)
				return
			}
			s.metrics.refused(err)
			s.writeError(rec, r, err)
		}
	})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, h HandlerFunc) error {
	key, err := apiKey(r)
	if err != nil {
		return err
	}
	k, err := s.o.Auth.AuthenticateAPIKey(r.Context(), key)
	if err != nil {
		switch versions.ErrorCode(err) {
		case versions.CodeNotFound, versions.CodeInvalid:
			return errorf(http.StatusUnauthorized, TypeAuthentication, "invalid API key: it is unknown or revoked; make one with `memfs apikey create --name NAME`")
		}
		return fmt.Errorf("check API key: %w", err)
	}
	if err := checkScope(k, r); err != nil {
		return err
	}
	actAsKeySession(k, r)
	if r, err = s.checkSessionWrite(k, r); err != nil {
		return err
	}
	release, err := s.limit.acquire(r.Context(), k.ID)
	if err != nil {
		return err
	}
	defer release()
	r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, k))
	return h(w, r)
}

// apiKey is the key a request carries in x-api-key or as a bearer token.
func apiKey(r *http.Request) (string, error) {
	if k := r.Header.Get("x-api-key"); k != "" {
		return k, nil
	}
	if a := r.Header.Get("Authorization"); a != "" {
		scheme, token, ok := strings.Cut(a, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			return "", errorf(http.StatusUnauthorized, TypeAuthentication, "the Authorization header is not \"Bearer KEY\": send the key as a bearer token or in x-api-key")
		}
		return strings.TrimSpace(token), nil
	}
	return "", errorf(http.StatusUnauthorized, TypeAuthentication, "no API key: send one in the x-api-key header or as Authorization: Bearer KEY (make one with `memfs apikey create --name NAME`)")
}

// recorder remembers the status a handler wrote.
type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	return r.ResponseWriter.Write(b)
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func newRequestID() string {
	var b [12]byte
	rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}

// checkRawPath refuses dot segments and empty segments in any spelling
// (/../, %2e%2e, //): ServeMux would clean them and redirect, and an id
// never contains them.
func checkRawPath(r *http.Request) error {
	raw := r.URL.EscapedPath()
	for _, seg := range strings.Split(strings.TrimPrefix(raw, "/"), "/") {
		dec, err := url.PathUnescape(seg)
		if err != nil {
			return invalid("the request path %q is not validly escaped", raw)
		}
		if dec == "." || dec == ".." {
			return invalid("the request path %q has a %q segment: dot segments are not allowed; name objects by their ids", raw, dec)
		}
		if seg == "" && raw != "/" {
			return invalid("the request path %q has an empty segment: remove the doubled or trailing /", raw)
		}
	}
	return nil
}

// noRoute says why nothing matched: an unknown path (404) or a method the
// path does not take (405).
func noRoute(mux *http.ServeMux, r *http.Request) error {
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete, http.MethodPut, http.MethodPatch} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := mux.Handler(probe); p != "" {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) > 0 {
		return errorf(http.StatusMethodNotAllowed, TypeInvalidRequest, "%s %s is not a route: the path takes %s", r.Method, r.URL.Path, strings.Join(allowed, ", "))
	}
	return errorf(http.StatusNotFound, TypeNotFound, "%s %s is not a route of the memory-store API: the routes are listed in docs/http-api.md", r.Method, r.URL.Path)
}
