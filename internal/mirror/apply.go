package mirror

import (
	"fmt"
	"syscall"
	"time"
	"unicode/utf8"

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
	p := m.apply(e)
	if m.going {
		// The mount is going away: its pending files are left to
		// recovery once its lease ends; a timer now would outlive it.
		kept := p.Timers[:0]
		for _, t := range p.Timers {
			if t.Stop {
				kept = append(kept, t)
			}
		}
		p.Timers = kept
	}
	return p
}

func (m *Mirror) apply(e Event) Plan {
	switch e := e.(type) {
	case Lookup:
		return m.looked(e)
	case Create:
		return m.created(e)
	case Open:
		return m.openFile(e)
	case Getattr:
		return m.getattr(e.File)
	case Read:
		return m.read(e)
	case Write:
		return m.wrote(e)
	case Flush:
		return m.flushed(e.Handle, e.Tid, "flushed")
	case Fsync:
		return m.flushed(e.Handle, 0, "fsynced")
	case Release:
		return m.released(e)
	case Truncate:
		return m.truncated(e.File, e.Handle, e.Size)
	case Setattr:
		return m.setattr(e)
	case Rename:
		return m.renamed(e)
	case Unlink:
		return m.unlinked(e)
	case MakeDir:
		return m.makeDir(e)
	case RemoveDir:
		return m.removeDir(e)
	case RenameDir:
		return m.renameDir(e)
	case SetDirAttr:
		return m.setDirAttr(e)
	case StorePages:
		return m.storePages(e)
	case GraceEnded:
		return m.graceEnded(e)
	case HoldEnded:
		return m.holdEnded(e)
	case Settled:
		return m.settled(e)
	case Answered:
		return m.answered(e)
	case Foreign:
		return m.foreign(e)
	case Unmounting:
		return m.unmounting()
	case StoreChanged:
		return m.storeChanged()
	case DirsChanged:
		m.entriesChanged(e.Dirs...)
		return Plan{}
	case DirGone:
		m.forgetDirs(e.Path)
		return Plan{}
	}
	return Plan{Errno: syscall.ENOSYS}
}

// looked: with Mem nil, whether the mount has a file of its own at Path
// (Plan.File) or hides the store's (ENOENT); else the store has Mem there.
func (m *Mirror) looked(e Lookup) Plan {
	id, ok := m.names[e.Path]
	var f *File
	if ok {
		f = m.files[id]
	}
	if e.Mem == nil {
		switch {
		case f != nil && f.State != StateMemory:
			return Plan{File: f.ID, Ino: f.Ino}
		case m.held[e.Path] != nil:
			return Plan{Errno: syscall.ENOENT} // renamed to a scratch name: the store keeps it for the grace
		}
		return Plan{}
	}
	if f != nil {
		if f.MemID == e.Mem.ID {
			if f.Head != e.Mem.VersionID && !f.Dirty {
				m.learnt(f, e.Mem)
			}
			return Plan{File: f.ID, Ino: f.Ino}
		}
		if f.State != StateMemory {
			return Plan{File: f.ID, Ino: f.Ino} // the mount's own file hides the store's
		}
		m.orphan(f) // replaced elsewhere: its save fails (ESTALE)
	}
	f = m.newFile(e.Path, 0)
	m.move(f, StateMemory, "looked")
	f.MemID, f.Head, f.Size = e.Mem.ID, e.Mem.VersionID, int64(e.Mem.ContentSize)
	f.Atime, f.Mtime, f.Ctime = e.Mem.UpdatedAt, e.Mem.UpdatedAt, e.Mem.UpdatedAt
	f.Ino = m.memoryIno(e.Mem)
	return Plan{File: f.ID, Ino: f.Ino}
}

// learnt: the memory's head is mem now, saved elsewhere. A loaded clean
// buffer is loaded again at the next open.
func (m *Mirror) learnt(f *File, mem *versions.Memory) {
	if f.Head != mem.VersionID {
		m.headChanging(f)
		f.PagesSync = false
	}
	f.Head, f.Size = mem.VersionID, int64(mem.ContentSize)
	if !mem.UpdatedAt.IsZero() {
		f.Atime, f.Mtime, f.Ctime = mem.UpdatedAt, mem.UpdatedAt, mem.UpdatedAt
	}
	if f.Loaded && f.Base != mem.VersionID {
		if len(f.handles) == 0 {
			m.unload(f)
		} else {
			f.Stale = true
		}
	}
}

func (m *Mirror) unload(f *File) {
	f.Buf, f.Loaded, f.Dirty, f.Stored, f.StoredAt, f.Stale = nil, false, false, "", "", false
	m.settle(f)
}

func (m *Mirror) created(e Create) Plan {
	scratch := m.isScratch(e.Path)
	if scratch {
		if errno, why := m.scratchRoom(); errno != 0 {
			return Plan{Errno: errno, Reason: why}
		}
	} else {
		if !m.liveOK {
			return Plan{Ask: &Request{Kind: AskCount, Path: e.Path, Cause: "created"}, Again: true}
		}
		if maxMemories, _ := m.limits(); m.row.MemoryCount+m.pendingLocked() >= maxMemories {
			return Plan{Errno: syscall.ENOSPC, Reason: fmt.Sprintf("the store holds its maximum of %d memories: delete some first, or raise it with `memfs store update STORE --max-memories N`", maxMemories)}
		}
	}
	if id, ok := m.names[e.Path]; ok {
		m.replaced(m.files[id], "replaced")
	}
	f := m.newFile(e.Path, 0)
	to := StateNew
	if scratch {
		to = StateScratch
	}
	m.move(f, to, "created")
	f.Ino, f.Loaded, f.PagesSync, f.KernelSize = m.o.Inos.file(), true, true, 0
	if e.Mode != 0 {
		f.Mode = e.Mode & fileModeBits
	}
	if m.isTemp(e.Path) {
		f.Siblings = map[string]string{}
	}
	m.entriesChanged(parentOf(e.Path))
	h := m.newHandle(f, e.Tid, true, e.Append)
	h.Wrote = true
	return Plan{File: f.ID, Ino: f.Ino, Handle: h.ID, Attr: m.attr(f)}
}

func (m *Mirror) newHandle(f *File, tid int, write, app bool) *Handle {
	m.nextH++
	h := &Handle{ID: m.nextH, File: f.ID, Write: write, Append: app}
	if write && tid > 0 {
		h.Users = map[uint32]bool{uint32(tid): true}
	}
	if f.handles == nil {
		f.handles = map[HandleID]*Handle{}
	}
	f.handles[h.ID] = h
	m.hs[h.ID] = h
	return h
}

// load makes sure f's buffer is loaded (again, when stale and reload): a
// plan when it cannot be yet (ask the engine, or refused).
func (m *Mirror) load(f *File, reload bool, cause string) *Plan {
	if f.Loaded && !(reload && f.Stale) {
		return nil
	}
	if f.State != StateMemory {
		if !f.Loaded {
			f.Buf, f.Loaded, f.PagesSync = nil, true, false
		}
		f.Stale = false
		return nil
	}
	if c, ok := m.o.Contents.Get(f.MemID, f.Head); ok {
		if errno, why := m.setLoaded(f, c, f.Head); errno != 0 {
			return &Plan{Errno: errno, Reason: why}
		}
		return nil
	}
	return &Plan{Ask: &Request{Kind: AskLoad, File: f.ID, MemID: f.MemID, Path: f.Path, Cause: cause}, Again: true}
}

// setLoaded makes content, version ver, f's buffer. A loaded buffer is
// held for the mount as much as written bytes are: open files are what
// grows the daemon.
func (m *Mirror) setLoaded(f *File, content, ver string) (syscall.Errno, string) {
	if errno, why := m.grow(f, int64(len(content))); errno != 0 {
		return errno, why
	}
	if ver != f.Head {
		m.headChanging(f)
	}
	f.Buf, f.Loaded, f.Base, f.Head, f.Dirty, f.Stale = []byte(content), true, ver, ver, false, false
	f.Stored, f.StoredAt, f.Size = content, ver, int64(len(content))
	m.settle(f)
	return 0, ""
}

func (m *Mirror) openFile(e Open) Plan {
	f := m.files[e.File]
	if f == nil {
		// The kernel still had the file's name (a new file whose save
		// failed, gone at its release; one deleted elsewhere). ESTALE
		// makes it look the name up again and open what is there now,
		// or create it (O_CREAT), rather than fail.
		return Plan{Errno: syscall.ESTALE}
	}
	if p := m.load(f, true, "opened"); p != nil {
		return *p
	}
	var pl Plan
	switch {
	case e.Trunc:
		f.KernelSize, f.PagesSync = 0, true // an open without keeping the pages drops them
	case int64(len(f.Buf)) != f.KernelSize:
		// Another writer's save changed the size before the kernel
		// learnt it: read past the size it believes, and make it forget
		// that size.
		pl.DirectIO, f.PagesSync = true, false
		pl.Notify = []Notice{m.contentNotice(f)}
	case f.PagesSync:
		pl.KeepCache = true
	default:
		f.PagesSync = true
	}
	if f.State == StateMemory {
		// By path: the rename that ends an atomic save names its target
		// by path, whether or not the mirror still has a file there.
		m.opened.Note(e.Tid, f.Path, f.Base)
	}
	h := m.newHandle(f, e.Tid, e.Write, e.Append)
	if e.Trunc {
		f.Refused = 0
		if len(f.Buf) > 0 {
			f.Buf, f.Dirty, h.Truncated = f.Buf[:0], true, true
			m.modified(f)
		}
		m.settle(f)
	}
	pl.File, pl.Ino, pl.Handle = f.ID, f.Ino, h.ID
	return pl
}

func (m *Mirror) contentNotice(f *File) Notice { return Notice{File: f.ID, Path: f.Path} }

func (m *Mirror) modified(f *File) {
	now := m.o.Now()
	f.Mtime, f.Ctime = now, now
}

func (m *Mirror) getattr(id ID) Plan {
	f := m.files[id]
	if f == nil {
		return Plan{Errno: syscall.ENOENT}
	}
	return Plan{Attr: m.attr(f)}
}

// attr is what the kernel is told of f; the size it believes from now.
func (m *Mirror) attr(f *File) *Attr {
	size := f.Size
	if f.Loaded {
		size = int64(len(f.Buf))
	}
	f.KernelSize = size
	a := &Attr{Ino: f.Ino, Mode: f.Mode, Size: size, Nlink: 1, Atime: f.Atime, Mtime: f.Mtime, Ctime: f.Ctime}
	if f.State == StateUnlinked {
		a.Nlink = 0
	}
	return a
}

func (m *Mirror) read(e Read) Plan {
	f := m.files[e.File]
	if f == nil {
		return Plan{Errno: syscall.ENOENT}
	}
	if p := m.load(f, false, "read"); p != nil {
		return *p
	}
	if e.Off >= int64(len(f.Buf)) {
		return Plan{}
	}
	end := min(int64(len(f.Buf)), e.Off+int64(e.Size))
	if e.Dest != nil {
		return Plan{Data: e.Dest[:copy(e.Dest, f.Buf[e.Off:end])]}
	}
	return Plan{Data: append([]byte(nil), f.Buf[e.Off:end]...)}
}

// stored: f's content is checked for what a save would refuse.
func stored(f *File) bool { return f.State != StateScratch && f.State != StateHeld }

func (m *Mirror) maxBytes() int64 {
	_, maxBytes := m.limits()
	return int64(maxBytes)
}

func tooLarge(n int64) string {
	return fmt.Sprintf("a memory holds at most %d bytes in this store; write less or split it into several files", n)
}

func (m *Mirror) wrote(e Write) Plan {
	h := m.hs[e.Handle]
	if h == nil {
		return Plan{Errno: syscall.EBADF}
	}
	f := m.files[h.File]
	if p := m.load(f, false, "wrote"); p != nil {
		return *p
	}
	off := e.Off
	if h.Append {
		off = int64(len(f.Buf))
	}
	if len(e.Data) == 0 {
		return Plan{}
	}
	use := func() {
		h.Wrote = true
		if e.Tid != 0 {
			if h.Users == nil {
				h.Users = map[uint32]bool{}
			}
			h.Users[e.Tid] = true
		}
	}
	end := off + int64(len(e.Data))
	refuse := func(errno syscall.Errno, why string) Plan {
		f.Refused, f.Dirty = errno, true
		use()
		if why == "" {
			return Plan{Errno: errno} // refused in this burst already: not logged again
		}
		return Plan{Errno: errno, Reason: why + "; this save fails whole and the previous version stays the head"}
	}
	if end > m.maxBytes() {
		return refuse(syscall.EFBIG, tooLarge(m.maxBytes()))
	}
	if stored(f) {
		if !utf8Write(f.Buf, e.Data, off) {
			return refuse(syscall.EILSEQ, "the written bytes are not valid UTF-8: the write was refused, and this save fails whole (the previous version stays the head); write UTF-8 text")
		}
		if errno, why, found := checkWrite(m.refusals(f, e.Offline), f.Buf, e.Data, off, m.baseContent(f)); errno != 0 {
			if m.row.ID != "" {
				why = "memory store " + m.row.ID + ": " + why
			}
			p := refuse(errno, why)
			p.Finding = found
			return p
		}
	}
	if end > int64(len(f.Buf)) {
		if errno, why := m.grow(f, end); errno != 0 {
			// Saved without this write, the content would be a part of
			// what the writer meant: like any refused write, it fails the
			// save whole.
			return refuse(errno, why)
		}
		f.Buf = resize(f.Buf, end)
	}
	copy(f.Buf[off:], e.Data)
	f.KernelSize = max(f.KernelSize, end)
	f.Dirty, h.Truncated = true, false
	m.modified(f)
	use()
	return Plan{}
}

// resize truncates or zero-extends b.
func resize(b []byte, size int64) []byte {
	switch {
	case size <= int64(len(b)):
		return b[:size]
	case size <= int64(cap(b)):
		old := len(b)
		b = b[:size]
		clear(b[old:])
		return b
	}
	nb := make([]byte, size, max(size, 2*int64(cap(b))))
	copy(nb, b)
	return nb
}

// baseContent is what the store has of f, as far as the mirror holds it:
// the guard does not refuse at write() a line the store has already.
func (m *Mirror) baseContent(f *File) string {
	if f.State == StateMemory {
		return f.Stored
	}
	return ""
}

// utf8Write reports whether writing data at off into buf leaves the
// written range valid UTF-8. The runes it touches are checked from the
// start of the one it begins in. An incomplete sequence at the end of data
// passes, since the next write may complete it: a writer's chunks need not
// end on a rune. The check of the whole content at the save stays.
func utf8Write(buf, data []byte, off int64) bool {
	var w []byte
	if off <= int64(len(buf)) {
		lo := off
		for lo > 0 && off-lo < utf8.UTFMax && !utf8.RuneStart(buf[lo-1]) {
			lo--
		}
		if lo > 0 && off-lo < utf8.UTFMax {
			lo-- // the lead byte of the rune data may continue
		}
		// Two valid sequences make a valid one: most writes need no copy.
		if utf8.Valid(buf[lo:off]) && utf8.Valid(data) {
			return true
		}
		w = append(append(w, buf[lo:off]...), data...)
		if !utf8.RuneStart(w[0]) {
			for len(w) > len(data) && !utf8.RuneStart(w[0]) {
				w = w[1:]
			}
		}
	} else {
		w = data // after a hole of zero bytes
	}
	for len(w) > 0 {
		r, size := utf8.DecodeRune(w)
		if r == utf8.RuneError && size <= 1 {
			return !utf8.FullRune(w) && len(w) < utf8.UTFMax
		}
		w = w[size:]
	}
	return true
}

// flushed: a close(2) or fsync(2). A handle that only truncated saves
// nothing at close: the write that follows, or its release, decides. A
// close by a process that never used the handle (a forked child dropping
// its copy) saves nothing either.
func (m *Mirror) flushed(hid HandleID, tid uint32, cause string) Plan {
	h := m.hs[hid]
	if h == nil {
		return Plan{}
	}
	f := m.files[h.File]
	switch {
	case cause == "fsynced" && (f.Dirty || f.State == StateNew) && f.State != StateScratch:
	case h.Wrote && f.Dirty && m.user(h, tid):
	default:
		return Plan{}
	}
	refused := f.Refused
	p := m.save(f, h, cause)
	if (p.Errno == syscall.EFBIG || refused != 0 && p.Errno == refused) && cause == "flushed" && f.State == StateMemory {
		// Oversized content, or content a write refused, is refused for
		// good (every save of it fails): at the close that says so, the
		// next open reads the head again, and the kernel forgets its
		// pages, rather than at the handle's release, which the kernel
		// sends later. A reader in between (sed -i reading the file it
		// rewrites) would see it.
		f.Dirty, f.Refused, f.Stale, f.KernelSize, f.PagesSync = false, 0, true, -1, false
		p.Notify = append(p.Notify, m.contentNotice(f))
	}
	return p
}

// user reports whether a flush by thread tid comes from a process that
// opened the handle for writing or wrote through it. When that cannot be
// told it does: an extra version is better than a lost save.
func (m *Mirror) user(h *Handle, tid uint32) bool {
	if tid == 0 || len(h.Users) == 0 || h.Users[tid] {
		return true
	}
	for u := range h.Users {
		if same, known := SameProcess(tid, u); same || !known {
			return true
		}
	}
	return false
}

// refusedSave is the answer to a save of f's content after a write of
// it was refused.
func (m *Mirror) refusedSave(f *File) Plan {
	return Plan{Errno: f.Refused, Reason: refusedWhy(f.Refused, m.maxBytes())}
}

// refusedWhy says why a save of content refused at write fails.
func refusedWhy(e syscall.Errno, maxBytes int64) string {
	switch e {
	case syscall.EFBIG:
		return tooLarge(maxBytes) + "; a write or truncate of this content went past it, so nothing of this save was kept and the previous version stays the head"
	case syscall.EILSEQ:
		return "content is not valid UTF-8: nothing was saved, the previous version is intact; write UTF-8 text"
	}
	return "a write of this content was refused (see the write's error): nothing of this save was kept and the previous version stays the head; write the file again from its start"
}

// save asks the engine to store f's buffer as its state says.
func (m *Mirror) save(f *File, h *Handle, cause string) Plan {
	var hid HandleID
	if h != nil {
		hid = h.ID
	}
	switch f.State {
	case StateMemory, StateNew, StateTemporary:
		if f.Refused != 0 {
			return m.refusedSave(f)
		}
		if !utf8.Valid(f.Buf) {
			return Plan{Errno: syscall.EILSEQ, Reason: refusedWhy(syscall.EILSEQ, 0)}
		}
	}
	r := &Request{File: f.ID, Path: f.Path, Content: string(f.Buf), Cause: cause, Handle: hid}
	switch f.State {
	case StateMemory:
		r.Kind, r.MemID, r.Base, r.Strict = AskSave, f.MemID, f.Base, m.o.Strict
		if f.Loaded && f.StoredAt != "" && f.StoredAt == f.Base && f.Base == f.Head {
			stored := f.Stored
			r.Head, r.HeadContent = f.Head, &stored
		}
	case StateNew:
		if m.isTemp(f.Path) && m.o.Settle > 0 && (cause == "flushed" || cause == "released") {
			// An atomic saver renames it next: that rename saves it.
			f.Due, f.Saved = true, string(f.Buf)
			if h != nil {
				h.Wrote, h.Truncated = false, false
			}
			return Plan{Timers: []Timer{{Event: Settled{f.ID}, After: m.o.Settle}}}
		}
		if m.isTemp(f.Path) {
			r.Kind = AskSavePending
			break
		}
		r.Kind = AskSave
		if hd, ok := m.held[f.Path]; ok {
			// A new file where a memory was renamed to a backup name (an
			// editor's save): a version of that memory, based on what the
			// writer read of it.
			r.MemID, r.Base, r.Strict = hd.memID, m.readBy(h, f.Path, hd.head), m.o.Strict
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

// readBy is the version of path that h's writers last opened, else def.
func (m *Mirror) readBy(h *Handle, path, def string) string {
	if h != nil {
		for tid := range h.Users {
			if v, ok := m.opened.Version(int(tid), path); ok {
				return v
			}
		}
	}
	return def
}

func (m *Mirror) released(e Release) Plan {
	h := m.hs[e.Handle]
	if h == nil {
		return Plan{}
	}
	f := m.files[h.File]
	if f.State == StateNew && len(f.handles) == 1 && (!f.Due || h.Wrote) || h.Truncated && f.Dirty && !othersWrote(f, h) {
		// touch, open(…, "w").close(), `: > f`: saved once, now, also
		// while a reader (tail -f, less) holds the file open. A reader's
		// release of a closed temporary file (due) saves nothing: its
		// Settle timer runs on.
		p := m.save(f, h, "released")
		if p.Ask != nil {
			return p
		}
		c := m.close(f, h)
		c.Timers = append(c.Timers, p.Timers...)
		return c
	}
	return m.close(f, h)
}

// othersWrote reports whether a handle of f other than h wrote to its
// buffer: that handle's own close saves it.
func othersWrote(f *File, h *Handle) bool {
	for _, o := range f.handles {
		if o != h && o.Wrote {
			return true
		}
	}
	return false
}

// settled writes the pending row of a closed temporary file its rename
// did not save in time. One being written again waits for its writer's
// close, which sets the timer again (save, or close when that failed).
func (m *Mirror) settled(e Settled) Plan {
	f := m.files[e.File]
	if f == nil || f.State != StateNew || !f.Due || m.rewriting(f) {
		return Plan{}
	}
	return m.writeDue(f)
}

// rewriting reports whether a closed temporary file (due) holds more than
// its close confirmed (Saved): a handle's writes not closed yet, a write
// refused since, or content a save refuses.
func (m *Mirror) rewriting(f *File) bool {
	if f.Refused != 0 || !utf8.Valid(f.Buf) {
		return true
	}
	for _, h := range f.handles {
		if h.Wrote || h.Truncated {
			return true
		}
	}
	return false
}

// restoreDue takes a closed temporary file whose buffer a refused write
// left holding a part of the writer's new content back to what its close
// confirmed, as a Temporary file goes back to its row's; the kernel's
// pages of it go.
func (m *Mirror) restoreDue(f *File) Notice {
	f.Buf, f.Refused, f.KernelSize, f.PagesSync = []byte(f.Saved), 0, -1, false
	m.settle(f)
	return m.contentNotice(f)
}

// close drops handle h; with the last one the buffer goes, unless only
// this mount has the content.
func (m *Mirror) close(f *File, h *Handle) Plan {
	delete(f.handles, h.ID)
	delete(m.hs, h.ID)
	var p Plan
	if f.Due && (h.Wrote || h.Truncated) {
		// Writes after its last flush (a mapping's), which Settle's end
		// waited for: it waits no more.
		p.Timers = []Timer{{Event: Settled{f.ID}, After: m.o.Settle}}
	}
	if len(f.handles) > 0 {
		return p
	}
	f.handles = nil // a file closed for good holds no map: the mount knows thousands
	if f.Due && m.rewriting(f) {
		// A closed temporary file opened again and written what a save
		// refuses (no handle is left to write): its close failed, and it
		// holds again what its first close confirmed.
		p.Notify = append(p.Notify, m.restoreDue(f))
		p.Timers = []Timer{{Event: Settled{f.ID}, After: m.o.Settle}}
	}
	if f.Dirty && !f.Due && f.State != StateUnlinked && f.State != StateScratch && f.State != StateHeld {
		// Its save failed: the content is discarded, and the kernel's
		// pages and size that hold it are dropped.
		p.Discarded = true
		f.KernelSize, f.PagesSync = -1, false
		p.Notify = append(p.Notify, m.contentNotice(f))
		if f.State == StateTemporary {
			f.Buf, f.Dirty, f.Refused = []byte(f.Saved), false, 0
		}
	}
	switch f.State {
	case StateUnlinked:
		m.move(f, gone, "released")
	case StateNew:
		if f.Due {
			m.settle(f) // its rename, or Settle's end, saves it
			break
		}
		// Its save failed: a file never saved disappears.
		m.move(f, gone, "released")
		p.Notify = append(p.Notify, Notice{Path: f.Path})
	case StateMemory:
		if !f.Dirty {
			f.Size = int64(len(f.Buf))
		}
		m.unload(f)
		f.Refused = 0
		if h.Write && !p.Discarded && f.PagesSync {
			// The next open of the unchanged file reads nothing from the
			// daemon: the kernel is given the head as its pages (a write
			// of less than a page left them incomplete).
			p.Notify = append(p.Notify, Notice{File: f.ID, Path: f.Path, Pages: true})
		}
	default:
		m.settle(f)
	}
	return p
}

// storePages gives the head's content for the kernel's page cache if it
// is still f's content, no handle is open and the pages hold nothing else.
func (m *Mirror) storePages(e StorePages) Plan {
	f := m.files[e.File]
	if f == nil || f.State != StateMemory || len(f.handles) > 0 || f.Loaded || !f.PagesSync {
		return Plan{}
	}
	c, ok := m.o.Contents.Get(f.MemID, f.Head)
	if !ok || c == "" || int64(len(c)) != f.KernelSize {
		return Plan{}
	}
	return Plan{Data: []byte(c)}
}

func (m *Mirror) setattr(e Setattr) Plan {
	f := m.files[e.File]
	if f == nil {
		return Plan{Errno: syscall.ENOENT}
	}
	now := m.o.Now()
	if e.Mode != nil {
		f.Mode, f.Ctime = *e.Mode&fileModeBits, now
	}
	if e.Atime != nil {
		f.Atime, f.Ctime = *e.Atime, now
	}
	if e.Mtime != nil {
		f.Mtime, f.Ctime = *e.Mtime, now
	}
	if f.State == StateNew && f.Loaded {
		f.Dirty = true // touch: the creating handle's close saves the file
	}
	if e.Size != nil {
		p := m.truncated(e.File, e.Handle, *e.Size)
		if p.Ask != nil || p.Errno != 0 {
			return p
		}
	}
	return Plan{Attr: m.attr(f)}
}

// truncated sets the content's size. Past the size of a memory it fails
// with EFBIG and changes nothing; through a handle, that handle's save
// then fails too, as after an oversized write. Without a handle
// (truncate(2) on a path) it is saved at once.
func (m *Mirror) truncated(id ID, hid HandleID, size int64) Plan {
	f := m.files[id]
	if f == nil {
		return Plan{Errno: syscall.ENOENT}
	}
	h := m.hs[hid]
	if size > m.maxBytes() {
		if h != nil && f.Loaded {
			f.Refused, f.Dirty, h.Wrote = syscall.EFBIG, true, true
		}
		return Plan{Errno: syscall.EFBIG, Reason: tooLarge(m.maxBytes()) + "; nothing was changed, the previous version stays the head"}
	}
	temporary := !f.Loaded
	if p := m.load(f, false, "truncated"); p != nil {
		return *p
	}
	if size == 0 {
		f.Refused = 0
	}
	if size > int64(len(f.Buf)) {
		if errno, why := m.grow(f, size); errno != 0 {
			if temporary {
				m.unload(f)
			} else if h != nil {
				f.Refused, f.Dirty, h.Wrote = errno, true, true // as a refused write
			}
			return Plan{Errno: errno, Reason: why}
		}
	}
	if int64(len(f.Buf)) != size {
		f.Buf, f.Dirty = resize(f.Buf, size), true
		m.modified(f)
	}
	m.settle(f)
	if h != nil {
		if size == 0 && f.Dirty && !h.Wrote {
			h.Truncated = true // as an O_TRUNC: the write that follows decides
		} else if f.Dirty {
			h.Wrote, h.Truncated = true, false
		}
		return Plan{}
	}
	if !f.Dirty && f.State != StateNew {
		if temporary {
			m.unload(f)
		}
		return Plan{}
	}
	p := m.save(f, nil, "truncated")
	if p.Errno != 0 && f.Due {
		// truncate(2) of a closed temporary file to content a save
		// refuses (a character cut in two): it fails, and the file holds
		// again what its close confirmed.
		p.Notify = append(p.Notify, m.restoreDue(f))
	}
	if p.Ask == nil && temporary && f.State == StateMemory {
		m.unload(f)
	}
	return p
}
