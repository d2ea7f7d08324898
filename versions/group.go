package versions

import (
	"context"
	"fmt"
	"sync"
)

// Group commit. On SQLite every write of a process goes through its one
// writer connection, one transaction at a time, and a commit costs more
// than most saves' statements. Writes that arrive while one is running
// (from any handle or mount of the daemon: one DB) wait in a queue; the
// next transaction takes every write waiting, runs each in a savepoint of
// its own, and commits once. Each write returns only once the commit that
// holds it is done; one that fails is rolled back to its savepoint alone,
// and fails alone. When the shared transaction cannot commit, or a write
// in it hit an error that retrying may cure (another process holding the
// database), the writes it held that had not failed run again one by one,
// each in a transaction of its own, as if they had not been grouped:
// every fn may run more than once already (retry), and sets its results
// again when it does.
//
// PostgreSQL does not group these writes: its writers hold several
// connections and each write transaction locks its store's row, so writes
// of different stores run at once rather than queue, and one transaction
// holding the locks of several stores would make daemons wait for, or
// deadlock with, each other. Its one-statement saves of one store are
// grouped instead (pggroup.go).
//
// Lock order: committer.mu is a leaf, never held while a transaction
// runs.

// committer is a DB's queue of writes waiting for a shared transaction.
type committer struct {
	mu      sync.Mutex
	queue   []*groupWrite
	leading bool // a goroutine is running the queue's transactions
	// batches counts the shared transactions committed (tests).
	batches int
}

type groupWrite struct {
	ctx  context.Context
	fn   func(r *run) error
	done chan error
}

// write queues fn and waits for the transaction that runs it. A write that
// finds no transaction running leads the next one itself, on its own
// goroutine: a lone save then costs no hand-off to another thread.
func (c *committer) write(ctx context.Context, db *DB, fn func(r *run) error) error {
	w := &groupWrite{ctx: ctx, fn: fn, done: make(chan error, 1)}
	c.mu.Lock()
	c.queue = append(c.queue, w)
	lead := !c.leading
	c.leading = true
	c.mu.Unlock()
	if lead {
		c.lead(db, true)
	}
	return <-w.done
}

// lead runs the queue's transactions until it is empty. It takes the
// writer connection before the queue, so that what arrives while the
// previous transaction (of this process or another) holds the database
// joins the next one. A writer leading for itself (once) runs the one
// transaction that holds its own write, and leaves what arrived meanwhile
// to a goroutine that leads on.
func (c *committer) lead(db *DB, once bool) {
	var batch []*groupWrite
	defer func() {
		// A write that panics (a bug) must not leave the writes waiting
		// with it, or those queued behind, without an answer for ever: its
		// batch's others fail, a leader takes the queue on, and the panic
		// goes on up the stack of whoever led.
		if p := recover(); p != nil {
			for _, w := range batch {
				select {
				case w.done <- fmt.Errorf("a write in the same transaction failed (%v): nothing of this one was saved; try again", p):
				default:
				}
			}
			c.handOff(db)
			panic(p)
		}
	}()
	for {
		conn, err := db.wp.get(context.Background())
		c.mu.Lock()
		batch = c.queue
		c.queue = nil
		if len(batch) == 0 {
			c.leading = false
		}
		c.mu.Unlock()
		if err == nil {
			db.wp.put(conn, nil)
		}
		if len(batch) == 0 {
			return
		}
		db.runBatch(batch)
		if once {
			c.handOff(db)
			return
		}
	}
}

// handOff ends a leader's turn: a goroutine leads on if writes wait.
func (c *committer) handOff(db *DB) {
	c.mu.Lock()
	more := len(c.queue) > 0
	c.leading = more
	c.mu.Unlock()
	if more {
		go c.lead(db, false)
	}
}

// runBatch runs the writes of batch in one transaction (one alone runs as
// any write does) and tells each its outcome.
func (db *DB) runBatch(batch []*groupWrite) {
	if len(batch) == 1 {
		w := batch[0]
		w.done <- db.writeAlone(w.ctx, w.fn)
		return
	}
	errs := make([]error, len(batch))
	again := false // run the writes that did not fail again, one by one
	err := db.inTx(context.Background(), db.wp, db.d.beginWrite, true, func(r *run) error {
		for i, w := range batch {
			if errs[i] = w.ctx.Err(); errs[i] != nil {
				continue
			}
			if _, err := r.exec("SAVEPOINT w"); err != nil {
				return err
			}
			r.ctx = w.ctx
			warned := len(r.guardWarnings)
			errs[i] = w.fn(r)
			r.ctx = context.Background()
			if errs[i] != nil {
				r.guardWarnings = r.guardWarnings[:warned]
				if db.d.transient(errs[i]) {
					again = true
					return errs[i]
				}
				if _, err := r.exec("ROLLBACK TO w"); err != nil {
					return err
				}
			}
			if _, err := r.exec("RELEASE w"); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		db.group.mu.Lock()
		db.group.batches++
		db.group.mu.Unlock()
	}
	for i, w := range batch {
		switch {
		case err == nil || errs[i] != nil && !again:
			w.done <- errs[i]
		default:
			// The shared transaction did not commit: this write is not
			// in the database, whatever fn said.
			w.done <- db.writeAlone(w.ctx, w.fn)
		}
	}
}
