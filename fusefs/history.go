package fusefs

import (
	"context"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/memfs/memfs/versions"
)

// The history tree: /.history/<slug>/ in the mount root, read-only, beside
// the stores and never inside one, so that a tool working in a store's
// directory (grep -r, the memory tool) never meets it. For every path a
// memory of the store was ever saved at it holds a directory, and in it one
// file per version saved at that path (versions.DB.PathHistory, the meaning
// memfs log PATH has), named so that ls lists them oldest first:
//
//	20261201T142849.111204017Z-modified-memver_01M8…
//
// A file reads as its version's content (a deletion or a redacted version
// reads empty), its times are the version's, and its xattrs say what the
// version was. Directories of the store are directories here too: a path
// that was a file and later a directory holds both its versions and the
// names below it. Nothing of it is kept but the nodes the kernel holds:
// listings and reads are paged from the engine's index. The watcher tells
// it what changed (changed), own saves included.

// historyName is the tree's name in the mount root.
const historyName = ".history"

// historyPage is how many versions (or names) one query of a listing reads.
const historyPage = 500

// historyRoot is /.history: one directory per attached store.
type historyRoot struct {
	readOnlyDir
	srv  *Server
	st   *historyState
	asof asofCache // stores as of a moment: <slug>@<when> (history_asof.go)
}

// historyDir is the directory of one path of a store's history ("/" is the
// store's own).
type historyDir struct {
	readOnlyDir
	sm   *storeMount
	st   *historyState
	path string
	// looked: the kernel looked the store's directory up, so it may hold
	// names of the store's history (the store's directory only).
	looked atomic.Bool
}

// historyEntry is one version in a path's directory. What it shows of the
// version is read again once the watcher marks it stale (a redaction).
type historyEntry struct {
	readOnlyFile
	sm   *storeMount
	st   *historyState
	path string
	id   string
	v    atomic.Pointer[entryVersion] // nil: read it again
}

// entryVersion is what an entry shows of its version: the version without
// its content, and whether the content is withheld
// (versions.WithheldFromHistory).
type entryVersion struct {
	v        *versions.Version
	withheld bool
}

func (s *Server) newHistoryRoot() *historyRoot { return &historyRoot{srv: s, st: newHistoryState()} }

func (h *historyRoot) OnAdd(ctx context.Context) {
	for _, sm := range h.srv.stores {
		d := &historyDir{sm: sm, st: h.st, path: "/"}
		sm.history = d
		h.AddChild(sm.slug, h.NewPersistentInode(ctx, d, fs.StableAttr{Mode: syscall.S_IFDIR, Ino: historyDirIno(sm.id, "/")}), false)
	}
}

func (h *historyRoot) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	h.srv.historyDirAttr(h.StableAttr().Ino, uint32(2+len(h.srv.stores)), &out.Attr)
	out.SetTimeout(cacheTimeout)
	return 0
}

func (h *historyRoot) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if strings.Contains(name, "@") { // never in a slug
		return h.lookupAsOf(ctx, name, out)
	}
	ch := h.GetChild(name)
	if ch == nil {
		return nil, syscall.ENOENT
	}
	d := ch.Operations().(*historyDir)
	if d.sm.m.Gone() {
		return nil, d.sm.refuseGone("lookup", historyName+"/"+name)
	}
	if !d.looked.Swap(true) {
		// The watcher let this mount's own saves pass unread: from now
		// on the tree must hear of them (historyDir.changed).
		h.srv.db.WakeFollowers()
	}
	h.srv.historyDirAttr(ch.StableAttr().Ino, 2, &out.Attr)
	out.SetAttrTimeout(cacheTimeout)
	out.SetEntryTimeout(cacheTimeout)
	return ch, 0
}

func (h *historyRoot) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	list := append([]fuse.DirEntry{}, dotEntries(&h.Inode)...)
	for _, sm := range h.srv.stores {
		list = append(list, fuse.DirEntry{Name: sm.slug, Mode: syscall.S_IFDIR, Ino: historyDirIno(sm.id, "/")})
	}
	list = append(list, h.asofEntries(ctx)...)
	return fs.NewListDirStream(list), 0
}

// historyDirAttr fills the attributes of a directory of the tree: read-only,
// with the mount's start as its times.
func (s *Server) historyDirAttr(ino uint64, nlink uint32, a *fuse.Attr) {
	a.Ino = ino
	a.Mode = syscall.S_IFDIR | 0o555
	a.Nlink = nlink
	a.Size = 4096
	a.Uid, a.Gid = s.opts.UID, s.opts.GID
	a.SetTimes(&s.started, &s.started, &s.started)
}

func (d *historyDir) show() string { return historyName + "/" + d.sm.slug + d.path }

func (d *historyDir) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if d.sm.m.Gone() {
		return d.sm.refuseGone("stat", d.show())
	}
	d.sm.srv.historyDirAttr(d.StableAttr().Ino, 2, &out.Attr)
	out.SetTimeout(cacheTimeout)
	return 0
}

func (d *historyDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	sm := d.sm
	if sm.m.Gone() {
		return nil, sm.refuseGone("lookup", d.show())
	}
	if id, ok := entryVersionID(name); ok {
		v, err := sm.srv.db.HistoryVersion(detach(ctx), sm.id, d.path, id)
		if err == nil && historyEntryName(v) != name {
			err = &versions.Error{Code: versions.CodeNotFound, Message: "no such entry"}
		}
		switch {
		case err == nil:
			e := &historyEntry{sm: sm, st: d.st, path: d.path, id: id}
			ev := e.keep(v)
			e.fillAttr(ev, &out.Attr)
			out.SetAttrTimeout(cacheTimeout)
			out.SetEntryTimeout(cacheTimeout)
			return d.NewInode(ctx, e, fs.StableAttr{Mode: syscall.S_IFREG, Ino: historyEntryIno(id)}), 0
		case versions.ErrorCode(err) != versions.CodeNotFound:
			return nil, sm.errnoOf("lookup", d.show()+"/"+name, err)
		}
		// Not a version here: a path may be named so.
	}
	p := childPath(d.path, name)
	in := false
	err := versions.ValidatePath(p)
	if err == nil {
		in, err = sm.srv.db.InHistory(detach(ctx), sm.id, p)
	}
	if err != nil && versions.ErrorCode(err) != versions.CodeInvalid {
		return nil, sm.errnoOf("lookup", d.show()+"/"+name, err)
	}
	if !in {
		return nil, syscall.ENOENT
	}
	ino := historyDirIno(sm.id, p)
	sm.srv.historyDirAttr(ino, 2, &out.Attr)
	out.SetAttrTimeout(cacheTimeout)
	out.SetEntryTimeout(cacheTimeout)
	return d.NewInode(ctx, &historyDir{sm: sm, st: d.st, path: p}, fs.StableAttr{Mode: syscall.S_IFDIR, Ino: ino}), 0
}

// OpendirHandle lists at each opendir: the kernel keeps no listing of the
// tree, so a version saved anywhere shows at the next ls. An open
// directory counts toward the mount's open history handles.
func (d *historyDir) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if !d.st.acquire() {
		return nil, 0, d.sm.srv.tooManyHistoryHandles("opendir", d.show())
	}
	return &historyDirHandle{dirHandle: dirHandle{list: d.Readdir}, st: d.st}, 0, 0
}

// historyDirHandle is an open directory of the tree.
type historyDirHandle struct {
	dirHandle
	st       *historyState
	released atomic.Bool
}

func (h *historyDirHandle) Releasedir(ctx context.Context, flags uint32) {
	h.dirHandle.Releasedir(ctx, flags)
	if !h.released.Swap(true) {
		h.st.release()
	}
}

func (d *historyDir) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	sm := d.sm
	if sm.m.Gone() {
		return nil, sm.refuseGone("readdir", d.show())
	}
	st := &historyStream{d: d, ctx: detach(ctx), names: true}
	st.head = append(st.head, dotEntries(&d.Inode)...)
	return st, 0
}

// historyStream lists a directory of the tree: its subdirectories, then
// its path's versions oldest first, each a page at a time from one ordered
// scan, so that a listing holds one page of a long history or of a wide
// directory at once.
type historyStream struct {
	d     *historyDir
	ctx   context.Context
	head  []fuse.DirEntry // ".", ".."
	page  []fuse.DirEntry
	names bool   // names of subdirectories are left to read
	after string // the engine's cursor of the next page of names
	next  string // the engine's cursor of the page after page
	more  bool   // versions are left to read
	off   uint64
	err   syscall.Errno
}

func (st *historyStream) HasNext() bool {
	if len(st.head) > 0 || len(st.page) > 0 || st.err != 0 {
		return true
	}
	sm := st.d.sm
	for st.names && len(st.page) == 0 {
		p, err := sm.srv.db.HistoryNames(st.ctx, sm.id, st.d.path, st.after, historyPage)
		if err != nil {
			st.err = sm.errnoOf("readdir", st.d.show(), err)
			return true
		}
		if st.after == "" {
			st.more = p.HasFiles
		}
		for _, name := range p.Names {
			st.page = append(st.page, fuse.DirEntry{Name: name, Mode: syscall.S_IFDIR, Ino: historyDirIno(sm.id, childPath(st.d.path, name))})
		}
		st.names, st.after = p.Next != "", p.Next
	}
	if len(st.page) > 0 {
		return true
	}
	if !st.more {
		return false
	}
	p, err := sm.srv.db.PathHistory(st.ctx, sm.id, st.d.path, versions.PathHistoryOptions{OldestFirst: true, Limit: historyPage, Page: st.next})
	if err != nil {
		st.err = sm.errnoOf("readdir", st.d.show(), err)
		return true
	}
	for i := range p.Data {
		v := &p.Data[i]
		st.page = append(st.page, fuse.DirEntry{Name: historyEntryName(v), Mode: syscall.S_IFREG, Ino: historyEntryIno(v.ID)})
	}
	st.more = p.NextPage != nil
	if st.more {
		st.next = *p.NextPage
	}
	return len(st.page) > 0
}

func (st *historyStream) Next() (fuse.DirEntry, syscall.Errno) {
	if st.err != 0 {
		e := st.err
		st.err, st.more, st.names = 0, false, false
		return fuse.DirEntry{}, e
	}
	var de fuse.DirEntry
	if len(st.head) > 0 {
		de, st.head = st.head[0], st.head[1:]
	} else {
		de, st.page = st.page[0], st.page[1:]
	}
	st.off++
	de.Off = st.off
	return de, 0
}

func (st *historyStream) Close() {}

// Seekdir starts the listing again (rewinddir, or a reader going back):
// what it skips is read again from the engine.
func (st *historyStream) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	fresh, e := st.d.Readdir(ctx)
	if e != 0 {
		return e
	}
	*st = *fresh.(*historyStream)
	for st.off < off && st.HasNext() {
		if _, e := st.Next(); e != 0 {
			return e
		}
	}
	return 0
}

// historyEntryName is a version's name in its path's directory: its time
// (UTC, to the nanosecond: a rename and a delete a tool makes at once are
// a fraction of a millisecond apart), operation and id, which sort oldest
// first as the engine's clock does.
func historyEntryName(v *versions.Version) string {
	return v.CreatedAt.UTC().Format("20060102T150405.000000000Z") + "-" + string(v.Operation) + "-" + v.ID
}

// entryVersionID is the version id at the end of an entry's name.
func entryVersionID(name string) (string, bool) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || !strings.HasPrefix(name[i+1:], "memver_") {
		return "", false
	}
	return name[i+1:], true
}

func (e *historyEntry) show() string {
	return historyName + "/" + e.sm.slug + e.path + "/" + e.id
}

// version is what the entry shows: the version as last read, or read again.
func (e *historyEntry) version(ctx context.Context) (*entryVersion, syscall.Errno) {
	if ev := e.v.Load(); ev != nil {
		return ev, 0
	}
	ev, _, errno := e.load(ctx, "stat")
	return ev, errno
}

// load reads the version from the engine: what the entry shows of it, and
// its content as the tree's shared copy.
func (e *historyEntry) load(ctx context.Context, op string) (*entryVersion, *historyContent, syscall.Errno) {
	if e.sm.m.Gone() {
		return nil, nil, e.sm.refuseGone(op, e.show())
	}
	v, err := e.sm.srv.db.HistoryVersion(detach(ctx), e.sm.id, e.path, e.id)
	if err != nil {
		return nil, nil, e.sm.errnoOf(op, e.show(), err)
	}
	withheld := versions.WithheldFromHistory(e.sm.m.Guard(), v)
	c := &historyContent{}
	if v.Content != nil && v.RedactedAt == nil && !withheld {
		c.data = []byte(*v.Content)
	}
	ev := e.keepWithheld(v, withheld)
	return ev, e.st.put(e.id, c), 0
}

// keep records what the entry shows of v, a version read with its
// content, and drops the content.
func (e *historyEntry) keep(v *versions.Version) *entryVersion {
	return e.keepWithheld(v, versions.WithheldFromHistory(e.sm.m.Guard(), v))
}

func (e *historyEntry) keepWithheld(v *versions.Version, withheld bool) *entryVersion {
	v.Content = nil
	ev := &entryVersion{v: v, withheld: withheld}
	e.v.Store(ev)
	return ev
}

// stale makes the entry read its version again: it may have been redacted.
func (e *historyEntry) stale() {
	e.v.Store(nil)
	e.st.drop(e.id)
}

func (e *historyEntry) fillAttr(ev *entryVersion, a *fuse.Attr) {
	s := e.sm.srv
	v := ev.v
	a.Ino = historyEntryIno(e.id)
	a.Mode = syscall.S_IFREG | 0o444
	a.Nlink = 1
	a.Size = 0
	if v.ContentSize != nil && v.RedactedAt == nil && !ev.withheld {
		a.Size = uint64(*v.ContentSize)
	}
	a.Blocks = (a.Size + 511) / 512
	a.Uid, a.Gid = s.opts.UID, s.opts.GID
	t := v.CreatedAt
	a.SetTimes(&t, &t, &t)
}

func (e *historyEntry) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	ev, errno := e.version(ctx)
	if errno != 0 {
		return errno
	}
	e.fillAttr(ev, &out.Attr)
	out.SetTimeout(cacheTimeout)
	return 0
}

// historyHandle is an open entry. It holds no content: reads take the
// version's content from the tree's shared copy (historyState), so that a
// thousand handles on one version cost one copy.
type historyHandle struct {
	st       *historyState
	released atomic.Bool
}

func (h *historyHandle) Release(ctx context.Context) syscall.Errno {
	if !h.released.Swap(true) {
		h.st.release()
	}
	return 0
}

func (e *historyEntry) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if errno := e.refuseWriting(flags); errno != 0 {
		return nil, 0, errno
	}
	if !e.st.acquire() {
		return nil, 0, e.sm.srv.tooManyHistoryHandles("open", e.show())
	}
	if _, errno := e.content(ctx, "open"); errno != 0 {
		e.st.release()
		return nil, 0, errno
	}
	// A version's content never changes; a redaction drops the pages
	// (changed).
	return &historyHandle{st: e.st}, fuse.FOPEN_KEEP_CACHE | fuse.FOPEN_NOFLUSH, 0
}

// content is the version's content as the tree's shared copy: the one
// held, else read again.
func (e *historyEntry) content(ctx context.Context, op string) (*historyContent, syscall.Errno) {
	if c := e.st.get(e.id); c != nil && e.v.Load() != nil {
		return c, 0
	}
	_, c, errno := e.load(ctx, op)
	return c, errno
}

func (e *historyEntry) Read(ctx context.Context, f fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if _, ok := f.(*historyHandle); !ok {
		return nil, syscall.EBADF
	}
	c, errno := e.content(ctx, "read")
	if errno != 0 {
		return nil, errno
	}
	if off >= int64(len(c.data)) {
		return fuse.ReadResultData(nil), 0
	}
	return fuse.ReadResultData(c.data[off:min(int64(len(c.data)), off+int64(len(dest)))]), 0
}

// The xattrs of an entry: those of a live file, and what the version did.
const (
	xattrOperation = "user.memfs.operation"
	xattrTime      = "user.memfs.time"
	xattrPath      = "user.memfs.path"
	// xattrEmpty says why an entry reads empty: a deletion, or redacted.
	xattrEmpty = "user.memfs.empty"
)

// entryXattrs are the entry's attributes, in listing order.
func entryXattrs(ev *entryVersion, path string) [][2]string {
	v := ev.v
	out := [][2]string{{xattrID, v.MemoryID}, {xattrVersion, v.ID}}
	if v.ContentSHA256 != nil {
		out = append(out, [2]string{xattrSHA256, *v.ContentSHA256})
	}
	if v.CreatedBy != nil {
		out = append(out, [2]string{xattrWriter, v.CreatedBy.Type + ":" + v.CreatedBy.ID})
	}
	out = append(out, [2]string{xattrOperation, string(v.Operation)}, [2]string{xattrTime, v.CreatedAt.UTC().Format(time.RFC3339Nano)},
		[2]string{xattrPath, path})
	switch {
	case ev.withheld:
		out = append(out, [2]string{xattrEmpty, versions.WithheldReason})
	case v.RedactedAt != nil:
		why := "redacted at " + v.RedactedAt.UTC().Format(time.RFC3339Nano)
		if v.RedactedBy != nil {
			why += " by " + v.RedactedBy.Type + ":" + v.RedactedBy.ID
		}
		out = append(out, [2]string{xattrEmpty, why})
	case v.Operation == versions.OpDeleted:
		out = append(out, [2]string{xattrEmpty, "deleted: this version records the memory's deletion; the one before it holds its last content"})
	}
	return out
}

func (e *historyEntry) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	ev, errno := e.version(ctx)
	if errno != 0 {
		return 0, errno
	}
	for _, kv := range entryXattrs(ev, e.path) {
		if kv[0] == attr {
			return xattrReply([]byte(kv[1]), dest)
		}
	}
	return 0, syscall.ENODATA
}

func (e *historyEntry) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	ev, errno := e.version(ctx)
	if errno != 0 {
		return 0, errno
	}
	var b []byte
	for _, kv := range entryXattrs(ev, e.path) {
		b = append(append(b, kv[0]...), 0)
	}
	return xattrReply(b, dest)
}

// The tree's nodes are shown under /.history; every change in them fails
// with EROFS (readOnlyDir, readOnlyFile), in a read_write store's history
// too.

func (h *historyRoot) readOnlyPlace() (*Server, string, string) {
	return h.srv, historyName, whyHistoryReadOnly
}

func (d *historyDir) readOnlyPlace() (*Server, string, string) {
	return d.sm.srv, d.show(), whyHistoryReadOnly
}

func (e *historyEntry) readOnlyPlace() (*Server, string, string) {
	return e.sm.srv, e.show(), whyHistoryReadOnly
}

// changed makes the kernel forget what it holds of the history of the
// paths a batch of the feed changed: names it found absent along each path
// (a new path, a new version's directory) and what the entries of each
// path show (a redaction). A change of the whole store drops every node of
// its history. Called by the watcher, holding nothing.
func (d *historyDir) changed(paths []string, whole bool) {
	if !d.looked.Load() {
		return // nothing of the tree was ever shown
	}
	if whole {
		d.dropAll()
		return
	}
	done := map[string]bool{}
	for _, p := range paths {
		if done[p] {
			continue
		}
		done[p] = true
		node := d
		for _, seg := range pathSegments(p) {
			ch := node.GetChild(seg)
			if ch == nil {
				// The kernel may hold the name as absent.
				node.NotifyEntry(seg)
				node = nil
				break
			}
			next, ok := ch.Operations().(*historyDir)
			if !ok {
				node = nil
				break
			}
			node = next
		}
		if node == nil {
			continue
		}
		for _, ch := range node.Children() {
			if e, ok := ch.Operations().(*historyEntry); ok {
				e.stale()
				ch.NotifyContent(0, 0)
			}
		}
	}
}

// dropAll makes the kernel forget every node of the store's history: the
// store was deleted or imported again.
func (d *historyDir) dropAll() {
	type known struct {
		parent *fs.Inode
		name   string
		in     *fs.Inode
	}
	todo := []known{{in: &d.Inode}}
	for i := 0; i < len(todo); i++ {
		for name, ch := range todo[i].in.Children() {
			todo = append(todo, known{todo[i].in, name, ch})
		}
	}
	for i := len(todo) - 1; i >= 0; i-- {
		k := todo[i]
		if e, ok := k.in.Operations().(*historyEntry); ok {
			e.stale()
		}
		k.in.NotifyContent(0, 0)
		if k.parent != nil {
			k.parent.NotifyEntry(k.name)
		}
	}
	// With the store's name go the names the kernel holds as absent
	// below it.
	if name, parent := d.Parent(); parent != nil {
		parent.NotifyEntry(name)
	}
}
