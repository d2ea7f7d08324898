package mirror

import (
	"context"
	"path"

	"github.com/memfs/memfs/versions"
)

// Entry answers what is at dir/name: from the index x, else from the
// engine (the whole directory is read once, so the names that follow are
// answered from memory). While the database cannot be reached, what the
// mount knew at its feed position is served, unless it never listed dir or
// learnt that name changed since; cached is then why.
func (g Engine) Entry(ctx context.Context, x *Index, dir, name string) (e *versions.Entry, cached, err error) {
	p := path.Join(dir, name)
	ent, r := x.Lookup(dir, name)
	switch r {
	case Found:
		return &ent, nil, nil
	case Absent:
		return nil, nil, AbsentError(g.Store, p)
	}
	at := x.Now()
	entries, err := g.DB.ReadDir(ctx, g.Store, dir)
	if err == nil {
		x.Load(dir, entries, at)
		for i := range entries {
			if entries[i].Name == name {
				return &entries[i], nil, nil
			}
		}
		return nil, nil, AbsentError(g.Store, p)
	}
	if versions.ErrorCode(err) == versions.CodeUnavailable {
		switch ent, r := x.LastKnown(dir, name); r {
		case Found:
			return &ent, err, nil
		case Absent:
			return nil, err, AbsentError(g.Store, p)
		}
		return nil, nil, err
	}
	// Not a directory (any more), or unreadable: Stat says which.
	e, err = g.DB.Stat(ctx, g.Store, p)
	return e, nil, err
}

// List returns dir's entries, from the index x or read into it.
func (g Engine) List(ctx context.Context, x *Index, dir string) ([]versions.Entry, error) {
	if entries, ok := x.List(dir); ok {
		return entries, nil
	}
	at := x.Now()
	entries, err := g.DB.ReadDir(ctx, g.Store, dir)
	if err == nil {
		x.Load(dir, entries, at)
	}
	return entries, err
}

// AbsentError is why nothing is at p: a name the store could never hold
// gets the engine's reason (ENAMETOOLONG, EINVAL), any other ENOENT.
func AbsentError(storeID, p string) error {
	if err := versions.ValidatePath(p); err != nil {
		return err
	}
	return &versions.Error{Code: versions.CodeNotFound, Message: "no file or directory " + p + " in store " + storeID}
}

// Vanished counts the directories, from dir up (at most limit of them),
// that left the store with what they held: a directory is only implied by
// the memories below it. An error counts nothing, so that nothing is
// dropped on it.
func (g Engine) Vanished(ctx context.Context, dir string, limit int) (int, error) {
	n := 0
	for ; n < limit; n++ {
		e, err := g.DB.Stat(ctx, g.Store, dir)
		if err == nil && e.Dir {
			break
		}
		if err != nil && versions.ErrorCode(err) != versions.CodeNotFound {
			return 0, err
		}
		dir = path.Dir(dir)
	}
	return n, nil
}

// ListingChanged reports whether the entry at p may differ from what the
// mount showed there (was): a name that appeared or went, or a file now
// another memory or a directory. Only a file it showed needs asking the
// engine (a save elsewhere changes no listing); now, when known, is what
// the change says is there.
func (g Engine) ListingChanged(ctx context.Context, p string, was Shown, now *versions.Memory) bool {
	if was.Listed != Found || was.Entry.Dir || was.Entry.Memory == nil {
		return true
	}
	if now != nil {
		return now.ID != was.Entry.Memory.ID
	}
	e, err := g.DB.Stat(ctx, g.Store, p)
	return err != nil || e.Dir || e.Memory == nil || e.Memory.ID != was.Entry.Memory.ID
}
