package mirror

import (
	"context"
	"syscall"

	"github.com/memfs/memfs/guard"
	"github.com/memfs/memfs/versions"
)

// The store's row as the mount last read it (SetStore: at the mount, when
// the feed says the store changed as a whole, at statfs, at a count of
// its memories), counted on as the mount sees versions written: the
// limits, guard and history quota a write is checked against, and whether
// the store is archived or deleted.

// SetStore replaces the store's row; a store deleted and imported again
// is served again.
func (m *Mirror) SetStore(st *versions.Store) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.row, m.liveOK = *st, true
	m.gone.Store(false)
}

// StoreGone records that the store was deleted: nothing the mount or the
// kernel holds of it is served any more.
func (m *Mirror) StoreGone() { m.gone.Store(true) }

func (m *Mirror) Gone() bool { return m.gone.Load() }

func (m *Mirror) Archived() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.row.ArchivedAt != nil
}

// Guard is the store's credential guard, which also decides what the
// history tree withholds (versions.WithheldFromHistory).
func (m *Mirror) Guard() guard.Policy {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.row.Guard
}

// limits are the store's limits, the defaults where it sets none.
func (m *Mirror) limits() (maxMemories, maxBytes int) {
	maxMemories, maxBytes = m.row.MaxMemories, m.row.MaxMemoryBytes
	if maxMemories <= 0 {
		maxMemories = versions.DefaultMaxMemories
	}
	if maxBytes <= 0 {
		maxBytes = versions.DefaultMaxMemoryBytes
	}
	return
}

// EngineRefused notes what an engine error says the mount's view missed:
// an archive, a change made elsewhere the feed has not brought yet, a
// history quota reached.
func (m *Mirror) EngineRefused(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch versions.ErrorCode(err) {
	case versions.CodeReadOnly:
		if m.row.ArchivedAt == nil {
			now := m.o.Now()
			m.row.ArchivedAt = &now
		}
	case versions.CodeNotFound, versions.CodePathConflict, versions.CodeNotDir, versions.CodeIsDir, versions.CodeNotEmpty:
		m.idx.Drop()
	case versions.CodeOverQuota:
		m.row.HistoryBytes = max(m.row.HistoryBytes, m.row.MaxHistoryBytes)
	}
}

// storeInfo is what a write is checked against (checkWrite): the store's
// row, the bytes this mount's other temporary files hold (as the versions
// they become), and whether the database is known to be unreachable.
type storeInfo struct {
	row     versions.Store
	pending int
	offline bool
}

func (m *Mirror) refusals(f *File, offline bool) storeInfo {
	pending := 0
	for _, l := range m.local {
		if l != f && (l.State == StateTemporary || l.Due) {
			pending += VersionCost(len(l.Buf), l.Path)
		}
	}
	return storeInfo{row: m.row, pending: pending, offline: offline}
}

// GoneReason is why nothing of a store deleted elsewhere is served.
const GoneReason = "the store was deleted: nothing of it can be read or written any more; import it again to bring it back"

// Writable is 0 when path p may be changed through this mount, else the
// errno and why: the store is deleted (ENOENT), attached read_only, p lies
// outside the session's write prefix (a mkdir on the way to it is
// allowed), or the store is archived (EROFS).
func (m *Mirror) Writable(p string, mkdir bool) (syscall.Errno, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.o.Attach
	switch {
	case m.gone.Load():
		return syscall.ENOENT, GoneReason
	case a.Access == versions.ReadOnly:
		return syscall.EROFS, "the store is attached read_only to this session"
	case !a.Writable(p) && !(mkdir && a.OnWritePath(p)):
		return syscall.EROFS, "only " + a.WritePrefix + " is writable to this session: the rest of the store is read-only"
	case m.row.ArchivedAt != nil:
		return syscall.EROFS, "the store is archived: archived stores are read-only"
	}
	return 0, ""
}

// Reread reads the store's row again (SetStore), or notes the store
// deleted.
func (g Engine) Reread(ctx context.Context, m *Mirror) error {
	st, err := g.DB.GetStore(ctx, g.Store)
	switch {
	case err == nil:
		m.SetStore(st)
	case versions.ErrorCode(err) == versions.CodeNotFound:
		m.StoreGone()
	default:
		return err
	}
	return nil
}

// Capacity is the store's room as statfs shows it: the memories it may
// hold, how many more fit (this mount's files not saved yet counted), and
// the bytes one may hold.
func (m *Mirror) Capacity() (maxMemories, free, maxBytes int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	maxMemories, maxBytes = m.limits()
	return maxMemories, max(maxMemories-m.row.MemoryCount-m.pendingLocked(), 0), maxBytes
}
