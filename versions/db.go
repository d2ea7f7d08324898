// Package versions is the store engine: memory stores, their memories and
// the immutable versions every change appends, kept in one SQLite file. It
// is the only package that speaks SQL.
package versions

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mattn/go-sqlite3"
)

// Durability is how hard a commit tries to survive a crash.
type Durability int

const (
	// DurabilityNormal: WAL with synchronous=NORMAL. A commit survives a
	// crash of any process once it returns; a power loss or kernel crash
	// may lose the last commits (never corrupts the database).
	DurabilityNormal Durability = iota
	// DurabilityFull: WAL with synchronous=FULL. Every commit is fsynced
	// before it returns: it survives a power loss.
	DurabilityFull
)

// Options configure Open. The zero value is the default.
type Options struct {
	Durability  Durability
	BusyTimeout time.Duration // how long a writer waits for another process; default 30s
	// Now replaces the clock (tests of retention); nil means time.Now.
	Now func() time.Time
}

// DB is a memfs database: one SQLite file in WAL mode, safe for concurrent
// use by many goroutines and by several processes at once.
//
// It holds two pools on the same file: a single writer connection whose
// transactions begin IMMEDIATE (so a write never fails half-way on a lock
// upgrade), and a pool of readers that never queue behind the writer.
type DB struct {
	path string
	// busyTimeout is how long a statement waits for another's lock.
	busyTimeout time.Duration
	w, r        *sql.DB
	wp, rp      *connPool
	origin      string
	now         func() time.Time
	ids         idGen
	// seqs caches store id → row number for the read paths a mount calls
	// on every lookup; a store's row number never changes or is reused.
	seqs      sync.Map
	closeOnce sync.Once
	// The background checkpointer (checkpoint.go).
	stopCheckpoints context.CancelFunc
	checkpoints     sync.WaitGroup
	closeErr        error
	// changesWritten counts change rows this handle wrote, to trim the feed
	// now and then rather than on every write.
	changesWritten atomic.Int64
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

// Open opens (creating it and its directory if needed) and migrates the
// database at path.
func Open(path string, opts Options) (*DB, error) {
	if path == "" {
		return nil, errorf(CodeInvalid, "no database path given: pass --db or set MEMFS_DB")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, errorf(CodeInvalid, "database path %s: %v", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, errorf(CodeInvalid, "cannot create the database directory %s: %v: check its permissions or choose another path with --db or MEMFS_DB", filepath.Dir(abs), err)
	}
	// Memories may be private: create the file readable by its owner only
	// (SQLite gives the -wal and -shm files the same mode).
	if f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrExist) {
		return nil, errorf(CodeInvalid, "cannot create the database %s: %v: check the directory's permissions or choose another path with --db or MEMFS_DB", abs, err)
	}
	timeout := opts.BusyTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	syncMode := "NORMAL"
	if opts.Durability == DurabilityFull {
		syncMode = "FULL"
	}
	base := (&url.URL{Scheme: "file", Path: abs}).String()
	// A 4 MiB page cache per connection (SQLite's default is 2 MiB). At
	// 16 MiB the five connections of a daemon serving 8 stores of 2,000
	// memories reached 100 MiB of RSS (scripts/bench), for no measurable
	// gain in the bench's workload.
	params := fmt.Sprintf("_journal_mode=WAL&_busy_timeout=%d&_foreign_keys=on&_synchronous=%s&_cache_size=-4096",
		timeout.Milliseconds(), syncMode)

	db := &DB{path: abs, now: opts.Now, origin: randomHex(8), busyTimeout: timeout}
	if db.now == nil {
		db.now = time.Now
	}
	db.ids.init()
	if db.w, err = sql.Open("sqlite3", base+"?"+params+"&_txlock=immediate"); err != nil {
		return nil, fmt.Errorf("open database %s: %w", abs, err)
	}
	db.w.SetMaxOpenConns(1)
	db.w.SetMaxIdleConns(1)
	db.w.SetConnMaxLifetime(0)
	if db.r, err = sql.Open("sqlite3", base+"?"+params+"&_txlock=deferred"); err != nil {
		db.w.Close()
		return nil, fmt.Errorf("open database %s: %w", abs, err)
	}
	n := max(4, runtime.NumCPU())
	db.r.SetMaxOpenConns(n)
	db.r.SetMaxIdleConns(n)
	db.wp, db.rp = newConnPool(db.w, 1), newConnPool(db.r, n)
	db.wp.init = writerInit

	if err := db.setup(syncMode, timeout); err != nil {
		db.Close()
		return nil, err
	}
	db.startCheckpointer()
	return db, nil
}

// setup checks that the DSN's settings took effect and migrates.
func (db *DB) setup(syncMode string, timeout time.Duration) error {
	ctx := context.Background()
	var mode string
	var fk, syn, busy int
	err := retryBusy(ctx, func() error {
		return db.inTx(ctx, db.wp, "", func(r *run) error {
			if err := r.c.c.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
				return err
			}
			if err := r.c.c.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
				return err
			}
			if err := r.c.c.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
				return err
			}
			return r.c.c.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&syn)
		})
	})
	if err != nil {
		return fmt.Errorf("open database %s: %w (is it a SQLite file memfs can write?)", db.path, err)
	}
	if mode != "wal" {
		return fmt.Errorf("open database %s: journal_mode is %q, not wal: the file system may not support WAL (shared memory); put the database on a local disk", db.path, mode)
	}
	wantSyn := map[string]int{"NORMAL": 1, "FULL": 2}[syncMode]
	if fk != 1 || syn != wantSyn || busy != int(timeout.Milliseconds()) {
		return fmt.Errorf("open database %s: settings did not take effect (foreign_keys=%d, synchronous=%d, busy_timeout=%d)", db.path, fk, syn, busy)
	}
	return db.migrate(ctx)
}

// Close waits for the calls in progress and closes the database; closing
// twice is harmless.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		if db.stopCheckpoints != nil {
			db.stopCheckpoints()
			db.checkpoints.Wait()
		}
		db.wp.close()
		db.rp.close()
		db.closeErr = db.r.Close()
		if err := db.w.Close(); db.closeErr == nil {
			db.closeErr = err
		}
	})
	return db.closeErr
}

// Origin identifies this handle in the Changes it records.
func (db *DB) Origin() string { return db.origin }

// Path is the absolute path of the database file.
func (db *DB) Path() string { return db.path }

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails since Go 1.24
	return hex.EncodeToString(b)
}

// ---- connections and transactions ----

// conn is one SQLite connection with the statements prepared on it. The
// engine holds connections itself (rather than letting database/sql pick
// one per statement) so that a prepared statement is reused for the life
// of the connection and a transaction never waits for a second connection.
type conn struct {
	c     *sql.Conn
	stmts map[string]*sql.Stmt
}

func (c *conn) close() {
	for _, s := range c.stmts {
		s.Close()
	}
	c.c.Close()
}

// connPool hands out connections of one *sql.DB, one caller at a time each.
type connPool struct {
	db   *sql.DB
	ch   chan *conn // nil entries are connections not opened yet
	init string     // run on each new connection, if set
}

func newConnPool(db *sql.DB, n int) *connPool {
	p := &connPool{db: db, ch: make(chan *conn, n)}
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
	if c != nil && err != nil && (errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone)) {
		c.close()
		c = nil
	}
	p.ch <- c
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
}

func (r *run) stmt(q string) (*sql.Stmt, error) {
	if s, ok := r.c.stmts[q]; ok {
		return s, nil
	}
	s, err := r.c.c.PrepareContext(r.ctx, q)
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
	return s.ExecContext(r.ctx, args...)
}

func (r *run) query(q string, args ...any) (*sql.Rows, error) {
	s, err := r.stmt(q)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(r.ctx, args...)
}

// scan runs a one-row query into dest; sql.ErrNoRows when there is none.
func (r *run) scan(q string, args []any, dest ...any) error {
	s, err := r.stmt(q)
	if err != nil {
		return err
	}
	return s.QueryRowContext(r.ctx, args...).Scan(dest...)
}

// inTx runs fn between begin and COMMIT on a connection of p, rolling back
// when fn fails. An empty begin runs fn in autocommit mode.
func (db *DB) inTx(ctx context.Context, p *connPool, begin string, fn func(r *run) error) (err error) {
	c, err := p.get(ctx)
	if err != nil {
		return err
	}
	defer func() { p.put(c, err) }() // c is nil once dropped
	r := &run{ctx: ctx, c: c, db: db}
	if begin == "" {
		return fn(r)
	}
	// Prepared once per connection like the other statements: parsing
	// them again costs a save more than running them.
	if _, err = r.exec(begin); err != nil {
		return err
	}
	if err = fn(r); err == nil {
		_, err = r.exec("COMMIT")
	}
	if err != nil {
		// The context may be the reason of the failure: roll back regardless.
		// A connection that cannot roll back is dropped, so that the next
		// caller does not inherit an open transaction.
		if _, rerr := c.c.ExecContext(context.Background(), "ROLLBACK"); rerr != nil && !strings.Contains(rerr.Error(), "no transaction is active") {
			c.close()
			c = nil
		}
	}
	return err
}

// write runs fn in one immediate transaction on the writer connection,
// retrying when another process keeps the database busy beyond the busy
// timeout. One exported method = one call of write.
func (db *DB) write(ctx context.Context, what string, fn func(r *run) error) error {
	err := retryBusy(ctx, func() error { return db.inTx(ctx, db.wp, "BEGIN IMMEDIATE", fn) })
	return wrap(what, err)
}

// read runs fn in one read transaction, so that its queries see one snapshot.
func (db *DB) read(ctx context.Context, what string, fn func(r *run) error) error {
	err := retryBusy(ctx, func() error { return db.inTx(ctx, db.rp, "BEGIN", fn) })
	return wrap(what, err)
}

// one runs fn on a reader without a transaction: for reads where each
// statement stands alone.
func (db *DB) one(ctx context.Context, what string, fn func(r *run) error) error {
	err := retryBusy(ctx, func() error { return db.inTx(ctx, db.rp, "", fn) })
	return wrap(what, err)
}

func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	if isBusy(err) {
		return &Error{Code: CodeInternal, Message: fmt.Sprintf("%s: the database stayed locked by another process: retry in a moment (%v)", what, err)}
	}
	var se sqlite3.Error
	if errors.As(err, &se) && se.Code == sqlite3.ErrFull {
		// Wraps ENOSPC so that a mount reports it as a full disk would.
		return fmt.Errorf("%s: the disk holding the database is full: free some space, then retry (%w: %w)", what, syscall.ENOSPC, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func isBusy(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked
	}
	return false
}

// retryBusy retries fn a few times with backoff while SQLite reports the
// database busy or locked (busy_timeout covers most waits; this covers the
// cases SQLite refuses to wait in, such as WAL recovery).
func retryBusy(ctx context.Context, fn func() error) error {
	backoff := 5 * time.Millisecond
	for attempt := 0; ; attempt++ {
		err := fn()
		if err == nil || !isBusy(err) || attempt == 6 {
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
	var seq int64
	err := r.scan("SELECT seq FROM stores WHERE id = ?", []any{storeID}, &seq)
	if err == sql.ErrNoRows {
		return 0, storeNotFound(storeID)
	}
	if err != nil {
		return 0, err
	}
	db.seqs.Store(storeID, seq)
	return seq, nil
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
