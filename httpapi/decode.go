package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memfs/memfs/versions"
)

// smallBody bounds every request body but a memory's.
const smallBody = 256 << 10

// memoryBody is the largest body that can carry a memory of maxBytes: JSON
// may spell each byte of content as a six-byte \u escape, and the path as
// well.
func memoryBody(maxBytes int) int64 {
	return int64(6*(maxBytes+versions.MaxPathBytes)) + 4096
}

// DecodeBody reads r's JSON body, at most limit bytes, into v: exactly one
// object, no field v does not have, every value of the field's type.
func DecodeBody(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooBig *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &tooBig):
			return errorf(http.StatusRequestEntityTooLarge, TypeInvalidRequest, "the request body is over %d bytes, the most this route takes", tooBig.Limit)
		case errors.As(err, &ne) && ne.Timeout():
			// The write deadline runs from the same moment as the read
			// timeout that just passed: give the answer time to go out.
			http.NewResponseController(w).SetWriteDeadline(time.Now().Add(5 * time.Second))
			w.Header().Set("Connection", "close")
			return errorf(http.StatusRequestTimeout, TypeInvalidRequest, "the request body did not arrive in time: send it faster")
		}
		return invalid("the request body could not be read: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return invalid("the request has no JSON body: send a JSON object")
	}
	if err := versions.CheckJSONText(body); err != nil {
		// encoding/json would quietly turn these into U+FFFD.
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalid("the request body holds more than one JSON value: send one object")
	}
	return nil
}

func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return invalid("the request body is not valid JSON (at byte %d: %v)", syn.Offset, err)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return invalid("the request body must be a JSON object, not %s", typ.Value)
		}
		return invalid("field %s must be %s, not %s", typ.Field, jsonKind(typ.Type.String()), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return invalid("the request body is cut short: send complete JSON")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return invalid("the request body has %s, which this route does not take: remove it", strings.TrimPrefix(err.Error(), "json: "))
	}
	return invalid("the request body is not what this route takes: %v", err)
}

func jsonKind(goType string) string {
	switch {
	case goType == "string", goType == "*string":
		return "a string"
	case strings.Contains(goType, "int"):
		return "an integer"
	case goType == "bool":
		return "true or false"
	case strings.HasPrefix(goType, "map"), strings.HasPrefix(goType, "struct"), strings.HasPrefix(goType, "*httpapi."), strings.HasPrefix(goType, "httpapi."):
		return "an object"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	}
	return "of type " + goType
}

// query reads a request's query parameters, remembering the first mistake.
type query struct {
	v   url.Values
	err error
}

func newQuery(r *http.Request) *query {
	v, err := url.ParseQuery(r.URL.RawQuery)
	q := &query{v: v}
	if err != nil {
		q.err = invalid("the query string is not validly escaped: %v", err)
	}
	for k, vs := range v {
		for _, s := range append(vs, k) {
			if !utf8.ValidString(s) {
				q.fail("the query parameter %q is not valid UTF-8 once unescaped: send UTF-8 text", k)
			}
		}
	}
	return q
}

func (q *query) fail(format string, args ...any) {
	if q.err == nil {
		q.err = invalid(format, args...)
	}
}

func (q *query) str(name string) string {
	vs := q.v[name]
	if len(vs) > 1 {
		q.fail("query parameter %s is given %d times: give it once", name, len(vs))
	}
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

func (q *query) boolean(name string) bool {
	switch s := q.str(name); s {
	case "", "false":
		return false
	case "true":
		return true
	default:
		q.fail("query parameter %s is %q: use true or false", name, s)
		return false
	}
}

func (q *query) integer(name string, def int) int {
	s := q.str(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		q.fail("query parameter %s is %q, not an integer", name, s)
		return def
	}
	return n
}

// limit is the page size: 1 to 100 (the SDKs' documented range), 20 when
// absent.
func (q *query) limit() int {
	n := q.integer("limit", 20)
	if n < 1 || n > 100 {
		q.fail("limit %d is out of range: pass 1 to 100", n)
	}
	return n
}

func (q *query) time(name string) time.Time {
	s := q.str(name)
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		q.fail("query parameter %s is %q, not an RFC 3339 time such as 2026-07-22T10:00:00Z", name, s)
	}
	return t
}

// view is basic or full; def when absent.
func (q *query) view(def versions.View) versions.View {
	switch s := q.str("view"); s {
	case "":
		return def
	case "basic", "full":
		return versions.View(s)
	default:
		q.fail("view %q is not basic or full", s)
		return def
	}
}

// id reads a path wildcard that must be an id with the given prefix: ids
// are short and URL-safe, so anything else names nothing.
func id(r *http.Request, name, prefix string) (string, error) {
	v := r.PathValue(name)
	if !strings.HasPrefix(v, prefix) || len(v) > 128 || len(v) == len(prefix) {
		return "", invalid("%s %q is not a %s id", name, v, prefix)
	}
	for _, c := range v[len(prefix):] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return "", invalid("%s %q is not a %s id: it holds %q", name, v, prefix, c)
		}
	}
	return v, nil
}

// sha checks a content_sha256 a caller sends.
func sha(name, v string) error {
	if len(v) != 64 {
		return invalid("%s %q is not a SHA-256: give the 64 hex digits of the memory's content_sha256", name, v)
	}
	for _, c := range v {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return invalid("%s %q is not a SHA-256: give the 64 hex digits of the memory's content_sha256", name, v)
		}
	}
	return nil
}

// deleted is what a delete answers.
type deleted struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

func ok(w http.ResponseWriter, v any) error {
	WriteJSON(w, http.StatusOK, v)
	return nil
}
