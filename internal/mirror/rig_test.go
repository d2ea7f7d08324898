package mirror_test

import (
	"context"
	"errors"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/internal/mirror"
	"github.com/memfs/memfs/versions"
)

var ctx = context.Background()

// rig is a mount without a kernel: a mirror whose plans are carried out
// against a real engine on a SQLite file, with a fake clock for its
// timers. Its methods play the kernel's requests.
type rig struct {
	t      *testing.T
	db     *versions.DB
	store  string
	m      *mirror.Mirror
	eng    mirror.Engine
	now    time.Time
	timers map[mirror.Event]time.Time
	pos    versions.FeedPos
	// asked counts the engine's write transactions by the plans.
	writes  int64
	notices []mirror.Notice
	moves   []mirror.Transition
	// lostAfterCommit, when set, is the error the next save's answer
	// carries, though the engine committed it: a connection dropped
	// after COMMIT.
	lostAfterCommit error
}

const (
	grace  = 500 * time.Millisecond
	settle = 100 * time.Millisecond
)

var (
	tempNames    = mirror.Names(mirror.DefaultTempPatterns)
	scratchNames = mirror.Names(mirror.DefaultScratchPatterns)
)

func newRig(t *testing.T, p versions.StoreParams, strict bool) *rig {
	t.Helper()
	db, err := versions.Open(filepath.Join(t.TempDir(), "memfs.db"), versions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if p.Name == "" {
		p.Name = "Mirror"
	}
	st, err := db.CreateStore(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	pos, err := db.FeedHead(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	// A mount's lease owns its pending rows.
	sess, err := db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: st.ID}})
	if err != nil {
		t.Fatal(err)
	}
	lease := versions.MountLease{ID: versions.NewMountID(), SessionID: sess.ID, Host: "rig", Mountpoint: "/rig"}
	if err := db.StartMount(ctx, lease); err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, db: db, store: st.ID, now: time.Unix(1e9, 0), timers: map[mirror.Event]time.Time{}, pos: pos,
		eng: mirror.Engine{DB: db, Store: st.ID, Owner: lease.Owner(), Actor: versions.SessionActor("sesn_mirror")}}
	r.m = mirror.New(mirror.Options{Temp: tempNames, Scratch: scratchNames, Grace: grace, Settle: settle, Strict: strict,
		OnMove: func(t mirror.Transition) { r.moves = append(r.moves, t) }})
	r.eng.Origin = r.m.Origin()
	r.m.SetStore(st)
	return r
}

// do applies e and carries out the plan, as the mount does: each engine
// request's answer goes back to Apply; a load is followed by the request
// again. It returns the errno the kernel's request gets.
func (r *rig) do(e mirror.Event) (mirror.Plan, syscall.Errno) {
	r.t.Helper()
	p := r.m.Apply(e)
	first := p
	for {
		r.carry(p)
		if p.Ask == nil {
			break
		}
		before := r.db.Writes()
		a := r.eng.Execute(ctx, *p.Ask)
		r.writes += r.db.Writes() - before
		if r.lostAfterCommit != nil && p.Ask.Kind == mirror.AskSave && a.Err == nil {
			a = mirror.Answered{Req: a.Req, Err: r.lostAfterCommit}
			r.lostAfterCommit = nil
		}
		again := p.Again
		p = r.m.Apply(a)
		if again && a.Err == nil && p.Errno == 0 && p.Err == nil {
			r.carry(p)
			p = r.m.Apply(e)
			first = p
		}
	}
	p.File, p.Ino, p.Handle = first.File, first.Ino, first.Handle
	if p.Errno != 0 {
		return p, p.Errno
	}
	return p, errnoOf(p.Err)
}

func (r *rig) carry(p mirror.Plan) {
	r.notices = append(r.notices, p.Notify...)
	for _, tm := range p.Timers {
		if tm.Stop {
			delete(r.timers, tm.Event)
		} else {
			r.timers[tm.Event] = r.now.Add(tm.After)
		}
	}
}

func errnoOf(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	switch versions.ErrorCode(err) {
	case versions.CodeStale:
		return syscall.ESTALE
	case versions.CodeCredential:
		return syscall.EACCES
	case versions.CodeOverQuota:
		return syscall.EDQUOT
	case versions.CodeStoreFull:
		return syscall.ENOSPC
	}
	var e *versions.Error
	if errors.As(err, &e) {
		return syscall.EIO
	}
	return syscall.EIO
}

// advance moves the clock on by d, running the timers that end meanwhile
// in order.
func (r *rig) advance(d time.Duration) {
	r.t.Helper()
	end := r.now.Add(d)
	for {
		var next mirror.Event
		var at time.Time
		for e, t := range r.timers {
			if !t.After(end) && (next == nil || t.Before(at)) {
				next, at = e, t
			}
		}
		if next == nil {
			break
		}
		delete(r.timers, next)
		r.now = at
		r.do(next)
	}
	r.now = end
}

// feed applies the changes committed since the last look, own and others'.
func (r *rig) feed() {
	r.t.Helper()
	cs, pos, err := r.db.Changes(ctx, r.store, r.pos)
	if err != nil {
		r.t.Fatal(err)
	}
	r.pos = pos
	for _, c := range cs {
		r.do(mirror.Foreign{Change: c})
	}
}

// file returns the id of the file at p, looking it up in the store as the
// kernel would.
func (r *rig) file(p string) mirror.ID {
	r.t.Helper()
	if id, ok := r.m.At(p); ok {
		return id
	}
	e, err := r.db.Stat(ctx, r.store, p)
	if err != nil || e.Memory == nil {
		r.t.Fatalf("lookup %s: %v", p, err)
	}
	pl, _ := r.do(mirror.Lookup{Path: p, Mem: e.Memory})
	return pl.File
}

func (r *rig) create(p string, tgid int) mirror.HandleID {
	r.t.Helper()
	pl, e := r.do(mirror.Create{Path: p, Tid: tgid})
	if e != 0 {
		r.t.Fatalf("create %s: %v", p, e)
	}
	return pl.Handle
}

func (r *rig) open(p string, tgid int, write, trunc bool) mirror.HandleID {
	r.t.Helper()
	pl, e := r.do(mirror.Open{File: r.file(p), Tid: tgid, Write: write, Trunc: trunc})
	if e != 0 {
		r.t.Fatalf("open %s: %v", p, e)
	}
	return pl.Handle
}

func (r *rig) write(h mirror.HandleID, off int64, s string) syscall.Errno {
	_, e := r.do(mirror.Write{Handle: h, Off: off, Data: []byte(s)})
	return e
}

func (r *rig) flush(h mirror.HandleID) syscall.Errno {
	_, e := r.do(mirror.Flush{Handle: h})
	return e
}

func (r *rig) release(h mirror.HandleID) syscall.Errno {
	_, e := r.do(mirror.Release{Handle: h})
	return e
}

// close is close(2) of a handle's only descriptor.
func (r *rig) close(h mirror.HandleID) syscall.Errno {
	e := r.flush(h)
	r.release(h)
	return e
}

func (r *rig) rename(from, to string, tgid int) syscall.Errno {
	_, e := r.do(mirror.Rename{From: from, To: to, Tid: tgid})
	return e
}

func (r *rig) unlink(p string) syscall.Errno {
	_, e := r.do(mirror.Unlink{Path: p})
	return e
}

// writeFile is an ordinary program's write of a new or existing file.
func (r *rig) writeFile(p, content string, tgid int) {
	r.t.Helper()
	var h mirror.HandleID
	if _, ok := r.m.At(p); ok {
		h = r.open(p, tgid, true, true)
	} else if e, err := r.db.Stat(ctx, r.store, p); err == nil && e.Memory != nil {
		h = r.open(p, tgid, true, true)
	} else {
		h = r.create(p, tgid)
	}
	if e := r.write(h, 0, content); e != 0 {
		r.t.Fatalf("write %s: %v", p, e)
	}
	if e := r.close(h); e != 0 {
		r.t.Fatalf("close %s: %v", p, e)
	}
}

// read is a program reading p whole.
func (r *rig) read(p string, tgid int) string {
	r.t.Helper()
	h := r.open(p, tgid, false, false)
	f, _ := r.m.File(r.file(p))
	r.release(h)
	return string(f.Buf)
}

// history is the versions of the memory at p, oldest first.
func (r *rig) history(p string) []versions.Version {
	r.t.Helper()
	e, err := r.db.Stat(ctx, r.store, p)
	if err != nil || e.Memory == nil {
		r.t.Fatalf("stat %s: %v", p, err)
	}
	pg, err := r.db.ListVersions(ctx, r.store, versions.VersionListOptions{MemoryID: e.Memory.ID, View: versions.ViewFull, Limit: 100})
	if err != nil {
		r.t.Fatal(err)
	}
	vs := pg.Data
	sort.Slice(vs, func(i, j int) bool { return vs[i].CreatedAt.Before(vs[j].CreatedAt) })
	return vs
}

// content is what the store has at p ("" and false when nothing).
func (r *rig) content(p string) (string, bool) {
	m, err := r.db.GetMemory(ctx, r.store, p)
	if err != nil {
		return "", false
	}
	return *m.Content, true
}

func (r *rig) expectHistory(p string, want ...string) []versions.Version {
	r.t.Helper()
	vs := r.history(p)
	var got []string
	for _, v := range vs {
		c := "<nil>"
		if v.Content != nil {
			c = *v.Content
		}
		got = append(got, string(v.Operation)+":"+c)
	}
	if len(got) != len(want) {
		r.t.Fatalf("history of %s: %q, want %q", p, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			r.t.Fatalf("history of %s: %q, want %q", p, got, want)
		}
	}
	return vs
}

// other is another writer of the store (another mount, the CLI).
func (r *rig) other(p, content string) *versions.Memory {
	r.t.Helper()
	m, err := r.db.UpdateMemory(ctx, r.store, p, versions.MemoryUpdate{Content: &content}, versions.UserActor("usr_other"))
	if err != nil {
		r.t.Fatal(err)
	}
	return m
}

func (r *rig) state(p string) mirror.State {
	id, ok := r.m.At(p)
	if !ok {
		return 0
	}
	f, _ := r.m.File(id)
	return f.State
}
