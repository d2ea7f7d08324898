package versions

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"strconv"
)

// An Origin names the writer of a change: each version and changes row
// records the origin of the write that committed it, and the feed gives
// it back (Change.Origin, its String). A DB handle has one; a process
// whose writers share a handle, a daemon's mounts, gives each writer its
// own (WithOrigin), so that each tells its own changes in the feed from
// the moment they commit, without waiting for their answers.
type Origin struct {
	num  int64 // as versions and the PostgreSQL functions take it
	name string
}

// NewOrigin returns a new origin: 62 random bits. A mount ignores the
// changes of its own origin, so it must not be any other writer's, and
// every handle opened (each CLI command's) takes one.
func NewOrigin() Origin {
	var b [8]byte
	rand.Read(b[:]) // never fails since Go 1.24
	n := int64(binary.BigEndian.Uint64(b[:])>>2) + 1
	return Origin{n, strconv.FormatInt(n, 10)}
}

// String is the origin as Change.Origin gives it.
func (o Origin) String() string { return o.name }

type originKey struct{}

// WithOrigin returns a context whose writes record origin o instead of
// the handle's.
func WithOrigin(ctx context.Context, o Origin) context.Context {
	return context.WithValue(ctx, originKey{}, o)
}

// originOf is the origin the writes made with ctx record.
func (db *DB) originOf(ctx context.Context) Origin {
	if ctx != nil {
		if o, ok := ctx.Value(originKey{}).(Origin); ok {
			return o
		}
	}
	return db.origin
}

// origin is the origin r's current write records.
func (r *run) origin() Origin { return r.db.originOf(r.ctx) }

// Origin identifies this handle in the Changes it records, unless a
// write's context gives its own (WithOrigin).
func (db *DB) Origin() string { return db.origin.name }
