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
	Owner string
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
		a.Mem, _, a.Err = db.PublishPending(ctx, st, r.Pending, r.Path)
	case AskDrop:
		a.Err = db.DropPending(ctx, st, r.Pending)
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

// save is one save: a new memory, a version of one (with its base), and
// a temporary file's pending row consumed.
func (g Engine) save(ctx context.Context, r Request) (*versions.Memory, error) {
	db, st := g.DB, g.Store
	if r.Pending != 0 {
		if r.Dirty {
			// Written since its last save: the row takes what the
			// writer wrote first.
			if _, err := db.SavePending(ctx, st, g.Owner, r.From, r.Content, g.Actor, r.Pending); err != nil {
				return nil, err
			}
		}
		m, _, err := db.PublishPendingOver(ctx, st, r.Pending, r.Path, r.Base, r.Strict)
		return m, err
	}
	if r.MemID == "" {
		m, err := db.CreateMemory(ctx, st, r.Path, r.Content, g.Actor)
		if versions.ErrorCode(err) != versions.CodePathConflict {
			return m, err
		}
		// Created elsewhere since the kernel looked: as an open with
		// O_CREAT of a file that exists, this save is its next version.
		r.MemID = r.Path
	}
	c := r.Content
	return db.UpdateMemory(ctx, st, r.MemID, versions.MemoryUpdate{Content: &c, BaseVersionID: r.Base, Strict: r.Strict}, g.Actor)
}
