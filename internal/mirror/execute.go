package mirror

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/memfs/memfs/versions"
)

// Engine is where a mount's plans are carried out: one store of a
// database, as one writer (its lease, as the owner of pending rows) and
// one actor.
type Engine struct {
	DB    *versions.DB
	Store string
	Owner versions.PendingOwner
	Actor versions.Actor
	// Origin is the mirror's (Mirror.Origin): its writes record it, so
	// that the feed brings them back as its own.
	Origin versions.Origin
	// Relet renews the mount's lease now, or takes a new one if it
	// lapsed, and returns the owner from then on (nil: none to take).
	Relet func(context.Context) (versions.PendingOwner, error)
}

// Execute asks the engine for r and returns the answer for Apply. It is
// the only place a plan's requests become engine calls.
func (g Engine) Execute(ctx context.Context, r Request) Answered {
	a := Answered{Req: r}
	db, st := g.DB, g.Store
	ctx = versions.WithOrigin(ctx, g.Origin)
	switch r.Kind {
	case AskLoad:
		// By the path the mount knows it at first: on SQLite the memories
		// are keyed by path, and a memory is found by id through its
		// versions. Another memory there now, or none, is asked by id.
		m, err := db.GetMemory(ctx, st, r.Path)
		if err == nil && m.ID != r.MemID || versions.ErrorCode(err) == versions.CodeNotFound {
			m, err = db.GetMemory(ctx, st, r.MemID)
		}
		a.Mem, a.Err = m, err
		if err == nil && m.Content != nil {
			a.Content = *m.Content
		}
	case AskSave:
		a.Mem, a.Created, a.Err = g.save(ctx, r)
	case AskSavePending:
		a.Pending, a.Err = db.SavePending(ctx, st, g.Owner, r.Path, r.Content, g.Actor, r.Pending)
		if r.Pending == 0 && versions.IsPendingLost(a.Err) && g.Relet != nil {
			// A new temporary file of a mount resumed past its lease:
			// it is saved under the new lease, taken now.
			if owner, err := g.Relet(ctx); err == nil && owner != g.Owner {
				a.Pending, a.Err = db.SavePending(ctx, st, owner, r.Path, r.Content, g.Actor, 0)
			}
		}
	case AskPublish:
		a.Mem, a.Created, a.Err = db.PublishPending(ctx, st, g.Owner, r.Pending, r.Path)
	case AskDrop:
		a.Err = db.DropPending(ctx, st, g.Owner, r.Pending)
	case AskDelete:
		del := versions.MemoryDelete{KeepParentDir: true}
		a.Err = db.DeleteMemory(ctx, st, r.MemID, del, g.Actor)
		if versions.ErrorCode(a.Err) == versions.CodeNotFound && r.Cause == "unlinked" {
			// The mount's file is not (or no longer) the memory at the
			// path: what is there goes.
			e, err := db.Stat(ctx, st, r.Path)
			switch {
			case err != nil:
				a.Err = err
			case e.Dir:
				a.Err = &versions.Error{Code: versions.CodeIsDir, Message: r.Path + " is a directory: use rmdir"}
			default:
				a.Req.MemID = e.Memory.ID
				a.Err = db.DeleteMemory(ctx, st, e.Memory.ID, del, g.Actor)
			}
		} else if versions.ErrorCode(a.Err) == versions.CodeNotFound {
			a.Err = nil // gone already
		}
	case AskMove:
		a.Mem, a.Err = db.Rename(ctx, st, r.From, r.Path, r.NoReplace, g.Actor)
	case AskCount:
		a.Store, a.Err = db.GetStore(ctx, st)
	case AskResolve:
		m, err := db.GetMemory(ctx, st, r.Path)
		if err == nil {
			m.Content = nil
			a.Mem = m
		} else if versions.ErrorCode(err) != versions.CodeNotFound {
			a.Err = err
		}
	case AskMakeDir:
		a.Err = db.MakeDir(ctx, st, r.Path)
	case AskRemoveDir:
		a.Err = db.RemoveDir(ctx, st, r.Path)
	case AskMoveDir:
		_, a.Err = db.Rename(ctx, st, r.From, r.Path, r.NoReplace, g.Actor)
		if a.Err == nil {
			a.Moved = map[string]*versions.Memory{}
			for _, p := range r.Paths {
				if e, err := db.Stat(ctx, st, p); err == nil && e.Memory != nil {
					a.Moved[p] = e.Memory
				}
			}
		}
	}
	return a
}

// save is one save (versions.Save): a new memory, a version of one with
// its base, a temporary file's pending row consumed in the same commit.
func (g Engine) save(ctx context.Context, r Request) (*versions.Memory, bool, error) {
	var m versions.Memory
	req := versions.SaveReq{StoreID: g.Store, Path: r.Path, Content: r.Content, By: g.Actor, MemoryID: r.MemID,
		BaseVersionID: r.Base, Strict: r.Strict, PendingID: r.Pending, Owner: g.Owner, Memory: &m}
	// A temporary file not written since its row was saved: the row's
	// content, attributed to whoever saved it.
	req.FromPending = r.Pending != 0 && !r.Dirty
	// The write is conditioned on this head; the engine decides again
	// only when the memory moved on.
	req.HeadVersionID = r.Head
	if r.Head != "" && r.HeadContent != nil {
		sum := sha256.Sum256([]byte(*r.HeadContent))
		req.HeadSHA256, req.HeadContent = hex.EncodeToString(sum[:]), r.HeadContent
	}
	ch, err := g.DB.Save(ctx, req)
	if err != nil {
		return nil, false, err
	}
	m.Seq, m.Content = ch.Seq, nil
	return &m, ch.Op == versions.ChangeCreated, nil
}
