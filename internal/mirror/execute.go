package mirror

import (
	"context"

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
}

// Execute asks the engine for r and returns the answer for Apply. It is
// the only place a plan's requests become engine calls.
func (g Engine) Execute(ctx context.Context, r Request) Answered {
	a := Answered{Req: r}
	db, st := g.DB, g.Store
	switch r.Kind {
	case AskLoad:
		m, err := db.GetMemory(ctx, st, r.MemID)
		a.Mem, a.Err = m, err
		if err == nil && m.Content != nil {
			a.Content = *m.Content
		}
	case AskSave:
		a.Mem, a.Err = g.save(ctx, r)
	case AskSavePending:
		a.Pending, a.Err = db.SavePending(ctx, st, g.Owner, r.Path, r.Content, g.Actor, r.Pending)
	case AskPublish:
		a.Mem, _, a.Err = db.PublishPending(ctx, st, g.Owner, r.Pending, r.Path)
	case AskDrop:
		a.Err = db.DropPending(ctx, st, g.Owner, r.Pending)
	case AskDelete:
		var seq int64
		a.Err = db.DeleteMemory(ctx, st, r.MemID, versions.MemoryDelete{KeepParentDir: true, Seq: &seq}, g.Actor)
		if versions.ErrorCode(a.Err) == versions.CodeNotFound {
			a.Err = nil // gone already
		}
		a.Seqs = []int64{seq}
	case AskMove:
		a.Mem, a.Err = db.Rename(ctx, st, r.From, r.Path, false, g.Actor)
		if a.Err == nil {
			a.Seqs = []int64{a.Mem.ReplacedSeq}
		}
	}
	return a
}

// save is one save (versions.Save): a new memory, a version of one with
// its base, a temporary file's pending row consumed in the same commit.
func (g Engine) save(ctx context.Context, r Request) (*versions.Memory, error) {
	var m versions.Memory
	req := versions.SaveReq{StoreID: g.Store, Path: r.Path, Content: r.Content, By: g.Actor, MemoryID: r.MemID,
		BaseVersionID: r.Base, Strict: r.Strict, PendingID: r.Pending, Owner: g.Owner, Memory: &m}
	// A temporary file not written since its row was saved: the row's
	// content, attributed to whoever saved it.
	req.FromPending = r.Pending != 0 && !r.Dirty
	ch, err := g.DB.Save(ctx, req)
	if err != nil {
		return nil, err
	}
	m.Seq, m.Content = ch.Seq, nil
	return &m, nil
}
