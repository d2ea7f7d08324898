package mirror

import (
	"syscall"
	"time"

	"github.com/memfs/memfs/guard"
	"github.com/memfs/memfs/versions"
)

// Event is what Apply takes: a kernel request, a timer, the engine's
// answer to a request of a plan, or a change the feed brought.
type Event interface{ event() string }

// Kernel requests.
type (
	// Lookup: the kernel looked up p and the store has mem there.
	Lookup struct {
		Path string
		Mem  *versions.Memory
	}
	// Create: create(2) of a new file at Path.
	Create struct {
		Path   string
		Tgid   int
		Append bool
	}
	// Open: open(2) of file File.
	Open struct {
		File          ID
		Tgid          int
		Write, Append bool
		Trunc         bool
	}
	// Write: write(2) of Data at Off through Handle.
	Write struct {
		Handle HandleID
		Off    int64
		Data   []byte
	}
	// Flush: close(2) of a descriptor of Handle (one per dup).
	Flush struct{ Handle HandleID }
	// Fsync: fsync(2) through Handle.
	Fsync struct{ Handle HandleID }
	// Release: the last descriptor of Handle closed.
	Release struct{ Handle HandleID }
	// Truncate: a size change; Handle is 0 for truncate(2) on a path.
	Truncate struct {
		File   ID
		Handle HandleID
		Size   int64
	}
	// Rename: rename(2) of From to To (files only).
	Rename struct {
		From, To string
		Tgid     int
	}
	// Unlink: unlink(2) of Path.
	Unlink struct{ Path string }
)

// Timers and the engine.
type (
	// GraceEnded: the grace of a Temporary or Held file ended.
	GraceEnded struct{ File ID }
	// HoldEnded: the grace of the memory held at Path ended.
	HoldEnded struct{ Path string }
	// Answered is the engine's answer to Req: the memory it wrote (with its
	// feed position in Mem.Seq), the pending row it saved, the content it
	// loaded, the positions of what else it committed, or its error.
	Answered struct {
		Req     Request
		Mem     *versions.Memory
		Pending int64
		Content string
		Seqs    []int64 // memory changes
		DirSeqs []int64 // directory changes
		Err     error
	}
	// Foreign is a change the feed brought.
	Foreign struct{ Change versions.Change }
	// PublishedElsewhere: the pending row Pending was published by another
	// handle (this mount's lease lapsed): the file is memory Mem now.
	PublishedElsewhere struct {
		Pending int64
		Mem     *versions.Memory
	}
	// StoreInfo is what the mount knows of the store and its backend, for
	// the refusals at write().
	StoreInfo struct {
		Guard           guard.Policy
		MaxMemoryBytes  int
		MaxHistoryBytes int
		HistoryBytes    int
		Offline         bool
	}
)

func (Lookup) event() string             { return "looked" }
func (Create) event() string             { return "created" }
func (Open) event() string               { return "opened" }
func (Write) event() string              { return "wrote" }
func (Flush) event() string              { return "flushed" }
func (Fsync) event() string              { return "fsynced" }
func (Release) event() string            { return "released" }
func (Truncate) event() string           { return "truncated" }
func (Rename) event() string             { return "renamed" }
func (Unlink) event() string             { return "unlinked" }
func (GraceEnded) event() string         { return "grace" }
func (HoldEnded) event() string          { return "hold" }
func (Answered) event() string           { return "answered" }
func (Foreign) event() string            { return "foreign" }
func (PublishedElsewhere) event() string { return "published-elsewhere" }
func (StoreInfo) event() string          { return "store" }

// Kind is what a Request asks of the engine.
type Kind uint8

const (
	// AskSave writes Content as a version at Path: an update of MemID (with
	// Base; a conflict when the head moved on, refused in strict mode), or
	// a new memory when MemID is "". Pending, when set, is a pending row
	// the same commit consumes (a temporary file renamed over Path).
	AskSave Kind = iota + 1
	// AskSavePending writes Content as the pending row Pending (0: a new one).
	AskSavePending
	// AskPublish makes pending row Pending a memory at Path.
	AskPublish
	// AskDrop deletes pending row Pending.
	AskDrop
	// AskDelete deletes memory MemID at Path.
	AskDelete
	// AskMove renames memory MemID from From to Path.
	AskMove
	// AskLoad reads the content of memory MemID.
	AskLoad
)

var kindNames = [...]string{AskSave: "save", AskSavePending: "save-pending", AskPublish: "publish", AskDrop: "drop", AskDelete: "delete", AskMove: "move", AskLoad: "load"}

func (k Kind) String() string { return kindNames[k] }

// Request is one engine call of a plan. File and Cause let the answer
// finish the transition that asked for it.
type Request struct {
	Kind    Kind
	File    ID
	Path    string
	From    string
	MemID   string
	Base    string
	Strict  bool
	Content string
	Pending int64
	// Over is the file a rename replaces (Save with a temporary source).
	Over ID
	// Cause is the event that asked, for the table.
	Cause string
	// Handle is the handle whose save this is.
	Handle HandleID
	// Dirty: the temporary file was written since its row was saved.
	Dirty bool
}

// Plan is what Apply decided: answer the kernel's request with Errno (or
// Err, the engine's error, mapped by the caller), ask the engine Ask (and
// Apply its answer), tell the kernel Notify, set and stop Timers.
type Plan struct {
	Errno  syscall.Errno
	Reason string // why Errno, for the log
	Err    error
	Ask    *Request
	// Again: once Ask's answer is applied without error, apply the
	// event that made this plan again (a load before an open, a replaced
	// temporary file's row dropped before a rename).
	Again  bool
	Notify []Notice
	Timers []Timer
	// The answers to Create and Lookup.
	File   ID
	Ino    uint64
	Handle HandleID
}

// Notice is a kernel notification: the entry at Path, or the content of
// Ino, is no longer what the kernel holds.
type Notice struct {
	Path string
	Ino  uint64
}

// Timer sets (After > 0) or stops a timer whose end is Event.
type Timer struct {
	Event Event
	After time.Duration
	Stop  bool
}
