package fusefs

import (
	"context"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/memfs/memfs/internal/mirror"
	"github.com/memfs/memfs/versions"
)

// A store as of a moment, as files: /.history/<slug>@<when>/ is the whole
// store as it was then (versions.DB.StoreAsOf: a session id, a
// checkpoint's name, a date or an RFC 3339 time), read-only, with the
// names, content, times and xattrs its live tree had. ls /.history lists
// <slug>@<checkpoint> for every checkpoint of every store; any other
// <slug>@<when> resolves when looked up.
//
// A view is one listing of the store (its memories then, without
// content), read when the name is first looked up and kept: what a store
// held at a past position does not change, but for redactions, which
// every read honours (a file's content is read at open, and a redacted
// version reads empty). Views are kept in a small cache by name
// (asofCache), so the kernel looking a name up again does not list the
// store again; a time past the store's latest version is kept only
// briefly, since a save may still land before it.

// asofCacheSize bounds the views kept; asofFreshFor is how long a view
// whose moment is still open (no version after it yet) is kept.
const (
	asofCacheSize = 16
	asofFreshFor  = time.Second
)

// asofCache keeps the views looked up last. Lock order: mu is a leaf.
type asofCache struct {
	mu    sync.Mutex
	views map[string]*asofView // by <slug>@<when>
	order []string             // oldest first
}

func (c *asofCache) get(name string) *asofView {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := c.views[name]
	if v != nil && v.open && time.Since(v.read) > asofFreshFor {
		return nil
	}
	return v
}

func (c *asofCache) put(name string, v *asofView) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.views == nil {
		c.views = map[string]*asofView{}
	}
	if _, ok := c.views[name]; !ok {
		c.order = append(c.order, name)
	}
	c.views[name] = v
	for len(c.order) > asofCacheSize {
		delete(c.views, c.order[0])
		c.order = c.order[1:]
	}
}

// asofView is one store as of one moment.
type asofView struct {
	sm   *storeMount
	st   *historyState // the history tree's handles and shared copies
	name string        // <slug>@<when>
	asOf *versions.AsOf
	key  string // store and position: what numbers the view's nodes
	// files by path; dirs: each directory's entries, sorted.
	files map[string]*versions.SnapshotFile
	dirs  map[string][]fuse.DirEntry
	read  time.Time
	open  bool // the moment is after the store's latest version
}

// asofKey names a store at a position, for inode numbers.
func asofKey(storeID string, pos int64) string { return storeID + "@" + strconv.FormatInt(pos, 10) }

// asofFileIno is the number of a file of a view: a version has another
// number in each view and in the per-path tree (historyEntryIno), since
// go-fuse takes one number for one node.
func asofFileIno(key, versionID string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write([]byte(versionID))
	return mirror.LocalInoBit | mirror.LowMemoryInoBit | h.Sum64()&(mirror.LowMemoryInoBit-1)
}

// loadAsOf reads the view name (<slug>@<when>) names, or returns ENOENT.
func (h *historyRoot) loadAsOf(ctx context.Context, name string) (*asofView, syscall.Errno) {
	if v := h.asof.get(name); v != nil {
		return v, 0
	}
	slug, when, ok := strings.Cut(name, "@")
	if !ok {
		return nil, syscall.ENOENT
	}
	var sm *storeMount
	for _, s := range h.srv.stores {
		if s.slug == slug {
			sm = s
		}
	}
	if sm == nil {
		return nil, syscall.ENOENT
	}
	if sm.m.Gone() {
		return nil, sm.refuseGone("lookup", historyName+"/"+name)
	}
	a, files, err := h.srv.db.StoreAsOf(detach(ctx), sm.id, when, versions.SnapshotOptions{})
	if err != nil {
		switch versions.ErrorCode(err) {
		case versions.CodeNotFound, versions.CodeInvalid:
			return nil, syscall.ENOENT // not a moment of this store
		}
		return nil, sm.errnoOf("lookup", historyName+"/"+name, err)
	}
	v := &asofView{sm: sm, st: h.st, name: name, asOf: a, key: asofKey(sm.id, a.Pos), files: map[string]*versions.SnapshotFile{},
		dirs: map[string][]fuse.DirEntry{"/": nil}, read: time.Now()}
	if head, err := h.srv.db.ResolveAsOf(detach(ctx), sm.id, time.Now().UTC().Format(time.RFC3339Nano)); err == nil {
		v.open = head.Pos == a.Pos
	}
	seen := map[string]bool{}
	for i := range files {
		f := &files[i]
		v.files[f.Memory.Path] = f
		dir, base := "/", ""
		segs := pathSegments(f.Memory.Path)
		for j, seg := range segs {
			p := childPath(dir, seg)
			if j == len(segs)-1 {
				base = seg
				break
			}
			if !seen[p] {
				seen[p] = true
				v.dirs[dir] = append(v.dirs[dir], fuse.DirEntry{Name: seg, Mode: syscall.S_IFDIR, Ino: historyDirIno(v.key, p)})
				v.dirs[p] = nil
			}
			dir = p
		}
		v.dirs[dir] = append(v.dirs[dir], fuse.DirEntry{Name: base, Mode: syscall.S_IFREG, Ino: asofFileIno(v.key, f.Memory.VersionID)})
	}
	for _, ents := range v.dirs {
		sort.Slice(ents, func(i, j int) bool { return ents[i].Name < ents[j].Name })
	}
	h.asof.put(name, v)
	return v, 0
}

// lookupAsOf looks up <slug>@<when> in /.history.
func (h *historyRoot) lookupAsOf(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	v, errno := h.loadAsOf(ctx, name)
	if errno != 0 {
		return nil, errno
	}
	d := &asofDir{asofNode: asofNode{v: v, path: "/"}}
	ino := historyDirIno(v.key, "/")
	h.srv.historyDirAttr(ino, 2, &out.Attr)
	out.SetAttrTimeout(cacheTimeout)
	out.SetEntryTimeout(asofFreshFor)
	return h.NewInode(ctx, d, fs.StableAttr{Mode: syscall.S_IFDIR, Ino: ino}), 0
}

// asofEntries are the /.history entries of every checkpoint of every
// store: <slug>@<name>.
func (h *historyRoot) asofEntries(ctx context.Context) []fuse.DirEntry {
	var out []fuse.DirEntry
	for _, sm := range h.srv.stores {
		if sm.m.Gone() {
			continue
		}
		cps, err := h.srv.db.ListCheckpoints(detach(ctx), sm.id)
		if err != nil {
			sm.errnoOf("readdir", historyName, err)
			continue
		}
		for _, c := range cps {
			out = append(out, fuse.DirEntry{Name: sm.slug + "@" + c.Name, Mode: syscall.S_IFDIR, Ino: historyDirIno(asofKey(sm.id, c.Pos), "/")})
		}
	}
	return out
}

// asofNode is what the nodes of a view share: the view and the path.
type asofNode struct {
	v    *asofView
	path string
}

func (n *asofNode) show() string {
	if n.path == "/" {
		return historyName + "/" + n.v.name
	}
	return historyName + "/" + n.v.name + n.path
}

// readOnlyPlace: a view is read-only as the history is (readOnlyDir,
// readOnlyFile).
func (n *asofNode) readOnlyPlace() (*Server, string, string) {
	return n.v.sm.srv, n.show(), whyHistoryReadOnly
}

// asofDir is a directory of a view.
type asofDir struct {
	readOnlyDir
	asofNode
}

// asofFile is a memory of a view.
type asofFile struct {
	readOnlyFile
	asofNode
	f *versions.SnapshotFile
}

var (
	_ = (fs.NodeLookuper)((*asofDir)(nil))
	_ = (fs.NodeReaddirer)((*asofDir)(nil))
	_ = (fs.NodeGetattrer)((*asofDir)(nil))
	_ = (fs.NodeGetattrer)((*asofFile)(nil))
	_ = (fs.NodeOpener)((*asofFile)(nil))
	_ = (fs.NodeReader)((*asofFile)(nil))
	_ = (fs.NodeGetxattrer)((*asofFile)(nil))
	_ = (fs.NodeListxattrer)((*asofFile)(nil))
)

func (d *asofDir) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.v.sm.srv.historyDirAttr(d.StableAttr().Ino, 2, &out.Attr)
	out.SetTimeout(cacheTimeout)
	return 0
}

func (d *asofDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	p := childPath(d.path, name)
	if _, ok := d.v.dirs[p]; ok {
		ino := historyDirIno(d.v.key, p)
		d.v.sm.srv.historyDirAttr(ino, 2, &out.Attr)
		out.SetAttrTimeout(cacheTimeout)
		out.SetEntryTimeout(cacheTimeout)
		return d.NewInode(ctx, &asofDir{asofNode: asofNode{v: d.v, path: p}}, fs.StableAttr{Mode: syscall.S_IFDIR, Ino: ino}), 0
	}
	f := d.v.files[p]
	if f == nil {
		return nil, syscall.ENOENT
	}
	n := &asofFile{asofNode: asofNode{v: d.v, path: p}, f: f}
	n.fillAttr(&out.Attr)
	out.SetAttrTimeout(cacheTimeout)
	out.SetEntryTimeout(cacheTimeout)
	return d.NewInode(ctx, n, fs.StableAttr{Mode: syscall.S_IFREG, Ino: out.Attr.Ino}), 0
}

func (d *asofDir) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	list := append(dotEntries(&d.Inode), d.v.dirs[d.path]...)
	return fs.NewListDirStream(list), 0
}

func (n *asofFile) fillAttr(a *fuse.Attr) {
	s := n.v.sm.srv
	m := &n.f.Memory
	a.Ino = asofFileIno(n.v.key, m.VersionID)
	a.Mode = syscall.S_IFREG | 0o444
	a.Nlink = 1
	a.Size = 0
	if !n.f.Redacted {
		a.Size = uint64(m.ContentSize)
	}
	a.Blocks = (a.Size + 511) / 512
	a.Uid, a.Gid = s.opts.UID, s.opts.GID
	mt := m.UpdatedAt
	a.SetTimes(&mt, &mt, &mt)
}

func (n *asofFile) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	n.fillAttr(&out.Attr)
	out.SetTimeout(cacheTimeout)
	return 0
}

func (n *asofFile) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if errno := n.refuseWriting(flags); errno != 0 {
		return nil, 0, errno
	}
	sm := n.v.sm
	if sm.m.Gone() {
		return nil, 0, sm.refuseGone("open", n.show())
	}
	if !n.v.st.acquire() {
		return nil, 0, sm.srv.tooManyHistoryHandles("open", n.show())
	}
	if _, errno := n.content(ctx, "open"); errno != 0 {
		n.v.st.release()
		return nil, 0, errno
	}
	return &historyHandle{st: n.v.st}, fuse.FOPEN_KEEP_CACHE | fuse.FOPEN_NOFLUSH, 0
}

// content is the file's version as the history tree's shared copy (a
// version has one copy however many views and entries show it).
func (n *asofFile) content(ctx context.Context, op string) (*historyContent, syscall.Errno) {
	id := n.f.Memory.VersionID
	if c := n.v.st.get(id); c != nil {
		return c, 0
	}
	sm := n.v.sm
	// Redacted, or withheld by the guard (versions.WithheldFromHistory):
	// empty, as in the per-path tree.
	content, _, err := sm.srv.db.SnapshotContent(detach(ctx), sm.id, id)
	if err != nil {
		return nil, sm.errnoOf(op, n.show(), err)
	}
	return n.v.st.put(id, &historyContent{data: []byte(content)}), 0
}

func (n *asofFile) Read(ctx context.Context, f fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if _, ok := f.(*historyHandle); !ok {
		return nil, syscall.EBADF
	}
	c, errno := n.content(ctx, "read")
	if errno != 0 {
		return nil, errno
	}
	if off >= int64(len(c.data)) {
		return fuse.ReadResultData(nil), 0
	}
	return fuse.ReadResultData(c.data[off:min(int64(len(c.data)), off+int64(len(dest)))]), 0
}

// xattrs are those a live file had then: id, version, sha256, writer.
func (n *asofFile) xattrs() [][2]string {
	m := &n.f.Memory
	out := [][2]string{{xattrID, m.ID}, {xattrVersion, m.VersionID}}
	if !n.f.Redacted {
		out = append(out, [2]string{xattrSHA256, m.ContentSHA256})
	}
	if n.f.Writer != nil {
		out = append(out, [2]string{xattrWriter, n.f.Writer.Type + ":" + n.f.Writer.ID})
	}
	return out
}

func (n *asofFile) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	for _, kv := range n.xattrs() {
		if kv[0] == attr {
			return xattrReply([]byte(kv[1]), dest)
		}
	}
	return 0, syscall.ENODATA
}

func (n *asofFile) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	var b []byte
	for _, kv := range n.xattrs() {
		b = append(append(b, kv[0]...), 0)
	}
	return xattrReply(b, dest)
}
