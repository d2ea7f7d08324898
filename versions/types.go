package versions

import (
	"encoding/json"
	"time"
)

// Default limits (the hosted API's). Stores may set their own
// memory-count and memory-size limits when created.
const (
	DefaultMaxMemories = 2000
	// DefaultMaxDirectories bounds the directories a store keeps
	// (made with mkdir, or kept when emptied), as DefaultMaxMemories
	// bounds its memories.
	DefaultMaxDirectories = 2000
	DefaultMaxMemoryBytes = 102400
	// DefaultMaxHistoryBytes is a store's quota on the content its versions
	// retain (the heads of live memories included) until pruned.
	DefaultMaxHistoryBytes = 100 << 20
	MaxPathBytes           = 1024
	MaxPathSegments        = 20
	MaxSegmentBytes        = 255 // NAME_MAX: the longest file name a mount can show
	MaxStoreNameChars      = 255
	MaxDescriptionChars    = 1024
	MaxMetadataPairs       = 16
	MaxMetadataKeyChars    = 64
	MaxMetadataValueChars  = 512
	MaxInstructionsChars   = 4096
	MaxAttachments         = 8
	MaxFullViewPage        = 20 // with view=full a page holds at most this many items
	DefaultPageSize        = 100
	MaxPageSize            = 1000
)

// Operation is what a version records.
type Operation string

const (
	OpCreated  Operation = "created"
	OpModified Operation = "modified"
	OpDeleted  Operation = "deleted"
)

// View selects whether listed objects carry their content.
type View string

const (
	ViewBasic View = "basic" // content is null
	ViewFull  View = "full"
)

// Access is how a session may use an attached store.
type Access string

const (
	ReadWrite Access = "read_write"
	ReadOnly  Access = "read_only"
)

// Actor is who wrote a version: Type is "session_actor", "user_actor",
// "api_actor" or "service_account_actor" and ID the matching identifier.
type Actor struct {
	Type string
	ID   string
	// Via is the API key a session acted through over HTTP (a memfs
	// extension, "via_api_key_id" in JSON); "" for every other write.
	Via string
}

// SessionActor is the actor of writes made through a session's mount.
func SessionActor(sessionID string) Actor { return Actor{Type: "session_actor", ID: sessionID} }

// UserActor is the actor of writes made by a person, e.g. through the CLI.
func UserActor(userID string) Actor { return Actor{Type: "user_actor", ID: userID} }

var actorIDField = map[string]string{
	"session_actor":         "session_id",
	"user_actor":            "user_id",
	"api_actor":             "api_key_id",
	"service_account_actor": "service_account_id",
}

func (a Actor) MarshalJSON() ([]byte, error) {
	field, ok := actorIDField[a.Type]
	if !ok {
		field = "id"
	}
	m := map[string]string{"type": a.Type, field: a.ID}
	if a.Via != "" {
		m["via_api_key_id"] = a.Via
	}
	return json.Marshal(m)
}

func (a *Actor) UnmarshalJSON(b []byte) error {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	a.Type, a.Via = m["type"], m["via_api_key_id"]
	field, ok := actorIDField[a.Type]
	if !ok {
		field = "id" // as MarshalJSON writes an actor of another type
	}
	a.ID = m[field]
	return nil
}

// Store is a memory store (the hosted API's memory_store).
type Store struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Metadata    map[string]string `json:"metadata"`
	CreatedAt   time.Time         `json:"created_at"`
	UpdatedAt   time.Time         `json:"updated_at"`
	ArchivedAt  *time.Time        `json:"archived_at"`
	// Limits of this store and how many memories it holds; not
	// part of the API object.
	MaxMemories    int `json:"-"`
	MaxDirectories int `json:"-"`
	MaxMemoryBytes int `json:"-"`
	// MaxHistoryBytes is the quota on retained history; 0: none.
	MaxHistoryBytes int `json:"-"`
	MemoryCount     int `json:"-"`
	// HistoryBytes is the content its versions retain now.
	HistoryBytes int `json:"-"`
	// Guard is the credential guard's policy (refuse, warn or off); not
	// part of the API object.
	Guard GuardPolicy `json:"-"`
}

func (s Store) MarshalJSON() ([]byte, error) {
	type plain Store
	if s.Metadata == nil {
		s.Metadata = map[string]string{}
	}
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
	}{"memory_store", plain(s)})
}

// Memory is a live document (the hosted API's memory). Content is nil in the basic view.
type Memory struct {
	ID            string    `json:"id"`
	StoreID       string    `json:"memory_store_id"`
	Path          string    `json:"path"`
	Content       *string   `json:"content"`
	ContentSHA256 string    `json:"content_sha256"`
	ContentSize   int       `json:"content_size_bytes"`
	VersionID     string    `json:"memory_version_id"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
	// Ino is a number that identifies the memory for its whole life and is
	// never reused within the database (a mount's inode number).
	Ino uint64 `json:"-"`
	// Seq is the feed position (Change.Seq) of the memory's head version:
	// the one a write that returned it committed, or the one a read found.
	Seq int64 `json:"-"`
}

func (m Memory) MarshalJSON() ([]byte, error) {
	type plain Memory
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
	}{"memory", plain(m)})
}

// MemoryItem is one entry of a memory listing: a memory, or (with depth 1) a
// prefix standing for everything deeper below it.
type MemoryItem struct {
	Memory *Memory
	Prefix string // e.g. "/projects/foo/" when Memory is nil
}

func (it MemoryItem) MarshalJSON() ([]byte, error) {
	if it.Memory != nil {
		return json.Marshal(it.Memory)
	}
	return json.Marshal(map[string]string{"type": "memory_prefix", "path": it.Prefix})
}

// Version is an immutable record of one mutation (the hosted API's memory_version).
type Version struct {
	ID            string     `json:"id"`
	MemoryID      string     `json:"memory_id"`
	StoreID       string     `json:"memory_store_id"`
	Operation     Operation  `json:"operation"`
	Path          *string    `json:"path"`
	Content       *string    `json:"content"`
	ContentSHA256 *string    `json:"content_sha256"`
	ContentSize   *int       `json:"content_size_bytes"`
	CreatedAt     time.Time  `json:"created_at"`
	CreatedBy     *Actor     `json:"created_by"`
	RedactedAt    *time.Time `json:"redacted_at"`
	RedactedBy    *Actor     `json:"redacted_by"`
	// Conflict marks a save whose starting version was no longer the head
	// when it committed. A memfs extension, present only when true.
	Conflict bool `json:"conflict,omitempty"`
	// RestoredFrom is the version a restore took this version's content
	// from. A memfs extension, present only when set.
	RestoredFrom string `json:"restored_from,omitempty"`
	// PreviousPath is the path a rename moved the memory from. A memfs
	// extension, present only for a rename.
	PreviousPath string `json:"previous_path,omitempty"`
}

func (v Version) MarshalJSON() ([]byte, error) {
	type plain Version
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
	}{"memory_version", plain(v)})
}

// Session is an agent run with its attached stores. Agent and
// EnvironmentID are recorded as the session's creator gave them, not
// interpreted: memfs runs no agents.
type Session struct {
	ID            string
	Agent         json.RawMessage // a JSON string (an agent id) or object; nil: none
	EnvironmentID *string
	Title         *string
	Metadata      map[string]string
	Resources     []Attachment
	CreatedAt     time.Time
	UpdatedAt     time.Time
	ArchivedAt    *time.Time
	// EndedAt is when the run ended (memfs run's command exited, a mount
	// with --store unmounted, or memfs session end); a memfs extension.
	EndedAt *time.Time
}

// Status is the session's status in the API's terms: memfs knows whether a
// run ended, not whether its agent is busy.
func (s Session) Status() string {
	if s.EndedAt != nil {
		return "terminated"
	}
	return "idle"
}

// MarshalJSON writes the API's session object; the fields of a hosted
// session that memfs has no use for are their empty values.
func (s Session) MarshalJSON() ([]byte, error) {
	if s.Resources == nil {
		s.Resources = []Attachment{}
	}
	if s.Metadata == nil {
		s.Metadata = map[string]string{}
	}
	agent := json.RawMessage("null")
	if len(s.Agent) > 0 && s.Agent[0] == '"' {
		// An agent named by its id alone: the API answers an object.
		var id string
		if err := json.Unmarshal(s.Agent, &id); err != nil {
			return nil, err
		}
		b, err := json.Marshal(map[string]string{"type": "agent", "id": id})
		if err != nil {
			return nil, err
		}
		agent = b
	} else if len(s.Agent) > 0 {
		agent = s.Agent
	}
	return json.Marshal(struct {
		Type               string            `json:"type"`
		ID                 string            `json:"id"`
		Agent              json.RawMessage   `json:"agent"`
		EnvironmentID      *string           `json:"environment_id"`
		Title              *string           `json:"title"`
		Metadata           map[string]string `json:"metadata"`
		Status             string            `json:"status"`
		Resources          []Attachment      `json:"resources"`
		CreatedAt          time.Time         `json:"created_at"`
		UpdatedAt          time.Time         `json:"updated_at"`
		ArchivedAt         *time.Time        `json:"archived_at"`
		EndedAt            *time.Time        `json:"ended_at"`
		Budget             *struct{}         `json:"budget"`
		DeploymentID       *string           `json:"deployment_id"`
		OutcomeEvaluations []struct{}        `json:"outcome_evaluations"`
		VaultIDs           []string          `json:"vault_ids"`
	}{"session", s.ID, agent, s.EnvironmentID, s.Title, s.Metadata, s.Status(), s.Resources,
		s.CreatedAt, s.UpdatedAt, s.ArchivedAt, s.EndedAt, nil, nil, []struct{}{}, []string{}})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Session) UnmarshalJSON(b []byte) error {
	var w struct {
		ID            string            `json:"id"`
		Agent         json.RawMessage   `json:"agent"`
		EnvironmentID *string           `json:"environment_id"`
		Title         *string           `json:"title"`
		Metadata      map[string]string `json:"metadata"`
		Resources     []Attachment      `json:"resources"`
		CreatedAt     time.Time         `json:"created_at"`
		UpdatedAt     time.Time         `json:"updated_at"`
		ArchivedAt    *time.Time        `json:"archived_at"`
		EndedAt       *time.Time        `json:"ended_at"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if string(w.Agent) == "null" {
		w.Agent = nil
	}
	*s = Session{ID: w.ID, Agent: w.Agent, EnvironmentID: w.EnvironmentID, Title: w.Title, Metadata: w.Metadata,
		Resources: w.Resources, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt, ArchivedAt: w.ArchivedAt, EndedAt: w.EndedAt}
	return nil
}

// Attachment is a store attached to a session (the hosted API's session attachment).
// Name and Description are snapshotted when the session is created; Slug is
// the directory the store is mounted under and MountPath "/mnt/memory/"+Slug.
type Attachment struct {
	StoreID      string  `json:"memory_store_id"`
	Access       Access  `json:"access"`
	Instructions *string `json:"instructions"`
	Name         string  `json:"name"`
	Description  string  `json:"description"`
	MountPath    string  `json:"mount_path"`
	// WritePrefix: only this folder of the store is writable to the
	// session (writeprefix.go). A memfs field the hosted API ignores,
	// present only when set.
	WritePrefix string `json:"write_prefix,omitempty"`
	Slug        string `json:"-"`
}

func (a Attachment) MarshalJSON() ([]byte, error) {
	type plain Attachment
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
	}{"memory_store", plain(a)})
}

// Page is one page of a listing; NextPage is the cursor of the next one.
type Page[T any] struct {
	Data     []T     `json:"data"`
	NextPage *string `json:"next_page"`
}

// Entry is what a directory of a store holds: a memory (basic view) or a
// directory, which exists when a memory lies below it or it was made
// explicitly.
type Entry struct {
	Name   string // last path segment
	Path   string
	Dir    bool
	Memory *Memory // nil for a directory
}

// Change is one entry of a store's change feed (DB.Changes): what a
// commit did at Path, complete enough for a mount to apply it without
// asking the engine again.
//
//   - A memory's change (ChangeCreated, ChangeModified, ChangeRenamed,
//     ChangeDeleted) is one version: MemoryID, VersionID and, unless
//     deleted, the new content's SHA256 and Size. A rename has one change,
//     at its new Path with PrevPath set (its content may have changed in
//     the same version: compare SHA256). A file renamed onto another is two:
//     the destination's memory modified at Path, the source's deleted at
//     its old path.
//   - A directory's change (ChangeDirMade, ChangeDirRemoved, ChangeDir) is
//     one explicit or implied directory appearing or vanishing at Path; a
//     directory's move has one for the old and one for the new path of each
//     explicit directory in it, besides a renamed change for each memory
//     below it. A path's ancestors, which memories imply, have none.
//   - ChangeStore at Path "/" is the store itself: archived, deleted or
//     imported again; read the store, and anything of it, again.
//
// Seq is the change's position: a memory's change is its version's place
// in the versions table, any other a row of the changes table, each kind
// growing with its commits. Origin names the writer that committed it
// (origin.go): a mount tells its own changes by it.
type Change struct {
	Seq       int64
	StoreID   string
	Op        ChangeOp
	Path      string
	PrevPath  string // ChangeRenamed: the path the memory moved from
	MemoryID  string // memory changes only
	VersionID string // memory changes only
	SHA256    string // created, modified and renamed: the content's hash
	Size      int    // created, modified and renamed: the content's bytes
	Origin    string
	At        time.Time // when it was committed
	// Conflict: the version is marked a conflict (its writer's base was
	// not the head). Only Save's answer carries it.
	Conflict bool
	// PendingID is the pending row a ChangePending saved (Save only).
	PendingID int64
}

// ChangeOp is what a Change did at its path.
type ChangeOp string

const (
	// ChangeCreated: a new memory is at Path.
	ChangeCreated ChangeOp = "created"
	// ChangeModified: the memory at Path has new content.
	ChangeModified ChangeOp = "modified"
	// ChangeRenamed: the memory moved from PrevPath to Path.
	ChangeRenamed ChangeOp = "renamed"
	// ChangeDeleted: the memory that was at Path is gone.
	ChangeDeleted ChangeOp = "deleted"
	// ChangeDirMade: a directory is at Path (made, kept when a move or a
	// delete emptied it, or moved there).
	ChangeDirMade ChangeOp = "dir_made"
	// ChangeDirRemoved: no directory is at Path any more (removed, moved
	// away, or deleted with what it held).
	ChangeDirRemoved ChangeOp = "dir_removed"
	// ChangeDir: something changed at the directory Path and the feed does
	// not say what (rows recorded before operations were): ask the engine.
	ChangeDir ChangeOp = "dir"
	// ChangeRedacted: a version once saved at Path was redacted. No live
	// file changed (the head of a live memory cannot be redacted); the
	// history of Path did.
	ChangeRedacted ChangeOp = "redacted"
	// ChangePending: Save saved a temporary file's content as pending
	// row PendingID: no version, no feed position. The feed never
	// carries it.
	ChangePending ChangeOp = "pending"
	// ChangeStore: the store itself changed (Path "/").
	ChangeStore ChangeOp = "store"
)

// Memory is what a memory change (created, modified, renamed) says of the
// memory it left at Path: its identity, head and content's hash and size.
func (c Change) Memory() *Memory {
	return &Memory{ID: c.MemoryID, StoreID: c.StoreID, Path: c.Path, VersionID: c.VersionID,
		ContentSHA256: c.SHA256, ContentSize: c.Size, UpdatedAt: c.At, Seq: c.Seq}
}

// Paths are the paths a change touched: PrevPath, if any, then Path.
func (c Change) Paths() []string {
	if c.PrevPath != "" {
		return []string{c.PrevPath, c.Path}
	}
	return []string{c.Path}
}
