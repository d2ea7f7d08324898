package mirror

import (
	"path"
	"syscall"
)

func parentOf(p string) string { return path.Dir(p) }

// replaced: f lost its name to another file.
func (m *Mirror) replaced(f *File, cause string) {
	if f == nil {
		return
	}
	m.headChanging(f)
	m.names.remove(f.Path, f.ID)
	f.Path = ""
	f.PagesSync = false
	if len(f.handles) > 0 {
		m.move(f, StateUnlinked, cause)
		return
	}
	m.move(f, gone, cause)
}

func (m *Mirror) renamed(e Rename) Plan {
	sid, ok := m.names[e.From]
	if !ok {
		return Plan{Errno: syscall.ENOENT}
	}
	src := m.files[sid]
	var dst *File
	if id, ok := m.names[e.To]; ok && id != sid {
		dst = m.files[id]
	}
	toScratch, toTemp := m.isScratch(e.To), m.isTemp(e.To)
	if toScratch && src.State != StateScratch && src.State != StateHeld && src.State != StateUnlinked {
		if errno, why := m.scratchRoom(); errno != 0 {
			return Plan{Errno: errno, Reason: why}
		}
	}
	if dst != nil && dst.State == StateTemporary {
		// The replaced temporary file's row goes first; then the rename.
		return Plan{Ask: &Request{Kind: AskDrop, File: dst.ID, Pending: dst.Pending, Path: dst.Path, Cause: "replaced"}, Again: true}
	}
	local := func(f *File) bool {
		return f != nil && (f.State == StateNew || f.State == StateScratch || f.State == StateTemporary)
	}
	m.entriesChanged(parentOf(e.From), parentOf(e.To))
	switch src.State {
	case StateNew, StateScratch, StateHeld:
		switch {
		case toScratch:
			to := StateScratch
			if src.State == StateHeld {
				to = StateHeld
			}
			m.replaced(dst, "replaced")
			m.setPath(src, e.To)
			m.move(src, to, "renamed")
			return Plan{}
		case toTemp && !(dst != nil && dst.State == StateMemory):
			m.replaced(dst, "replaced")
			m.setPath(src, e.To)
			m.move(src, StateNew, "renamed")
			return Plan{}
		}
		if !src.Loaded {
			src.Buf, src.Loaded = nil, true
		}
		return m.saveOver(src, dst, e, 0)
	case StateTemporary:
		if toScratch {
			return Plan{Ask: &Request{Kind: AskDrop, File: src.ID, Pending: src.Pending, Path: e.To, From: e.From, Cause: "renamed"}}
		}
		if toTemp && dst == nil {
			m.setPath(src, e.To)
			m.move(src, StateTemporary, "renamed")
			return Plan{}
		}
		return m.saveOver(src, dst, e, src.Pending)
	case StateMemory:
		if toScratch && (dst == nil || local(dst)) {
			// An editor's backup of the original: the store keeps the
			// memory at its path for the grace; the backup's content is
			// only in the daemon's memory now.
			if p := m.load(src, false, "renamed"); p != nil {
				return *p
			}
			if errno, why := m.grow(src, int64(len(src.Buf))); errno != 0 {
				return Plan{Errno: errno, Reason: why}
			}
			m.replaced(dst, "replaced")
			m.held[e.From] = &hold{memID: src.MemID, head: src.Head, file: src.ID}
			delete(m.memIno, src.MemID) // a new file saved there is a new inode
			m.setPath(src, e.To)
			src.HeldAt, src.Dirty = e.From, false
			m.move(src, StateHeld, "renamed")
			return Plan{Timers: []Timer{{Event: HoldEnded{e.From}, After: m.o.Grace}}, Notify: []Notice{{Path: e.From}}}
		}
		if src.Dirty && src.Refused == 0 {
			// What the writer wrote moves with it (write, then rename).
			p := m.save(src, nil, "renamed")
			if p.Ask != nil {
				p.Again = true
			}
			return p
		}
		r := &Request{Kind: AskMove, File: src.ID, MemID: src.MemID, From: e.From, Path: e.To, Cause: "renamed"}
		if dst != nil {
			r.Over = dst.ID
		}
		return Plan{Ask: r}
	}
	return Plan{Errno: syscall.ENOENT}
}

// saveOver is the save of src's content at e.To: over the memory there (a
// version of it, based on what the renaming process read) or a new one,
// consuming src's pending row in the same commit. Content a write refused
// fails so, as its close did.
func (m *Mirror) saveOver(src, dst *File, e Rename, pending int64) Plan {
	if src.Refused != 0 {
		return m.refusedSave(src)
	}
	r := &Request{Kind: AskSave, File: src.ID, Path: e.To, From: e.From, Content: string(src.Buf), Pending: pending, Cause: "renamed", Strict: m.o.Strict, Dirty: src.Dirty, Tid: e.Tid}
	if v, ok := m.opened.Version(e.Tid, e.To); ok {
		r.Base = v
	} else if v, ok := src.Siblings[path.Base(e.To)]; ok {
		r.Base = v
	}
	switch {
	case dst != nil && dst.State == StateMemory:
		r.MemID, r.Over, r.Head = dst.MemID, dst.ID, dst.Head
		if dst.Loaded && dst.StoredAt != "" && dst.StoredAt == dst.Head {
			stored := dst.Stored
			r.HeadContent = &stored
		}
	case m.held[e.To] != nil:
		// The memory was renamed to a backup name (sed -i~, an editor's
		// save): its head is the one it had then.
		hd := m.held[e.To]
		r.MemID, r.Head = hd.memID, hd.head
		if dst != nil {
			r.Over = dst.ID
		}
	case dst != nil:
		r.Over = dst.ID
	}
	if r.Base == "" {
		r.Base = r.Head // the renaming process read nothing the mount knows of
	}
	return Plan{Ask: r}
}

func (m *Mirror) unlinked(e Unlink) Plan {
	id, ok := m.names[e.Path]
	if !ok {
		return Plan{Errno: syscall.ENOENT}
	}
	f := m.files[id]
	switch f.State {
	case StateMemory:
		return Plan{Ask: &Request{Kind: AskDelete, File: f.ID, MemID: f.MemID, Path: f.Path, Cause: "unlinked"}}
	case StateTemporary:
		return Plan{Ask: &Request{Kind: AskDrop, File: f.ID, Pending: f.Pending, Path: f.Path, Cause: "unlinked"}}
	}
	if hd := m.held[f.HeldAt]; f.State == StateHeld && hd != nil {
		hd.file = 0
	}
	m.entriesChanged(parentOf(e.Path))
	m.replaced(f, "unlinked")
	return Plan{}
}

func (m *Mirror) makeDir(e MakeDir) Plan {
	return Plan{Ask: &Request{Kind: AskMakeDir, Path: e.Path, Cause: "mkdir", Mode: e.Mode & 0o1777}}
}

// temporaryUnder is a temporary file below dir ("/": anywhere), to
// publish before the directory is removed or moved: the store must know
// what is in it.
func (m *Mirror) temporaryUnder(dir string) *File {
	for _, f := range m.local {
		if f.State == StateTemporary && Below(f.Path, dir) && !m.tried[f.ID] {
			return f
		}
	}
	return nil
}

// dueUnder is a closed temporary file below dir whose row is not yet
// written (Due), nil when none.
func (m *Mirror) dueUnder(dir string) *File {
	for _, f := range m.local {
		if f.Due && Below(f.Path, dir) && !m.tried[f.ID] {
			return f
		}
	}
	return nil
}

// writeDue writes f's pending row now, and asks again. Of one being
// written again (rewriting) the row holds what its close confirmed; one
// written what a save refuses is left until its close, which fails (a
// directory's rename fails with that write's error meanwhile, an rmdir
// with ENOTEMPTY), except at the unmount, which writes what its close
// confirmed.
func (m *Mirror) writeDue(f *File) Plan {
	p := Plan{Again: true, Timers: []Timer{{Event: Settled{f.ID}, Stop: true}}}
	content := string(f.Buf)
	if m.rewriting(f) {
		if f.Refused != 0 {
			if !m.going {
				p := m.refusedSave(f)
				p.Path = f.Path // the file in the directory, not the directory
				return p
			}
			p.Notify = append(p.Notify, m.restoreDue(f))
		}
		content = f.Saved
	}
	p.Ask = &Request{Kind: AskSavePending, File: f.ID, Path: f.Path, Content: content, Cause: "settled"}
	return p
}

func (m *Mirror) publishFirst(f *File, cause string) Plan {
	return Plan{Ask: &Request{Kind: AskPublish, File: f.ID, Pending: f.Pending, Path: f.Path, Cause: cause}, Again: true}
}

func (m *Mirror) removeDir(e RemoveDir) Plan {
	if m.scratchUnder(e.Path) {
		return Plan{Errno: syscall.ENOTEMPTY, Reason: "it holds scratch files (editors' swap or backup files); remove them first"}
	}
	if f := m.dueUnder(e.Path); f != nil {
		if f.Refused != 0 {
			return Plan{Errno: syscall.ENOTEMPTY, Reason: "it holds temporary file " + f.Path + ", still open after a refused write; close or remove it first"}
		}
		return m.writeDue(f)
	}
	if f := m.temporaryUnder(e.Path); f != nil {
		return m.publishFirst(f, "grace")
	}
	return Plan{Ask: &Request{Kind: AskRemoveDir, Path: e.Path, Cause: "rmdir"}}
}

func (m *Mirror) renameDir(e RenameDir) Plan {
	if m.scratchUnder(e.To) {
		return Plan{Errno: syscall.ENOTEMPTY, Path: e.To, Reason: "the target directory holds scratch files (editors' swap or backup files); remove them first"}
	}
	if f := m.dueUnder(e.From); f != nil {
		return m.writeDue(f)
	}
	if f := m.temporaryUnder(e.From); f != nil {
		return m.publishFirst(f, "grace")
	}
	r := &Request{Kind: AskMoveDir, From: e.From, Path: e.To, Cause: "renamed", NoReplace: e.NoReplace}
	for p, id := range m.names {
		if f := m.files[id]; f.State == StateMemory && f.Loaded && Below(p, e.From) {
			np, _ := moved(p, e.From, e.To)
			r.Paths = append(r.Paths, np)
		}
	}
	return Plan{Ask: r}
}

func (m *Mirror) setDirAttr(e SetDirAttr) Plan {
	d := m.dirMeta(e.Path)
	now := m.o.Now()
	if e.Mode != nil {
		d.mode, d.ctime = *e.Mode&0o1777, now
	}
	if e.Atime != nil {
		d.atime, d.ctime = *e.Atime, now
	}
	if e.Mtime != nil {
		d.mtime, d.ctime = *e.Mtime, now
	}
	m.dirs[e.Path] = d
	return Plan{}
}

func (m *Mirror) graceEnded(e GraceEnded) Plan {
	f := m.files[e.File]
	if f == nil || f.State != StateTemporary {
		return Plan{}
	}
	return Plan{Ask: &Request{Kind: AskPublish, File: f.ID, Pending: f.Pending, Path: f.Path, Cause: "grace"}}
}

func (m *Mirror) holdEnded(e HoldEnded) Plan {
	hd := m.held[e.Path]
	if hd == nil {
		return Plan{}
	}
	return Plan{Ask: &Request{Kind: AskDelete, File: hd.file, MemID: hd.memID, Path: e.Path, Cause: "hold"}}
}

// unmounting publishes the temporary files and commits the held
// deletions, one at a time, and sets no timer from now on.
func (m *Mirror) unmounting() Plan {
	m.going = true
	if m.tried == nil {
		m.tried = map[ID]bool{}
	}
	if f := m.dueUnder("/"); f != nil {
		return m.writeDue(f)
	}
	if f := m.temporaryUnder("/"); f != nil {
		return m.publishFirst(f, "grace")
	}
	for p, hd := range m.held {
		return Plan{Ask: &Request{Kind: AskDelete, File: hd.file, MemID: hd.memID, Path: p, Cause: "hold"}, Again: true,
			Timers: []Timer{{Event: HoldEnded{p}, Stop: true}}}
	}
	return Plan{}
}

// takeHold ends the hold at p: a save there was a version of its memory.
func (m *Mirror) takeHold(p string) []Timer {
	hd := m.held[p]
	if hd == nil {
		return nil
	}
	delete(m.held, p)
	if f := m.files[hd.file]; f != nil && f.State == StateHeld {
		f.MemID, f.HeldAt = "", ""
		m.move(f, StateScratch, "taken")
	}
	return []Timer{{Event: HoldEnded{p}, Stop: true}}
}
