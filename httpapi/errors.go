package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/memfs/memfs/versions"
)

// The API's error types (the hosted API's errors, and its own for the
// statuses the engine never causes).
const (
	TypeInvalidRequest     = "invalid_request_error"
	TypeAuthentication     = "authentication_error"
	TypePermission         = "permission_error"
	TypeNotFound           = "not_found_error"
	TypePathConflict       = "memory_path_conflict_error"
	TypePreconditionFailed = "memory_precondition_failed_error"
	TypeConflict           = "conflict_error"
	TypeRateLimit          = "rate_limit_error"
	TypeOverloaded         = "overloaded_error"
	TypeAPI                = "api_error"
)

// codes is the one mapping from engine codes to HTTP.
var codes = map[versions.Code]struct {
	status int
	typ    string
}{
	versions.CodeInvalid:            {http.StatusBadRequest, TypeInvalidRequest},
	versions.CodeStoreFull:          {http.StatusBadRequest, TypeInvalidRequest},
	versions.CodeOverQuota:          {http.StatusBadRequest, TypeInvalidRequest},
	versions.CodeCredential:         {http.StatusBadRequest, TypeInvalidRequest},
	versions.CodeNameTooLong:        {http.StatusBadRequest, TypeInvalidRequest},
	versions.CodeNotUTF8:            {http.StatusBadRequest, TypeInvalidRequest},
	versions.CodeTooLarge:           {http.StatusRequestEntityTooLarge, TypeInvalidRequest},
	versions.CodeNotFound:           {http.StatusNotFound, TypeNotFound},
	versions.CodePathConflict:       {http.StatusConflict, TypePathConflict},
	versions.CodePreconditionFailed: {http.StatusConflict, TypePreconditionFailed},
	versions.CodeConflict:           {http.StatusConflict, TypeConflict},
	versions.CodeReadOnly:           {http.StatusConflict, TypeConflict},
	versions.CodeNotEmpty:           {http.StatusConflict, TypeConflict},
	versions.CodeIsDir:              {http.StatusConflict, TypeConflict},
	versions.CodeNotDir:             {http.StatusConflict, TypeConflict},
	versions.CodeStale:              {http.StatusConflict, TypeConflict},
}

// ErrorType is the API error type an engine code is reported as, over HTTP
// and by the CLI's --format json.
func ErrorType(c versions.Code) string {
	if m, ok := codes[c]; ok {
		return m.typ
	}
	return TypeAPI
}

// apiError is an error the HTTP layer itself raises (bad JSON, no key, …)
// with its status and type.
type apiError struct {
	status  int
	typ     string
	message string
	// retryAfter, when set, is sent as Retry-After: the refusal is
	// temporary.
	retryAfter time.Duration
}

func (e *apiError) Error() string { return e.message }

func errorf(status int, typ, format string, args ...any) error {
	return &apiError{status: status, typ: typ, message: fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...any) error {
	return errorf(http.StatusBadRequest, TypeInvalidRequest, format, args...)
}

// Body is the error envelope: {"type":"error","error":{"type":…,"message":…}}.
type Body struct {
	Type  string    `json:"type"`
	Error ErrorBody `json:"error"`
}

type ErrorBody struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	// For memory_path_conflict_error.
	ConflictingMemoryID *string `json:"conflicting_memory_id,omitempty"`
	ConflictingPath     *string `json:"conflicting_path,omitempty"`
}

// NewBody is the envelope err is reported as, with its HTTP status.
func NewBody(err error) (int, Body) {
	b := Body{Type: "error", Error: ErrorBody{Type: TypeAPI, Message: err.Error()}}
	var ae *apiError
	if errors.As(err, &ae) {
		b.Error.Type = ae.typ
		return ae.status, b
	}
	var e *versions.Error
	if !errors.As(err, &e) {
		// Not the caller's fault and not for the caller to read: the log
		// has it.
		b.Error.Message = "internal error: the server's log has the details; retry, and report it if it persists"
		return http.StatusInternalServerError, b
	}
	m, ok := codes[e.Code]
	if !ok {
		b.Error.Message = "internal error: the server's log has the details; retry, and report it if it persists"
		return http.StatusInternalServerError, b
	}
	b.Error.Type = m.typ
	b.Error.Message = e.Message + hint(e)
	if e.Code == versions.CodePathConflict {
		b.Error.ConflictingMemoryID, b.Error.ConflictingPath = &e.ConflictingMemoryID, &e.ConflictingPath
	}
	return m.status, b
}

// hint tells an API caller where to look for what was not found.
func hint(e *versions.Error) string {
	if e.Code != versions.CodeNotFound {
		return ""
	}
	switch e.Object {
	case versions.ObjectStore:
		return " (GET /v1/memory_stores?include_archived=true lists them)"
	case versions.ObjectMemory:
		return fmt.Sprintf(" (GET /v1/memory_stores/%s/memories lists them)", e.StoreID)
	case versions.ObjectVersion:
		return fmt.Sprintf(" (GET /v1/memory_stores/%s/memory_versions lists them)", e.StoreID)
	case versions.ObjectSession:
		return " (GET /v1/sessions lists them)"
	}
	return ""
}

// writeError writes err as the API's error envelope with the status its code
// maps to. Errors the engine did not classify are logged here, once, with
// the request's id, to the server's logger.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, body := NewBody(err)
	switch {
	case status == http.StatusTooManyRequests || status >= 500:
		w.Header().Set("x-should-retry", "true")
	case status != http.StatusRequestTimeout:
		// The SDKs retry a 409 by default; a conflict here is never
		// transient (a precondition, a path, an archived store).
		w.Header().Set("x-should-retry", "false")
	}
	var ae *apiError
	if errors.As(err, &ae) && ae.retryAfter > 0 {
		w.Header().Set("retry-after", strconv.Itoa(int((ae.retryAfter+time.Second-1)/time.Second)))
		w.Header().Set("retry-after-ms", strconv.FormatInt(ae.retryAfter.Milliseconds(), 10))
	}
	if status >= 500 {
		s.o.Logger.Error("request failed", "request_id", w.Header().Get("request-id"),
			"method", r.Method, "path", r.URL.Path, "err", err)
	}
	WriteJSON(w, status, body)
}

// WriteJSON writes v as the response's JSON body with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"type":"error","error":{"type":"api_error","message":"internal error: the response could not be encoded"}}` + "\n")
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}
