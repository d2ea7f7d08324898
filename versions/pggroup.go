package versions

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Group commit on PostgreSQL, for the one-statement saves (memfs_save,
// memfs_create and memfs_rename, fastsave.go) of one store. Each such call locks its
// store's row and commits alone, so the calls of one store run one after
// the other, each paying a round trip and a commit. A call that finds
// none of its store's in flight runs at once, on its own goroutine, as
// it would alone. The calls of the same store that arrive while one is
// in flight wait in the store's queue; the next transaction takes every
// call waiting and sends BEGIN, each call and COMMIT in one pipelined
// round trip: one commit for all of them. Each call's row is its own: one
// that wrote nothing (NULLs: its head moved, its path was taken) leaves
// the others written, and its caller decides again as after a lone call.
// When the shared transaction fails (an error in any call aborts it, or
// its connection broke), every call it held runs again alone, as if it
// had not been grouped: a call the failed transaction committed after all
// (its connection broke after COMMIT reached the server) then finds its
// head moved or its path taken, and the save that reads finds its content
// there already and writes nothing more.
//
// Calls of different stores never share a transaction: each holds its
// store's row lock to the end, and one transaction holding several
// stores' would make daemons wait for, or deadlock with, each other (see
// group.go).
//
// Lock order: pgGroup.mu is a leaf, never held while a statement runs.

// pgGroup is a DB's queues of one-statement saves, by store.
type pgGroup struct {
	mu sync.Mutex
	// stores holds a queue for each store (by row number) with a call in
	// flight, and none for the others.
	stores map[int64]*pgQueue
	// batches counts the shared transactions committed (tests).
	batches int
}

type pgQueue struct{ calls []*pgCall }

// pgCall is one call of a function that saves and commits, whose one row
// is the version's row number (NULL when it wrote nothing) and then more.
type pgCall struct {
	ctx  context.Context
	q    string
	args []any
	seq  *sql.NullInt64
	dest []any // seq first
	done chan error
}

// errAlone tells a waiting call that its shared transaction failed, so it
// runs again alone.
var errAlone = errors.New("the shared transaction failed: run alone")

// pgSave runs the saving function call q, in a transaction it shares with
// the calls of the same store that arrive while one is in flight, and
// scans its row into seq and rest. It counts a write when seq is not
// NULL.
func (db *DB) pgSave(ctx context.Context, store int64, q string, args []any, seq *sql.NullInt64, rest ...any) error {
	db.maybeSweep(ctx)
	c := &pgCall{ctx: ctx, q: q, args: args, seq: seq, dest: append([]any{seq}, rest...)}
	g := &db.pgGroup
	g.mu.Lock()
	if qu, busy := g.stores[store]; busy {
		c.done = make(chan error, 1)
		qu.calls = append(qu.calls, c)
		g.mu.Unlock()
		start := time.Now()
		if err := <-c.done; err != errAlone {
			since(&db.times.call, start)
			return err
		}
		return db.pgAlone(c)
	}
	if g.stores == nil {
		g.stores = map[int64]*pgQueue{}
	}
	qu := &pgQueue{}
	g.stores[store] = qu
	g.mu.Unlock()
	err := db.pgAlone(c)
	g.mu.Lock()
	if len(qu.calls) == 0 {
		delete(g.stores, store)
	} else {
		go g.lead(db, store, qu)
	}
	g.mu.Unlock()
	return err
}

// pgAlone runs c in a statement of its own, which commits alone.
func (db *DB) pgAlone(c *pgCall) error {
	return db.writeStatement(c.ctx, "save", func(r *run) error {
		err := r.scan(c.q, c.args, c.dest...)
		r.changed = c.seq.Valid
		return err
	})
}

// lead runs the transactions of store's queue until it is empty. It takes
// a writer connection before the calls, so that what arrives while it
// waits for one joins the transaction.
func (g *pgGroup) lead(db *DB, store int64, qu *pgQueue) {
	for {
		c, err := db.wp.get(context.Background())
		g.mu.Lock()
		batch := qu.calls
		qu.calls = nil
		g.mu.Unlock()
		if err != nil {
			for _, call := range batch {
				call.done <- errAlone
			}
		} else {
			db.pgBatch(c, batch)
		}
		g.mu.Lock()
		if len(qu.calls) == 0 {
			delete(g.stores, store)
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
	}
}

// pgBatch runs batch's calls on c, which it returns to the pool, in one
// transaction (one call alone, in autocommit as a lone call runs), and
// tells each its outcome.
func (db *DB) pgBatch(c *conn, batch []*pgCall) {
	live := batch[:0:0]
	for _, call := range batch {
		if err := call.ctx.Err(); err != nil {
			call.done <- db.wrap("save", err)
			continue
		}
		live = append(live, call)
	}
	if len(live) <= 1 {
		db.wp.put(c, nil)
		for _, call := range live {
			call.done <- db.pgAlone(call)
		}
		return
	}
	start := time.Now()
	err := db.pgSend(c, live)
	db.wp.put(c, err)
	if err != nil {
		if isTimeout(err) || errors.Is(err, context.DeadlineExceeded) {
			// The connection went silent: the others to the same
			// server likely did too, and the calls run again on new ones.
			db.wp.dropIdle()
		}
		for _, call := range live {
			call.done <- errAlone
		}
		return
	}
	since(&db.times.tx, start)
	db.pgGroup.mu.Lock()
	db.pgGroup.batches++
	db.pgGroup.mu.Unlock()
	for _, call := range live {
		if call.seq.Valid {
			db.writes.Add(1)
		}
		call.done <- nil
	}
}

// pgSend sends BEGIN, the calls and COMMIT in one round trip and scans
// each call's row. On failure the transaction is rolled back, or the
// connection marked broken for the pool to drop.
func (db *DB) pgSend(c *conn, calls []*pgCall) error {
	b := &pgx.Batch{}
	b.Queue(db.d.beginWrite)
	for _, call := range calls {
		b.Queue(db.d.rebind(call.q), call.args...)
	}
	b.Queue("COMMIT")
	db.statements.Add(int64(len(b.QueuedQueries)))
	// Bounded as one call is: the calls wait for the store's lock once.
	ctx, cancel := (&run{ctx: context.Background(), db: db}).stmtCtx(calls[0].q)
	defer cancel()
	err := c.c.Raw(func(dc any) error {
		br := dc.(*stdlib.Conn).Conn().SendBatch(ctx, b)
		err := func() error {
			if _, err := br.Exec(); err != nil {
				return err
			}
			for _, call := range calls {
				if err := br.QueryRow().Scan(call.dest...); err != nil {
					return err
				}
			}
			tag, err := br.Exec()
			if err == nil && tag.String() != "COMMIT" {
				// PostgreSQL answers COMMIT in a failed transaction
				// with ROLLBACK and no error.
				return fmt.Errorf("the shared transaction of %d saves rolled back at its commit (%s)", len(calls), tag)
			}
			return err
		}()
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		return err
	})
	if err != nil && !db.wp.isBroken(err) {
		// Leave no transaction open for the connection's next user; one
		// that cannot roll back is dropped.
		rctx, rcancel := (&run{ctx: context.Background(), db: db}).stmtCtx("ROLLBACK")
		if _, rerr := c.c.ExecContext(rctx, "ROLLBACK"); rerr != nil {
			err = errors.Join(err, fmt.Errorf("roll back the shared transaction: %v: %w", rerr, driver.ErrBadConn))
		}
		rcancel()
	}
	return err
}
