// Package memtool serves the client-side memory tool (memory_20250818) from a
// memfs store: Claude asks for view, create, str_replace, insert, delete and
// rename under /memories, and a Tool carries each command out on one store
// through the versions engine, answering with the result strings of the
// SDKs' local-filesystem handler (BetaLocalFilesystemMemoryTool).
//
// /memories is the store's root: "/memories/notes/todo.md" is the memory at
// "/notes/todo.md". Every path is checked by the engine's path rules once
// that prefix is removed, and paths that try to leave the store (.. segments,
// backslashes, percent-encoded traversal, absolute paths elsewhere) are
// refused with the tool's error sentence. There is no file system under a
// store to escape to: memories are rows in the database, so no path, however
// spelled, reaches a file on the host; the checks exist so that a hostile
// path is answered clearly instead of being stored under a strange name.
//
// Every mutating command is one engine transaction attributed to the Tool's
// actor (a session, an API key or a user): a create is one "created"
// version, a str_replace or insert one "modified", a rename one "modified"
// per memory moved (ids kept) and a recursive delete one "deleted" per
// memory. The store's limits hold, and a read_only attachment or an archived
// store refuses every mutation.
package memtool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/memfs/memfs/versions"
)

// Command is the input of one tool call, as Claude sends it in a tool_use
// block. Pointers tell an omitted field from an empty one.
type Command struct {
	Command    string  `json:"command"`
	Path       string  `json:"path,omitempty"`
	ViewRange  []int   `json:"view_range,omitempty"`
	FileText   *string `json:"file_text,omitempty"`
	OldStr     *string `json:"old_str,omitempty"`
	NewStr     *string `json:"new_str,omitempty"`
	InsertLine *int    `json:"insert_line,omitempty"`
	InsertText *string `json:"insert_text,omitempty"`
	OldPath    string  `json:"old_path,omitempty"`
	NewPath    string  `json:"new_path,omitempty"`
}

// Result is what goes back to Claude in a tool_result block. An error's
// Content starts with "Error: ", as the SDKs' tool runners write it.
type Result struct {
	Content string
	IsError bool
	// ReadOnly marks a change refused because the session may not write
	// there (a read_only attachment, or outside its write prefix): HTTP
	// answers it 403 and memfs tool exits 6, as a read-only API key.
	ReadOnly bool `json:"-"`
}

// MarshalJSON writes the tool_result object of the CLI and the HTTP API:
// {"type":"tool_result","content":…,"is_error":…}.
// Markup in memories (<guidelines>, a && b) is written as is, not as
// \u003c escapes.
func (r Result) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(struct {
		Type    string `json:"type"`
		Content string `json:"content"`
		IsError bool   `json:"is_error"`
	}{"tool_result", r.Content, r.IsError})
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}

func ok(format string, args ...any) Result { return Result{Content: fmt.Sprintf(format, args...)} }

func fail(format string, args ...any) Result {
	return Result{Content: "Error: " + fmt.Sprintf(format, args...), IsError: true}
}

// Tool runs memory-tool commands on one store for one actor. It is safe for
// concurrent use; the engine serialises the writes.
type Tool struct {
	db      *versions.DB
	storeID string
	actor   versions.Actor
	// readOnly says why mutations are refused ("" when they are not).
	readOnly string
	// attach is the session's attachment, whose write prefix bounds what
	// it may change (none without a session).
	attach versions.Attachment
}

// New returns a Tool on the store whose writes are attributed to by.
func New(db *versions.DB, storeID string, by versions.Actor) *Tool {
	return &Tool{db: db, storeID: storeID, actor: by}
}

// ForSession returns a Tool acting for a session on one of its attached
// stores: writes are the session's, and a read_only attachment refuses them.
func ForSession(ctx context.Context, db *versions.DB, storeID, sessionID string) (*Tool, error) {
	sess, err := db.GetSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if err := sess.CheckOpen(); err != nil {
		return nil, err
	}
	a, ok := sess.Attachment(storeID)
	if !ok {
		return nil, &versions.Error{Code: versions.CodeNotFound,
			Message: fmt.Sprintf("session %s has no attachment of memory store %s: use one of the session's stores, or act without --session", sess.ID, storeID)}
	}
	t := New(db, storeID, versions.SessionActor(sess.ID))
	t.attach = a
	if a.Access == versions.ReadOnly {
		t.readOnly = fmt.Sprintf("memory store %s is attached read-only to session %s", storeID, sess.ID)
	}
	return t, nil
}

// StoreID is the store the Tool works on.
func (t *Tool) StoreID() string { return t.storeID }

// Actor is who the Tool's writes are attributed to.
func (t *Tool) Actor() versions.Actor { return t.actor }

// RunJSON decodes a tool_use input and runs it.
func (t *Tool) RunJSON(ctx context.Context, input []byte) Result {
	var c Command
	if err := versions.CheckJSONText(input); err != nil {
		return fail("The memory tool's input is not a valid command: %v", err)
	}
	if err := json.Unmarshal(input, &c); err != nil {
		return fail("The memory tool's input is not a valid command: %v", jsonProblem(err))
	}
	return t.Run(ctx, c)
}

// Run carries out one command. Whatever happens is a Result: failures of the
// database come back as errors for Claude to read, never as a panic.
func (t *Tool) Run(ctx context.Context, c Command) Result {
	switch c.Command {
	case "view":
		return t.view(ctx, c)
	case "create":
		return t.create(ctx, c)
	case "str_replace":
		return t.strReplace(ctx, c)
	case "insert":
		return t.insert(ctx, c)
	case "delete":
		return t.delete(ctx, c)
	case "rename":
		return t.rename(ctx, c)
	case "":
		return fail("The memory tool's input has no `command`: use view, create, str_replace, insert, delete or rename")
	}
	return fail("Unknown command %s: the memory tool knows view, create, str_replace, insert, delete and rename", shown(c.Command))
}

// writable refuses a mutation of a read_only attachment or an archived store
// before anything else is looked at, so that the refusal says why.
func (t *Tool) writable(ctx context.Context, verb, path string) *Result {
	if t.readOnly != "" {
		r := fail("Cannot %s %s: %s; nothing was changed", verb, shown(path), t.readOnly)
		r.ReadOnly = true
		return &r
	}
	if p, bad := storePath(path); bad == nil && !t.attach.Writable(p) {
		r := fail("Cannot %s %s: only %s is writable to session %s, the rest of memory store %s is read-only; nothing was changed",
			verb, shown(path), shown(toolPath(t.attach.WritePrefix)), t.actor.ID, t.storeID)
		r.ReadOnly = true
		return &r
	}
	st, err := t.db.GetStore(ctx, t.storeID)
	if err != nil {
		r := engineFailure(verb, path, err)
		return &r
	}
	if st.ArchivedAt != nil {
		r := fail("Cannot %s %s: memory store %s is archived, which makes its memories read-only; nothing was changed", verb, shown(path), st.ID)
		return &r
	}
	return nil
}

// engineFailure words an engine error that has no sentence of its own in
// the tool: what was refused, then the engine's reason with store paths
// shown as /memories paths.
func engineFailure(verb, path string, err error) Result {
	var e *versions.Error
	if !errors.As(err, &e) {
		return fail("Cannot %s %s: %v", verb, shown(path), err)
	}
	switch e.Code {
	case versions.CodePathConflict:
		if e.ConflictingMemoryID != "" && e.ConflictingPath != "" {
			return fail("Cannot %s %s: %s is a file, not a directory", verb, shown(path), shown(toolPath(e.ConflictingPath)))
		}
	case versions.CodeReadOnly:
		return fail("Cannot %s %s: %s; nothing was changed", verb, shown(path), e.Message)
	}
	return fail("Cannot %s %s: %s", verb, shown(path), e.Message)
}

// toolPath is the /memories path of a store path.
func toolPath(p string) string {
	if p == "/" {
		return root
	}
	return root + p
}

func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te) && te.Field != "":
		return fmt.Sprintf("`%s` must be %s, not %s", te.Field, jsonKind(te.Type.Kind().String()), versions.JSONValueKind(te.Value))
	case errors.As(err, &te):
		return "a command is a JSON object such as {\"command\":\"view\",\"path\":\"/memories\"}, not " + versions.JSONValueKind(te.Value)
	}
	return versions.JSONProblem(err)
}

func jsonKind(k string) string {
	switch k {
	case "slice":
		return "a list of two line numbers"
	case "int", "ptr":
		return "an integer"
	}
	return "a string"
}

func asEngine(err error, e **versions.Error) bool { return errors.As(err, e) }
