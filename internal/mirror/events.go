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
	// Create: create(2) of a new file at Path with mode Mode (0: 0644) by
	// thread Tid (each event names its caller's thread, 0 when unknown).
	Create struct {
		Path   string
		Tid    int
		Append bool
		Mode   uint32
	}
	// Getattr: the kernel asks a file's attributes (Plan.Attr).
	Getattr struct{ File ID }
	// Read: read(2) of up to Size bytes at Off (Plan.Data).
	Read struct {
		File ID
		Off  int64
		Size int
		Dest []byte // where the data goes, if given (the kernel's buffer)
	}
	// Setattr: chmod, utimensat, truncate; Handle is 0 without a handle.
	Setattr struct {
		File         ID
		Handle       HandleID
		Mode         *uint32
		Atime, Mtime *time.Time
		Size         *int64
	}
	// Open: open(2) of file File.
	Open struct {
		File          ID
		Tid           int
		Write, Append bool
		Trunc         bool
	}
	// Write: write(2) of Data at Off through Handle by thread Tid.
	Write struct {
		Handle HandleID
		Off    int64
		Data   []byte
		Tid    uint32
		// Offline: the database is known to be unreachable.
		Offline bool
	}
	// Flush: close(2) of a descriptor of Handle (one per dup) by thread
	// Tid (0: unknown).
	Flush struct {
		Handle HandleID
		Tid    uint32
	}
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
		Tid      int
	}
	// Unlink: unlink(2) of Path.
	Unlink struct{ Path string }
	// MakeDir, RemoveDir, RenameDir: mkdir(2), rmdir(2), rename(2) of a
	// directory.
	MakeDir struct {
		Path string
		Mode uint32
	}
	RemoveDir struct{ Path string }
	RenameDir struct {
		From, To  string
		NoReplace bool
	}
	// SetDirAttr: chmod or utimensat of directory Path.
	SetDirAttr struct {
		Path         string
		Mode         *uint32
		Atime, Mtime *time.Time
	}
	// StorePages: may the kernel be given File's content as its pages
	// now (no handle open, the pages hold nothing else)? Plan.Data.
	StorePages struct{ File ID }
	// Unmounting: the mount is going away; publish and commit what is
	// pending now (one Ask at a time, Again until none), set no timer.
	Unmounting struct{}
	// StoreChanged: the store was deleted or imported again: nothing the
	// mount holds of it is known any more.
	StoreChanged struct{}
	// DirsChanged: entries of these directories changed elsewhere.
	DirsChanged struct{ Dirs []string }
	// DirGone: the directory at Path left elsewhere; the next one there
	// is another.
	DirGone struct{ Path string }
)

// Timers and the engine.
type (
	// GraceEnded: the grace of a Temporary or Held file ended.
	GraceEnded struct{ File ID }
	// HoldEnded: the grace of the memory held at Path ended.
	HoldEnded struct{ Path string }
	// Settled: Options.Settle ended for a closed temporary file (Due).
	Settled struct{ File ID }
	// Answered is the engine's answer to Req: the memory it wrote, the
	// pending row it saved, the content it loaded, or its error.
	Answered struct {
		Req     Request
		Mem     *versions.Memory
		Pending int64
		Content string
		Err     error
		// Created: the save made a new memory.
		Created bool
		// Store is the store row read (AskCount).
		Store *versions.Store
		// Moved are the memories a directory's rename moved, by new path.
		Moved map[string]*versions.Memory
	}
	// Foreign is a change the feed brought.
	Foreign struct{ Change versions.Change }
)

func (Lookup) event() string       { return "looked" }
func (Create) event() string       { return "created" }
func (Open) event() string         { return "opened" }
func (Write) event() string        { return "wrote" }
func (Flush) event() string        { return "flushed" }
func (Fsync) event() string        { return "fsynced" }
func (Release) event() string      { return "released" }
func (Truncate) event() string     { return "truncated" }
func (Rename) event() string       { return "renamed" }
func (Unlink) event() string       { return "unlinked" }
func (GraceEnded) event() string   { return "grace" }
func (HoldEnded) event() string    { return "hold" }
func (Settled) event() string      { return "settled" }
func (Answered) event() string     { return "answered" }
func (Foreign) event() string      { return "foreign" }
func (Getattr) event() string      { return "getattr" }
func (Read) event() string         { return "read" }
func (Setattr) event() string      { return "truncated" }
func (MakeDir) event() string      { return "mkdir" }
func (RemoveDir) event() string    { return "rmdir" }
func (RenameDir) event() string    { return "renamed" }
func (SetDirAttr) event() string   { return "setattr" }
func (StorePages) event() string   { return "pages" }
func (Unmounting) event() string   { return "unmount" }
func (StoreChanged) event() string { return "store-changed" }
func (DirsChanged) event() string  { return "dirs-changed" }
func (DirGone) event() string      { return "dir-gone" }

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
	// AskCount reads the store row (its count of memories).
	AskCount
	// AskResolve reads the memory at Path, if any (a temporary file whose
	// row recovery took: the file is what the store has there).
	AskResolve
	// AskMakeDir, AskRemoveDir, AskMoveDir: a directory at Path made,
	// removed, or moved there From (Paths: open files below, by new path,
	// whose new heads the answer brings).
	AskMakeDir
	AskRemoveDir
	AskMoveDir
)

var kindNames = [...]string{AskSave: "save", AskSavePending: "save-pending", AskPublish: "publish", AskDrop: "drop", AskDelete: "delete", AskMove: "move", AskLoad: "load",
	AskCount: "count", AskResolve: "resolve", AskMakeDir: "mkdir", AskRemoveDir: "rmdir", AskMoveDir: "move-dir"}

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
	// Tid is the thread whose rename asked for the save, 0 for others.
	Tid int
	// Dirty: the temporary file was written since its row was saved.
	Dirty bool
	// NoReplace: a rename that must not replace its target.
	NoReplace bool
	// Paths: AskMoveDir's open files below, by new path.
	Paths []string
	// Mode: AskMakeDir's.
	Mode uint32
	// Head and HeadContent: AskSave's memory's head as this mount last
	// learnt it, and that head's content when the mount holds it (its
	// buffer started from it), so that the engine reads none of it again;
	// "" and nil when the mount does not know them. The engine checks the
	// head against the rows.
	Head        string
	HeadContent *string
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
	// Attr answers Getattr and Setattr; Data a Read or StorePages.
	Attr *Attr
	Data []byte
	// The answer to Open: keep the kernel's pages, or bypass them
	// (direct I/O: the kernel believes another size).
	KeepCache, DirectIO bool
	// Saved: a version was written (for metrics).
	Saved bool
	// Finding is a credential the guard refused at write().
	Finding *guard.Finding
	// Discarded: content whose save failed was dropped at the last close.
	Discarded bool
	// Own: a Foreign change that is this mount's own.
	Own bool
	// Log is a line for the daemon's log (a warning).
	Log string
	// Path is the path Errno concerns, when not the request's own, or
	// the path of the engine request that failed with Err.
	Path string
}

// Notice is a kernel notification: the entry at Path is no longer what
// the kernel holds.
type Notice struct {
	Path string
	// Along is, for a change the feed brought, what the index said of
	// each name on Path, from the top, before it forgot them: what the
	// kernel may still hold of them.
	Along []Shown
	// File: the content of this file, at Path, is no longer what the
	// kernel holds (Path "" when it has none).
	File ID
	// Pages: instead, give the kernel File's content as its pages, if
	// it still is (StorePages), once the request is answered.
	Pages bool
}

// Timer sets (After > 0) or stops a timer whose end is Event.
type Timer struct {
	Event Event
	After time.Duration
	Stop  bool
}
