package versions

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// The export format (JSON Lines, one object per line, in this order):
//
//	memory_store      the store's API object, plus its limits max_memories,
//	                  max_memory_bytes and max_history_bytes (0: no quota;
//	                  absent in older exports: the default)
//	memory            each live memory with its content (full view), by path
//	memory_directory  each directory kept without a memory below it (mkdir),
//	                  by path
//	memory_version    every version with its content, oldest first
//	memory_checkpoint each checkpoint, at the version it names
//	                  (memory_version_id null: before every version)
//
// Several exports may follow each other in one stream: each memory_store
// line begins the next store. Import reads exactly this; ids, times, actors,
// redactions and conflict marks are kept, so that exporting what was
// imported gives the same bytes on either backend.

// StoreExport is the first line of a store's export.
type StoreExport struct{ Store }

func (s StoreExport) MarshalJSON() ([]byte, error) {
	type plain Store
	if s.Metadata == nil {
		s.Metadata = map[string]string{}
	}
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
		Limit     int `json:"max_memories"`
		LimitSize int `json:"max_memory_bytes"`
		Quota     int `json:"max_history_bytes"`
		Dirs      int `json:"max_directories"`
	}{"memory_store", plain(s.Store), s.MaxMemories, s.MaxMemoryBytes, s.MaxHistoryBytes, s.MaxDirectories})
}

// DirExport is a directory that exists without a memory below it.
type DirExport struct {
	Path string `json:"path"`
}

func (d DirExport) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type string `json:"type"`
		Path string `json:"path"`
	}{"memory_directory", d.Path})
}

// Imported is one store Import wrote and how much it held.
type Imported struct {
	Store       *Store
	Memories    int
	Directories int
	Versions    int
}

// importStore is one store read from an export, checked before anything
// is written.
type importStore struct {
	line     int
	store    Store
	memories []Memory
	dirs     []string
	versions []Version
	lines    map[string]int // version id → its line, for messages
	// checkpoints are the store's checkpoints, each at the version its
	// VersionID names ("": before every version).
	checkpoints []Checkpoint
}

// Import reads JSON Lines as Export writes them and recreates each store
// with its memories, directories and versions, keeping every id, time,
// actor, redaction and conflict mark. Everything is written in one
// transaction: an input that does not check out, or an id the database
// already holds, leaves the database as it was.
func (db *DB) Import(ctx context.Context, in io.Reader) ([]Imported, error) {
	stores, err := readExport(in)
	if err != nil {
		return nil, err
	}
	var out []Imported
	err = db.write(ctx, "import", func(r *run) error {
		out = out[:0]
		for _, st := range stores {
			im, err := importOne(r, st)
			if err != nil {
				return err
			}
			out = append(out, im)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readExport parses and checks the whole input: the write transaction
// starts only once it is known to be complete and consistent (and can be
// retried, which a half-read stream could not).
func readExport(in io.Reader) ([]*importStore, error) {
	br := bufio.NewReaderSize(in, 1<<16)
	var stores []*importStore
	var cur *importStore
	seen := map[string]int{}           // every id in the input → its line
	memoryStore := map[string]string{} // a memory id → the store of its versions
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, errorf(CodeInvalid, "import: reading line %d: %v", n, err)
		}
		if len(strings.TrimSpace(string(line))) == 0 {
			if err == io.EOF {
				break
			}
			continue
		}
		var head struct {
			Type string `json:"type"`
		}
		if jerr := json.Unmarshal(line, &head); jerr != nil {
			return nil, errorf(CodeInvalid, "import: line %d is not a JSON object (%s): give a file memfs export wrote", n, JSONProblem(jerr))
		}
		if head.Type != "memory_store" && cur == nil {
			return nil, errorf(CodeInvalid, "import: line %d is a %q, but an export begins with its memory_store line: give a file memfs export wrote", n, head.Type)
		}
		switch head.Type {
		case "memory_store":
			var s struct {
				Store
				MaxMemories     int  `json:"max_memories"`
				MaxMemoryBytes  int  `json:"max_memory_bytes"`
				MaxHistoryBytes *int `json:"max_history_bytes"`
				MaxDirectories  int  `json:"max_directories"`
			}
			if jerr := json.Unmarshal(line, &s); jerr != nil {
				return nil, lineError(n, head.Type, jerr)
			}
			s.Store.MaxMemories, s.Store.MaxMemoryBytes, s.Store.MaxDirectories = s.MaxMemories, s.MaxMemoryBytes, s.MaxDirectories
			// An export written before the quota was part of it: the
			// default such a store was given when the quota came.
			s.Store.MaxHistoryBytes = DefaultMaxHistoryBytes
			if s.MaxHistoryBytes != nil {
				s.Store.MaxHistoryBytes = *s.MaxHistoryBytes
			}
			if err := checkImportStore(n, &s.Store); err != nil {
				return nil, err
			}
			if err := unseen(seen, s.ID, n); err != nil {
				return nil, err
			}
			cur = &importStore{line: n, store: s.Store, lines: map[string]int{}}
			stores = append(stores, cur)
		case "memory":
			var m Memory
			if jerr := json.Unmarshal(line, &m); jerr != nil {
				return nil, lineError(n, head.Type, jerr)
			}
			if err := checkImportMemory(n, cur, &m); err != nil {
				return nil, err
			}
			if err := unseen(seen, m.ID, n); err != nil {
				return nil, err
			}
			cur.memories = append(cur.memories, m)
		case "memory_directory":
			var d DirExport
			if jerr := json.Unmarshal(line, &d); jerr != nil {
				return nil, lineError(n, head.Type, jerr)
			}
			if err := ValidatePath(d.Path); err != nil {
				return nil, errorf(CodeInvalid, "import: line %d: directory: %v", n, err)
			}
			if slices.Contains(cur.dirs, d.Path) {
				return nil, errorf(CodeInvalid, "import: line %d repeats the directory %s", n, d.Path)
			}
			cur.dirs = append(cur.dirs, d.Path)
		case "memory_version":
			var v Version
			if jerr := json.Unmarshal(line, &v); jerr != nil {
				return nil, lineError(n, head.Type, jerr)
			}
			if err := checkImportVersion(n, cur, &v); err != nil {
				return nil, err
			}
			if err := unseen(seen, v.ID, n); err != nil {
				return nil, err
			}
			if other, ok := memoryStore[v.MemoryID]; ok && other != cur.store.ID {
				return nil, errorf(CodeInvalid, "import: line %d: memory %s has versions in stores %s and %s, and a memory belongs to one store: import the two stores into different databases", n, v.MemoryID, other, cur.store.ID)
			}
			memoryStore[v.MemoryID] = cur.store.ID
			cur.versions = append(cur.versions, v)
			cur.lines[v.ID] = n
		case "memory_checkpoint":
			c, err := readCheckpointLine(n, line, cur)
			if err != nil {
				return nil, err
			}
			cur.checkpoints = append(cur.checkpoints, *c)
		default:
			return nil, errorf(CodeInvalid, "import: line %d has type %q, not one of memory_store, memory, memory_directory, memory_version, memory_checkpoint: give a file memfs export wrote", n, head.Type)
		}
		if err == io.EOF {
			break
		}
	}
	if len(stores) == 0 {
		return nil, errorf(CodeInvalid, "import: the input is empty: give a file memfs export wrote (or pipe its output)")
	}
	for _, st := range stores {
		if err := checkImportTree(st); err != nil {
			return nil, err
		}
	}
	return stores, nil
}

func lineError(n int, typ string, err error) error {
	return errorf(CodeInvalid, "import: line %d: not a valid %s (%v): give a file memfs export wrote", n, typ, err)
}

func unseen(seen map[string]int, id string, n int) error {
	if first, ok := seen[id]; ok {
		return errorf(CodeInvalid, "import: line %d repeats the id %s of line %d: an export names each object once", n, id, first)
	}
	seen[id] = n
	return nil
}

func checkImportStore(n int, s *Store) error {
	bad := func(format string, args ...any) error {
		return errorf(CodeInvalid, "import: line %d: memory store %s: %s", n, s.ID, fmt.Sprintf(format, args...))
	}
	if !strings.HasPrefix(s.ID, prefixStore) {
		return errorf(CodeInvalid, "import: line %d: a memory_store's id must begin with %s, not %q", n, prefixStore, s.ID)
	}
	for _, err := range []error{validateStoreName(s.Name), validateDescription(s.Description), validateMetadata(s.Metadata)} {
		if err != nil {
			return bad("%v", err)
		}
	}
	if s.MaxMemories < 0 || s.MaxMemoryBytes < 0 || s.MaxHistoryBytes < 0 || s.MaxDirectories < 0 {
		return bad("its limits (max_memories %d, max_memory_bytes %d, max_history_bytes %d) are negative", s.MaxMemories, s.MaxMemoryBytes, s.MaxHistoryBytes)
	}
	// An export written before the limits were part of it: the defaults
	// every store had then.
	if s.MaxMemories == 0 {
		s.MaxMemories = DefaultMaxMemories
	}
	if s.MaxDirectories == 0 {
		s.MaxDirectories = DefaultMaxDirectories
	}
	if s.MaxMemoryBytes == 0 {
		s.MaxMemoryBytes = DefaultMaxMemoryBytes
	}
	if s.CreatedAt.IsZero() || s.UpdatedAt.IsZero() {
		return bad("created_at and updated_at are required")
	}
	return nil
}

func checkImportMemory(n int, st *importStore, m *Memory) error {
	bad := func(format string, args ...any) error {
		return errorf(CodeInvalid, "import: line %d: memory %s: %s", n, m.ID, fmt.Sprintf(format, args...))
	}
	switch {
	case !strings.HasPrefix(m.ID, prefixMemory):
		return errorf(CodeInvalid, "import: line %d: a memory's id must begin with %s, not %q", n, prefixMemory, m.ID)
	case m.StoreID != st.store.ID:
		return bad("it belongs to store %s, but follows the memory_store line of %s (line %d)", m.StoreID, st.store.ID, st.line)
	case m.Content == nil:
		return bad("its content is missing: an export carries the full view")
	case sha256Hex(*m.Content) != m.ContentSHA256 || len(*m.Content) != m.ContentSize:
		return bad("its content does not match its content_sha256 and content_size_bytes: the file was altered")
	case m.CreatedAt.IsZero() || m.UpdatedAt.IsZero():
		return bad("created_at and updated_at are required")
	}
	if err := ValidatePath(m.Path); err != nil {
		return bad("%v", err)
	}
	return nil
}

func checkImportVersion(n int, st *importStore, v *Version) error {
	bad := func(format string, args ...any) error {
		return errorf(CodeInvalid, "import: line %d: version %s: %s", n, v.ID, fmt.Sprintf(format, args...))
	}
	switch {
	case !strings.HasPrefix(v.ID, prefixVersion):
		return errorf(CodeInvalid, "import: line %d: a version's id must begin with %s, not %q", n, prefixVersion, v.ID)
	case v.StoreID != st.store.ID:
		return bad("it belongs to store %s, but follows the memory_store line of %s (line %d)", v.StoreID, st.store.ID, st.line)
	case !strings.HasPrefix(v.MemoryID, prefixMemory):
		return bad("its memory_id %q does not begin with %s", v.MemoryID, prefixMemory)
	case v.CreatedAt.IsZero():
		return bad("created_at is required")
	case v.Operation != OpCreated && v.Operation != OpModified && v.Operation != OpDeleted:
		return bad("operation %q is not one of created, modified, deleted", v.Operation)
	case v.RedactedAt != nil && (v.Content != nil || v.Path != nil):
		return bad("it is redacted but still has a path or content")
	case v.RedactedAt == nil && v.Path == nil:
		return bad("its path is missing")
	case v.Operation == OpDeleted && v.Content != nil:
		return bad("a deletion holds no content")
	case v.Operation != OpDeleted && v.RedactedAt == nil && v.Content == nil:
		return bad("its content is missing: an export carries the full view")
	}
	if v.Content != nil {
		if v.ContentSHA256 == nil || *v.ContentSHA256 != sha256Hex(*v.Content) || v.ContentSize == nil || *v.ContentSize != len(*v.Content) {
			return bad("its content does not match its content_sha256 and content_size_bytes: the file was altered")
		}
		if err := checkContent(*v.Content, math.MaxInt); err != nil {
			return bad("%v", err)
		}
	}
	if v.Path != nil {
		if err := ValidatePath(*v.Path); err != nil {
			return bad("%v", err)
		}
	}
	return nil
}

// checkImportTree checks what holds across a store's lines: each memory is
// the last version of its lineage, paths are unique and no memory lies
// below another, the store is within its limits.
func checkImportTree(st *importStore) error {
	s := &st.store
	bad := func(format string, args ...any) error {
		return errorf(CodeInvalid, "import: memory store %s (line %d): %s", s.ID, st.line, fmt.Sprintf(format, args...))
	}
	if len(st.memories) > s.MaxMemories {
		return bad("it holds %d memories, over its limit of %d", len(st.memories), s.MaxMemories)
	}
	last := map[string]*Version{} // memory id → its last version
	for i := range st.versions {
		v := &st.versions[i]
		last[v.MemoryID] = v
	}
	files := map[string]string{} // path → memory id
	for i := range st.memories {
		m := &st.memories[i]
		v := last[m.ID]
		switch {
		case v == nil:
			return bad("memory %s has no versions", m.ID)
		case v.ID != m.VersionID:
			return bad("memory %s names %s as its version, but its last version is %s (line %d)", m.ID, m.VersionID, v.ID, st.lines[v.ID])
		case v.Operation == OpDeleted || v.Content == nil:
			return bad("memory %s is live, but its last version %s holds no content", m.ID, v.ID)
		case *v.Path != m.Path || *v.ContentSHA256 != m.ContentSHA256:
			return bad("memory %s and its last version %s disagree on the path or content", m.ID, v.ID)
		}
		if len(*m.Content) > s.MaxMemoryBytes {
			return bad("memory %s is %d bytes, over the store's limit of %d bytes", m.ID, len(*m.Content), s.MaxMemoryBytes)
		}
		if other, ok := files[m.Path]; ok {
			return bad("memories %s and %s are both at %s", other, m.ID, m.Path)
		}
		files[m.Path] = m.ID
	}
	for path, id := range files {
		for _, a := range ancestors(path) {
			if above, ok := files[a]; ok {
				return bad("memory %s at %s lies below memory %s at %s, which is a file", id, path, above, a)
			}
		}
	}
	for _, d := range st.dirs {
		if id, ok := files[d]; ok {
			return bad("directory %s is also memory %s", d, id)
		}
		for _, a := range ancestors(d) {
			if id, ok := files[a]; ok {
				return bad("directory %s lies below memory %s at %s, which is a file", d, id, a)
			}
		}
	}
	live := make(map[string]bool, len(st.memories))
	for i := range st.memories {
		live[st.memories[i].ID] = true
	}
	for id, v := range last {
		if !live[id] && v.Operation != OpDeleted {
			return bad("memory %s's last version %s is not a deletion, but the memory is not among the store's memories", id, v.ID)
		}
	}
	return nil
}

// importOne writes one checked store inside r's transaction.
func importOne(r *run, st *importStore) (Imported, error) {
	s := &st.store
	if err := importClash(r, "SELECT id FROM stores WHERE id = ?", s.ID, ObjectStore, ""); err != nil {
		return Imported{}, err
	}
	meta := s.Metadata
	if meta == nil {
		meta = map[string]string{}
	}
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return Imported{}, err
	}
	// An imported store keeps its history whatever its quota: the quota
	// refuses new saves, not what already exists.
	history := 0
	for i := range st.versions {
		history += VersionCost(&st.versions[i])
	}
	seq, err := r.insertKey("seq", `INSERT INTO stores (id, name, description, metadata, max_memories,
		max_memory_bytes, max_history_bytes, history_bytes, memory_count, created_at, updated_at, archived_at, max_directories)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.Name, s.Description, string(metaJSON), s.MaxMemories, s.MaxMemoryBytes, s.MaxHistoryBytes, history,
		len(st.memories), s.CreatedAt.UnixNano(), s.UpdatedAt.UnixNano(), nanosOrNil(s.ArchivedAt), s.MaxDirectories)
	if err == nil {
		err = storeNumbered(seq)
	}
	if err != nil {
		return Imported{}, err
	}
	heads := make(map[string]int64, len(st.memories))
	// The new store's versions take numbers of its range in the order of
	// the export (oldest first), as if saved one by one. A version whose id
	// encodes its row's place in its old store (versionID) takes that place
	// here too, when it is ahead: the versions saved after the import then
	// get places beyond every imported one, so that no two ids of the store
	// end alike, as memfs log shows them.
	lo, _ := versionRange(seq)
	vseq := lo
	// A memory id, live or deleted in the export, must be new here: a
	// memory is found by id through its versions.
	newMemory := map[string]bool{}
	for i := range st.versions {
		v := &st.versions[i]
		if err := importClash(r, "SELECT s.id FROM versions v JOIN stores s ON s.seq = v.store WHERE v.id = ?", v.ID, ObjectVersion, s.ID); err != nil {
			return Imported{}, err
		}
		if !newMemory[v.MemoryID] {
			if err := importClash(r, "SELECT s.id FROM versions v JOIN stores s ON s.seq = v.store WHERE v.memory_id = ? LIMIT 1", v.MemoryID, ObjectMemory, s.ID); err != nil {
				return Imported{}, err
			}
			newMemory[v.MemoryID] = true
		}
		// An id of the encoded form may also name a row here that stores
		// none (see versionID).
		if enc, ms, ok := versionSeq(v.ID); ok {
			if err := importClash(r, "SELECT s.id FROM versions v JOIN stores s ON s.seq = v.store WHERE v.seq = ? AND v.id IS NULL AND v.created_at / 1000000 = ?", v.ID, ObjectVersion, s.ID, enc, ms); err != nil {
				return Imported{}, err
			}
		}
		at, aid := actorCols(v.CreatedBy)
		rt, rid := actorCols(v.RedactedBy)
		var content any
		if v.Content != nil {
			content = r.db.d.blob(*v.Content)
		}
		vseq++
		if enc, _, ok := versionSeq(v.ID); ok {
			// Half the range at most, so that the store keeps room to grow.
			if place := enc & (1<<40 - 1); place > vseq-lo && place < 1<<39 {
				vseq = lo + place
			}
		}
		_, err := r.exec(`INSERT INTO versions (seq, id, store, memory_id, operation, created_at, actor_type, actor_id,
			conflict, redacted_at, redactor_type, redactor_id, path, sha, size, content, restored_from, prev_path) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			vseq, v.ID, seq, v.MemoryID, string(v.Operation), v.CreatedAt.UnixNano(), at, aid, v.Conflict,
			nanosOrNil(v.RedactedAt), rt, rid, ptrOrNil(v.Path), ptrOrNil(v.ContentSHA256), ptrOrNil(v.ContentSize), content, strOrNil(v.RestoredFrom), strOrNil(v.PreviousPath))
		if err != nil {
			return Imported{}, err
		}
		heads[v.ID] = vseq
	}
	for i := range st.memories {
		m := &st.memories[i]
		// Its inode number is its head's seq, as a new memory's is its
		// created version's (insertMemoryQuery).
		if _, err := r.exec(`INSERT INTO memories (ino, id, store, path, head, version_id, sha, size, created_at, updated_at)
			VALUES (?1, ?2, ?3, ?4, ?1, ?5, ?6, ?7, ?8, ?9)`, heads[m.VersionID], m.ID, seq, m.Path, m.VersionID,
			m.ContentSHA256, m.ContentSize, m.CreatedAt.UnixNano(), m.UpdatedAt.UnixNano()); err != nil {
			return Imported{}, err
		}
	}
	for _, d := range st.dirs {
		if _, err := r.exec("INSERT INTO dirs (store, path) VALUES (?, ?)", seq, d); err != nil {
			return Imported{}, err
		}
	}
	if err := importCheckpoints(r, seq, st, heads); err != nil {
		return Imported{}, err
	}
	// A mount whose session names this store id (deleted, now back) sees
	// it reappear.
	if err := recordChange(r, s.ID, ChangeStore, "/"); err != nil {
		return Imported{}, err
	}
	got, err := loadStore(r, s.ID)
	if err != nil {
		return Imported{}, err
	}
	return Imported{Store: &got.Store, Memories: len(st.memories), Directories: len(st.dirs), Versions: len(st.versions)}, nil
}

// importClash refuses an id the database already holds: q selects the
// store that holds it, from args (default: the id).
func importClash(r *run, q, id string, obj Object, storeID string, args ...any) error {
	if args == nil {
		args = []any{id}
	}
	var holder string
	err := r.scan(q, args, &holder)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	case obj == ObjectStore:
		return errorf(CodeConflict, "memory store %s already exists in this database: nothing was imported; import into another database, or delete the store here first (memfs store delete %s)", id, id)
	}
	return errorf(CodeConflict, "%s %s of store %s already exists in this database (in store %s): nothing was imported; import into another database, or delete store %s here first",
		obj, id, storeID, holder, holder)
}

func actorCols(a *Actor) (typ, id any) {
	if a == nil || a.Type == "" {
		return nil, nil
	}
	return a.Type, a.ID
}

func nanosOrNil(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixNano()
}

func ptrOrNil[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func strOrNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}
