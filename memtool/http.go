package memtool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/memfs/memfs/versions"
)

// SessionHeader names the session a harness acts for over HTTP: the
// command's writes are that session's (and its attachment's access holds)
// instead of the API key's, and record the key too. Only a key made for the
// session, or a key of every store made to act as any session, may send it
// (the server checks, before any route).
const SessionHeader = "X-Memfs-Session"

// errorBody is the API's error envelope, for the refusals the handler
// answers itself.
type errorBody struct {
	Type  string      `json:"type"`
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// maxBody bounds a request body: a command carries at most one memory's
// content, JSON-escaped, and a store's memories are bounded too.
const maxBody = 16 << 20

// HTTPHandler answers POST /v1/memory_stores/{id}/memory_tool: the body is a
// tool_use input, the answer a 200 {"type":"tool_result","content":…,
// "is_error":…} whether or not the command succeeded. actor is the
// authenticated caller (an API key). The errors it returns — an unknown
// store or session, a body that is not a JSON object — are the server's to
// map to an HTTP status and error body; the handler has written nothing then.
func HTTPHandler(db *versions.DB, actor func(*http.Request) versions.Actor) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		storeID := r.PathValue("id")
		if _, err := db.GetStore(r.Context(), storeID); err != nil {
			return err
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return &versions.Error{Code: versions.CodeTooLarge, Message: fmt.Sprintf("the request body is over %d bytes: a memory tool command carries one memory's content at most", maxBody)}
		}
		if err != nil {
			return fmt.Errorf("read the request body: %w", err)
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(body, &obj); err != nil {
			return &versions.Error{Code: versions.CodeInvalid, Message: "the body must be the input of a memory tool_use block, a JSON object such as {\"command\":\"view\",\"path\":\"/memories\"}: " + jsonProblem(err)}
		}
		tool := New(db, storeID, actor(r))
		if sess := r.Header.Get(SessionHeader); sess != "" {
			// The server let only a key that may act as the session
			// through; its versions record that key.
			if tool, err = ForSession(r.Context(), db, storeID, sess); err != nil {
				return err
			}
			tool.actor.Via = actor(r).ID
		}
		var out bytes.Buffer
		enc := json.NewEncoder(&out)
		enc.SetEscapeHTML(false)
		res := tool.RunJSON(r.Context(), body)
		status := http.StatusOK
		if res.ReadOnly {
			// A change the session may not make is refused as a
			// read-only key's is: 403 permission_error, with the tool's
			// sentence.
			status = http.StatusForbidden
			if err := enc.Encode(errorBody{Type: "error", Error: errorDetail{Type: "permission_error", Message: strings.TrimPrefix(res.Content, "Error: ")}}); err != nil {
				return err
			}
		} else if err := enc.Encode(res); err != nil {
			return err
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, err = w.Write(out.Bytes())
		return err
	}
}
