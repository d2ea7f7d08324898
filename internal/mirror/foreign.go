package mirror

import (
	"github.com/memfs/memfs/versions"
)

// foreign applies a change the feed brought: this mount's own (Plan.Own)
// changes nothing; another's makes the mount forget what it knew of the
// paths it touched, and the file of the memory it changed learns it.
func (m *Mirror) foreign(e Foreign) Plan {
	c := e.Change
	if c.Origin == m.origin.String() {
		return Plan{Own: true}
	}
	if c.Op == versions.ChangeRedacted {
		return Plan{Own: true} // no live file changed: the history tree's alone
	}
	saved := c.Memory()
	var p Plan
	for _, at := range c.Paths() {
		p.Notify = append(p.Notify, Notice{Path: at, Along: m.idx.Along(at)})
		if c.Op != versions.ChangeModified || c.MemoryID == "" || !m.idx.Resaved(at, saved) {
			m.idx.Forget(at)
		}
	}
	if c.MemoryID != "" && (c.Op == versions.ChangeCreated || c.Op == versions.ChangeModified) {
		m.row.HistoryBytes += VersionCost(c.Size, c.Path)
	}
	if c.Op != versions.ChangeModified {
		m.liveOK = false // a memory came or went: count again
	}
	if c.MemoryID == "" {
		return p
	}
	var f *File
	if id, ok := m.names[c.Path]; ok && m.files[id].MemID == c.MemoryID {
		f = m.files[id]
	}
	if id, ok := m.names[c.PrevPath]; ok && c.PrevPath != "" && m.files[id].MemID == c.MemoryID {
		f = m.files[id]
	}
	if f == nil || f.State != StateMemory {
		return p
	}
	switch c.Op {
	case versions.ChangeDeleted:
		m.orphan(f)
		return p
	case versions.ChangeRenamed:
		if dst := m.fileAt(c.Path, f); dst != nil && dst.State == StateMemory {
			m.orphan(dst)
		}
		m.setPath(f, c.Path)
	}
	if f.Dirty {
		return p // its save is based on what it read: a conflict, or ESTALE
	}
	m.learnt(f, saved)
	f.PagesSync = false
	m.move(f, StateMemory, "foreign")
	p.Notify = append(p.Notify, m.contentNotice(f))
	return p
}

// orphan: f's memory left its path elsewhere (deleted, replaced). Open,
// it stays the memory it was, with no name: its save fails (ESTALE).
func (m *Mirror) orphan(f *File) {
	m.headChanging(f) // as replaced: a temporary file beside it keeps the head it saw
	m.names.remove(f.Path, f.ID)
	f.Path, f.PagesSync = "", false
	if len(f.handles) > 0 {
		m.move(f, StateMemory, "foreign")
		return
	}
	m.move(f, gone, "foreign")
}

// FileOf is the memory id, head and state of file id.
func (m *Mirror) FileOf(id ID) (memID, head string, s State, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.files[id]
	if f == nil {
		return "", "", 0, false
	}
	return f.MemID, f.Head, f.State, true
}

// storeChanged: the store was deleted or imported again. Nothing the
// kernel holds of it is to be trusted.
func (m *Mirror) storeChanged() Plan {
	m.idx.Drop()
	m.liveOK = false
	for _, f := range m.files {
		f.PagesSync = false
	}
	return Plan{}
}
