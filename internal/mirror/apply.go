package mirror

import (
	"path"
	"syscall"
	"time"

	"github.com/memfs/memfs/versions"
)

// PublishRetry is how soon a publication the backend could not take is
// tried again.
const PublishRetry = time.Second

// Apply changes the mirror by one event and returns what to do about it.
// It does no I/O: the caller carries the plan out, giving each engine
// answer back as Answered (which may ask again), and answers the kernel's
// request with the last plan's Errno or Err.
func (m *Mirror) Apply(e Event) Plan {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch e := e.(type) {
	case Lookup:
		return m.looked(e)
	case Create:
		return m.created(e)
	case Open:
		return m.openFile(e)
	case Write:
		return m.wrote(e)
	case Flush:
		return m.flushed(e.Handle, "flushed")
	case Fsync:
		return m.flushed(e.Handle, "fsynced")
	case Release:
		return m.released(e)
	case Truncate:
		return m.truncated(e)
	case Rename:
		return m.renamed(e)
	case Unlink:
		return m.unlinked(e)
	case GraceEnded:
		return m.graceEnded(e)
	case HoldEnded:
		return m.holdEnded(e)
	case Answered:
		return m.answered(e)
	case Foreign:
		return m.foreign(e)
	case PublishedElsewhere:
		return m.publishedElsewhere(e)
	case StoreInfo:
		m.store = e
		return Plan{}
	case Committed:
		m.own.add(e.MemSeqs, e.DirSeqs)
		return Plan{}
	}
	return Plan{Errno: syscall.ENOSYS}
}

// Committed: this mount committed changes outside a file's plan (a
// directory made, removed or moved) at these feed positions; the feed
// brings them back and they are not news.
type Committed struct{ MemSeqs, DirSeqs []int64 }

func (Committed) event() string { return "committed" }

func (m *Mirror) looked(e Lookup) Plan {
	if id, ok := m.byPath[e.Path]; ok {
		f := m.files[id]
		if f.MemID == e.Mem.ID {
			if f.Head != e.Mem.VersionID && !f.Dirty {
				f.Head, f.Size = e.Mem.VersionID, int64(e.Mem.ContentSize)
			}
			return Plan{File: f.ID, Ino: f.Ino}
		}
		if f.State != StateMemory {
			return Plan{File: f.ID, Ino: f.Ino} // the mount's own file hides the store's
		}
		m.replaced(f, "foreign")
	}
	f := m.newFile(e.Path, 0)
	m.move(f, StateMemory, "looked")
	f.MemID, f.Head, f.Size = e.Mem.ID, e.Mem.VersionID, int64(e.Mem.ContentSize)
	f.Ino = m.memoryIno(e.Mem.ID)
	return Plan{File: f.ID, Ino: f.Ino}
}

func (m *Mirror) created(e Create) Plan {
	if id, ok := m.byPath[e.Path]; ok {
		m.replaced(m.files[id], "replaced")
	}
	f := m.newFile(e.Path, 0)
	to := StateNew
	if m.isScratch(e.Path) {
		to = StateScratch
	}
	m.move(f, to, "created")
	f.Ino, f.Loaded = m.allocIno(), true
	if m.isTemp(e.Path) {
		f.Siblings = m.siblings(e.Path)
	}
	h := m.newHandle(f, e.Tgid, true, e.Append)
	return Plan{File: f.ID, Ino: f.Ino, Handle: h.ID}
}

func (m *Mirror) newHandle(f *File, tgid int, write, app bool) *Handle {
	m.nextH++
	h := &Handle{ID: m.nextH, File: f.ID, Tgid: tgid, Write: write, Append: app}
	f.handles[h.ID] = h
	m.hs[h.ID] = h
	return h
}

func (m *Mirror) openFile(e Open) Plan {
	f := m.files[e.File]
	if f == nil || f.State == StateUnlinked {
		return Plan{Errno: syscall.ENOENT}
	}
	if !f.Loaded {
		if f.State != StateMemory {
			f.Buf, f.Loaded = nil, true
		} else {
			return Plan{Ask: &Request{Kind: AskLoad, File: f.ID, MemID: f.MemID, Path: f.Path, Cause: "opened"}, Again: true}
		}
	}
	if f.State == StateMemory {
		// By path: the rename that ends an atomic save names its target
		// by path, whether or not the mirror still has a file there.
		m.opened.Note(e.Tgid, f.Path, f.Base)
	}
	h := m.newHandle(f, e.Tgid, e.Write, e.Append)
	if e.Trunc && len(f.Buf) > 0 {
		f.Buf, f.Dirty, h.Truncated = f.Buf[:0], true, true
	}
	return Plan{File: f.ID, Ino: f.Ino, Handle: h.ID}
}

func (m *Mirror) wrote(e Write) Plan {
	h := m.hs[e.Handle]
	if h == nil {
		return Plan{Errno: syscall.EBADF}
	}
	f := m.files[h.File]
	off := e.Off
	if h.Append {
		off = int64(len(f.Buf))
	}
	if len(e.Data) == 0 {
		return Plan{}
	}
	if f.State != StateScratch && f.State != StateHeld && f.State != StateUnlinked {
		if errno, why, _ := CheckWrite(m.store, f.Path, f.Buf, e.Data, off, m.baseContent(f)); errno != 0 {
			return Plan{Errno: errno, Reason: why}
		}
	}
	end := off + int64(len(e.Data))
	if end > int64(len(f.Buf)) {
		nb := make([]byte, end)
		copy(nb, f.Buf)
		f.Buf = nb
	}
	copy(f.Buf[off:], e.Data)
	f.Dirty, h.Wrote, h.Truncated = true, true, false
	return Plan{}
}

// baseContent is what the store has of f, as far as the mirror holds it:
// the guard does not refuse at write() a line the store has already.
func (m *Mirror) baseContent(f *File) string {
	if f.State == StateMemory {
		return f.Stored
	}
	return ""
}

// flushed: a close(2) or fsync(2). A handle that only truncated saves
// nothing at close: the write that follows, or its release, decides.
func (m *Mirror) flushed(hid HandleID, cause string) Plan {
	h := m.hs[hid]
	if h == nil {
		return Plan{}
	}
	f := m.files[h.File]
	switch {
	case cause == "fsynced" && (f.Dirty || f.State == StateNew):
	case h.Wrote && f.Dirty:
	default:
		return Plan{}
	}
	return m.save(f, h, cause)
}

// save asks the engine to store f's buffer as its state says.
func (m *Mirror) save(f *File, h *Handle, cause string) Plan {
	var hid HandleID
	if h != nil {
		hid = h.ID
	}
	r := &Request{File: f.ID, Path: f.Path, Content: string(f.Buf), Cause: cause, Handle: hid}
	switch f.State {
	case StateMemory:
		r.Kind, r.MemID, r.Base, r.Strict = AskSave, f.MemID, f.Base, m.o.Strict
	case StateNew:
		if m.isTemp(f.Path) {
			r.Kind = AskSavePending
			break
		}
		r.Kind = AskSave
		if hd, ok := m.held[f.Path]; ok {
			r.MemID, r.Base, r.Strict = hd.memID, hd.head, m.o.Strict
		}
	case StateTemporary:
		r.Kind, r.Pending = AskSavePending, f.Pending
	default:
		// Scratch and held files are never stored; an unlinked file's
		// writes vanish, as on any POSIX file system.
		f.Dirty = false
		if h != nil {
			h.Wrote, h.Truncated = false, false
		}
		return Plan{}
	}
	return Plan{Ask: r}
}

func (m *Mirror) released(e Release) Plan {
	h := m.hs[e.Handle]
	if h == nil {
		return Plan{}
	}
	f := m.files[h.File]
	if len(f.handles) == 1 && (f.State == StateNew || (h.Truncated && f.Dirty)) {
		// touch, open(…, "w").close(), `: > f`: saved once, now.
		p := m.save(f, h, "released")
		if p.Ask != nil {
			return p
		}
	}
	return m.close(f, h)
}

// close drops handle h; with the last one the buffer goes, unless only
// this mount has the content.
func (m *Mirror) close(f *File, h *Handle) Plan {
	delete(f.handles, h.ID)
	delete(m.hs, h.ID)
	if len(f.handles) > 0 {
		return Plan{}
	}
	switch f.State {
	case StateUnlinked:
		m.move(f, gone, "released")
	case StateNew:
		// Its save failed: a file never saved disappears.
		m.move(f, gone, "released")
		return Plan{Notify: []Notice{{Path: f.Path}}}
	case StateMemory:
		var p Plan
		if f.Dirty {
			p.Notify = []Notice{{Ino: f.Ino}} // a refused save: its pages go
		}
		if !f.Dirty {
			f.Size = int64(len(f.Buf))
		}
		f.Buf, f.Loaded, f.Dirty, f.Stored = nil, false, false, ""
		return p
	}
	return Plan{}
}

func (m *Mirror) truncated(e Truncate) Plan {
	f := m.files[e.File]
	if f == nil {
		return Plan{Errno: syscall.ENOENT}
	}
	if m.store.MaxMemoryBytes > 0 && e.Size > int64(m.store.MaxMemoryBytes) {
		return Plan{Errno: syscall.EFBIG, Reason: "past the store's size of a memory"}
	}
	if !f.Loaded {
		if f.State == StateMemory {
			return Plan{Ask: &Request{Kind: AskLoad, File: f.ID, MemID: f.MemID, Path: f.Path, Cause: "truncated"}, Again: true}
		}
		f.Loaded = true
	}
	if int64(len(f.Buf)) != e.Size {
		nb := make([]byte, e.Size)
		copy(nb, f.Buf)
		f.Buf, f.Dirty = nb, true
	}
	h := m.hs[e.Handle]
	if h != nil {
		if f.Dirty && !h.Wrote {
			h.Truncated = e.Size == 0
			h.Wrote = e.Size != 0
		}
		return Plan{}
	}
	if !f.Dirty {
		return Plan{}
	}
	return m.save(f, nil, "truncated")
}

// replaced: f lost its name to another file.
func (m *Mirror) replaced(f *File, cause string) {
	if f == nil {
		return
	}
	if f.Path != "" && m.byPath[f.Path] == f.ID {
		delete(m.byPath, f.Path)
	}
	f.Path = ""
	if len(f.handles) > 0 {
		m.move(f, StateUnlinked, cause)
		return
	}
	m.move(f, gone, cause)
}

func (m *Mirror) renamed(e Rename) Plan {
	sid, ok := m.byPath[e.From]
	if !ok {
		return Plan{Errno: syscall.ENOENT}
	}
	src := m.files[sid]
	var dst *File
	if id, ok := m.byPath[e.To]; ok && id != sid {
		dst = m.files[id]
	}
	if dst != nil && dst.State == StateTemporary {
		// The replaced temporary file's row goes first; then the rename.
		return Plan{Ask: &Request{Kind: AskDrop, File: dst.ID, Pending: dst.Pending, Path: dst.Path, Cause: "replaced"}, Again: true,
			Timers: []Timer{{Event: GraceEnded{dst.ID}, Stop: true}}}
	}
	toScratch, toTemp := m.isScratch(e.To), m.isTemp(e.To)
	local := func(f *File) bool {
		return f != nil && (f.State == StateNew || f.State == StateScratch || f.State == StateTemporary)
	}
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
		return Plan{Ask: m.saveOver(src, dst, e, 0)}
	case StateTemporary:
		if toScratch {
			return Plan{Ask: &Request{Kind: AskDrop, File: src.ID, Pending: src.Pending, Path: e.To, From: e.From, Cause: "renamed"},
				Timers: []Timer{{Event: GraceEnded{src.ID}, Stop: true}}}
		}
		if toTemp && dst == nil {
			m.setPath(src, e.To)
			m.move(src, StateTemporary, "renamed")
			return Plan{}
		}
		return Plan{Ask: m.saveOver(src, dst, e, src.Pending), Timers: []Timer{{Event: GraceEnded{src.ID}, Stop: true}}}
	case StateMemory:
		if toScratch && (dst == nil || local(dst)) {
			// An editor's backup of the original: the store keeps the
			// memory at its path for the grace.
			m.replaced(dst, "replaced")
			m.held[e.From] = &hold{memID: src.MemID, head: src.Head, file: src.ID}
			delete(m.memIno, src.MemID) // a new file saved there is a new inode
			m.setPath(src, e.To)
			src.HeldAt = e.From
			m.move(src, StateHeld, "renamed")
			return Plan{Timers: []Timer{{Event: HoldEnded{e.From}, After: m.o.Grace}}, Notify: []Notice{{Path: e.From}}}
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
// consuming src's pending row in the same commit.
func (m *Mirror) saveOver(src, dst *File, e Rename, pending int64) *Request {
	r := &Request{Kind: AskSave, File: src.ID, Path: e.To, From: e.From, Content: string(src.Buf), Pending: pending, Cause: "renamed", Strict: m.o.Strict, Dirty: src.Dirty}
	if v, ok := m.opened.Version(e.Tgid, e.To); ok {
		r.Base = v
	} else if v, ok := src.Siblings[path.Base(e.To)]; ok {
		r.Base = v
	}
	switch {
	case dst != nil && dst.State == StateMemory:
		r.MemID, r.Over = dst.MemID, dst.ID
		if r.Base == "" {
			r.Base = dst.Head
		}
	case m.held[e.To] != nil:
		hd := m.held[e.To]
		r.MemID, r.Base = hd.memID, hd.head
		if dst != nil {
			r.Over = dst.ID
		}
	case dst != nil:
		r.Over = dst.ID
	}
	return r
}

func (m *Mirror) unlinked(e Unlink) Plan {
	id, ok := m.byPath[e.Path]
	if !ok {
		return Plan{Errno: syscall.ENOENT}
	}
	f := m.files[id]
	switch f.State {
	case StateMemory:
		return Plan{Ask: &Request{Kind: AskDelete, File: f.ID, MemID: f.MemID, Path: f.Path, Cause: "unlinked"}}
	case StateTemporary:
		return Plan{Ask: &Request{Kind: AskDrop, File: f.ID, Pending: f.Pending, Path: f.Path, Cause: "unlinked"},
			Timers: []Timer{{Event: GraceEnded{f.ID}, Stop: true}}}
	}
	if hd := m.held[f.HeldAt]; f.State == StateHeld && hd != nil {
		hd.file = 0
	}
	m.replaced(f, "unlinked")
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

func (m *Mirror) answered(e Answered) Plan {
	r := e.Req
	f := m.files[r.File]
	if e.Err != nil {
		p := Plan{Err: e.Err}
		if r.Kind == AskPublish && f != nil && versions.ErrorCode(e.Err) == versions.CodeUnavailable {
			p.Timers = []Timer{{Event: GraceEnded{f.ID}, After: PublishRetry}}
		}
		if r.Cause == "released" && f != nil {
			if h := m.hs[r.Handle]; h != nil {
				p.Notify = append(p.Notify, m.close(f, h).Notify...)
			}
		}
		return p
	}
	if e.Mem != nil {
		m.own.add([]int64{e.Mem.Seq}, nil)
	}
	m.own.add(e.Seqs, e.DirSeqs)
	switch r.Kind {
	case AskLoad:
		if f != nil {
			f.Buf, f.Loaded, f.Base, f.Head, f.Dirty = []byte(e.Content), true, e.Mem.VersionID, e.Mem.VersionID, false
			f.Stored = e.Content
		}
		return Plan{}
	case AskSavePending:
		f.Pending, f.Dirty = e.Pending, false
		m.clean(r.Handle)
		if f.State == StateNew {
			m.move(f, StateTemporary, r.Cause)
			return m.after(f, r, Plan{Timers: []Timer{{Event: GraceEnded{f.ID}, After: m.o.Grace}}})
		}
		m.move(f, StateTemporary, r.Cause)
		return m.after(f, r, Plan{})
	case AskSave, AskPublish:
		var p Plan
		if r.MemID != "" || r.Kind == AskPublish {
			p.Timers = m.takeHold(r.Path)
		}
		if r.Over != 0 && r.Over != f.ID {
			if o := m.files[r.Over]; o != nil {
				m.replaced(o, "replaced")
			}
		}
		if r.From != "" || r.Path != f.Path {
			m.setPath(f, r.Path)
		}
		m.memIno[e.Mem.ID] = f.Ino
		f.MemID, f.Head, f.Base, f.Pending, f.Siblings, f.HeldAt = e.Mem.ID, e.Mem.VersionID, e.Mem.VersionID, 0, nil, ""
		f.Size = int64(e.Mem.ContentSize)
		if r.Kind == AskSave {
			f.Stored = r.Content
			if r.Content == string(f.Buf) {
				f.Dirty = false
			}
		}
		m.clean(r.Handle)
		m.move(f, StateMemory, r.Cause)
		if len(f.handles) == 0 && !f.Dirty {
			f.Buf, f.Loaded = nil, false
		}
		return m.after(f, r, p)
	case AskDrop:
		if f == nil {
			return Plan{}
		}
		f.Pending = 0
		if r.Cause == "renamed" {
			m.replaced(m.fileAt(r.Path, f), "replaced")
			m.setPath(f, r.Path)
			m.move(f, StateScratch, r.Cause)
			return Plan{}
		}
		m.replaced(f, r.Cause)
		return Plan{}
	case AskDelete:
		if r.Cause == "hold" {
			delete(m.held, r.Path)
			delete(m.memIno, r.MemID)
			if f != nil && f.State == StateHeld {
				f.MemID, f.HeldAt = "", ""
				m.move(f, StateScratch, "hold")
			}
			return Plan{}
		}
		delete(m.memIno, r.MemID)
		if f != nil {
			m.replaced(f, r.Cause)
		}
		return Plan{}
	case AskMove:
		if r.Over != 0 {
			m.replaced(m.files[r.Over], "replaced")
		}
		m.setPath(f, r.Path)
		if f.MemID != e.Mem.ID {
			// Over another file: its memory lives on with this content.
			delete(m.memIno, f.MemID)
			f.MemID = e.Mem.ID
			m.memIno[e.Mem.ID] = f.Ino
		}
		f.Head = e.Mem.VersionID
		if !f.Dirty {
			f.Base = e.Mem.VersionID
		}
		m.move(f, StateMemory, r.Cause)
		return Plan{}
	}
	return Plan{}
}

// after finishes the request whose save this was: a release drops its
// handle.
func (m *Mirror) after(f *File, r Request, p Plan) Plan {
	if r.Cause == "released" {
		if h := m.hs[r.Handle]; h != nil {
			c := m.close(f, h)
			p.Notify = append(p.Notify, c.Notify...)
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
	if id, ok := m.byPath[p]; ok && id != not.ID {
		return m.files[id]
	}
	return nil
}

func (m *Mirror) foreign(e Foreign) Plan {
	c := e.Change
	if m.own.take(c) {
		return Plan{}
	}
	var p Plan
	for _, at := range c.Paths() {
		p.Notify = append(p.Notify, Notice{Path: at})
	}
	if c.MemoryID == "" {
		return p
	}
	var f *File
	if id, ok := m.byPath[c.Path]; ok && m.files[id].MemID == c.MemoryID {
		f = m.files[id]
	}
	if id, ok := m.byPath[c.PrevPath]; ok && c.PrevPath != "" && m.files[id].MemID == c.MemoryID {
		f = m.files[id]
	}
	if f == nil || f.State != StateMemory {
		return p
	}
	switch c.Op {
	case versions.ChangeDeleted:
		m.replaced(f, "foreign")
		return p
	case versions.ChangeRenamed:
		if dst := m.fileAt(c.Path, f); dst != nil {
			m.replaced(dst, "replaced")
		}
		m.setPath(f, c.Path)
	}
	f.Head, f.Size = c.VersionID, int64(c.Size)
	if !f.Dirty && f.Loaded && len(f.handles) == 0 {
		f.Buf, f.Loaded = nil, false
	}
	m.move(f, StateMemory, "foreign")
	p.Notify = append(p.Notify, Notice{Ino: f.Ino})
	return p
}

func (m *Mirror) publishedElsewhere(e PublishedElsewhere) Plan {
	for _, f := range m.files {
		if f.State == StateTemporary && f.Pending == e.Pending {
			f.MemID, f.Head, f.Base, f.Pending = e.Mem.ID, e.Mem.VersionID, e.Mem.VersionID, 0
			m.memIno[e.Mem.ID] = f.Ino
			m.move(f, StateMemory, "published-elsewhere")
			return Plan{Timers: []Timer{{Event: GraceEnded{f.ID}, Stop: true}}}
		}
	}
	return Plan{}
}
