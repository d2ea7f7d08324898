package versions

import (
	"errors"
	"fmt"
)

// Code classifies every error the store engine returns. Each edge (the FUSE
// errno in fusefs, the exit code in cmd/memfs, the HTTP status and API error
// type in httpapi) maps codes in one place.
type Code int

const (
	CodeInternal           Code = iota // anything unexpected
	CodeInvalid                        // bad input: path, depth, name, metadata …
	CodeNotFound                       // no such store, memory, version or session
	CodePathConflict                   // the path or an ancestor/descendant is taken
	CodePreconditionFailed             // content_sha256 mismatch: nothing changed
	CodeConflict                       // any other conflict, e.g. redacting a live head
	CodeReadOnly                       // archived store (or read_only attachment)
	CodeStoreFull                      // the store holds its maximum number of memories
	CodeTooLarge                       // content over the store's per-memory size
	CodeNameTooLong                    // a segment over 255 bytes or a path over the limits
	CodeNotUTF8                        // content that is not valid UTF-8
	CodeNotEmpty                       // removing or replacing a directory that holds something
	CodeIsDir                          // a file operation on a directory
	CodeNotDir                         // a directory operation on a file
	CodeStale                          // strict mode: the head moved since the writer read it
	CodeUnavailable                    // the database server cannot be reached, or the connection dropped
	CodeOverQuota                      // a save would take the store's retained history past its quota
	CodeCredential                     // the store's guard refused content holding a credential
)

// Error is the engine's error. Message says what was wrong and what to do
// in words that hold for every caller; an edge that knows how its users list
// things (a command, a route) adds that from Object and StoreID.
type Error struct {
	Code    Code
	Message string
	// Object is the kind of thing the error is about when it is one object
	// (not found, or refused as a whole), and StoreID the store it lives in.
	Object  Object
	StoreID string
	// For CodePathConflict: the memory in the way, if it is a memory.
	ConflictingMemoryID string
	ConflictingPath     string
}

func (e *Error) Error() string { return e.Message }

// ErrorCode returns the Code of err, or CodeInternal when err is not (and
// does not wrap) an *Error.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// Object names a kind of thing the engine keeps, as the API's type tags do.
type Object string

const (
	ObjectStore   Object = "memory_store"
	ObjectMemory  Object = "memory"
	ObjectVersion Object = "memory_version"
	ObjectSession Object = "session"
	// ObjectCheckpoint is a named position of a store's history.
	ObjectCheckpoint Object = "memory_checkpoint"
)

// objectError is an error about one object of a store (storeID "" for a
// store or a session).
func objectError(code Code, obj Object, storeID, format string, args ...any) *Error {
	e := errorf(code, format, args...)
	e.Object, e.StoreID = obj, storeID
	return e
}

func errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
