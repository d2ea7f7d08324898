package versions

import (
	"errors"
	"fmt"
)

// Code classifies every error the store engine returns. Each edge (the FUSE
// errno, the CLI exit code, the API error type) maps codes in one place.
type Code int

const (
	CodeInternal           Code = iota // anything unexpected
	CodeInvalid                        // bad input: path, depth, name, metadata …
	CodeNotFound                       // no such store, memory, version or session
	CodePathConflict                   // the path or an ancestor/descendant is taken (S1)
	CodePreconditionFailed             // content_sha256 mismatch: nothing changed (S3)
	CodeConflict                       // any other conflict, e.g. redacting a live head
	CodeReadOnly                       // archived store (or read_only attachment)
	CodeStoreFull                      // the store holds its maximum number of memories (S11)
	CodeTooLarge                       // content over the store's per-memory size (S12)
	CodeNameTooLong                    // a segment over 255 bytes or a path over the limits
	CodeNotUTF8                        // content that is not valid UTF-8
	CodeNotEmpty                       // removing or replacing a directory that holds something
	CodeIsDir                          // a file operation on a directory
	CodeNotDir                         // a directory operation on a file
	CodeStale                          // strict mode: the head moved since the writer read it (F13)
)

// Error is the engine's error. Message says what was wrong and what to do.
type Error struct {
	Code    Code
	Message string
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

// APIType is the API error type (API.md errors) a code is reported as.
func (c Code) APIType() string {
	switch c {
	case CodeInvalid, CodeStoreFull, CodeTooLarge, CodeNameTooLong, CodeNotUTF8:
		return "invalid_request_error"
	case CodeNotFound:
		return "not_found_error"
	case CodePathConflict:
		return "memory_path_conflict_error"
	case CodePreconditionFailed:
		return "memory_precondition_failed_error"
	case CodeConflict, CodeReadOnly, CodeNotEmpty, CodeIsDir, CodeNotDir, CodeStale:
		return "conflict_error"
	}
	return "api_error"
}

func errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
