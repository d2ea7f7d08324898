package versions

// THIS FILE IS THE CONTRACT OF THE STORE ENGINE, STUBBED. The engine's
// implementer replaces these stubs with real code in files by concern
// (db.go, stores.go, memories.go, versions.go, sessions.go, dirs.go,
// changes.go …) keeping every signature and documented behaviour, then
// deletes this file.

import (
	"context"
	"time"
)

var errTODO = errorf(CodeInternal, "not implemented yet")

// Durability is how hard a commit tries to survive a crash.
type Durability int

const (
	// DurabilityNormal: WAL with synchronous=NORMAL. A commit survives a
	// crash of any process once it returns; a power loss or kernel crash
	// may lose the last commits (never corrupts the database).
	DurabilityNormal Durability = iota
	// DurabilityFull: WAL with synchronous=FULL. Every commit is fsynced
	// before it returns: it survives a power loss.
	DurabilityFull
)

// Options configure Open. The zero value is the default.
type Options struct {
	Durability  Durability
	BusyTimeout time.Duration // how long a writer waits for another process; default 30s
}

// DB is a memfs database: one SQLite file in WAL mode, safe for concurrent
// use by many goroutines and by several processes at once.
type DB struct{}

// DefaultPath is $MEMFS_DB, else $XDG_DATA_HOME/memfs/memfs.db, else
// ~/.local/share/memfs/memfs.db.
func DefaultPath() (string, error) { return "", errTODO }

// Open opens (creating it and its directory if needed) and migrates the
// database at path.
func Open(path string, opts Options) (*DB, error) { return nil, errTODO }

func (db *DB) Close() error { return nil }

// Origin identifies this handle in the Changes it records.
func (db *DB) Origin() string { return "" }

// ---- stores (S13) ----

// StoreParams create a store. Zero limits mean the defaults.
type StoreParams struct {
	Name           string
	Description    string
	Metadata       map[string]string
	MaxMemories    int
	MaxMemoryBytes int
}

func (db *DB) CreateStore(ctx context.Context, p StoreParams) (*Store, error) { return nil, errTODO }
func (db *DB) GetStore(ctx context.Context, storeID string) (*Store, error)   { return nil, errTODO }

// ResolveStore finds a store by memstore_ id or by exact name when exactly
// one store has that name (archived ones included).
func (db *DB) ResolveStore(ctx context.Context, ref string) (*Store, error) { return nil, errTODO }

// StoreUpdate changes what is non-nil. Metadata merges: a nil value removes
// the key.
type StoreUpdate struct {
	Name        *string
	Description *string
	Metadata    map[string]*string
}

func (db *DB) UpdateStore(ctx context.Context, storeID string, u StoreUpdate) (*Store, error) {
	return nil, errTODO
}

type StoreListOptions struct {
	IncludeArchived bool
	CreatedGTE      time.Time // zero: no bound
	CreatedLTE      time.Time
	Limit           int    // 0: DefaultPageSize
	Page            string // cursor from a previous page's NextPage
}

func (db *DB) ListStores(ctx context.Context, o StoreListOptions) (*Page[Store], error) {
	return nil, errTODO
}
func (db *DB) ArchiveStore(ctx context.Context, storeID string) (*Store, error) { return nil, errTODO }
func (db *DB) DeleteStore(ctx context.Context, storeID string) error            { return errTODO }

// ---- memories (S1–S6, S11, S12) ----

// ValidatePath checks a memory path against API.md's rules; the error's code
// is CodeNameTooLong for length limits and CodeInvalid otherwise.
func ValidatePath(p string) error { return errTODO }

// CreateMemory writes a new memory and its "created" version. Returns the
// memory in the full view.
func (db *DB) CreateMemory(ctx context.Context, storeID, path, content string, by Actor) (*Memory, error) {
	return nil, errTODO
}

// GetMemory returns a live memory (full view) by mem_ id or by path.
func (db *DB) GetMemory(ctx context.Context, storeID, ref string) (*Memory, error) {
	return nil, errTODO
}

type MemoryListOptions struct {
	PathPrefix string // "" or ending in "/"
	Depth      int    // 0: whole subtree; 1: direct children and prefixes
	View       View   // "" = basic
	Limit      int
	Page       string
}

func (db *DB) ListMemories(ctx context.Context, storeID string, o MemoryListOptions) (*Page[MemoryItem], error) {
	return nil, errTODO
}

// MemoryUpdate changes content, path or both (S2, S3).
type MemoryUpdate struct {
	Content  *string
	Path     *string
	IfSHA256 string // precondition on the current content (S3)
	// BaseVersionID is the version a writer started from (a mount passes the
	// head it read); if another version became head since, the new version
	// is marked Conflict (F13), or with Strict the update fails CodeStale.
	BaseVersionID string
	Strict        bool
	// KeepParentDir keeps the old parent directory (as an explicit one) when
	// a rename empties it, as a filesystem does.
	KeepParentDir bool
}

// UpdateMemory returns the memory in the full view.
func (db *DB) UpdateMemory(ctx context.Context, storeID, memoryID string, u MemoryUpdate, by Actor) (*Memory, error) {
	return nil, errTODO
}

type MemoryDelete struct {
	IfSHA256      string
	KeepParentDir bool
}

func (db *DB) DeleteMemory(ctx context.Context, storeID, memoryID string, d MemoryDelete, by Actor) error {
	return errTODO
}

// ---- paths as a filesystem sees them (F6, F7, F8) ----

// Stat returns what is at path ("/" is the store's root directory).
func (db *DB) Stat(ctx context.Context, storeID, path string) (*Entry, error) { return nil, errTODO }

// ReadDir lists a directory's direct children sorted by name.
func (db *DB) ReadDir(ctx context.Context, storeID, dir string) ([]Entry, error) {
	return nil, errTODO
}

// MakeDir persists an empty directory (its parent must exist).
func (db *DB) MakeDir(ctx context.Context, storeID, path string) error { return errTODO }

// RemoveDir removes an empty directory: CodeNotEmpty if anything is below it.
func (db *DB) RemoveDir(ctx context.Context, storeID, path string) error { return errTODO }

// Rename moves a file or a directory with POSIX rename semantics in one
// transaction: every memory moved gets a "modified" version (ids kept); a file
// renamed onto an existing file records the content as a "modified" version
// of the destination's memory and a "deleted" version of the source (F6).
// Errors: CodeNotFound, CodePathConflict (noReplace and the destination
// exists), CodeIsDir, CodeNotDir, CodeNotEmpty, CodeInvalid (a directory into
// its own subtree). Parent directories emptied by the move are kept.
func (db *DB) Rename(ctx context.Context, storeID, from, to string, noReplace bool, by Actor) error {
	return errTODO
}

// ---- versions (S4, S7–S10, S14) ----

type VersionListOptions struct {
	MemoryID   string
	SessionID  string
	Operation  Operation
	CreatedGTE time.Time
	CreatedLTE time.Time
	View       View
	Limit      int
	Page       string
}

// ListVersions lists newest first.
func (db *DB) ListVersions(ctx context.Context, storeID string, o VersionListOptions) (*Page[Version], error) {
	return nil, errTODO
}

// GetVersion returns one version with its content.
func (db *DB) GetVersion(ctx context.Context, storeID, versionID string) (*Version, error) {
	return nil, errTODO
}

func (db *DB) RedactVersion(ctx context.Context, storeID, versionID string, by Actor) (*Version, error) {
	return nil, errTODO
}

// Restore writes an old version's content as a new version (S9): an update
// of the live memory (renamed to path if path is given), or a new memory at
// path (default: the version's path) if the memory was deleted.
func (db *DB) Restore(ctx context.Context, storeID, versionID, path string, by Actor) (*Memory, error) {
	return nil, errTODO
}

// PruneVersions deletes versions older than olderThan except each memory's
// keepLast most recent (≥ 1) and returns what it removed (S10).
func (db *DB) PruneVersions(ctx context.Context, storeID string, olderThan time.Duration, keepLast int) ([]Version, error) {
	return nil, errTODO
}

// Export calls emit with the store, then every memory (full view) in path
// order, then every version (full) oldest first (S14).
func (db *DB) Export(ctx context.Context, storeID string, emit func(v any) error) error {
	return errTODO
}

// ---- sessions (X1, F5) ----

type AttachmentParams struct {
	StoreID      string
	Access       Access // "" = read_write
	Instructions *string
}

// CreateSession snapshots each store's name and description and assigns
// distinct slugs (slugify.Unique) and mount paths.
func (db *DB) CreateSession(ctx context.Context, attach []AttachmentParams) (*Session, error) {
	return nil, errTODO
}
func (db *DB) GetSession(ctx context.Context, id string) (*Session, error) { return nil, errTODO }
func (db *DB) ListSessions(ctx context.Context, limit int, page string) (*Page[Session], error) {
	return nil, errTODO
}
func (db *DB) EndSession(ctx context.Context, id string) (*Session, error) { return nil, errTODO }

// ---- change feed for mounts (F10) ----

// Changes returns the changes to storeID with Seq > after, oldest first, and
// the highest Seq in the database (pass it as after next time).
func (db *DB) Changes(ctx context.Context, storeID string, after int64) ([]Change, int64, error) {
	return nil, 0, errTODO
}
