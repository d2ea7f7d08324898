package mirror

import (
	"syscall"

	"github.com/memfs/memfs/versions"
)

// VersionCost is about what a version of size bytes at path adds to the
// store's retained history (the engine counts the record's fields too).
func VersionCost(size int, path string) int { return size + 2*len(path) }

const lostReason = "the mount's lease lapsed (the daemon was stopped or cut off from the database) and this temporary file is published by others at its path: nothing of this request was done; save the file again"

// answered finishes the transition whose request the engine answered: the
// one place for the bookkeeping after a commit (the file's state, the
// index, the content cache, the count of memories).
func (m *Mirror) answered(e Answered) Plan {
	r := e.Req
	f := m.files[r.File]
	if e.Err != nil {
		return m.failed(e, f)
	}
	switch r.Kind {
	case AskLoad:
		if f == nil {
			return Plan{}
		}
		if e.Mem.VersionID != f.Head {
			f.PagesSync = false
		}
		m.o.Contents.Put(e.Mem.ID, e.Mem.VersionID, e.Content)
		if errno, why := m.setLoaded(f, e.Content, e.Mem.VersionID); errno != 0 {
			return Plan{Errno: errno, Reason: why}
		}
		return Plan{}
	case AskCount:
		m.row, m.liveOK = *e.Store, true
		return Plan{}
	case AskResolve:
		return m.resolved(f, e.Mem)
	case AskSavePending:
		// A row written while the file is written again (writeDue) holds
		// what its close confirmed: the rest is saved at the next close.
		f.Pending, f.Dirty, f.Due, f.Saved = e.Pending, string(f.Buf) != r.Content, false, r.Content
		m.clean(r.Handle)
		if f.State == StateNew {
			m.move(f, StateTemporary, r.Cause)
			return m.after(f, r, Plan{Timers: []Timer{{Event: GraceEnded{f.ID}, After: m.o.Grace}}})
		}
		m.move(f, StateTemporary, r.Cause)
		return m.after(f, r, Plan{})
	case AskSave, AskPublish:
		return m.saved(e, f)
	case AskDrop:
		if f == nil {
			return Plan{}
		}
		f.Pending = 0
		stop := []Timer{{Event: GraceEnded{f.ID}, Stop: true}}
		if r.Cause == "renamed" {
			m.replaced(m.fileAt(r.Path, f), "replaced")
			m.setPath(f, r.Path)
			f.Saved = ""
			m.move(f, StateScratch, r.Cause)
			return Plan{Timers: stop}
		}
		m.entriesChanged(parentOf(r.Path))
		m.replaced(f, r.Cause)
		return Plan{Timers: stop}
	case AskDelete:
		m.o.Contents.Forget(r.MemID)
		m.idx.Removed(r.Path)
		m.row.MemoryCount--
		delete(m.memIno, r.MemID)
		if r.Cause == "hold" {
			delete(m.held, r.Path)
			if f != nil && f.State == StateHeld {
				f.MemID, f.HeldAt = "", ""
				m.move(f, StateScratch, "hold")
			}
			return Plan{}
		}
		m.entriesChanged(parentOf(r.Path))
		if f != nil {
			m.replaced(f, r.Cause)
		}
		return Plan{}
	case AskMove:
		if r.Over != 0 && r.Over != r.File {
			if o := m.files[r.Over]; o != nil && o.State == StateMemory {
				m.row.MemoryCount--
			}
			m.replaced(m.files[r.Over], "replaced")
		}
		m.idx.RenamedFile(r.From, r.Path, e.Mem)
		if f == nil {
			// A change the feed brought while the engine moved it took
			// the file from the mirror: the kernel looks the path up again.
			return Plan{Notify: []Notice{{Path: r.From}, {Path: r.Path}}}
		}
		m.setPath(f, r.Path)
		if f.MemID != e.Mem.ID {
			// Over another file: its memory lives on with this content.
			m.o.Contents.Forget(f.MemID)
			delete(m.memIno, f.MemID)
			f.MemID = e.Mem.ID
			m.keepIno(e.Mem, f.Ino)
		}
		f.Head, f.Size, f.Ctime = e.Mem.VersionID, int64(e.Mem.ContentSize), m.o.Now()
		if !f.Dirty {
			f.Base = e.Mem.VersionID
		}
		m.move(f, StateMemory, r.Cause)
		return Plan{}
	case AskMakeDir:
		m.idx.MadeDir(r.Path)
		now := m.o.Now()
		m.dirs[r.Path] = dirMeta{mode: r.Mode, atime: now, mtime: now, ctime: now}
		m.entriesChanged(parentOf(r.Path))
		return Plan{Ino: m.dirInoLocked(r.Path)}
	case AskRemoveDir:
		m.idx.Removed(r.Path)
		m.forgetDirs(r.Path)
		m.entriesChanged(parentOf(r.Path))
		return Plan{}
	case AskMoveDir:
		return m.movedDir(e)
	}
	return Plan{}
}

// failed is the answer of a request the engine refused.
func (m *Mirror) failed(e Answered, f *File) Plan {
	r := e.Req
	p := Plan{Err: e.Err, Path: r.Path}
	if (r.Kind == AskPublish || r.Cause == "settled") && m.going && f != nil {
		m.tried[f.ID] = true // tried once at the unmount: left to recovery
	}
	lost := versions.IsPendingLost(e.Err)
	switch {
	case r.Cause == "settled" && f != nil && f.Due && !m.going:
		// Its close succeeded before: the row is tried again while the
		// database cannot take it; refused for good (the quota), the file
		// goes, as a new file whose save failed does at its release.
		switch {
		case lost || versions.ErrorCode(e.Err) == versions.CodeUnavailable:
			p.Timers = []Timer{{Event: Settled{f.ID}, After: PublishRetry}}
		case len(f.handles) == 0:
			m.entriesChanged(parentOf(f.Path))
			p.Notify = []Notice{{Path: f.Path}}
			m.move(f, gone, "refused")
		default:
			// Open: its last release saves it again (or its writer's
			// close, Due again), and if that fails too, it goes then.
			f.Due = false
		}
		return p
	case lost && r.Kind == AskSavePending && r.Pending == 0:
		p = Plan{Errno: syscall.EIO, Reason: "the mount's lease lapsed (the daemon was stopped or cut off from the database) and it is taking a new one: nothing was saved; save again in a moment"}
	case lost && f != nil && r.Pending != 0:
		// Not this mount's row any more: recovery publishes it. The file
		// is what the store has at its path.
		f.Pending, f.Saved = 0, ""
		p = Plan{Ask: &Request{Kind: AskResolve, File: f.ID, Path: f.Path, Cause: "lost", Handle: r.Handle}, Log: "a temporary file saved before the mount's lease lapsed is no longer this mount's: it is published by others at its path, and this mount neither publishes nor drops it",
			Timers: []Timer{{Event: GraceEnded{f.ID}, Stop: true}}}
		return p
	case lost && r.Kind == AskDrop:
		// Recovery publishes it; the name goes from this mount all the same.
		return m.answered(Answered{Req: r})
	case r.Kind == AskPublish && f != nil && versions.ErrorCode(e.Err) == versions.CodeUnavailable:
		// Saved durably already: published once the database is back.
		p.Timers = []Timer{{Event: GraceEnded{f.ID}, After: PublishRetry}}
		p.Log = "a file saved in this mount cannot be published yet: the database cannot be reached; it stays pending and is published when it is back"
	case r.Kind == AskMakeDir && versions.ErrorCode(e.Err) == versions.CodePathConflict:
		// Made elsewhere since the kernel looked: it must look again.
		p.Notify = []Notice{{Path: r.Path}}
	case r.Kind == AskSave && f != nil && f.State == StateMemory && r.From == "" && versions.ErrorCode(e.Err) == versions.CodeNotFound:
		p = Plan{Errno: syscall.ESTALE, Reason: "the memory was deleted or replaced elsewhere while open: nothing was saved, and what was written goes when the file is closed; write it to another file first, or open the file again and redo the change"}
	case r.Kind == AskDelete && r.Cause == "hold":
		// It stays in the store: the mount shows it again.
		delete(m.held, r.Path)
		if f != nil && f.State == StateHeld {
			f.MemID, f.HeldAt = "", ""
			m.move(f, StateScratch, "hold")
		}
		p.Notify = append(p.Notify, Notice{Path: r.Path})
		p.Log = "a file renamed to a scratch name could not be deleted from the store; it stays there"
	}
	if code := versions.ErrorCode(e.Err); r.Kind == AskSave && r.MemID != "" && (code == versions.CodeUnavailable || code == versions.CodeInternal) {
		// The connection may have dropped after the commit: whether the
		// version was written is unknown, and the feed's record of it is
		// this mount's own, which it skips. The next open reads the head
		// from the store, not what this mount last knew of it, so a save
		// that did commit is not the base of a false conflict.
		m.o.Contents.Forget(r.MemID)
	}
	if hd := m.held[r.Path]; hd != nil && r.Kind == AskSave && r.MemID == hd.memID {
		// A save over a memory renamed to a backup name (sed -i~'s
		// rename, an editor's new file) failed (strict mode's conflict,
		// a limit): the memory stays at its path, as the store has it,
		// rather than be deleted when the hold ends; the backup keeps its
		// copy as a scratch file.
		p.Timers = append(p.Timers, m.takeHold(r.Path)...)
		m.idx.Forget(r.Path)
		p.Notify = append(p.Notify, Notice{Path: r.Path})
		if f != nil && f.State == StateNew && len(f.handles) > 0 {
			// Its release must not save it again, as a new file over the
			// memory kept there: it fails so, and goes. (A closed
			// temporary file's row is written at its own path when
			// Settle ends.)
			f.Refused = CodeErrno(versions.ErrorCode(e.Err))
		}
	}
	if r.Cause == "released" && f != nil {
		if h := m.hs[r.Handle]; h != nil {
			c := m.close(f, h)
			p.Notify = append(p.Notify, c.Notify...)
			p.Discarded = c.Discarded
		}
	}
	return p
}

// resolved: the memory at a temporary file's path, now its row is
// another's (nil: none yet; recovery's publication comes through the feed).
func (m *Mirror) resolved(f *File, mem *versions.Memory) Plan {
	p := Plan{Errno: syscall.EIO, Reason: lostReason}
	if f == nil {
		return p
	}
	m.liveOK = false
	if mem == nil {
		p.Notify = []Notice{{Path: f.Path}}
		m.replaced(f, "replaced")
		return p
	}
	f.MemID = mem.ID
	m.keepIno(mem, f.Ino)
	m.learnt(f, mem)
	f.Base = mem.VersionID
	f.PagesSync = false
	m.move(f, StateMemory, "published-elsewhere")
	return p
}

func (m *Mirror) saved(e Answered, f *File) Plan {
	r := e.Req
	var p Plan
	if r.MemID != "" || r.Kind == AskPublish {
		p.Timers = m.takeHold(r.Path)
	}
	if r.Kind == AskPublish || r.Pending != 0 {
		p.Timers = append(p.Timers, Timer{Event: GraceEnded{f.ID}, Stop: true})
	}
	if f.Due {
		f.Due = false
		p.Timers = append(p.Timers, Timer{Event: Settled{f.ID}, Stop: true})
	}
	if r.Over != 0 && r.Over != f.ID {
		if o := m.files[r.Over]; o != nil {
			m.replaced(o, "replaced")
		}
	}
	if r.From != "" || r.Path != f.Path {
		m.setPath(f, r.Path)
		m.idx.Removed(r.From)
	}
	wasLocal := f.State != StateMemory
	if wasLocal && e.Created {
		m.row.MemoryCount++
	}
	if f.State == StateMemory && f.MemID != e.Mem.ID {
		delete(m.memIno, f.MemID)
	}
	m.headChanging(f)
	// The memory keeps the number the kernel and programs saw, also in
	// a new node once the kernel forgot this one (an editor compares
	// st_ino before it saves), and in listings.
	m.keepIno(e.Mem, f.Ino)
	newVersion := wasLocal || e.Mem.VersionID != f.Base
	content := r.Content
	switch {
	case r.Kind == AskPublish:
		// The row's content: the file may be written again meanwhile,
		// which its close saves as the next version.
		content = f.Saved
	case r.Pending != 0 && !r.Dirty:
		content = string(f.Buf)
	}
	f.MemID, f.Head, f.Base, f.Pending, f.Siblings, f.HeldAt, f.Saved = e.Mem.ID, e.Mem.VersionID, e.Mem.VersionID, 0, nil, "", ""
	f.Size = int64(e.Mem.ContentSize)
	if r.Kind == AskSave || f.Loaded {
		f.Stored, f.StoredAt = content, e.Mem.VersionID
		if content == string(f.Buf) {
			f.Dirty, f.Stale = false, false
		}
		if !f.Dirty {
			m.o.Contents.Put(e.Mem.ID, e.Mem.VersionID, content)
		}
	}
	m.idx.Saved(r.Path, e.Mem)
	m.noteWriters(r, e.Mem.VersionID)
	if newVersion {
		p.Saved = true
		m.row.HistoryBytes += VersionCost(e.Mem.ContentSize, r.Path)
	}
	m.clean(r.Handle)
	m.move(f, StateMemory, r.Cause)
	if r.From != "" {
		m.entriesChanged(parentOf(r.From), parentOf(r.Path))
	}
	if len(f.handles) == 0 && !f.Dirty {
		// A temporary file published or renamed over a memory: the
		// next open reads nothing from the daemon.
		pages := f.Loaded && f.PagesSync
		m.unload(f)
		if pages {
			p.Notify = append(p.Notify, Notice{File: f.ID, Path: f.Path, Pages: true})
		}
	}
	return m.after(f, r, p)
}

// noteWriters records version as what the threads that saved it last
// read of its path: they hold that content, so their next atomic save is
// based on it, not on the version they opened before.
func (m *Mirror) noteWriters(r Request, version string) {
	m.opened.Note(r.Tid, r.Path, version)
	if h := m.hs[r.Handle]; h != nil {
		for tid := range h.Users {
			m.opened.Note(int(tid), r.Path, version)
		}
	}
}

// movedDir: a directory moved; the files below follow it, the open ones
// with the new heads the move gave them.
func (m *Mirror) movedDir(e Answered) Plan {
	r := e.Req
	m.idx.Forget(r.From)
	m.idx.Forget(r.Path)
	// Collected first: setPath changes the names ranged over.
	below := map[ID]string{}
	for p, id := range m.names {
		if np, ok := moved(p, r.From, r.Path); ok {
			below[id] = np
		}
	}
	for id, np := range below {
		f := m.files[id]
		m.setPath(f, np)
		if f.State != StateMemory {
			continue
		}
		if mem := e.Moved[np]; mem != nil {
			f.Head, f.Size = mem.VersionID, int64(mem.ContentSize)
			if !f.Dirty {
				f.Base = mem.VersionID
			}
		} else if !f.Loaded {
			f.Head = "" // unknown: the next open reads the new head
		}
	}
	// Directories keep their numbers where they go; their old paths get
	// new ones.
	for q, ino := range m.dirIno {
		if nq, ok := moved(q, r.From, r.Path); ok {
			delete(m.dirIno, q)
			m.dirIno[nq] = ino
		}
	}
	for q, d := range m.dirs {
		if nq, ok := moved(q, r.From, r.Path); ok {
			delete(m.dirs, q)
			m.dirs[nq] = d
		}
	}
	m.entriesChanged(parentOf(r.From), parentOf(r.Path))
	return Plan{}
}

// forgetDirs forgets what the mount knew of directory p and those below:
// the next directory there is another.
func (m *Mirror) forgetDirs(p string) {
	for q := range m.dirIno {
		if q == p || Below(q, p) {
			delete(m.dirIno, q)
		}
	}
	for q := range m.dirs {
		if q == p || Below(q, p) {
			delete(m.dirs, q)
		}
	}
}

// after finishes the request whose save this was: a release drops its
// handle.
func (m *Mirror) after(f *File, r Request, p Plan) Plan {
	if r.Cause == "released" {
		if h := m.hs[r.Handle]; h != nil {
			c := m.close(f, h)
			p.Notify = append(p.Notify, c.Notify...)
			p.Discarded = p.Discarded || c.Discarded
		}
	}
	return p
}

func (m *Mirror) clean(hid HandleID) {
	if h := m.hs[hid]; h != nil {
		h.Wrote, h.Truncated = false, false
	}
}

func (m *Mirror) fileAt(p string, not *File) *File {
	if id, ok := m.names[p]; ok && id != not.ID {
		return m.files[id]
	}
	return nil
}
