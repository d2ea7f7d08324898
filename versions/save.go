package versions

import (
	"context"
	"errors"
	"strings"
)

// Statements is how many statements this handle ran, the BEGIN and
// COMMIT of each transaction included: a benchmark counts what an
// operation costs.
func (db *DB) Statements() int64 { return db.statements.Load() }

// SaveReq is one save of a file's whole content: the engine's one call for
// creating a memory, saving a version of one, saving a temporary file's
// content over a target (consuming its pending row) and saving a pending
// file. See Save.
type SaveReq struct {
	StoreID string
	// Path is where the content is saved.
	Path    string
	Content string
	By      Actor

	// MemoryID names the memory the save is a version of. With a
	// MemoryID, the save fails CodeNotFound if that memory is no longer
	// live, and a memory elsewhere than Path moves there (checked free).
	// Without one, the target is whatever is at Path: a new memory if
	// nothing is, else the memory there gets the version, unless
	// Exclusive, which then fails CodePathConflict (an API create).
	MemoryID  string
	Exclusive bool

	// What the caller knows of MemoryID's head, so that the save reads
	// none of it again: its version and, when known, its content's hash
	// and, for the guard's check of what the save adds, its content
	// (without it the guard checks the whole content). The memory must be
	// at Path at that head. The write is conditioned on that head (and path); only
	// when the memory has moved on does the save read everything and
	// decide again.
	HeadVersionID string
	HeadSHA256    string
	HeadContent   *string

	// BaseVersionID is the version the writer started from: the head
	// when the file was opened, or for an atomic save the target's
	// version the renaming process last opened. A save whose base is not
	// the head when it commits is marked Conflict, or with Strict fails
	// CodeStale and saves nothing (a mount returns ESTALE). A base given
	// for a path where nothing is (the memory went meanwhile) is a
	// conflict too. "" checks nothing.
	BaseVersionID string
	Strict        bool

	// IfSHA256 is the API's precondition on the current content: a
	// mismatch fails CodePreconditionFailed, unless the save's content is
	// already the head's (a retried request: nothing is written).
	IfSHA256 string

	// PendingID is a temporary file's pending row (see Pending). With
	// Pending, the save updates that row (0: a new row). Without, the save
	// consumes the row in the same commit: the temporary file renamed over
	// Path, or published at its own path once its grace ended; the row's
	// slot of the store's memory limit passes to the memory it creates.
	// FromPending saves the row's content and attributes the version to
	// whoever saved the row, instead of Content and By (a recovery
	// publishing what another mount saved).
	// Owner is the mount whose lease holds the pending row: a row it no
	// longer holds fails the save (IsPendingLost).
	PendingID   int64
	Pending     bool
	Owner       PendingOwner
	FromPending bool

	// KeepParentDir keeps the old parent directory when a move empties it.
	KeepParentDir bool

	// Memory, if set, receives the memory as saved, in the full view.
	Memory *Memory
}

// Save saves req.Content (see SaveReq) in one transaction and returns the
// change it committed: Op ChangeCreated (a new memory), ChangeModified, or
// ChangeRenamed (a memory moved to Path, possibly with new content), with
// its feed position Seq, the memory's and the version's ids, the content's
// hash and size, Conflict when the version is marked a conflict, and At,
// the version's time. A save whose content and path are the head's writes
// nothing: Seq is 0 and VersionID the head's. A pending save returns Op
// ChangePending with the row's PendingID and no feed position.
//
// Every check a save is subject to is made in its transaction: the path,
// the store writable, the content's size and encoding, the store's memory
// limit (for a new memory not holding a pending slot), the history quota
// and the guard (on what the save adds to the head's content).
//
// Errors: CodeInvalid, CodeNotFound (the store, MemoryID, or PendingID:
// then IsPendingLost),
// CodePathConflict, CodeStoreFull, CodeOverQuota, CodeCredential,
// CodeTooLarge, CodeStale (Strict), CodePreconditionFailed (IfSHA256),
// CodeReadOnly.
func (db *DB) Save(ctx context.Context, req SaveReq) (Change, error) {
	if req.Path != "" || req.MemoryID == "" {
		if err := ValidatePath(req.Path); err != nil {
			return Change{}, err
		}
	}
	if req.Pending {
		id, err := db.SavePending(ctx, req.StoreID, req.Owner, req.Path, req.Content, req.By, req.PendingID)
		if err != nil {
			return Change{}, err
		}
		return Change{StoreID: req.StoreID, Op: ChangePending, Path: req.Path, PendingID: id,
			SHA256: sha256Hex(req.Content), Size: len(req.Content), Origin: db.originOf(ctx).name}, nil
	}
	var ch Change
	k, known := db.knownSaveOf(req)
	var c knownCreate
	create := false
	if !known {
		c, create = db.knownCreateOf(req)
	}
	if db.d.name == "postgres" {
		var done bool
		var err error
		switch {
		case known:
			done, err = db.pgFastSave(ctx, k, &ch)
		case create:
			done, err = db.pgFastCreate(ctx, c, &ch)
		}
		if done || err != nil {
			return ch, err
		}
	}
	err := db.write(ctx, "save", func(r *run) error {
		ch = Change{}
		if db.d.name == "sqlite" {
			var done bool
			var err error
			switch {
			case known:
				done, err = fastSave(r, k, &ch)
			case create:
				done, err = fastCreate(r, c, &ch)
			}
			if done || err != nil {
				return err
			}
		}
		s, err := loadStoreLite(r, req.StoreID, true)
		if err != nil {
			return err
		}
		db.rememberStore(s)
		content, by := req.Content, req.By
		if req.PendingID != 0 {
			if err := db.checkOwner(r, req.Owner, req.PendingID, s); err != nil {
				return err
			}
			c, pby, err := takePendingRow(r, s, req.PendingID, req.Owner.Mount, req.Owner.Epoch)
			if err != nil {
				return err
			}
			if req.FromPending {
				content, by = c, pby
			}
		}
		return saveIn(r, s, req, content, by, &ch)
	})
	if err != nil {
		return Change{}, err
	}
	return ch, nil
}

// saveIn is a save that reads its target (not Save's known head), in the
// caller's transaction, its pending row (if any) consumed already.
func saveIn(r *run, s *storeRow, req SaveReq, content string, by Actor, ch *Change) error {
	sha := sha256Hex(content)
	if req.MemoryID != "" {
		m, err := lookupMemory(r, s, req.MemoryID)
		if err != nil {
			return err
		}
		return saveVersion(r, s, m, req, content, sha, nil, by, ch)
	}
	// One statement tells whether the path is free and, when a memory is
	// there, which.
	err := checkFree(r, s, req.Path, "")
	var e *Error
	if err != nil && !req.Exclusive && errors.As(err, &e) && e.ConflictingPath == req.Path && e.ConflictingMemoryID != "" {
		m, err := lookupMemory(r, s, e.ConflictingMemoryID)
		if err != nil {
			return err
		}
		return saveVersion(r, s, m, req, content, sha, nil, by, ch)
	}
	if err != nil {
		return err
	}
	return saveNew(r, s, req, content, sha, by, ch)
}

// saveNew creates a memory at req.Path, which checkFree found free.
func saveNew(r *run, s *storeRow, req SaveReq, content, sha string, by Actor, ch *Change) error {
	conflict := req.BaseVersionID != ""
	if conflict && req.Strict {
		return errorf(CodeStale, "the memory at %s that %s was read from is gone (deleted or moved): nothing was saved; re-read it and save again", req.Path, req.BaseVersionID)
	}
	if err := checkContent(content, s.MaxMemoryBytes); err != nil {
		return err
	}
	if err := guardCheck(r, s, req.Path, "", content); err != nil {
		return err
	}
	if req.PendingID == 0 {
		// A pending row held its slot since its first save.
		if err := checkRoom(r, s); err != nil {
			return err
		}
	}
	m, err := insertMemoryAs(r, s, req.Path, content, by, conflict)
	if err != nil {
		return err
	}
	*ch = Change{Seq: m.Seq, StoreID: s.ID, Op: ChangeCreated, Path: m.Path, MemoryID: m.ID, VersionID: m.VersionID,
		SHA256: sha, Size: len(content), Origin: r.origin().name, At: m.CreatedAt, Conflict: conflict}
	if req.Memory != nil {
		*req.Memory = *m
	}
	return nil
}

// saveVersion saves content as a version of m, whose head content is
// known when the caller knows it (nil: read it if the guard needs
// it).
func saveVersion(r *run, s *storeRow, m *Memory, req SaveReq, content, sha string, known *string, by Actor, ch *Change) error {
	u := MemoryUpdate{Content: &content, BaseVersionID: req.BaseVersionID, Strict: req.Strict, KeepParentDir: req.KeepParentDir}
	oldPath := m.Path
	if req.Path != "" && m.Path != req.Path {
		u.Path = &req.Path
	}
	if req.IfSHA256 != "" && !strings.EqualFold(req.IfSHA256, m.ContentSHA256) {
		if sha != m.ContentSHA256 || u.Path != nil {
			return errorf(CodePreconditionFailed, "memory %s at %s has content_sha256 %s, not %s: nothing was changed; re-read the memory and retry with its current content_sha256",
				m.ID, m.Path, m.ContentSHA256, req.IfSHA256)
		}
	}
	*ch = Change{StoreID: s.ID, Op: ChangeModified, Path: m.Path, MemoryID: m.ID, VersionID: m.VersionID,
		SHA256: sha, Size: len(content), Origin: r.origin().name}
	if sha == m.ContentSHA256 && u.Path == nil {
		// Nothing to save: the content is the head's.
		if req.Memory != nil {
			*req.Memory = *m
			req.Memory.Content = &content
		}
		return nil
	}
	if u.Path != nil && *u.Path != m.Path {
		if err := guardName(r, s, *u.Path); err != nil {
			return err
		}
	}
	if s.Guard != GuardOff && sha != m.ContentSHA256 {
		var base string
		if known != nil {
			base = *known
		} else {
			var err error
			if base, err = headContent(r, m.Seq); err != nil {
				return err
			}
		}
		at := m.Path
		if u.Path != nil {
			at = *u.Path
		}
		if err := guardCheck(r, s, at, base, content); err != nil {
			return err
		}
	}
	ch.Conflict = req.BaseVersionID != "" && req.BaseVersionID != m.VersionID
	out, err := applyUpdate(r, s, m, u, sha, by)
	if err != nil {
		return err
	}
	ch.Seq, ch.VersionID, ch.At, ch.Path = out.Seq, out.VersionID, out.UpdatedAt, out.Path
	if u.Path != nil {
		ch.Op, ch.PrevPath = ChangeRenamed, oldPath
	}
	if req.Memory != nil {
		*req.Memory = *out
		req.Memory.Content = &content
	}
	return nil
}
