// Package versions is the store engine: memory stores, their memories and
// the immutable versions every change appends. It is the only package that
// speaks SQL, and it runs on two backends: an embedded SQLite file (the
// default) and PostgreSQL, for stores shared by daemons on several hosts.
//
// Every store rule is written once, in Go, over database/sql; a backend
// only brings its driver, the text of the few statements that differ (see
// dialect), its migrations and its change notification. PostgreSQL is
// reached through pgx's database/sql adapter (pgx/v5/stdlib) rather than
// its native interface so that one code path — the same connection pools,
// prepared statements, transactions and retries — serves both backends;
// the native pgx connection is used only for LISTEN, which database/sql
// cannot express.
package versions

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Durability is how hard a commit tries to survive a crash.
type Durability int

const (
	// DurabilityNormal: on SQLite, WAL with synchronous=NORMAL. A commit
	// survives a crash of any process once it returns; a power loss or
	// kernel crash may lose the last commits (never corrupts the database).
	// PostgreSQL commits as its server is configured.
	DurabilityNormal Durability = iota
	// DurabilityFull: on SQLite, WAL with synchronous=FULL. Every commit
	// is fsynced before it returns: it survives a power loss. On
	// PostgreSQL, synchronous_commit=on for this daemon's sessions.
	DurabilityFull
)

// Options configure Open. The zero value is the default.
type Options struct {
	Durability Durability
	// BusyTimeout is how long a SQLite writer waits for another process;
	// default 30s. On PostgreSQL it bounds how long a statement waits for
	// a lock (lock_timeout).
	BusyTimeout time.Duration
	// Now replaces the clock (tests of retention); nil means time.Now.
	Now func() time.Time
}

// DB is a memfs database, safe for concurrent use by many goroutines and by
// several processes (on PostgreSQL: several hosts) at once.
//
// It holds two pools of connections: writers, whose transactions serialize
// the writers of a store (on SQLite: one writer connection whose
// transactions begin IMMEDIATE; on PostgreSQL: a lock on the store's row),
// and readers that never queue behind the writers.
type DB struct {
	// statements counts the statements run (Statements).
	statements atomic.Int64
	// writes counts the write transactions that committed (Writes).
	writes atomic.Int64
	// times sums where the writes spent their time (WriteTimes).
	times writeTimes
	// where names the database in messages and logs: a SQLite file's
	// absolute path, or a PostgreSQL server's host, port and database
	// (never a password).
	where string
	path  string // the SQLite file; "" on PostgreSQL
	d     *dialect
	// busyTimeout is how long a statement waits for another's lock.
	busyTimeout time.Duration
	w, r        *sql.DB
	wp, rp      *connPool
	// lw and lp are the connection mount leases are renewed on
	// (RenewMount), so that a renewal never queues behind the writers.
	lw     *sql.DB
	lp     *connPool
	origin Origin
	now    func() time.Time
	ids    idGen
	// seqs caches store id → row number for the read paths a mount calls
	// on every lookup. A row number is never reused, but a store deleted
	// and imported again keeps its id under a new one: forgetStore drops
	// it, and forgotten counts the drops, so that a read begun before one
	// does not put back what it dropped.
	seqs      sync.Map
	forgotten atomic.Int64
	// facts caches store id → what saves decide on of the store
	// (fastsave.go); each save's statement checks them again.
	facts     sync.Map
	closeOnce sync.Once
	// Background work (the SQLite checkpointer, the PostgreSQL listener)
	// stopped by Close.
	stopBackground context.CancelFunc
	background     sync.WaitGroup
	closeErr       error
	// changesWritten counts change rows this handle wrote, to trim the feed
	// now and then rather than on every write.
	changesWritten atomic.Int64
	pg             *pgState // PostgreSQL only
	group          committer
	pgGroup        pgGroup
	// leases are the mount leases this handle holds and its sweep of
	// lapsed ones (leases.go).
	leases leases
	// readOnly: a SQLite file this user cannot write (readonly.go).
	readOnly bool
	// guardObserver sees the credentials the guard finds (SetGuardObserver).
	guardObserver atomic.Pointer[func(GuardEvent)]
}

// DefaultPath is $MEMFS_DB, else $XDG_DATA_HOME/memfs/memfs.db, else
// ~/.local/share/memfs/memfs.db.
func DefaultPath() (string, error) {
	if p := os.Getenv("MEMFS_DB"); p != "" {
		return p, nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "memfs", "memfs.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errorf(CodeInvalid, "cannot find the default database: no home directory (%v): set MEMFS_DB or pass --db", err)
	}
	return filepath.Join(home, ".local", "share", "memfs", "memfs.db"), nil
}

// Open opens and migrates the database dsn names: a PostgreSQL URL
// (postgres://… or postgresql://…) or keyword DSN (host=… dbname=…), whose
// missing parts come from the PG* environment variables as with libpq;
// anything else is the path of a SQLite file, created with its directory
// if needed.
func Open(dsn string, opts Options) (*DB, error) {
	if dsn == "" {
		return nil, errorf(CodeInvalid, "no database path given: pass --db or set MEMFS_DB")
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 30 * time.Second
	}
	db := &DB{now: opts.Now, busyTimeout: opts.BusyTimeout}
	db.origin = NewOrigin()
	if db.now == nil {
		db.now = time.Now
	}
	db.ids.init()
	var err error
	if IsPostgres(dsn) {
		err = db.openPostgres(dsn, opts)
	} else {
		err = db.openSQLite(dsn, opts)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	// The first call looks for lapsed mount leases (leases.go); none is
	// looked for before the migrations are done.
	db.leases.start()
	return db, nil
}

// Close waits for the calls in progress and closes the database; closing
// twice is harmless.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		if !db.leases.stop() {
			// A sweep waits for another process's write lock (leases.go):
			// the connections close with this process.
			return
		}
		if db.stopBackground != nil {
			db.stopBackground()
			db.background.Wait()
		}
		if db.wp != nil {
			db.wp.close()
		}
		if db.rp != nil {
			db.rp.close()
		}
		if db.lp != nil {
			db.lp.close()
		}
		if db.lw != nil {
			db.lw.Close()
		}
		if db.r != nil && db.r != db.w {
			db.closeErr = db.r.Close()
		}
		if db.w != nil {
			if err := db.w.Close(); db.closeErr == nil {
				db.closeErr = err
			}
		}
	})
	return db.closeErr
}

// Path is the absolute path of a SQLite database file; on PostgreSQL, the
// server and database without credentials (as Where).
func (db *DB) Path() string {
	if db.path != "" {
		return db.path
	}
	return db.where
}

// Where names the database for messages and logs: a SQLite file's path, or
// a PostgreSQL server's host:port/database. It never holds a password.
func (db *DB) Where() string { return db.where }

// Backend is "sqlite" or "postgres".
func (db *DB) Backend() string { return db.d.name }

// ---- connections and transactions ----

// conn is one connection with the statements prepared on it. The engine
// holds connections itself (rather than letting database/sql pick one per
// statement) so that a prepared statement is reused for the life of the
// connection and a transaction never waits for a second connection.
type conn struct {
	c     *sql.Conn
	stmts map[string]*sql.Stmt
	// used: the connection has served a transaction and sat in the pool
	// since, where the server may have closed it (a restart).
	used bool
}

func (c *conn) close() { c.discard(false) }

// discard closes c; bad: it broke or went silent, so the driver's
// connection is closed first (database/sql would hand it out again, and
// closing a statement on it would wait for an answer).
func (c *conn) discard(bad bool) {
	if bad {
		c.c.Raw(func(any) error { return driver.ErrBadConn })
	}
	for _, s := range c.stmts {
		s.Close()
	}
	c.c.Close()
}

// dropIdle closes the pool's idle connections, to be opened again when
// next needed: one of them went silent, and the others, to the same
// server, likely did too.
func (p *connPool) dropIdle() {
	n := 0
	for range cap(p.ch) {
		select {
		case c := <-p.ch:
			if c != nil {
				c.discard(true)
			}
			n++
			continue
		default:
		}
		break
	}
	for range n {
		p.ch <- nil
	}
}

// connPool hands out connections of one *sql.DB, one caller at a time each.
type connPool struct {
	db   *sql.DB
	ch   chan *conn // nil entries are connections not opened yet
	init string     // run on each new connection, if set
	// broken tells an error after which the connection cannot serve again.
	broken func(error) bool
}

func newConnPool(db *sql.DB, n int, broken func(error) bool) *connPool {
	p := &connPool{db: db, ch: make(chan *conn, n), broken: broken}
	for range n {
		p.ch <- nil
	}
	return p
}

func (p *connPool) get(ctx context.Context) (*conn, error) {
	var c *conn
	select {
	case c = <-p.ch:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if c != nil {
		return c, nil
	}
	sc, err := p.db.Conn(ctx)
	if err != nil {
		p.ch <- nil
		return nil, err
	}
	if p.init != "" {
		if _, err := sc.ExecContext(ctx, p.init); err != nil {
			sc.Close()
			p.ch <- nil
			return nil, err
		}
	}
	return &conn{c: sc, stmts: map[string]*sql.Stmt{}}, nil
}

// put returns c; a connection that broke is dropped and reopened later.
func (p *connPool) put(c *conn, err error) {
	if c != nil && err != nil && p.isBroken(err) {
		c.discard(true)
		c = nil
	}
	if c != nil {
		c.used = true
	}
	p.ch <- c
}

func (p *connPool) isBroken(err error) bool {
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) || p.broken(err)
}

// staleConn is the failure of a pooled connection at its first statement
// because it broke while idle (the server restarted or dropped it):
// nothing ran, so retry takes another connection at once rather than fail
// a save made after the server came back.
type staleConn struct{ error }

func (s staleConn) Unwrap() error { return s.error }

// maxStale bounds the immediate retries on stale connections: more than
// any pool holds.
const maxStale = 16

// stale marks err as staleConn when c broke before its transaction did
// anything. A statement that timed out is not: its connection went
// silent, which another connection to the same server would likely do as
// well, and the caller is told at once.
func (p *connPool) stale(ctx context.Context, c *conn, err error) error {
	if err != nil && c.used && ctx.Err() == nil && p.isBroken(err) && !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
		return staleConn{err}
	}
	return err
}

func (p *connPool) close() {
	for range cap(p.ch) {
		if c := <-p.ch; c != nil {
			c.close()
		}
	}
}

// run executes statements on one connection, inside a transaction the
// caller opened or in autocommit mode.
type run struct {
	ctx context.Context
	c   *conn
	db  *DB
	// write: a write transaction, whose first read of a store's row locks
	// it on PostgreSQL (lockStore).
	write bool
	// changed: the transaction added to the change feed, so its commit
	// notifies the listeners (PostgreSQL) of the feeds of stores (fed).
	changed bool
	stores  []string
	by      int64 // the origin of every write fed, 0 if not one
	// guardWarnings are the credentials a store whose guard warns let
	// through, reported once the transaction commits.
	guardWarnings []GuardEvent
	// cancels end the deadlines of the statements whose rows were read
	// (query), when the transaction ends.
	cancels []context.CancelFunc
}

// fed records that the transaction added to the change feed of store
// (its id; "" when not known), which its notification names where the
// dialect sends one.
func (r *run) fed(store string) {
	r.changed = true
	if r.db.d.notify == nil {
		return
	}
	if o := r.origin().num; len(r.stores) == 0 {
		r.by = o
	} else if o != r.by {
		r.by = 0
	}
	if !slices.Contains(r.stores, store) {
		r.stores = append(r.stores, store)
	}
}

// stmtCtx is the context of one statement q: where the dialect bounds
// statements (statementTimeout), a deadline that fails a statement whose
// connection went silent, rather than wait for TCP to give up. A
// statement that may wait for a store's lock is bounded by the lock's own
// timeout, a little longer.
func (r *run) stmtCtx(q string) (context.Context, context.CancelFunc) {
	d := r.db.d.statementTimeout
	if d == 0 {
		return r.ctx, func() {}
	}
	if strings.Contains(q, r.db.d.lockStore) {
		d = max(d, r.db.busyTimeout+2*time.Second)
	}
	return context.WithTimeout(r.ctx, d)
}

// stmt prepares q once per connection. Statements are written with
// SQLite's placeholders (? and ?NNN); the dialect rewrites them.
func (r *run) stmt(q string) (*sql.Stmt, error) {
	r.db.statements.Add(1)
	if s, ok := r.c.stmts[q]; ok {
		return s, nil
	}
	s, err := r.c.c.PrepareContext(r.ctx, r.db.d.rebind(q))
	if err != nil {
		return nil, fmt.Errorf("prepare %q: %w", q, err)
	}
	r.c.stmts[q] = s
	return s, nil
}

func (r *run) exec(q string, args ...any) (sql.Result, error) {
	s, err := r.stmt(q)
	if err != nil {
		return nil, err
	}
	ctx, cancel := r.stmtCtx(q)
	defer cancel()
	return s.ExecContext(ctx, args...)
}

func (r *run) query(q string, args ...any) (*sql.Rows, error) {
	s, err := r.stmt(q)
	if err != nil {
		return nil, err
	}
	ctx, cancel := r.stmtCtx(q)
	r.cancels = append(r.cancels, cancel)
	return s.QueryContext(ctx, args...)
}

// strings runs a query of one text column and returns its rows.
func (r *run) strings(q string, args ...any) ([]string, error) {
	rows, err := r.query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// scan runs a one-row query into dest; sql.ErrNoRows when there is none.
func (r *run) scan(q string, args []any, dest ...any) error {
	s, err := r.stmt(q)
	if err != nil {
		return err
	}
	ctx, cancel := r.stmtCtx(q)
	defer cancel()
	return s.QueryRowContext(ctx, args...).Scan(dest...)
}

// insertKey runs the INSERT q and returns the integer key col it assigned.
func (r *run) insertKey(col, q string, args ...any) (int64, error) {
	var key int64
	if r.db.d.returning {
		err := r.scan(q+" RETURNING "+col, args, &key)
		return key, err
	}
	res, err := r.exec(q, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// inTx runs fn between begin and COMMIT on a connection of p, rolling back
// when fn fails. An empty begin runs fn in autocommit mode.
func (db *DB) inTx(ctx context.Context, p *connPool, begin string, write bool, fn func(r *run) error) (err error) {
	c, err := p.get(ctx)
	if err != nil {
		return err
	}
	defer func() { p.put(c, err) }() // c is nil once dropped
	defer func() {
		// A panic in fn leaves the connection inside its transaction: it
		// is rolled back (on SQLite letting go of the database) before the
		// connection is lent out again, or dropped.
		if v := recover(); v != nil {
			if begin != "" {
				if _, err := c.c.ExecContext(context.Background(), "ROLLBACK"); err != nil {
					c.discard(true)
					c = nil
				}
			}
			panic(v)
		}
	}()
	defer func() {
		if err != nil && ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || isTimeout(err)) {
			db.wp.dropIdle()
			db.rp.dropIdle()
		}
	}()
	r := &run{ctx: ctx, c: c, db: db, write: write}
	defer func() {
		for _, cancel := range r.cancels {
			cancel()
		}
	}()
	if write && p == db.wp {
		defer since(&db.times.tx, time.Now())
	}
	if begin == "" {
		// A read is safe to run again, and so is a write none of which
		// reached the server (a pooled connection the server dropped).
		if err = fn(r); !write || db.d.unsent(err) {
			err = p.stale(ctx, c, err)
		}
		return err
	}
	// Prepared once per connection like the other statements: parsing
	// them again costs a save more than running them.
	if _, err = r.exec(begin); err != nil {
		err = p.stale(ctx, c, err)
		return err
	}
	if err = fn(r); err == nil {
		if write {
			defer since(&db.times.commit, time.Now())
		}
		if r.changed && db.d.notify != nil {
			// One round trip: a statement without arguments goes by the
			// simple protocol, which takes several; if the notification
			// fails, the COMMIT is skipped and the transaction rolled back.
			sctx, cancel := r.stmtCtx("COMMIT")
			_, err = c.c.ExecContext(sctx, db.d.notify(r.stores, r.by)+"; COMMIT")
			cancel()
		} else {
			_, err = r.exec("COMMIT")
		}
		if err == nil {
			for _, e := range r.guardWarnings {
				db.observeGuard(e)
			}
		}
	}
	if err != nil {
		// The context may be the reason of the failure: roll back regardless
		// (within a statement's deadline: the connection may have gone
		// silent). A connection that cannot roll back, or broke, is
		// dropped, so that the next caller does not inherit an open
		// transaction.
		rctx, cancel := (&run{ctx: context.Background(), db: db}).stmtCtx("ROLLBACK")
		if p.isBroken(err) {
			c.discard(true)
			c = nil
		} else if _, rerr := c.c.ExecContext(rctx, "ROLLBACK"); rerr != nil && !strings.Contains(rerr.Error(), "no transaction is active") {
			c.close()
			c = nil
		}
		cancel()
	}
	return err
}

// write runs fn in one write transaction on a writer connection, retrying
// when another process keeps the database busy (SQLite) or the server
// aborts it to resolve a deadlock or serialization failure (PostgreSQL).
// One exported method = one call of write. Where the dialect groups
// commits, fn may share its transaction with others (see group.go).
func (db *DB) write(ctx context.Context, what string, fn func(r *run) error) error {
	if db.readOnly {
		return db.readOnlyError()
	}
	defer since(&db.times.call, time.Now())
	db.maybeSweep(ctx)
	var err error
	if db.d.groupCommit {
		err = db.group.write(ctx, db, fn)
	} else {
		err = db.writeAlone(ctx, fn)
	}
	if err == nil {
		db.writes.Add(1)
	}
	return db.wrap(what, err)
}

// writeStatement runs fn on a writer connection without a transaction:
// for a write that is one statement (a function of PostgreSQL's that
// commits and notifies in one round trip). It counts a write when fn
// sets r.changed, that is when its statement wrote.
func (db *DB) writeStatement(ctx context.Context, what string, fn func(r *run) error) error {
	if db.readOnly {
		return db.readOnlyError()
	}
	defer since(&db.times.call, time.Now())
	db.maybeSweep(ctx)
	changed := false
	err := db.retry(ctx, func() error {
		return db.inTx(ctx, db.wp, "", true, func(r *run) error {
			err := fn(r)
			changed = r.changed
			return err
		})
	})
	if err == nil && changed {
		db.writes.Add(1)
	}
	return db.wrap(what, err)
}

func (db *DB) writeAlone(ctx context.Context, fn func(r *run) error) error {
	return db.retry(ctx, func() error { return db.inTx(ctx, db.wp, db.d.beginWrite, true, fn) })
}

// read runs fn in one read transaction, so that its queries see one snapshot.
func (db *DB) read(ctx context.Context, what string, fn func(r *run) error) error {
	db.maybeSweep(ctx)
	err := db.retry(ctx, func() error { return db.inTx(ctx, db.rp, db.d.beginRead, false, fn) })
	return db.wrap(what, err)
}

// one runs fn on a reader without a transaction: for reads where each
// statement stands alone.
func (db *DB) one(ctx context.Context, what string, fn func(r *run) error) error {
	db.maybeSweep(ctx)
	err := db.retry(ctx, func() error { return db.inTx(ctx, db.rp, "", false, fn) })
	return db.wrap(what, err)
}

func (db *DB) wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return db.d.wrap(db, what, err)
}

// retry retries fn a few times with backoff while the dialect says its
// error is transient: SQLite reports the database busy or locked
// (busy_timeout covers most waits; this covers the cases SQLite refuses
// to wait in, such as WAL recovery), PostgreSQL a deadlock or a
// serialization failure. Every fn is a whole transaction, so retrying it
// is safe.
func (db *DB) retry(ctx context.Context, fn func() error) error {
	backoff := 5 * time.Millisecond
	stale := 0
	for attempt := 0; ; attempt++ {
		err := fn()
		if errors.As(err, new(staleConn)) && stale < maxStale {
			stale++
			attempt--
			continue
		}
		if err == nil || !db.d.transient(err) || attempt == 6 {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff):
		}
		backoff *= 2
	}
}

// storeSeq returns the row number of a store.
func (db *DB) storeSeq(r *run, storeID string) (int64, error) {
	if v, ok := db.seqs.Load(storeID); ok {
		return v.(int64), nil
	}
	forgotten := db.forgotten.Load()
	var seq int64
	err := r.scan("SELECT seq FROM stores WHERE id = ?", []any{storeID}, &seq)
	if err == sql.ErrNoRows {
		return 0, storeNotFound(storeID)
	}
	if err != nil {
		return 0, err
	}
	if db.forgotten.Load() == forgotten {
		db.seqs.Store(storeID, seq)
	}
	return seq, nil
}

// forgetStore drops what this handle remembers of a store whose row was
// deleted or replaced (committed: a read after it finds the new row).
func (db *DB) forgetStore(storeID string) {
	db.forgotten.Add(1)
	db.seqs.Delete(storeID)
	db.facts.Delete(storeID)
}

// ---- time ----

func (db *DB) nowNanos() int64 { return db.now().UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

func nullTime(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromNanos(n.Int64)
	return &t
}

// isTimeout reports an error of a network deadline.
func isTimeout(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne) && ne.Timeout()
}
