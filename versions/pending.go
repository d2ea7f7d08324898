package versions

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Pending is a file saved through a mount and not published yet: its content
// is durable, but it is no memory, has no version, and only the mount that
// saved it shows it. The mount publishes it (PublishPending) when it
// outlives a grace period or is renamed onto its target, or drops it
// (DropPending) when it is removed first: a temporary file then leaves
// nothing in the store's history.
//
// A pending file belongs to its mount's lease (PendingOwner): every change
// to it is conditioned on the mount's id and lease epoch, and on that lease
// being live, so that a mount whose lease lapsed (stopped, cut off) can
// never publish or drop a file that recovery (leases.go) claimed, nor
// another mount's. Its ids are never given twice.
type Pending struct {
	ID      int64
	StoreID string
	// Owner names the mount that saved it.
	Owner   string
	Path    string
	Content string
	By      Actor
	SavedAt time.Time
}

// PendingOwner is who may change a pending file: a mount instance
// (MountLease.ID) while it holds its lease at Epoch.
type PendingOwner struct {
	Mount string
	Epoch int64
}

// pendingLost is the error of a change to a pending file its caller no
// longer owns: its lease lapsed, or the file was published or dropped.
type pendingLost struct{ e *Error }

func (l pendingLost) Error() string { return l.e.Message }
func (l pendingLost) Unwrap() error { return l.e }

func lostPending(id int64, s *storeRow) error {
	return pendingLost{errorf(CodeNotFound, "pending file %d of store %s is no longer this mount's: it was published or dropped, or the mount's lease lapsed and recovery took it", id, s.ID)}
}

// IsPendingLost reports an error of SavePending, PublishPending or
// DropPending that says the pending file is no longer the caller's: it must
// not act on it again (whoever holds it now publishes it).
func IsPendingLost(err error) bool { return errors.As(err, new(pendingLost)) }

// ownerLive is the condition that mount ?1 holds its lease at epoch ?2 at
// lease time ?3.
const ownerLive = `EXISTS (SELECT 1 FROM mounts m WHERE m.id = ?1 AND m.epoch = ?2 AND m.expires_at >= ?3)`

// checkOwner fails unless o's lease is live now.
func (db *DB) checkOwner(r *run, o PendingOwner, id int64, s *storeRow) error {
	now, err := db.leaseClock(r)
	if err != nil {
		return err
	}
	var live bool
	if err := r.scan("SELECT "+ownerLive, []any{o.Mount, o.Epoch, now}, &live); err != nil {
		return err
	}
	if !live {
		return pendingLost{errorf(CodeNotFound, "mount %s holds no live lease at epoch %d on the database: it lapsed (the mount was stopped or cut off for longer than %v) or ended, and the mount's files saved before are recovered by others; the mount takes a new lease and saves again", o.Mount, o.Epoch, LeaseTTL)}
	}
	return nil
}

// pendingCost is what a pending file counts toward its store's history
// quota: what the version it becomes will.
func pendingCost(path, content string, by Actor) int { return versionCost(len(content), path, by.ID) }

// addPendingBytes moves the store's count of pending bytes by n.
func addPendingBytes(r *run, s *storeRow, n int) error {
	if n == 0 {
		return nil
	}
	if _, err := r.exec("UPDATE stores SET pending_bytes = pending_bytes + ? WHERE seq = ?", n, s.seq); err != nil {
		return err
	}
	s.pendingBytes += n
	return nil
}

// checkPendingQuota refuses a pending save that would take the store's
// retained history and pending files past its history quota: add is what
// the save adds to them.
func checkPendingQuota(r *run, s *storeRow, add int) error {
	if s.MaxHistoryBytes <= 0 || add <= 0 {
		return nil
	}
	hist, _, err := latestCounts(r, s)
	if err != nil {
		return err
	}
	s.HistoryBytes = s.histBase + hist
	if s.HistoryBytes+s.pendingBytes+add <= s.MaxHistoryBytes {
		return nil
	}
	return errorf(CodeOverQuota, "memory store %s (%q) retains %d bytes of history and %d of files saved through mounts and not published yet, and this save adds %d more, past its quota of %d bytes: nothing was saved; run `memfs version prune` to remove old versions (or raise the store's history quota)",
		s.ID, s.Name, s.HistoryBytes, s.pendingBytes, add, s.MaxHistoryBytes)
}

// SavePending writes content as the pending file id (a new one when id is
// 0) of owner, and returns its id. The path and content must be valid for
// the store, which must be writable: a pending save is refused for the same
// reasons a save is; a new pending file holds a slot of the store's memory
// limit, and its content counts toward the store's history quota, until it
// is published or dropped. IsPendingLost(err) when owner's lease is not
// live, or file id is no longer owner's.
func (db *DB) SavePending(ctx context.Context, storeID string, owner PendingOwner, path, content string, by Actor, id int64) (int64, error) {
	if err := ValidatePath(path); err != nil {
		return 0, err
	}
	err := db.write(ctx, "save pending file", func(r *run) error {
		s, err := loadStoreLite(r, storeID, true)
		if err != nil {
			return err
		}
		if err := checkContent(content, s.MaxMemoryBytes); err != nil {
			return err
		}
		if err := db.checkOwner(r, owner, id, s); err != nil {
			return err
		}
		old := 0
		if id != 0 {
			err := r.scan("SELECT cost FROM pending WHERE id = ? AND store = ? AND owner = ? AND epoch = ?", []any{id, s.seq, owner.Mount, owner.Epoch}, &old)
			if err == sql.ErrNoRows {
				return lostPending(id, s)
			}
			if err != nil {
				return err
			}
		}
		if s.Guard != GuardOff {
			base, err := pendingContent(r, s, id, path)
			if err != nil {
				return err
			}
			if err := guardCheck(r, s, path, base, content); err != nil {
				return err
			}
		}
		cost := pendingCost(path, content, by)
		if err := checkPendingQuota(r, s, cost-old); err != nil {
			return err
		}
		now := r.db.nowNanos()
		if id != 0 {
			if _, err := r.exec("UPDATE pending SET path = ?, content = ?, actor_type = ?, actor_id = ?, saved_at = ?, cost = ? WHERE id = ? AND store = ? AND owner = ? AND epoch = ?",
				path, r.db.d.blob(content), by.Type, by.ID, now, cost, id, s.seq, owner.Mount, owner.Epoch); err != nil {
				return err
			}
			return addPendingBytes(r, s, cost-old)
		}
		// A new pending file takes a memory slot (checkRoom); its later
		// saves keep the one it holds.
		if err := checkRoom(r, s); err != nil {
			return err
		}
		id, err = r.insertKey("id", "INSERT INTO pending (store, owner, epoch, path, actor_type, actor_id, saved_at, content, cost) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
			s.seq, owner.Mount, owner.Epoch, path, by.Type, by.ID, now, r.db.d.blob(content), cost)
		if err != nil {
			return err
		}
		return addPendingBytes(r, s, cost)
	})
	return id, err
}

// DropPending forgets owner's pending file id. IsPendingLost(err) when it
// is not owner's (any more): then it is left to whoever holds it.
func (db *DB) DropPending(ctx context.Context, storeID string, owner PendingOwner, id int64) error {
	return db.write(ctx, "drop pending file", func(r *run) error {
		s, err := loadStoreLite(r, storeID, false)
		if err != nil {
			return err
		}
		if err := db.checkOwner(r, owner, id, s); err != nil {
			return err
		}
		var cost int
		err = r.scan("DELETE FROM pending WHERE id = ? AND store = ? AND owner = ? AND epoch = ? RETURNING cost", []any{id, s.seq, owner.Mount, owner.Epoch}, &cost)
		if err == sql.ErrNoRows {
			return lostPending(id, s)
		}
		if err != nil {
			return err
		}
		return addPendingBytes(r, s, -cost)
	})
}

// PublishPending turns owner's pending file id into a version at path, in
// one transaction that also drops it: a "modified" version of the memory
// at path when there is one (its id kept: the write-temp-then-rename of
// atomic savers), else a new memory with its "created" version (created
// is true). The version is attributed to whoever saved the pending file.
// IsPendingLost(err) when the file is not owner's (any more).
func (db *DB) PublishPending(ctx context.Context, storeID string, owner PendingOwner, id int64, path string) (out *Memory, created bool, err error) {
	if err := ValidatePath(path); err != nil {
		return nil, false, err
	}
	err = db.write(ctx, "publish pending file", func(r *run) error {
		s, err := loadStoreLite(r, storeID, true)
		if err != nil {
			return err
		}
		if err := db.checkOwner(r, owner, id, s); err != nil {
			return err
		}
		out, created, err = publishRow(r, s, id, path, owner.Mount, owner.Epoch)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	out.Content = nil
	return out, created, nil
}

// publishRow publishes pending file id, held by owner at epoch, at path:
// a save of its content there, attributed to whoever saved it, in the
// memory slot it held.
func publishRow(r *run, s *storeRow, id int64, path, owner string, epoch int64) (out *Memory, created bool, err error) {
	c, by, err := takePendingRow(r, s, id, owner, epoch)
	if err != nil {
		return nil, false, err
	}
	var m Memory
	var ch Change
	if err := saveIn(r, s, SaveReq{StoreID: s.ID, Path: path, PendingID: id, Memory: &m}, c, by, &ch); err != nil {
		return nil, false, err
	}
	return &m, ch.Op == ChangeCreated, nil
}

// takePendingRow deletes pending file id, held by owner at epoch, and
// returns its content and who saved it; its bytes move from the pending
// count to the history's (the version that takes its content counts them).
func takePendingRow(r *run, s *storeRow, id int64, owner string, epoch int64) (string, Actor, error) {
	var content []byte
	var by Actor
	var cost int
	err := r.scan("DELETE FROM pending WHERE id = ? AND store = ? AND owner = ? AND epoch = ? RETURNING content, actor_type, actor_id, cost",
		[]any{id, s.seq, owner, epoch}, &content, &by.Type, &by.ID, &cost)
	if err == sql.ErrNoRows {
		return "", by, lostPending(id, s)
	}
	if err != nil {
		return "", by, err
	}
	return string(content), by, addPendingBytes(r, s, -cost)
}

// ListPending returns the store's pending files that owner saved or that
// were saved before savedBefore (a mount that never came back), oldest
// first.
func (db *DB) ListPending(ctx context.Context, storeID, owner string, savedBefore time.Time) ([]Pending, error) {
	var out []Pending
	err := db.one(ctx, "list pending files", func(r *run) error {
		rows, err := r.query(`SELECT p.id, p.owner, p.path, p.actor_type, p.actor_id, p.saved_at, p.content FROM pending p
			WHERE p.store = (SELECT seq FROM stores WHERE id = ?) AND (p.owner = ? OR p.saved_at < ?) ORDER BY p.id`,
			storeID, owner, savedBefore.UnixNano())
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p Pending
			var at int64
			var content []byte
			if err := rows.Scan(&p.ID, &p.Owner, &p.Path, &p.By.Type, &p.By.ID, &at, &content); err != nil {
				return err
			}
			p.StoreID, p.SavedAt, p.Content = storeID, fromNanos(at), string(content)
			out = append(out, p)
		}
		return rows.Err()
	})
	return out, err
}

// HasPending reports whether any store has a pending file: tests and tools
// wait for it to become false before reading what mounts saved.
func (db *DB) HasPending(ctx context.Context) (bool, error) {
	var n int
	err := db.one(ctx, "look for pending files", func(r *run) error {
		return r.scan("SELECT count(*) FROM (SELECT 1 FROM pending LIMIT 1) p", nil, &n)
	})
	return n > 0, err
}

// PendingState is where a pending file stands.
type PendingState string

const (
	// PendingLive: its mount holds its lease and publishes or drops it.
	PendingLive PendingState = "live"
	// PendingLapsed: its mount's lease lapsed; recovery publishes it.
	PendingLapsed PendingState = "lapsed"
	// PendingUnpublishable: its mount's lease lapsed and recovery could
	// not publish it (Failure says why); it is tried again now and then.
	PendingUnpublishable PendingState = "unpublishable"
)

// PendingFile is a pending file as an operator sees it: no content.
type PendingFile struct {
	ID      int64        `json:"id"`
	StoreID string       `json:"memory_store_id"`
	Path    string       `json:"path"`
	Size    int          `json:"content_size_bytes"`
	Mount   string       `json:"mount"`
	Epoch   int64        `json:"epoch"`
	State   PendingState `json:"state"`
	SavedAt time.Time    `json:"saved_at"`
	// SavedBy is the actor its version is attributed to.
	SavedBy  string     `json:"saved_by"`
	FailedAt *time.Time `json:"failed_at,omitempty"`
	Failure  string     `json:"failure,omitempty"`
}

// PendingFiles lists the store's pending files, oldest first.
func (db *DB) PendingFiles(ctx context.Context, storeID string) ([]PendingFile, error) {
	var out []PendingFile
	err := db.read(ctx, "list pending files", func(r *run) error {
		out = out[:0]
		seq, err := db.storeSeq(r, storeID)
		if err != nil {
			return err
		}
		now, err := db.leaseClock(r)
		if err != nil {
			return err
		}
		rows, err := r.query(`SELECT p.id, p.path, p.cost, p.owner, p.epoch, p.saved_at, p.actor_type, p.actor_id, p.failed_at, coalesce(p.failure, ''),
			EXISTS (SELECT 1 FROM mounts m WHERE m.id = p.owner AND m.epoch = p.epoch AND m.expires_at >= ?1)
			FROM pending p WHERE p.store = ?2 ORDER BY p.id`, now, seq)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			f := PendingFile{StoreID: storeID}
			var at int64
			var failed sql.NullInt64
			var by Actor
			var live bool
			if err := rows.Scan(&f.ID, &f.Path, &f.Size, &f.Mount, &f.Epoch, &at, &by.Type, &by.ID, &failed, &f.Failure, &live); err != nil {
				return err
			}
			f.Size -= versionCost(0, f.Path, by.ID)
			f.SavedAt, f.SavedBy, f.FailedAt = fromNanos(at), by.Type+":"+by.ID, nullTime(failed)
			switch {
			case live:
				f.State = PendingLive
			case failed.Valid:
				f.State = PendingUnpublishable
			default:
				f.State = PendingLapsed
			}
			out = append(out, f)
		}
		return rows.Err()
	})
	return out, err
}

// SettlePending publishes (at its path) or drops the store's pending file
// id now, as recovery would: it claims the file from its owner, whose lease
// must have lapsed (a live mount's file is its own: CodeConflict). A
// published file is returned.
func (db *DB) SettlePending(ctx context.Context, storeID string, id int64, publish bool) (*Memory, error) {
	what := "drop pending file"
	if publish {
		what = "publish pending file"
	}
	var out *Memory
	err := db.write(ctx, what, func(r *run) error {
		s, err := loadStoreLite(r, storeID, publish)
		if err != nil {
			return err
		}
		var owner, path string
		var epoch int64
		err = r.scan("SELECT owner, epoch, path FROM pending WHERE id = ? AND store = ?", []any{id, s.seq}, &owner, &epoch, &path)
		if err == sql.ErrNoRows {
			return errorf(CodeNotFound, "no pending file %d in store %s (published or dropped already): list them with memfs pending list", id, s.ID)
		}
		if err != nil {
			return err
		}
		claim, err := claimLapsed(r, s, id, owner, epoch)
		if IsPendingLost(err) {
			return errorf(CodeConflict, "pending file %d (%s) belongs to mount %s, which holds its lease: that mount publishes or drops it; settle it once the mount is gone", id, path, owner)
		}
		if err != nil {
			return err
		}
		if publish {
			out, _, err = publishRow(r, s, id, path, owner, claim)
			return err
		}
		var cost int
		if err := r.scan("DELETE FROM pending WHERE id = ? AND epoch = ? RETURNING cost", []any{id, claim}, &cost); err != nil {
			return err
		}
		return addPendingBytes(r, s, -cost)
	})
	if err != nil {
		return nil, err
	}
	if out != nil {
		out.Content = nil
	}
	return out, nil
}
